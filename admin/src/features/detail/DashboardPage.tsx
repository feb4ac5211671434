import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import {
  Box,
  Button,
  Card,
  CardContent,
  IconButton,
  LinearProgress,
  MenuItem,
  Tab,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  Tabs,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import RefreshIcon from '@mui/icons-material/Refresh';
import SearchIcon from '@mui/icons-material/Search';
import PaidIcon from '@mui/icons-material/PaidOutlined';
import SendIcon from '@mui/icons-material/SendOutlined';
import DataUsageIcon from '@mui/icons-material/DataUsageOutlined';
import SpeedIcon from '@mui/icons-material/SpeedOutlined';
import TokenIcon from '@mui/icons-material/TokenOutlined';
import { Title, useTranslate } from 'react-admin';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api } from '../../lib/http';
import { useStatus } from '../../lib/StatusContext';
import { isAdmin } from '../../lib/storage';
import { useStoredUser } from '../../lib/useUser';
import { ColorTag, toneColor } from '../../resources/shared/ColorTag';
import { compactNumber, formatQuota, modelTones, parseDateText, stringColor } from '../../resources/shared/format';
import { LOAD_ONCE, useDisplaySettings, useNotifyError, useQueryError } from '../../resources/shared/hooks';
import { BAR_SX } from '../tasklogs/LogPage';
import { StackedBars } from './StackedBars';
import { ChannelAlerts } from '../../resources/channels/channelHealth';
import {
  GRANULARITIES,
  METRICS,
  OTHER,
  bucketAxis,
  buildSeries,
  dataUrl,
  formatRate,
  defaultForm,
  defaultGranularity,
  modelTotals,
  quotaTick,
  totals,
  type DashboardForm,
  type DataRow,
  type Metric,
} from './usageSeries';

function StatCard({ icon, label, value, testId }: { icon: ReactNode; label: string; value: string; testId: string }) {
  return (
    <Card variant="outlined" sx={{ flex: '1 1 170px', minWidth: 0 }}>
      <CardContent sx={{ display: 'flex', alignItems: 'center', gap: 1.5, py: 1.5, '&:last-child': { pb: 1.5 } }}>
        <Box sx={{ color: 'primary.main', display: 'flex', p: 1, borderRadius: 2, bgcolor: 'action.hover' }}>{icon}</Box>
        <Box sx={{ minWidth: 0 }}>
          <Typography variant="body2" color="text.secondary" noWrap>
            {label}
          </Typography>
          <Typography variant="h6" data-testid={testId} noWrap>
            {value}
          </Typography>
        </Box>
      </CardContent>
    </Card>
  );
}

