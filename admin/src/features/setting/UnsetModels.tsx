import { useEffect, useMemo, useState } from 'react';
import { Box, Button, Checkbox, List, ListItem, ListItemIcon, ListItemText, MenuItem, Pagination, Stack, TextField, Typography } from '@mui/material';
import { useNotify, useTranslate } from 'react-admin';
import { useQuery } from '@tanstack/react-query';
import { useGateway } from '../../resources/shared/api';
import { LOAD_ONCE, useNotifyError, useQueryError } from '../../resources/shared/hooks';
import { useOptions, useSaveOptions } from './OptionSection';
import { BAR_SX } from './RatioEditor';
import { batchSet, changedRatioOptions, pageOf, rowsFromOptions, unsetModels, type BatchField } from './settingOptions';

const PAGE = 10;
const NO_MODELS: string[] = [];

/** Models served by an enabled channel that have neither a ratio nor a fixed price; quick set. */
export function UnsetModels() {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const { options } = useOptions();
  const save = useSaveOptions();
  const dp = useGateway();
  const enabledModels = useQuery({ queryKey: ['channel', 'enabledModels'], queryFn: () => dp.enabledModels().then((r) => r.data), ...LOAD_ONCE });
  useQueryError(enabledModels, notifyError);
  // null while loading; a failed load lists nothing (its error was notified).
  const enabled = enabledModels.data ?? (enabledModels.isError ? NO_MODELS : null);
  const [page, setPage] = useState(1);
  const [selected, setSelected] = useState<string[]>([]);
  const [field, setField] = useState<BatchField>('both');
  const [value, setValue] = useState('');
  const [value2, setValue2] = useState('');
  const [q, setQ] = useState('');

  const all = useMemo(() => unsetModels(enabled ?? [], options), [enabled, options]);
  const list = useMemo(() => all.filter((m) => m.toLowerCase().includes(q.trim().toLowerCase())), [all, q]);
  const visible = pageOf(list, page, PAGE);
  const pages = Math.max(1, Math.ceil(list.length / PAGE));
  useEffect(() => {
    if (page > pages) setPage(pages);
  }, [page, pages]);
  useEffect(() => setSelected((s) => s.filter((n) => all.includes(n))), [all]);

  const apply = async () => {
    const rows = rowsFromOptions(options);
    const base = [
      ...rows,
      ...selected.filter((n) => !rows.some((r) => r.name === n)).map((name) => ({ name, price: '', ratio: '', completionRatio: '', cacheRatio: '' })),
    ];
    const res = batchSet(base, selected, field, value, value2);
    if ('error' in res) return notify(res.error, { type: 'warning' });
    if (await save.mutateAsync(changedRatioOptions(options, res)).catch(() => false)) {
      setSelected([]);
      setValue('');
      setValue2('');
    }
  };

  if (enabled === null) return <Typography color="text.secondary">{translate('ra.page.loading')}</Typography>;
  return (
    <Box data-testid="unset-models">
      <Stack direction={{ xs: 'column', md: 'row' }} spacing={1} sx={{ mb: 1.5, alignItems: { md: 'center' }, ...BAR_SX }} useFlexGap flexWrap="wrap">
        <TextField
          size="small"
          name="unset_search"
          placeholder={translate('feat.setting.ratio.search')}
          value={q}
          onChange={(e) => {
            setQ(e.target.value);
            setPage(1);
          }}
          sx={{ width: { md: 200 } }}
        />
        <Typography variant="body2" color="text.secondary">
          {translate('feat.setting.ratio.batch', { n: selected.length })}
        </Typography>
        <TextField select size="small" value={field} onChange={(e) => setField(e.target.value as BatchField)} sx={{ minWidth: 180 }}>
          {(['both', 'ratio', 'price'] as const).map((f) => (
            <MenuItem key={f} value={f}>
              {translate(`feat.setting.ratio.field.${f}`)}
            </MenuItem>
          ))}
        </TextField>
        <TextField
          size="small"
          placeholder={translate(field === 'both' ? 'feat.setting.ratio.field.ratio' : 'feat.setting.ratio.fill')}
          value={value}
          onChange={(e) => setValue(e.target.value)}
          sx={{ width: { md: 140 } }}
        />
        {field === 'both' && (
          <TextField
            size="small"
            placeholder={translate('feat.setting.ratio.field.completionRatio')}
            value={value2}
            onChange={(e) => setValue2(e.target.value)}
            sx={{ width: { md: 140 } }}
          />
        )}
        <Button variant="contained" onClick={apply}>
          {translate('feat.setting.ratio.quick_set')}
        </Button>
      </Stack>
      {all.length === 0 ? (
        <Typography color="text.secondary" sx={{ py: 2 }}>
          {translate('feat.setting.ratio.no_unset')}
        </Typography>
      ) : (
        <>
          <List dense sx={{ border: 1, borderColor: 'divider', borderRadius: 1 }}>
            {visible.map((m) => (
              <ListItem key={m} dense onClick={() => setSelected((s) => (s.includes(m) ? s.filter((x) => x !== m) : [...s, m]))} sx={{ cursor: 'pointer' }}>
                <ListItemIcon sx={{ minWidth: 36 }}>
                  <Checkbox size="small" edge="start" checked={selected.includes(m)} tabIndex={-1} />
                </ListItemIcon>
                <ListItemText primary={m} slotProps={{ primary: { sx: { fontFamily: 'monospace', fontSize: 13 } } }} />
              </ListItem>
            ))}
          </List>
          <Stack direction="row" sx={{ mt: 1, justifyContent: 'space-between', alignItems: 'center' }}>
            <Typography variant="caption" color="text.secondary">
              {translate('feat.setting.ratio.unset_total', { n: all.length })}
            </Typography>
            <Pagination size="small" count={pages} page={page} onChange={(_, p) => setPage(p)} />
          </Stack>
        </>
      )}
    </Box>
  );
}
