import { useState } from 'react';
import { Box, Button, CircularProgress, Dialog, DialogActions, DialogContent, DialogTitle, Divider, Stack, TextField, Typography } from '@mui/material';
import { useFormContext, useWatch } from 'react-hook-form';
import { CreateBase, EditBase, SelectInput, SimpleForm, TextInput, useEditContext, useNotify, useRefresh, useTranslate } from 'react-admin';
import { SideDrawer } from '../shared/SideDrawer';
import { FormButtons } from '../shared/FormButtons';
import { useDisplaySettings, useNotifyError } from '../shared/hooks';
import { formatQuota } from '../shared/format';
import { addQuota, userChecks } from './userManagement';
import { fromCheck } from '../shared/validators';
import { useGroups } from './useGroups';

export const UserCreateDrawer = ({ open, onClose }: { open: boolean; onClose: () => void }) => (
  <SideDrawer open={open} onClose={onClose} title="res.user.create_title" width={460}>
    <CreateForm onDone={onClose} />
  </SideDrawer>
);

/** The inputs' validators: each runs its check, its message under the input. */
const read = (values: Record<string, unknown>) => values as { username?: string | null; password?: string | null; quota?: string | number | null };
const V = {
  username: fromCheck(userChecks.username, read, { required: true }),
  newPassword: fromCheck(userChecks.newPassword, read, { required: true }),
  passwordLength: fromCheck(userChecks.passwordLength, read),
  quota: fromCheck(userChecks.quota, read),
};
const text = (v: unknown) => String(v ?? '').trim();

/** Save side effects: the message, a refresh of the list, the drawer closed; a failure notified. */
function useSaveEffects(message: string, onDone: () => void) {
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  return {
    onSuccess: () => {
      notify(message, { type: 'success' });
      refresh();
      onDone();
    },
    onError: (e: unknown) => notifyError(e),
  };
}

/** Create (POST /api/user/ through react-admin's CreateBase): an empty display name takes the username. */
const CreateForm = ({ onDone }: { onDone: () => void }) => (
  <CreateBase
    resource="user"
    redirect={false}
    transform={(v: Record<string, unknown>) => ({
      username: text(v.username),
      display_name: text(v.display_name) || text(v.username),
      password: String(v.password ?? ''),
    })}
    mutationOptions={useSaveEffects('res.user.msg.created', onDone)}
  >
    <SimpleForm noValidate record={{ username: '', display_name: '', password: '' }} toolbar={<FormButtons onCancel={onDone} />} sx={{ p: 0 }}>
      <TextInput source="username" label="res.user.fields.username" validate={V.username} helperText={false} slotProps={{ htmlInput: { maxLength: 20 } }} />
      <TextInput source="display_name" label="res.user.fields.display_name" helperText={false} slotProps={{ htmlInput: { maxLength: 20 } }} />
      <TextInput
        source="password"
        type="password"
        autoComplete="new-password"
        label="res.user.fields.password"
        validate={V.newPassword}
        helperText="res.user.hint.password"
      />
    </SimpleForm>
  </CreateBase>
);

export const UserEditDrawer = ({ editId, onClose }: { editId?: string; onClose: () => void }) => (
  <SideDrawer open={!!editId} onClose={onClose} title="res.user.edit_title" width={520}>
    {editId && <EditForm key={editId} id={editId} onDone={onClose} />}
  </SideDrawer>
);

const BOUND = ['email', 'github_id', 'oidc_id', 'wechat_id', 'telegram_id', 'linux_do_id'] as const;

/** Edit (PUT /api/user/ through react-admin's EditBase): the password only when typed. */
const EditForm = ({ id, onDone }: { id: string; onDone: () => void }) => {
  const notifyError = useNotifyError();
  return (
    <EditBase
      resource="user"
      id={id}
      mutationMode="pessimistic"
      redirect={false}
      queryOptions={{
        onError: (e: unknown) => {
          notifyError(e);
          onDone();
        },
      }}
      transform={(v: Record<string, unknown>) => {
        const data: Record<string, unknown> = {
          username: text(v.username),
          display_name: text(v.display_name),
          group: v.group,
          quota: parseInt(String(v.quota), 10),
        };
        if (v.password) data.password = v.password;
        return data;
      }}
      mutationOptions={useSaveEffects('res.user.msg.updated', onDone)}
      loading={<Loading />}
    >
      <EditFields onDone={onDone} />
    </EditBase>
  );
};

const Loading = () => (
  <Box sx={{ display: 'flex', justifyContent: 'center', p: 6 }}>
    <CircularProgress />
  </Box>
);

const EditFields = ({ onDone }: { onDone: () => void }) => {
  const translate = useTranslate();
  const { record: user } = useEditContext();
  if (!user) return <Loading />;
  const record = {
    ...user,
    username: String(user.username ?? ''),
    display_name: String(user.display_name ?? ''),
    password: '',
    group: String(user.group || 'default'),
    quota: String(user.quota ?? 0),
  };
  return (
    <SimpleForm noValidate record={record} toolbar={<FormButtons onCancel={onDone} />} sx={{ p: 0 }}>
      <TextInput source="username" label="res.user.fields.username" helperText={false} />
      <TextInput source="display_name" label="res.user.fields.display_name" helperText={false} />
      <TextInput
        source="password"
        type="password"
        autoComplete="new-password"
        label="res.user.fields.password"
        validate={V.passwordLength}
        helperText="res.user.hint.password_edit"
      />
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
          validate={V.quota}
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
