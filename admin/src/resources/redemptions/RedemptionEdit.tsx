import { useEffect, useState } from 'react';
import { Box, Button, CircularProgress, Stack, TextField } from '@mui/material';
import { useNotify, useRefresh, useTranslate } from 'react-admin';
import { SideDrawer } from '../shared/SideDrawer';
import { useApi, useGateway } from '../shared/api';
import { useDisplaySettings, useNotifyError } from '../shared/hooks';
import { formatQuota } from '../shared/format';
import { DEFAULT_REDEMPTION_QUOTA, MAX_REDEMPTION_COUNT, codesFileText, redemptionPayload, validateRedemption, type RedemptionForm } from './redemptionCodes';

export const RedemptionEditDrawer = ({ creating, editId, onClose }: { creating: boolean; editId?: string; onClose: () => void }) => (
  <SideDrawer open={creating || !!editId} onClose={onClose} title={creating ? 'res.redemption.create_title' : 'res.redemption.edit_title'} width={480}>
    <FormView key={editId ?? 'new'} editId={creating ? undefined : editId} onDone={onClose} />
  </SideDrawer>
);

/** Offers the created codes as a .txt download (one per line). */
function downloadCodes(codes: string[], name: string) {
  const blob = new Blob([codesFileText(codes)], { type: 'text/plain;charset=utf-8' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = `${name || 'redemption'}.txt`;
  document.body.appendChild(a);
  a.click();
  document.body.removeChild(a);
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

const FormView = ({ editId, onDone }: { editId?: string; onDone: () => void }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const dp = useGateway();
  const http = useApi();
  const display = useDisplaySettings();
  const isEdit = !!editId;
  const [form, setForm] = useState<RedemptionForm>({ name: '', quota: DEFAULT_REDEMPTION_QUOTA, count: 1 });
  const [loading, setLoading] = useState(isEdit);
  const [saving, setSaving] = useState(false);
  const set = <K extends keyof RedemptionForm>(k: K, v: RedemptionForm[K]) => setForm((f) => ({ ...f, [k]: v }));

  useEffect(() => {
    if (!editId) return;
    dp.getOne('redemption', { id: editId })
      .then((r) => setForm({ id: r.data.id as number, name: String(r.data.name ?? ''), quota: Number(r.data.quota) || 0, count: 1 }))
      .catch((e) => {
        notifyError(e);
        onDone();
      })
      .finally(() => setLoading(false));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [editId]);

  const submit = async () => {
    const err = validateRedemption(form, isEdit);
    if (err) return notify(err, { type: 'warning' });
    setSaving(true);
    try {
      const body = redemptionPayload(form, isEdit, display);
      if (isEdit) {
        await dp.update('redemption', { id: form.id!, data: body, previousData: { id: form.id! } });
        notify('res.redemption.msg.updated', { type: 'success' });
      } else {
        const r = await http.post<unknown>('/api/redemption/', body);
        const list = Array.isArray(r.data) ? r.data : r.data ? [r.data] : [];
        const codes = list.map((c) => (typeof c === 'string' ? c : String((c as { key?: unknown })?.key ?? ''))).filter(Boolean);
        notify('res.redemption.msg.created', { type: 'success' });
        if (codes.length) downloadCodes(codes, String(body.name));
      }
      refresh();
      onDone();
    } catch (e) {
      notifyError(e);
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
  const q = parseInt(String(form.quota), 10);
  return (
    <Box component="form" noValidate onSubmit={(e) => { e.preventDefault(); submit(); }}>
      <Stack spacing={2}>
        <TextField size="small" label={translate('res.redemption.fields.name')} value={form.name} onChange={(e) => set('name', e.target.value)} slotProps={{ htmlInput: { maxLength: 20 } }} helperText={translate('res.redemption.hint.name')} />
        <TextField size="small" type="number" label={translate('res.redemption.fields.quota')} value={form.quota} onChange={(e) => set('quota', e.target.value)} helperText={Number.isFinite(q) ? `≈ ${formatQuota(q, display)}` : undefined} slotProps={{ htmlInput: { min: 0, step: 1 } }} />
        {!isEdit && (
          <TextField size="small" type="number" label={translate('res.redemption.fields.count')} value={form.count} onChange={(e) => set('count', e.target.value)} helperText={translate('res.redemption.hint.count', { max: MAX_REDEMPTION_COUNT })} slotProps={{ htmlInput: { min: 1, max: MAX_REDEMPTION_COUNT, step: 1 } }} />
        )}
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
