import { useEffect, useState } from 'react';
import {
  Autocomplete,
  Box,
  Button,
  Chip,
  CircularProgress,
  Divider,
  FormControlLabel,
  MenuItem,
  Stack,
  Switch,
  TextField,
  Typography,
} from '@mui/material';
import { useNotify, useRefresh, useTranslate } from 'react-admin';
import { SideDrawer } from '../shared/SideDrawer';
import { useGateway } from '../shared/api';
import { useDisplaySettings, useNotifyError } from '../shared/hooks';
import { formatQuota, formatTimestamp, groupRatioColor } from '../shared/format';
import { ColorTag } from '../shared/ColorTag';
import {
  BATCH_PRESETS,
  EXPIRY_OPTIONS,
  QUOTA_PRESETS,
  TOKEN_DEFAULTS,
  batchNames,
  expiryFromOption,
  parseBatchCount,
  tokenPayload,
  tokenToForm,
  validateToken,
  type TokenForm,
} from './tokenForm';

export const TokenEditDrawer = ({ creating, editId, onClose }: { creating: boolean; editId?: string; onClose: () => void }) => (
  <SideDrawer open={creating || !!editId} onClose={onClose} title={creating ? 'res.token.create_title' : 'res.token.edit_title'} width={560}>
    <TokenFormView key={editId ?? 'new'} editId={creating ? undefined : editId} onDone={onClose} />
  </SideDrawer>
);

