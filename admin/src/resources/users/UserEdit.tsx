import { useEffect, useState } from 'react';
import { Box, Button, CircularProgress, Dialog, DialogActions, DialogContent, DialogTitle, Divider, MenuItem, Stack, TextField, Typography } from '@mui/material';
import { useNotify, useRefresh, useTranslate } from 'react-admin';
import { SideDrawer } from '../shared/SideDrawer';
import { useGateway } from '../shared/api';
import { useDisplaySettings, useNotifyError } from '../shared/hooks';
import { formatQuota } from '../shared/format';
import { addQuota, validateEditUser, validateNewUser } from './userManagement';

export const UserCreateDrawer = ({ open, onClose }: { open: boolean; onClose: () => void }) => (
  <SideDrawer open={open} onClose={onClose} title="res.user.create_title" width={460}>
    <CreateForm onDone={onClose} />
  </SideDrawer>
);

const CreateForm = ({ onDone }: { onDone: () => void }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const dp = useGateway();
  const [v, setV] = useState({ username: '', display_name: '', password: '' });
  const [saving, setSaving] = useState(false);
  const submit = async () => {
    const err = validateNewUser(v);
    if (err) return notify(err, { type: 'warning' });
    setSaving(true);
    try {
      await dp.create('user', { data: { username: v.username.trim(), display_name: v.display_name.trim() || v.username.trim(), password: v.password } });
      notify('res.user.msg.created', { type: 'success' });
      refresh();
      onDone();
    } catch (e) {
      notifyError(e);
    } finally {
      setSaving(false);
    }
  };
  return (
    <Box component="form" noValidate onSubmit={(e) => { e.preventDefault(); submit(); }}>
      <Stack spacing={2}>
        <TextField size="small" required label={translate('res.user.fields.username')} value={v.username} onChange={(e) => setV({ ...v, username: e.target.value })} slotProps={{ htmlInput: { maxLength: 20 } }} />
        <TextField size="small" label={translate('res.user.fields.display_name')} value={v.display_name} onChange={(e) => setV({ ...v, display_name: e.target.value })} slotProps={{ htmlInput: { maxLength: 20 } }} />
        <TextField size="small" required type="password" autoComplete="new-password" label={translate('res.user.fields.password')} helperText={translate('res.user.hint.password')} value={v.password} onChange={(e) => setV({ ...v, password: e.target.value })} />
        <Stack direction="row" spacing={1} justifyContent="flex-end">
          <Button onClick={onDone}>{translate('res.common.cancel')}</Button>
          <Button type="submit" variant="contained" disabled={saving}>{translate('res.common.submit')}</Button>
        </Stack>
      </Stack>
    </Box>
  );
};

export const UserEditDrawer = ({ editId, onClose }: { editId?: string; onClose: () => void }) => (
  <SideDrawer open={!!editId} onClose={onClose} title="res.user.edit_title" width={520}>
    {editId && <EditForm key={editId} id={editId} onDone={onClose} />}
  </SideDrawer>
);

const BOUND = ['email', 'github_id', 'oidc_id', 'wechat_id', 'telegram_id', 'linux_do_id'] as const;