/** /detail: consumption totals and charts over time by model (from the consume logs). */
export function DashboardPage() {
  const translate = useTranslate();
  const notifyError = useNotifyError();
  const display = useDisplaySettings();
  const { status } = useStatus();
  const admin = isAdmin(useStoredUser());
  const [form, setForm] = useState<DashboardForm>(() => defaultForm(defaultGranularity(status.data_export_default_time)));
  const [applied, setApplied] = useState<DashboardForm>(form);
  const [metric, setMetric] = useState<Metric>('quota');

  // The site default granularity may arrive after the first render (status not cached yet):
  // follow it until the user changes the filters.
  const touched = useRef(false);
  const siteDefault = defaultGranularity(status.data_export_default_time);
  useEffect(() => {
    if (touched.current) return;
    const d = defaultForm(siteDefault);
    setForm((f) => (f.granularity === siteDefault ? f : d));
    setApplied((a) => (a.granularity === siteDefault ? a : d));
  }, [siteDefault]);

  const start = parseDateText(applied.start);
  const end = parseDateText(applied.end);

  const url = dataUrl(admin, start, end, applied.granularity, applied.username);
  // The previous rows stay on screen while other dates load; a failed load empties the page.
  const query = useQuery({
    queryKey: ['gateway', 'usageData', url],
    queryFn: () =>
      api()
        .get<DataRow[]>(url)
        .then((res) => (Array.isArray(res.data) ? res.data : [])),
    placeholderData: keepPreviousData,
    ...LOAD_ONCE,
  });
  useQueryError(query, notifyError);
  const rows = useMemo(() => (query.isError ? [] : (query.data ?? [])), [query.isError, query.data]);
  const loading = query.isFetching;
  const { refetch } = query;
  /** Shows `next` (a search, the reset): loaded again even when it asks what is shown. */
  const show = (next: DashboardForm) => {
    const p = (t: string) => parseDateText(t);
    if (dataUrl(admin, p(next.start), p(next.end), next.granularity, next.username) === url) void refetch();
    setApplied(next);
  };

  const nowSec = Math.floor(Date.now() / 1000);
  const rangeStart = start ?? nowSec - 7 * 86400;
  const rangeEnd = end ?? nowSec;
  const sum = useMemo(() => totals(rows, rangeStart, rangeEnd), [rows, rangeStart, rangeEnd]);
  const axis = useMemo(() => bucketAxis(rows, applied.granularity, rangeStart, rangeEnd), [rows, applied.granularity, rangeStart, rangeEnd]);
  const series = useMemo(() => buildSeries(rows, axis, metric), [rows, axis, metric]);
  const models = useMemo(() => modelTotals(rows), [rows]);
  // One colour per model for the page: the chart tabs and the table agree (order: the table's).
  const tones = useMemo(() => modelTones(models.map((m) => m.model)), [models]);
  const colorOf = (name: string) => (name === OTHER ? '#9e9e9e' : toneColor(tones.get(name) ?? stringColor(name)));

  const formatMetric = (v: number) => (metric === 'quota' ? quotaTick(v, display.displayInCurrency, display.quotaPerUnit, compactNumber) : compactNumber(v));
  const seriesName = (n: string) => (n === OTHER ? translate('feat.detail.other') : n);

  return (
    <Box sx={{ display: 'flex', flexDirection: 'column', gap: 2, minWidth: 0 }}>
      <Title title={translate('feat.detail.title')} />
      <Card variant="outlined">
        <Box
          component="form"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            touched.current = true;
            show({ ...form });
          }}
          sx={BAR_SX}
        >
          <TextField
            size="small"
            type="datetime-local"
            name="start"
            label={translate('feat.detail.start')}
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
            label={translate('feat.detail.end')}
            value={form.end}
            onChange={(e) => setForm({ ...form, end: e.target.value })}
            slotProps={{ inputLabel: { shrink: true } }}
            fullWidth={false}
            sx={{ width: 230 }}
          />
          <TextField
            select
            size="small"
            name="granularity"
            label={translate('feat.detail.granularity')}
            value={form.granularity}
            onChange={(e) => {
              touched.current = true;
              setForm({ ...form, granularity: defaultGranularity(e.target.value) });
            }}
            fullWidth={false}
            sx={{ width: 120 }}
          >
            {GRANULARITIES.map((g) => (
              <MenuItem key={g} value={g}>
                {translate(`feat.detail.g.${g}`)}
              </MenuItem>
            ))}
          </TextField>
          {admin && (
            <TextField
              size="small"
              name="username"
              label={translate('feat.detail.username')}
              value={form.username}
              onChange={(e) => setForm({ ...form, username: e.target.value })}
              fullWidth={false}
              sx={{ width: 160 }}
            />
          )}
          <Button type="submit" variant="contained" startIcon={<SearchIcon />}>
            {translate('feat.detail.search')}
          </Button>
          <Button
            onClick={() => {
              const d = defaultForm(defaultGranularity(status.data_export_default_time));
              setForm(d);
              show(d);
            }}
          >
            {translate('feat.detail.reset')}
          </Button>
          <Tooltip title={translate('feat.detail.refresh')}>
            <IconButton onClick={() => void refetch()} aria-label="refresh">
              <RefreshIcon />
            </IconButton>
          </Tooltip>
        </Box>
      </Card>

      <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 2 }}>
        <StatCard icon={<PaidIcon />} label={translate('feat.detail.total_quota')} value={formatQuota(sum.quota, display)} testId="total-quota" />
        <StatCard icon={<SendIcon />} label={translate('feat.detail.total_count')} value={String(sum.count)} testId="total-count" />
        <StatCard icon={<TokenIcon />} label={translate('feat.detail.total_tokens')} value={compactNumber(sum.tokens)} testId="total-tokens" />
        <StatCard icon={<SpeedIcon />} label={translate('feat.detail.avg_rpm')} value={formatRate(sum.rpm, compactNumber)} testId="avg-rpm" />
        <StatCard icon={<DataUsageIcon />} label={translate('feat.detail.avg_tpm')} value={formatRate(sum.tpm, compactNumber)} testId="avg-tpm" />
      </Box>

      <Card variant="outlined" sx={{ minWidth: 0 }}>
        {loading && <LinearProgress />}
        <Tabs
          value={metric}
          onChange={(_, v: Metric) => setMetric(v)}
          variant="scrollable"
          sx={{ px: 2, borderBottom: 1, borderColor: 'divider', '& .MuiTab-root': { textTransform: 'none' } }}
        >
          {METRICS.map((m) => (
            <Tab key={m} value={m} label={translate(`feat.detail.chart.${m}`)} />
          ))}
        </Tabs>
        <CardContent sx={{ overflow: 'hidden' }}>
          {series.length === 0 ? (
            <Typography color="text.secondary" sx={{ p: 6, textAlign: 'center' }} data-testid="chart-empty">
              {translate('feat.detail.empty')}
            </Typography>
          ) : (
            <StackedBars
              axis={axis}
              series={series}
              granularity={applied.granularity}
              format={formatMetric}
              seriesName={seriesName}
              colorOf={colorOf}
              integer={metric !== 'quota'}
            />
          )}
        </CardContent>
      </Card>

      <Card variant="outlined" sx={{ minWidth: 0 }}>
        <Typography variant="subtitle1" sx={{ px: 2, pt: 1.5, fontWeight: 600 }}>
          {translate('feat.detail.by_model')}
        </Typography>
        <TableContainer sx={{ overflowX: 'auto' }}>
          <Table size="small" data-testid="model-table">
            <TableHead>
              <TableRow>
                <TableCell sx={{ fontWeight: 600 }}>{translate('feat.detail.model')}</TableCell>
                <TableCell align="right" sx={{ fontWeight: 600 }}>
                  {translate('feat.detail.total_count')}
                </TableCell>
                <TableCell align="right" sx={{ fontWeight: 600 }}>
                  {translate('feat.detail.total_quota')}
                </TableCell>
                <TableCell align="right" sx={{ fontWeight: 600 }}>
                  {translate('feat.detail.total_tokens')}
                </TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {models.map((m) => (
                <TableRow key={m.model} hover>
                  <TableCell>
                    <ColorTag tone={tones.get(m.model) ?? stringColor(m.model)} label={m.model} data-testid={`model-tag-${m.model}`} />
                  </TableCell>
                  <TableCell align="right">{m.count}</TableCell>
                  <TableCell align="right">{formatQuota(m.quota, display)}</TableCell>
                  <TableCell align="right">{compactNumber(m.token_used)}</TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </TableContainer>
        {models.length === 0 && !loading && (
          <Typography color="text.secondary" sx={{ p: 3, textAlign: 'center' }}>
            {translate('feat.detail.empty')}
          </Typography>
        )}
      </Card>
      {admin && <ChannelAlerts />}
    </Box>
  );
}
