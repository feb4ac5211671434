import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import {
  Alert,
  Box,
  Button,
  Card,
  IconButton,
  LinearProgress,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TablePagination,
  TableRow,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import RefreshIcon from '@mui/icons-material/Refresh';
import SearchIcon from '@mui/icons-material/Search';
import { Title, useTranslate } from 'react-admin';
import { api } from '../../lib/http';
import { PAGE_SIZE_OPTIONS, usePageSize } from '../../lib/pageSize';
import { useNotifyError } from '../../resources/shared/hooks';
import {
  appendPage,
  clampPage,
  emptyLazy,
  listUrl,
  pageRows,
  pagerCount,
  pageToFetch,
  type LazyState,
  type LogFilterForm,
  type LogKind,
  type Row,
} from './taskRecords';

/** Filter bar: compact fields on one line on desktop, full-width fields on phones. */
export const BAR_SX = {
  display: 'flex',
  flexWrap: 'wrap',
  gap: 1,
  alignItems: 'center',
  p: 2,
  '& .MuiFormControl-root': { m: 0 },
  '@media (max-width:600px)': { '& .MuiFormControl-root': { flex: '1 1 100%', width: '100% !important' } },
} as const;

export interface LogColumn {
  key: string;
  label: string;
  render: (row: Row) => ReactNode;
  align?: 'left' | 'right' | 'center';
  minWidth?: number;
}

interface Props {
  kind: LogKind;
  admin: boolean;
  title: string;
  idLabel: string;
  columns: LogColumn[];
  defaults: () => LogFilterForm;
  banner?: ReactNode;
}

/**
 * A drawing/task log: the filter bar, a lazily paged table (a server page is fetched when the
 * console moves past the last known page) and page sizes 10/20/50/100 remembered per list.
 */
export function LogPage({ kind, admin, title, idLabel, columns, defaults, banner }: Props) {
  const translate = useTranslate();
  const notifyError = useNotifyError();
  const [size, setSize] = usePageSize(kind === 'mj' ? 'midjourney' : 'task');
  const [form, setForm] = useState<LogFilterForm>(defaults);
  const [applied, setApplied] = useState<LogFilterForm>(form);
  const [state, setState] = useState<LazyState<Row>>(emptyLazy);
  const [page, setPage] = useState(0);
  const [loading, setLoading] = useState(false);
  const [reloadTick, setReloadTick] = useState(0);
  // Guards against answers of a superseded query (filters / size changed meanwhile).
  const generation = useRef(0);

  const load = useCallback(
    async (serverPage: number, base: LazyState<Row>, gen: number) => {
      setLoading(true);
      try {
        const res = await api().get<Row[]>(listUrl(kind, admin, applied, serverPage, size));
        if (gen !== generation.current) return;
        const rows = Array.isArray(res.data) ? res.data : [];
        const next = appendPage(base, rows, size);
        setState(next);
        setPage((p) => clampPage(next, p, size));
      } catch (err) {
        if (gen === generation.current) {
          notifyError(err);
          setState({ ...base, hasMore: false });
        }
      } finally {
        if (gen === generation.current) setLoading(false);
      }
    },
    [kind, admin, applied, size, notifyError],
  );

  // New query: start over from the first server page.
  useEffect(() => {
    const gen = ++generation.current;
    const fresh = emptyLazy<Row>();
    setState(fresh);
    setPage(0);
    void load(1, fresh, gen);
  }, [load, reloadTick]);

  // Moving past the last known page requests the next server page (also after a click made
  // while a previous page was still loading).
  useEffect(() => {
    if (loading || state.loaded === 0) return;
    const want = pageToFetch(state, page);
    if (want !== null) void load(want, state, generation.current);
  }, [page, state, loading, load]);

  const changePage = (p: number) => setPage(p);

  const visible = pageRows(state, page, size);

  return (
    <Card variant="outlined" sx={{ minWidth: 0 }}>
      <Title title={title} />
      {banner}
      <Box
        component="form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setApplied({ ...form });
          setReloadTick((t) => t + 1);
        }}
        sx={BAR_SX}
      >
        {admin && (
          <TextField
            size="small"
            name="channel"
            label={translate('feat.tasklogs.filter.channel')}
            value={form.channel}
            onChange={(e) => setForm({ ...form, channel: e.target.value.replace(/\D/g, '') })}
            fullWidth={false}
            sx={{ width: 110 }}
          />
        )}
        <TextField
          size="small"
          name="task_id"
          label={translate(idLabel)}
          value={form.id}
          onChange={(e) => setForm({ ...form, id: e.target.value })}
          fullWidth={false}
          sx={{ width: 180 }}
        />
        <TextField
          size="small"
          type="datetime-local"
          name="start"
          label={translate('feat.tasklogs.filter.start')}
          value={form.start}
          onChange={(e) => setForm({ ...form, start: e.target.value })}
          slotProps={{ inputLabel: { shrink: true } }}
          fullWidth={false}
          sx={{ width: 230 }}
        />
        <TextField
          size="small"
          type="datetime-local"
          name="end"
          label={translate('feat.tasklogs.filter.end')}
          value={form.end}
          onChange={(e) => setForm({ ...form, end: e.target.value })}
          slotProps={{ inputLabel: { shrink: true } }}
          fullWidth={false}
          sx={{ width: 230 }}
        />
        <Button type="submit" variant="contained" startIcon={<SearchIcon />}>
          {translate('feat.tasklogs.filter.search')}
        </Button>
        <Button
          onClick={() => {
            const d = defaults();
            setForm(d);
            setApplied(d);
            setReloadTick((t) => t + 1);
          }}
        >
          {translate('feat.tasklogs.filter.reset')}
        </Button>
        <Tooltip title={translate('feat.tasklogs.filter.refresh')}>
          <IconButton onClick={() => setReloadTick((t) => t + 1)} aria-label="refresh">
            <RefreshIcon />
          </IconButton>
        </Tooltip>
      </Box>
      <Box sx={{ position: 'relative' }}>
        {loading && <LinearProgress sx={{ position: 'absolute', top: 0, left: 0, right: 0, zIndex: 1 }} />}
        <TableContainer sx={{ overflowX: 'auto' }}>
          <Table size="small" data-testid={`${kind}-table`}>
            <TableHead>
              <TableRow>
                {columns.map((c) => (
                  <TableCell key={c.key} align={c.align} sx={{ fontWeight: 600, whiteSpace: 'nowrap' }}>
                    {translate(c.label)}
                  </TableCell>
                ))}
              </TableRow>
            </TableHead>
            <TableBody>
              {visible.map((r) => (
                <TableRow hover key={r.id}>
                  {columns.map((c) => (
                    <TableCell key={c.key} align={c.align} sx={{ whiteSpace: 'nowrap', minWidth: c.minWidth }}>
                      {c.render(r)}
                    </TableCell>
                  ))}
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </TableContainer>
        {!loading && visible.length === 0 && (
          <Typography color="text.secondary" sx={{ p: 4, textAlign: 'center' }}>
            {translate('feat.tasklogs.empty')}
          </Typography>
        )}
      </Box>
      <TablePagination
        component="div"
        count={pagerCount(state)}
        page={page}
        rowsPerPage={size}
        rowsPerPageOptions={PAGE_SIZE_OPTIONS as unknown as number[]}
        onPageChange={(_, p) => changePage(p)}
        onRowsPerPageChange={(e) => setSize(Number(e.target.value))}
        labelRowsPerPage={translate('feat.tasklogs.rows_per_page')}
        labelDisplayedRows={({ from, to }) =>
          translate(state.hasMore ? 'feat.tasklogs.page_range_more' : 'feat.tasklogs.page_range', { from, to, count: state.rows.length })
        }
      />
    </Card>
  );
}

/** Inline banner (admins, drawing log). */
export function InfoBanner({ text }: { text: string }) {
  return (
    <Alert severity="info" sx={{ m: 2, mb: 0 }} data-testid="callback-banner">
      {text}
    </Alert>
  );
}
