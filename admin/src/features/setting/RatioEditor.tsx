import { useEffect, useMemo, useState } from 'react';
import {
  Box,
  Button,
  Checkbox,
  IconButton,
  InputAdornment,
  MenuItem,
  Stack,
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
import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/DeleteOutline';
import SaveIcon from '@mui/icons-material/SaveOutlined';
import SearchIcon from '@mui/icons-material/Search';
import { useNotify, useTranslate } from 'react-admin';
import { PAGE_SIZE_OPTIONS } from '../../lib/pageSize';
import { useOptions, useSaveOptions } from './OptionSection';
import {
  addModel,
  batchSet,
  changedRatioOptions,
  completionTokenPrice,
  filterRows,
  numericError,
  pageOf,
  ratiosFromPrices,
  rowMode,
  rowsFromOptions,
  setRowMode,
  tokenPrice,
  type BatchField,
  type PriceRow,
} from './settingOptions';

type UiMode = 'ratio' | 'price' | 'request';

/** Toolbar fields keep their own width (the theme makes text fields full width). */
export const BAR_SX = { '& .MuiFormControl-root': { width: { xs: '100%', md: 'auto' }, m: 0 } } as const;

const cellInput = { width: 96, '& input': { py: 0.5, px: 1, fontSize: 13 } } as const;

/** Visual ratio settings: one row per model, three pricing modes, batch set, search and paging. */
export function RatioEditor() {
  const translate = useTranslate();
  const notify = useNotify();
  const { options } = useOptions();
  const save = useSaveOptions();
  const [rows, setRows] = useState<PriceRow[]>(() => rowsFromOptions(options));
  // The "by price" display of per-token rows (UI state) and their typed prices.
  const [byPrice, setByPrice] = useState<Record<string, { input: string; output: string }>>({});
  const [selected, setSelected] = useState<string[]>([]);
  const [q, setQ] = useState('');
  const [page, setPage] = useState(0);
  const [size, setSize] = useState(10);
  const [newName, setNewName] = useState('');
  const [batch, setBatch] = useState<{ field: BatchField; value: string; value2: string }>({ field: 'ratio', value: '', value2: '' });

  const sourceKey = `${options.ModelPrice}|${options.ModelRatio}|${options.CompletionRatio}|${options.CacheRatio}`;
  useEffect(() => {
    setRows(rowsFromOptions(options));
    setByPrice({});
    // eslint-disable-next-line react-hooks/exhaustive-deps -- `sourceKey` stands for the four ratio options: `options` is a new object on every refresh, and resetting on it would drop unsaved edits
  }, [sourceKey]);

  const filtered = useMemo(() => filterRows(rows, q), [rows, q]);
  const visible = pageOf(filtered, page + 1, size);

  const update = (name: string, patch: Partial<PriceRow>) => setRows((rs) => rs.map((r) => (r.name === name ? { ...r, ...patch } : r)));
  const uiMode = (r: PriceRow): UiMode => (rowMode(r) === 'per-request' ? 'request' : byPrice[r.name] ? 'price' : 'ratio');
  const setMode = (r: PriceRow, m: UiMode) => {
    const next = setRowMode(r, m === 'request' ? 'per-request' : 'per-token');
    setRows((rs) => rs.map((x) => (x.name === r.name ? next : x)));
    setByPrice((b) => {
      const c = { ...b };
      if (m === 'price') c[r.name] = { input: tokenPrice(next), output: completionTokenPrice(next) };
      else delete c[r.name];
      return c;
    });
  };
  const setPrice = (r: PriceRow, which: 'input' | 'output', v: string) => {
    const cur = { ...(byPrice[r.name] ?? { input: '', output: '' }), [which]: v };
    setByPrice((b) => ({ ...b, [r.name]: cur }));
    const res = ratiosFromPrices(cur.input, cur.output);
    if (res !== 'nan') update(r.name, res);
  };

  const add = () => {
    const res = addModel(rows, newName);
    if ('error' in res) return notify(res.error, { type: 'warning' });
    setRows(res);
    setNewName('');
    setQ('');
    setPage(0);
  };
  const applyBatch = () => {
    const res = batchSet(rows, selected, batch.field, batch.value, batch.value2);
    if ('error' in res) return notify(res.error, { type: 'warning' });
    setRows(res);
    setByPrice((b) => {
      const c = { ...b };
      for (const n of selected) delete c[n];
      return c;
    });
  };
  const submit = () => {
    const bad = rows.find((r) => [r.price, r.ratio, r.completionRatio, r.cacheRatio].some((v) => numericError(v)));
    const badPrice = Object.values(byPrice).some((p) => numericError(p.input) || numericError(p.output));
    if (bad || badPrice) return notify('feat.setting.ratio.err.number', { type: 'warning' });
    save.mutate(changedRatioOptions(options, rows));
  };

  const pageNames = visible.map((r) => r.name);
  const allOnPage = pageNames.length > 0 && pageNames.every((n) => selected.includes(n));
  const toggle = (n: string) => setSelected((s) => (s.includes(n) ? s.filter((x) => x !== n) : [...s, n]));

  const num = (value: string, onChange: (v: string) => void, disabled: boolean, name: string) => {
    const err = numericError(value);
    return (
      <Tooltip title={err ? translate(err) : ''} open={err ? undefined : false}>
        <TextField
          size="small"
          value={value}
          disabled={disabled}
          error={!!err}
          onChange={(e) => onChange(e.target.value)}
          sx={cellInput}
          inputProps={{ 'aria-label': name, inputMode: 'decimal' }}
        />
      </Tooltip>
    );
  };

  return (
    <Box data-testid="ratio-editor">
      <Stack direction={{ xs: 'column', md: 'row' }} spacing={1} sx={{ mb: 1.5, alignItems: { md: 'center' }, ...BAR_SX }} useFlexGap flexWrap="wrap">
        <TextField
          size="small"
          placeholder={translate('feat.setting.ratio.search')}
          value={q}
          onChange={(e) => {
            setQ(e.target.value);
            setPage(0);
          }}
          slotProps={{
            input: {
              startAdornment: (
                <InputAdornment position="start">
                  <SearchIcon fontSize="small" />
                </InputAdornment>
              ),
            },
          }}
          sx={{ width: { md: 220 } }}
          name="ratio_search"
        />
        <TextField
          size="small"
          placeholder={translate('feat.setting.ratio.new_model')}
          value={newName}
          onChange={(e) => setNewName(e.target.value)}
          onKeyDown={(e) => e.key === 'Enter' && add()}
          sx={{ width: { md: 200 } }}
          name="ratio_new_model"
        />
        <Button startIcon={<AddIcon />} onClick={add} variant="outlined">
          {translate('feat.setting.ratio.add')}
        </Button>
        <Box sx={{ flex: 1 }} />
        <Button variant="contained" startIcon={<SaveIcon />} onClick={submit} disabled={save.isPending} data-testid="ratio-save">
          {translate('feat.setting.ratio.save')}
        </Button>
      </Stack>
      <Stack direction={{ xs: 'column', md: 'row' }} spacing={1} sx={{ mb: 1.5, alignItems: { md: 'center' }, ...BAR_SX }} useFlexGap flexWrap="wrap">
        <Typography variant="body2" color="text.secondary">
          {translate('feat.setting.ratio.batch', { n: selected.length })}
        </Typography>
        <TextField
          select
          size="small"
          value={batch.field}
          onChange={(e) => setBatch((b) => ({ ...b, field: e.target.value as BatchField }))}
          sx={{ minWidth: 180 }}
          name="batch_field"
        >
          {(['ratio', 'completionRatio', 'cacheRatio', 'price', 'both'] as const).map((f) => (
            <MenuItem key={f} value={f}>
              {translate(`feat.setting.ratio.field.${f}`)}
            </MenuItem>
          ))}
        </TextField>
        <TextField
          size="small"
          placeholder={translate(batch.field === 'both' ? 'feat.setting.ratio.field.ratio' : 'feat.setting.ratio.fill')}
          value={batch.value}
          onChange={(e) => setBatch((b) => ({ ...b, value: e.target.value }))}
          sx={{ width: { md: 140 } }}
          name="batch_value"
        />
        {batch.field === 'both' && (
          <TextField
            size="small"
            placeholder={translate('feat.setting.ratio.field.completionRatio')}
            value={batch.value2}
            onChange={(e) => setBatch((b) => ({ ...b, value2: e.target.value }))}
            sx={{ width: { md: 140 } }}
            name="batch_value2"
          />
        )}
        <Button variant="outlined" onClick={applyBatch}>
          {translate('feat.setting.ratio.apply_batch')}
        </Button>
      </Stack>
      <TableContainer sx={{ border: 1, borderColor: 'divider', borderRadius: 1 }}>
        <Table size="small" sx={{ minWidth: 1120, '& th': { whiteSpace: 'nowrap' } }}>
          <TableHead>
            <TableRow>
              <TableCell padding="checkbox">
                <Checkbox
                  size="small"
                  checked={allOnPage}
                  indeterminate={!allOnPage && pageNames.some((n) => selected.includes(n))}
                  onChange={() => setSelected((s) => (allOnPage ? s.filter((n) => !pageNames.includes(n)) : [...new Set([...s, ...pageNames])]))}
                />
              </TableCell>
              <TableCell>{translate('feat.setting.ratio.col.name')}</TableCell>
              <TableCell>{translate('feat.setting.ratio.col.mode')}</TableCell>
              <TableCell>{translate('feat.setting.ratio.col.price')}</TableCell>
              <TableCell>{translate('feat.setting.ratio.col.ratio')}</TableCell>
              <TableCell>{translate('feat.setting.ratio.col.completion')}</TableCell>
              <TableCell>{translate('feat.setting.ratio.col.cache')}</TableCell>
              <TableCell>{translate('feat.setting.ratio.col.input_price')}</TableCell>
              <TableCell>{translate('feat.setting.ratio.col.output_price')}</TableCell>
              <TableCell />
            </TableRow>
          </TableHead>
          <TableBody>
            {visible.map((r) => {
              const m = uiMode(r);
              const fixed = m === 'request';
              const bp = byPrice[r.name];
              return (
                <TableRow key={r.name} hover data-model={r.name}>
                  <TableCell padding="checkbox">
                    <Checkbox size="small" checked={selected.includes(r.name)} onChange={() => toggle(r.name)} />
                  </TableCell>
                  <TableCell sx={{ fontFamily: 'monospace', fontSize: 13, wordBreak: 'break-all', minWidth: 200, maxWidth: 280 }}>{r.name}</TableCell>
                  <TableCell>
                    <TextField
                      select
                      size="small"
                      value={m}
                      onChange={(e) => setMode(r, e.target.value as UiMode)}
                      sx={{ minWidth: 130, '& .MuiSelect-select': { py: 0.5, fontSize: 13 } }}
                      inputProps={{ 'aria-label': `mode ${r.name}` }}
                    >
                      <MenuItem value="ratio">{translate('feat.setting.ratio.mode.ratio')}</MenuItem>
                      <MenuItem value="price">{translate('feat.setting.ratio.mode.price')}</MenuItem>
                      <MenuItem value="request">{translate('feat.setting.ratio.mode.request')}</MenuItem>
                    </TextField>
                  </TableCell>
                  <TableCell>{num(r.price, (v) => update(r.name, { price: v }), !fixed, `price ${r.name}`)}</TableCell>
                  <TableCell>{num(r.ratio, (v) => update(r.name, { ratio: v }), fixed || m === 'price', `ratio ${r.name}`)}</TableCell>
                  <TableCell>{num(r.completionRatio, (v) => update(r.name, { completionRatio: v }), fixed || m === 'price', `completion ${r.name}`)}</TableCell>
                  <TableCell>{num(r.cacheRatio, (v) => update(r.name, { cacheRatio: v }), fixed, `cache ${r.name}`)}</TableCell>
                  <TableCell>
                    {m === 'price'
                      ? num(bp?.input ?? '', (v) => setPrice(r, 'input', v), false, `input price ${r.name}`)
                      : fixed
                        ? '-'
                        : tokenPrice(r)
                          ? `$${tokenPrice(r)}`
                          : '-'}
                  </TableCell>
                  <TableCell>
                    {m === 'price'
                      ? num(bp?.output ?? '', (v) => setPrice(r, 'output', v), false, `output price ${r.name}`)
                      : fixed
                        ? '-'
                        : completionTokenPrice(r)
                          ? `$${completionTokenPrice(r)}`
                          : '-'}
                  </TableCell>
                  <TableCell padding="checkbox">
                    <IconButton
                      size="small"
                      aria-label={translate('ra.action.delete')}
                      onClick={() => {
                        setRows((rs) => rs.filter((x) => x.name !== r.name));
                        setSelected((s) => s.filter((x) => x !== r.name));
                      }}
                    >
                      <DeleteIcon fontSize="small" />
                    </IconButton>
                  </TableCell>
                </TableRow>
              );
            })}
            {!visible.length && (
              <TableRow>
                <TableCell colSpan={10} align="center" sx={{ color: 'text.secondary', py: 3 }}>
                  {translate('feat.setting.ratio.empty')}
                </TableCell>
              </TableRow>
            )}
          </TableBody>
        </Table>
      </TableContainer>
      <TablePagination
        component="div"
        count={filtered.length}
        page={Math.min(page, Math.max(0, Math.ceil(filtered.length / size) - 1))}
        rowsPerPage={size}
        rowsPerPageOptions={[...PAGE_SIZE_OPTIONS]}
        onPageChange={(_, p) => setPage(p)}
        onRowsPerPageChange={(e) => {
          setSize(Number(e.target.value));
          setPage(0);
        }}
        labelRowsPerPage={translate('feat.setting.rows_per_page')}
        labelDisplayedRows={({ from, to, count }) => translate('res.common.displayed_rows', { from, to, count })}
      />
      <Typography variant="caption" color="text.secondary">
        {translate('feat.setting.ratio.hint')}
      </Typography>
    </Box>
  );
}
