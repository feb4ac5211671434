import { useEffect, useState } from 'react';
import {
  Box,
  Button,
  CircularProgress,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  IconButton,
  Link,
  MenuItem,
  Paper,
  Stack,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import RefreshIcon from '@mui/icons-material/Refresh';
import { List, useListContext, useRefresh, useTranslate, type RaRecord } from 'react-admin';
import { ColorTag } from '../shared/ColorTag';
import { GwTable, type Column } from '../shared/GwTable';
import { GwPagination } from '../shared/GwPagination';
import { FILTER_BAR_SX, LIST_SX } from '../shared/styles';
import { readPageSize } from '../shared/pageSize';
import { useDisplaySettings, useNotifyError } from '../shared/hooks';
import { compactNumber, firstTokenColor, formatQuota, formatTimestamp, parseJsonObject, stringColor, useTimeColor } from '../shared/format';
import { storedUserRole, useGateway } from '../shared/api';
import { LOG_TYPES, firstTokenSeconds, logDetail, logTypeColor, logTypeKey, usedChannels } from './logDisplay';
import { EMPTY_LOG_FILTER as EMPTY, toFilter, type FilterForm } from './logFilters';

type Row = RaRecord & Record<string, any>;

export const LogList = () => (
  <List resource="log" perPage={readPageSize('log')} actions={false} pagination={<GwPagination />} empty={false} exporter={false} title="res.log.title" storeKey={false} sx={LIST_SX} disableSyncWithLocation>
    <Body />
  </List>
);

const Body = () => {
  const translate = useTranslate();
  const refresh = useRefresh();
  const dp = useGateway();
  const display = useDisplaySettings();
  const admin = storedUserRole() >= 10;
  const { setFilters, filterValues, data } = useListContext<Row>();
  const [form, setForm] = useState<FilterForm>(EMPTY);
  const [stat, setStat] = useState<{ quota: number; rpm: number; tpm: number } | null>(null);
  const [userLookup, setUserLookup] = useState<number | null>(null);
  const set = <K extends keyof FilterForm>(k: K, v: FilterForm[K]) => setForm((f) => ({ ...f, [k]: v }));

  useEffect(() => {
    let alive = true;
    dp.logStat(filterValues ?? {}, admin)
      .then((s) => alive && setStat(s))
      .catch(() => alive && setStat(null));
    return () => {
      alive = false;
    };
    // data changes after each fetch (refresh or filters): the stats follow
  }, [dp, filterValues, admin, data]);

  const isConsume = (r: Row) => Number(r.type) === 2 || Number(r.type) === 0;

  const columns: Column<Row>[] = [
    { key: 'created_at', label: 'res.log.fields.created_at', render: (r) => formatTimestamp(r.created_at) },
    ...(admin
      ? [
          {
            key: 'channel',
            label: 'res.log.fields.channel',
            render: (r: Row) =>
              isConsume(r) && r.channel ? (
                <Tooltip title={r.channel_name || ''}>
                  <span><ColorTag tone={stringColor(String(r.channel))} label={String(r.channel)} /></span>
                </Tooltip>
              ) : null,
          },
          {
            key: 'username',
            label: 'res.log.fields.username',
            render: (r: Row) =>
              r.username ? (
                <Link component="button" underline="hover" onClick={() => setUserLookup(Number(r.user_id))}>
                  {r.username}
                </Link>
              ) : null,
          },
        ]
      : []),
    { key: 'token_name', label: 'res.log.fields.token_name', render: (r) => (isConsume(r) && r.token_name ? <ColorTag tone="grey" label={r.token_name} /> : null) },
    {
      key: 'group',
      label: 'res.log.fields.group',
      render: (r) => {
        const g = r.group || parseJsonObject(r.other).group;
        return isConsume(r) && g ? <ColorTag tone={stringColor(String(g))} label={String(g)} /> : null;
      },
    },
    { key: 'type', label: 'res.log.fields.type', render: (r) => <ColorTag tone={logTypeColor(Number(r.type))} label={translate(`res.log.type.${logTypeKey(Number(r.type))}`)} /> },
    {
      key: 'model_name',
      label: 'res.log.fields.model_name',
      render: (r) => {
        if (!isConsume(r) || !r.model_name) return null;
        const o = parseJsonObject(r.other);
        const tag = <ColorTag tone={stringColor(String(r.model_name))} label={r.model_name} />;
        return o.is_model_mapped && o.upstream_model_name ? (
          <Tooltip title={`${translate('res.log.upstream_model')}: ${o.upstream_model_name}`}><span>{tag}</span></Tooltip>
        ) : (
          tag
        );
      },
    },
    {
      key: 'use_time',
      label: 'res.log.fields.use_time',
      render: (r) => {
        if (!isConsume(r)) return null;
        const t = Number(r.use_time) || 0;
        const frt = firstTokenSeconds(r.other);
        return (
          <Stack direction="row" spacing={0.5}>
            <ColorTag tone={useTimeColor(t)} label={`${t} s`} />
            {frt !== null && (
              <Tooltip title={translate('res.log.first_token')}>
                <span><ColorTag tone={firstTokenColor(frt)} label={`${frt.toFixed(1)} s`} /></span>
              </Tooltip>
            )}
            <ColorTag tone={r.is_stream ? 'blue' : 'purple'} label={translate(r.is_stream ? 'res.log.stream' : 'res.log.non_stream')} />
          </Stack>
        );
      },
    },
    { key: 'prompt_tokens', label: 'res.log.fields.prompt_tokens', align: 'right', render: (r) => (isConsume(r) ? compactNumber(r.prompt_tokens) : null) },
    { key: 'completion_tokens', label: 'res.log.fields.completion_tokens', align: 'right', render: (r) => (isConsume(r) ? compactNumber(r.completion_tokens) : null) },
    { key: 'quota', label: 'res.log.fields.quota', align: 'right', render: (r) => (isConsume(r) ? formatQuota(r.quota, display, 6) : Number(r.type) === 1 ? formatQuota(r.quota, display) : null) },
    {
      key: 'detail',
      label: 'res.log.fields.detail',
      render: (r) => {
        const d = logDetail(r as never);
        const text = d.parts.length ? d.parts.map((p) => translate(p.key, p.params)).join('  ') : d.text ?? '';
        return (
          <Tooltip title={text}>
            <Typography variant="body2" sx={{ maxWidth: 320, overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }}>
              {text}
            </Typography>
          </Tooltip>
        );
      },
    },
    ...(admin
      ? [
          {
            key: 'retry',
            label: 'res.log.fields.retry',
            render: (r: Row) => {
              const used = usedChannels(r.other);
              return used.length > 1 ? <Typography variant="body2">{translate('res.log.retry_path', { path: used.join(' → ') })}</Typography> : null;
            },
          },
        ]
      : []),
  ];

  return (
    <Box>
      <Box component="form" noValidate onSubmit={(e) => { e.preventDefault(); setFilters(toFilter(form, admin), {}); }} sx={{ ...FILTER_BAR_SX, p: 2, display: 'flex', flexWrap: 'wrap', gap: 1, alignItems: 'center' }}>
        <TextField select size="small" label={translate('res.log.fields.type')} value={form.type} onChange={(e) => set('type', Number(e.target.value))} sx={{ minWidth: 120 }}>
          {LOG_TYPES.map((t) => <MenuItem key={t} value={t}>{translate(`res.log.type.${logTypeKey(t)}`)}</MenuItem>)}
        </TextField>
        <TextField size="small" label={translate('res.log.fields.token_name')} value={form.token_name} onChange={(e) => set('token_name', e.target.value)} />
        <TextField size="small" label={translate('res.log.fields.model_name')} value={form.model_name} onChange={(e) => set('model_name', e.target.value)} />
        <TextField size="small" type="datetime-local" label={translate('res.log.start')} value={form.start} onChange={(e) => set('start', e.target.value)} slotProps={{ inputLabel: { shrink: true } }} />
        <TextField size="small" type="datetime-local" label={translate('res.log.end')} value={form.end} onChange={(e) => set('end', e.target.value)} slotProps={{ inputLabel: { shrink: true } }} />
        <TextField size="small" label={translate('res.log.fields.group')} value={form.group} onChange={(e) => set('group', e.target.value)} sx={{ width: 120 }} />
        {admin && <TextField size="small" label={translate('res.log.channel_id')} value={form.channel} onChange={(e) => set('channel', e.target.value)} sx={{ width: 110 }} />}
        {admin && <TextField size="small" label={translate('res.log.fields.username')} value={form.username} onChange={(e) => set('username', e.target.value)} sx={{ width: 140 }} />}
        <Button type="submit" variant="contained">{translate('res.common.search')}</Button>
        <Button onClick={() => { setForm(EMPTY); setFilters({}, {}); }}>{translate('res.common.reset')}</Button>
        <IconButton onClick={() => refresh()}><RefreshIcon /></IconButton>
      </Box>
      <Paper variant="outlined" sx={{ mx: 2, mb: 2, px: 2, py: 1, display: 'flex', gap: 1, flexWrap: 'wrap', alignItems: 'center' }}>
        <ColorTag tone="blue" label={`${translate('res.log.stat.quota')}: ${stat ? formatQuota(stat.quota, display) : '-'}`} />
        <ColorTag tone="pink" label={`RPM: ${stat ? compactNumber(stat.rpm) : '-'}`} />
        <ColorTag tone="grey" label={`TPM: ${stat ? compactNumber(stat.tpm) : '-'}`} />
      </Paper>
      <GwTable<Row> columns={columns} emptyText="res.log.empty" />
      <UserInfoDialog id={userLookup} onClose={() => setUserLookup(null)} />
    </Box>
  );
};

const UserInfoDialog = ({ id, onClose }: { id: number | null; onClose: () => void }) => {
  const translate = useTranslate();
  const dp = useGateway();
  const notifyError = useNotifyError();
  const display = useDisplaySettings();
  const [user, setUser] = useState<Record<string, any> | null>(null);
  useEffect(() => {
    setUser(null);
    if (!id) return;
    dp.getOne('user', { id })
      .then((r) => setUser(r.data))
      .catch((e) => {
        notifyError(e);
        onClose();
      });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [id]);
  return (
    <Dialog open={!!id} onClose={onClose} fullWidth maxWidth="xs">
      <DialogTitle>{translate('res.log.user_info')}</DialogTitle>
      <DialogContent>
        {!user ? (
          <Box sx={{ display: 'flex', justifyContent: 'center', p: 3 }}><CircularProgress size={24} /></Box>
        ) : (
          <Stack spacing={1}>
            <Typography>{translate('res.user.fields.username')}: {user.username}</Typography>
            <Typography>{translate('res.user.fields.quota')}: {formatQuota(user.quota, display)}</Typography>
            <Typography>{translate('res.user.fields.used_quota')}: {formatQuota(user.used_quota, display)}</Typography>
            <Typography>{translate('res.user.fields.request_count')}: {user.request_count ?? 0}</Typography>
          </Stack>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('res.common.close')}</Button>
      </DialogActions>
    </Dialog>
  );
};