const EditForm = ({ id, onDone }: { id: string; onDone: () => void }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const dp = useGateway();
  const display = useDisplaySettings();
  const [user, setUser] = useState<Record<string, any> | null>(null);
  const [v, setV] = useState({ username: '', display_name: '', password: '', group: 'default', quota: '0' as string });
  const [groups, setGroups] = useState<string[]>([]);
  const [saving, setSaving] = useState(false);
  const [addOpen, setAddOpen] = useState(false);
  const [delta, setDelta] = useState('');

  useEffect(() => {
    dp.getGroups().then((r) => setGroups(r.data)).catch(() => undefined);
    dp.getOne('user', { id })
      .then((r) => {
        setUser(r.data);
        setV({ username: String(r.data.username ?? ''), display_name: String(r.data.display_name ?? ''), password: '', group: String(r.data.group || 'default'), quota: String(r.data.quota ?? 0) });
      })
      .catch((e) => {
        notifyError(e);
        onDone();
      });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [id]);

  const submit = async () => {
    const err = validateEditUser(v);
    if (err) return notify(err, { type: 'warning' });
    setSaving(true);
    try {
      const data: Record<string, unknown> = { username: v.username.trim(), display_name: v.display_name.trim(), group: v.group, quota: parseInt(v.quota, 10) };
      if (v.password) data.password = v.password;
      await dp.update('user', { id: user!.id, data, previousData: { id: user!.id } });
      notify('res.user.msg.updated', { type: 'success' });
      refresh();
      onDone();
    } catch (e) {
      notifyError(e);
    } finally {
      setSaving(false);
    }
  };

  if (!user) return <Box sx={{ display: 'flex', justifyContent: 'center', p: 6 }}><CircularProgress /></Box>;
  const current = parseInt(v.quota, 10) || 0;
  const newTotal = addQuota(current, delta);
  const groupOptions = groups.includes(v.group) ? groups : [v.group, ...groups];

  return (
    <Box component="form" noValidate onSubmit={(e) => { e.preventDefault(); submit(); }}>
      <Stack spacing={2}>
        <TextField size="small" label={translate('res.user.fields.username')} value={v.username} onChange={(e) => setV({ ...v, username: e.target.value })} />
        <TextField size="small" label={translate('res.user.fields.display_name')} value={v.display_name} onChange={(e) => setV({ ...v, display_name: e.target.value })} />
        <TextField size="small" type="password" autoComplete="new-password" label={translate('res.user.fields.password')} helperText={translate('res.user.hint.password_edit')} value={v.password} onChange={(e) => setV({ ...v, password: e.target.value })} />
        <TextField select size="small" label={translate('res.user.fields.group')} value={v.group} onChange={(e) => setV({ ...v, group: e.target.value })}>
          {groupOptions.map((g) => <MenuItem key={g} value={g}>{g}</MenuItem>)}
        </TextField>
        <Stack direction="row" spacing={1} alignItems="flex-start">
          <TextField size="small" fullWidth type="number" label={translate('res.user.fields.quota')} value={v.quota} onChange={(e) => setV({ ...v, quota: e.target.value })} helperText={`≈ ${formatQuota(current, display)}`} slotProps={{ htmlInput: { step: 1 } }} />
          <Button variant="outlined" onClick={() => { setDelta(''); setAddOpen(true); }} sx={{ whiteSpace: 'nowrap' }}>{translate('res.user.add_quota')}</Button>
        </Stack>
        <Divider textAlign="left"><Typography variant="caption">{translate('res.user.bound')}</Typography></Divider>
        {BOUND.map((k) => (
          <TextField key={k} size="small" label={translate(`res.user.fields.${k}`)} value={String(user[k] ?? '') || ''} placeholder={translate('res.user.hint.readonly')} slotProps={{ htmlInput: { readOnly: true } }} />
        ))}
        <Stack direction="row" spacing={1} justifyContent="flex-end">
          <Button onClick={onDone}>{translate('res.common.cancel')}</Button>
          <Button type="submit" variant="contained" disabled={saving}>{translate('res.common.submit')}</Button>
        </Stack>
      </Stack>
      <Dialog open={addOpen} onClose={() => setAddOpen(false)} fullWidth maxWidth="xs">
        <DialogTitle>{translate('res.user.add_quota')}</DialogTitle>
        <DialogContent>
          <TextField autoFocus fullWidth size="small" type="number" sx={{ mt: 1 }} label={translate('res.user.add_quota_amount')} value={delta} onChange={(e) => setDelta(e.target.value)} helperText={translate('res.user.hint.add_quota')} />
          <Typography variant="body2" sx={{ mt: 2 }}>
            {translate('res.user.new_total', { total: newTotal === null ? '-' : `${newTotal} (${formatQuota(newTotal, display)})` })}
          </Typography>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setAddOpen(false)}>{translate('res.common.cancel')}</Button>
          <Button variant="contained" disabled={newTotal === null} onClick={() => { if (newTotal !== null) setV({ ...v, quota: String(newTotal) }); setAddOpen(false); }}>{translate('res.common.confirm')}</Button>
        </DialogActions>
      </Dialog>
    </Box>
  );
};
