import { useState } from 'react';
import { Box, Button, CircularProgress, Dialog, DialogActions, DialogContent, DialogTitle, Divider, Stack, TextField, Typography } from '@mui/material';
import { useFormContext, useWatch } from 'react-hook-form';
import { SelectInput, SimpleForm, TextInput, useGetOne, useNotify, useRefresh, useTranslate } from 'react-admin';
import { SideDrawer } from '../shared/SideDrawer';
import { FormButtons } from '../shared/FormButtons';
import { useGateway } from '../shared/api';
import { useDisplaySettings, useNotifyError } from '../shared/hooks';
import { formatQuota } from '../shared/format';
import { addQuota, editUserErrors, newUserErrors } from './userManagement';
import { useGroups } from './useGroups';

export const UserCreateDrawer = ({ open, onClose }: { open: boolean; onClose: () => void }) => (
  <SideDrawer open={open} onClose={onClose} title="res.user.create_title" width={460}>
    <CreateForm onDone={onClose} />
  </SideDrawer>
);

type NewUser = { username: string; display_name: string; password: string };

const CreateForm = ({ onDone }: { onDone: () => void }) => {
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const dp = useGateway();
  const submit = async (values: Record<string, unknown>) => {
    const v = values as NewUser;
    try {
      await dp.create('user', { data: { username: v.username.trim(), display_name: v.display_name.trim() || v.username.trim(), password: v.password } });
      notify('res.user.msg.created', { type: 'success' });
      refresh();
      onDone();
    } catch (e) {
      notifyError(e);
    }
  };
  return (
    <SimpleForm
      noValidate
      record={{ username: '', display_name: '', password: '' } as never}
      onSubmit={submit}
      validate={(v) => newUserErrors(v as NewUser)}
      toolbar={<FormButtons onCancel={onDone} />}
      sx={{ p: 0 }}
    >
      <TextInput source="username" label="res.user.fields.username" isRequired helperText={false} slotProps={{ htmlInput: { maxLength: 20 } }} />
      <TextInput source="display_name" label="res.user.fields.display_name" helperText={false} slotProps={{ htmlInput: { maxLength: 20 } }} />
      <TextInput
        source="password"
        type="password"
        autoComplete="new-password"
        label="res.user.fields.password"
        isRequired
        helperText="res.user.hint.password"
      />
    </SimpleForm>
  );
};

export const UserEditDrawer = ({ editId, onClose }: { editId?: string; onClose: () => void }) => (
  <SideDrawer open={!!editId} onClose={onClose} title="res.user.edit_title" width={520}>
    {editId && <EditForm key={editId} id={editId} onDone={onClose} />}
  </SideDrawer>
);

const BOUND = ['email', 'github_id', 'oidc_id', 'wechat_id', 'telegram_id', 'linux_do_id'] as const;

type EditedUser = { id: number; username: string; display_name: string; password: string; group: string; quota: string };