const TokenFormView = ({ editId, onDone }: { editId?: string; onDone: () => void }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const dp = useGateway();
  const display = useDisplaySettings();
  const isEdit = !!editId;
  const [form, setForm] = useState<TokenForm>(TOKEN_DEFAULTS);
  const [loading, setLoading] = useState(isEdit);
  const [saving, setSaving] = useState(false);
  const [models, setModels] = useState<string[]>([]);
  const [groups, setGroups] = useState<Record<string, { desc: string; ratio: number }>>({});
  const set = <K extends keyof TokenForm>(k: K, v: TokenForm[K]) => setForm((f) => ({ ...f, [k]: v }));

  useEffect(() => {
    dp.userModels().then((r) => setModels(r.data)).catch(() => undefined);
    dp.selfGroups().then((r) => setGroups(r.data)).catch(() => undefined);
  }, [dp]);

  useEffect(() => {
    if (!editId) return;
    dp.getOne('token', { id: editId })
      .then((r) => setForm(tokenToForm(r.data, formatTimestamp)))
      .catch((e) => {
        notifyError(e);
        onDone();
      })
      .finally(() => setLoading(false));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [editId]);

  const submit = async () => {
    const err = validateToken(form, isEdit);
    if (err) return notify(err, { type: 'warning' });
    setSaving(true);
    try {
      const body = tokenPayload(form);
      if (isEdit) {
        await dp.update('token', { id: form.id!, data: body, previousData: { id: form.id! } });
        notify('res.token.msg.updated', { type: 'success' });
      } else {
        const count = parseBatchCount(form.count) ?? 1;
        for (const name of batchNames(form.name.trim(), count)) {
          await dp.create('token', { data: { ...body, name } });
        }
        notify('res.token.msg.created', { type: 'success' });
      }
      refresh();
      onDone();
    } catch (e) {
      notifyError(e);
      refresh();
    } finally {
      setSaving(false);
    }
  };

  if (loading) {
    return (
      <Box sx={{ display: 'flex', justifyContent: 'center', p: 6 }}>
        <CircularProgress />
      </Box>
    );
  }

  const quotaNumber = parseInt(String(form.remain_quota), 10);

  return (
    <Box component="form" noValidate onSubmit={(e) => { e.preventDefault(); submit(); }}>
      <Stack spacing={2}>
        <TextField size="small" required={!isEdit} label={translate('res.token.fields.name')} value={form.name} onChange={(e) => set('name', e.target.value)} />
        <TextField select size="small" label={translate('res.token.fields.group')} value={form.group} onChange={(e) => set('group', e.target.value)} slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }} helperText={translate('res.token.hint.group')}>
          <MenuItem value="">{translate('res.token.user_group')}</MenuItem>
          {Object.entries(groups).map(([name, g]) => (
            <MenuItem key={name} value={name}>
              <Stack direction="row" spacing={1} alignItems="center" sx={{ width: '100%' }}>
                <span>{name}</span>
                {g?.desc ? <Typography variant="body2" color="text.secondary">{g.desc}</Typography> : null}
                <Box sx={{ flex: 1 }} />
                {g?.ratio !== undefined ? <ColorTag tone={groupRatioColor(Number(g.ratio))} label={`${translate('res.token.ratio')} ${g.ratio}`} /> : null}
              </Stack>
            </MenuItem>
          ))}
        </TextField>

        <Divider textAlign="left">
          <Typography variant="caption">{translate('res.token.fields.expired_time')}</Typography>
        </Divider>
        <TextField
          size="small"
          label={translate('res.token.fields.expired_time')}
          placeholder="YYYY-MM-DD HH:mm:ss"
          value={form.expired_time}
          onChange={(e) => set('expired_time', e.target.value)}
          helperText={form.expired_time ? undefined : translate('res.token.never')}
        />
        <Stack direction="row" spacing={1}>
          {EXPIRY_OPTIONS.map((o) => (
            <Button key={o} size="small" variant="outlined" onClick={() => { const v = expiryFromOption(o); set('expired_time', v === -1 ? '' : formatTimestamp(v)); }}>
              {translate(`res.token.expiry.${o}`)}
            </Button>
          ))}
        </Stack>

        <Divider textAlign="left">
          <Typography variant="caption">{translate('res.token.fields.quota')}</Typography>
        </Divider>
        <FormControlLabel control={<Switch checked={form.unlimited_quota} onChange={(e) => set('unlimited_quota', e.target.checked)} />} label={translate('res.token.unlimited')} />
        {!form.unlimited_quota && (
          <>
            <TextField
              size="small"
              type="number"
              label={translate('res.token.fields.remain_quota')}
              value={form.remain_quota}
              onChange={(e) => set('remain_quota', e.target.value)}
              helperText={Number.isFinite(quotaNumber) ? `≈ ${formatQuota(quotaNumber, display)}` : undefined}
              slotProps={{ htmlInput: { step: 1 } }}
            />
            <Stack direction="row" spacing={1} sx={{ flexWrap: 'wrap', gap: 1 }}>
              {QUOTA_PRESETS.map((p) => (
                <Chip key={p.value} label={p.label} clickable color={quotaNumber === p.value ? 'primary' : 'default'} onClick={() => set('remain_quota', p.value)} />
              ))}
            </Stack>
          </>
        )}
        <Typography variant="caption" color="text.secondary">
          {translate('res.token.hint.quota')}
        </Typography>

        {!isEdit && (
          <>
            <Divider textAlign="left">
              <Typography variant="caption">{translate('res.token.fields.count')}</Typography>
            </Divider>
            <TextField size="small" type="number" label={translate('res.token.fields.count')} value={form.count} onChange={(e) => set('count', e.target.value)} helperText={translate('res.token.hint.count')} slotProps={{ htmlInput: { min: 1, step: 1 } }} />
            <Stack direction="row" spacing={1}>
              {BATCH_PRESETS.map((n) => (
                <Chip key={n} label={n} clickable color={Number(form.count) === n ? 'primary' : 'default'} onClick={() => set('count', n)} />
              ))}
            </Stack>
          </>
        )}

        <Divider textAlign="left">
          <Typography variant="caption">{translate('res.token.access')}</Typography>
        </Divider>
        <FormControlLabel control={<Switch checked={form.model_limits_enabled} onChange={(e) => set('model_limits_enabled', e.target.checked)} />} label={translate('res.token.fields.model_limits_enabled')} />
        {form.model_limits_enabled && (
          <Autocomplete
            multiple
            size="small"
            disableCloseOnSelect
            filterSelectedOptions
            options={models}
            value={form.model_limits}
            onChange={(_, v) => set('model_limits', v)}
            renderInput={(p) => <TextField {...p} label={translate('res.token.fields.model_limits')} />}
          />
        )}
        <TextField
          size="small"
          multiline
          minRows={3}
          label={translate('res.token.fields.allow_ips')}
          placeholder={'192.168.1.1\n10.0.0.2'}
          helperText={translate('res.token.hint.allow_ips')}
          value={form.allow_ips}
          onChange={(e) => set('allow_ips', e.target.value)}
        />

        <Stack direction="row" spacing={1} justifyContent="flex-end">
          <Button onClick={onDone}>{translate('res.common.cancel')}</Button>
          <Button type="submit" variant="contained" disabled={saving}>
            {translate('res.common.submit')}
          </Button>
        </Stack>
      </Stack>
    </Box>
  );
};