const EditForm = ({ id, onDone }: { id: string; onDone: () => void }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const dp = useGateway();
  const { data: user } = useGetOne(
    'user',
    { id },
    {
      onError: (e) => {
        notifyError(e);
        onDone();
      },
    },
  );

  const submit = async (values: Record<string, unknown>) => {
    const v = values as unknown as EditedUser;
    try {
      const data: Record<string, unknown> = { username: v.username.trim(), display_name: v.display_name.trim(), group: v.group, quota: parseInt(v.quota, 10) };
      if (v.password) data.password = v.password;
      await dp.update('user', { id: user!.id, data, previousData: { id: user!.id } });
      notify('res.user.msg.updated', { type: 'success' });
      refresh();
      onDone();
    } catch (e) {
      notifyError(e);
    }
  };

  if (!user) {
    return (
      <Box sx={{ display: 'flex', justifyContent: 'center', p: 6 }}>
        <CircularProgress />
      </Box>
    );
  }
  const record = {
    ...user,
    username: String(user.username ?? ''),
    display_name: String(user.display_name ?? ''),
    password: '',
    group: String(user.group || 'default'),
    quota: String(user.quota ?? 0),
  };
  return (
    <SimpleForm
      noValidate
      record={record}
      onSubmit={submit}
      validate={(v) => editUserErrors(v as EditedUser)}
      toolbar={<FormButtons onCancel={onDone} />}
      sx={{ p: 0 }}
    >
      <TextInput source="username" label="res.user.fields.username" helperText={false} />
      <TextInput source="display_name" label="res.user.fields.display_name" helperText={false} />
      <TextInput source="password" type="password" autoComplete="new-password" label="res.user.fields.password" helperText="res.user.hint.password_edit" />
      <GroupInput />
      <QuotaInput />
      <Divider textAlign="left" sx={{ width: '100%', my: 1 }}>
        <Typography variant="caption">{translate('res.user.bound')}</Typography>
      </Divider>
      {BOUND.map((k) => (
        <TextInput
          key={k}
          source={k}
          label={`res.user.fields.${k}`}
          placeholder={translate('res.user.hint.readonly')}
          helperText={false}
          slotProps={{ htmlInput: { readOnly: true } }}
        />
      ))}
    </SimpleForm>
  );
};

/** The group select; a group the user holds that is no longer offered stays selectable. */
const GroupInput = () => {
  const groups = useGroups();
  const current = String(useWatch({ name: 'group' }) ?? '');
  const options = groups.includes(current) ? groups : [current, ...groups];
  return (
    <SelectInput
      source="group"
      label="res.user.fields.group"
      isRequired
      helperText={false}
      translateChoice={false}
      choices={options.map((g) => ({ id: g, name: g }))}
    />
  );
};

/** The quota field with its amount as the hint, and the add-quota dialog that adds to it. */
const QuotaInput = () => {
  const translate = useTranslate();
  const display = useDisplaySettings();
  const { setValue } = useFormContext();
  const quota = String(useWatch({ name: 'quota' }) ?? '');
  const [addOpen, setAddOpen] = useState(false);
  const [delta, setDelta] = useState('');
  const current = parseInt(quota, 10) || 0;
  const newTotal = addQuota(current, delta);
  return (
    <>
      <Stack direction="row" spacing={1} alignItems="flex-start" sx={{ width: '100%' }}>
        <TextInput
          source="quota"
          type="number"
          label="res.user.fields.quota"
          helperText={`≈ ${formatQuota(current, display)}`}
          slotProps={{ htmlInput: { step: 1 } }}
        />
        <Button
          variant="outlined"
          onClick={() => {
            setDelta('');
            setAddOpen(true);
          }}
          sx={{ whiteSpace: 'nowrap', mt: 1 }}
        >
          {translate('res.user.add_quota')}
        </Button>
      </Stack>
      <Dialog open={addOpen} onClose={() => setAddOpen(false)} fullWidth maxWidth="xs">
        <DialogTitle>{translate('res.user.add_quota')}</DialogTitle>
        <DialogContent>
          <TextField
            autoFocus
            fullWidth
            size="small"
            type="number"
            sx={{ mt: 1 }}
            label={translate('res.user.add_quota_amount')}
            value={delta}
            onChange={(e) => setDelta(e.target.value)}
            helperText={translate('res.user.hint.add_quota')}
          />
          <Typography variant="body2" sx={{ mt: 2 }}>
            {translate('res.user.new_total', { total: newTotal === null ? '-' : `${newTotal} (${formatQuota(newTotal, display)})` })}
          </Typography>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setAddOpen(false)}>{translate('res.common.cancel')}</Button>
          <Button
            variant="contained"
            disabled={newTotal === null}
            onClick={() => {
              if (newTotal !== null) setValue('quota', String(newTotal), { shouldDirty: true, shouldValidate: true });
              setAddOpen(false);
            }}
          >
            {translate('res.common.confirm')}
          </Button>
        </DialogActions>
      </Dialog>
    </>
  );
};
