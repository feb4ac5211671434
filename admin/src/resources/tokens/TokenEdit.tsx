import { useMemo } from 'react';
import { Box, Button, Chip, CircularProgress, Divider, Stack, Typography } from '@mui/material';
import { useQuery } from '@tanstack/react-query';
import { useFormContext, useWatch } from 'react-hook-form';
import {
  AutocompleteArrayInput,
  BooleanInput,
  CreateBase,
  EditBase,
  SelectInput,
  SimpleForm,
  TextInput,
  useEditContext,
  useNotify,
  useRefresh,
  useSaveContext,
  useTranslate,
} from 'react-admin';
import { SideDrawer } from '../shared/SideDrawer';
import { FormButtons } from '../shared/FormButtons';
import { useGateway } from '../shared/api';
import { useDisplaySettings, useNotifyError } from '../shared/hooks';
import { fromCheck, requiredText } from '../shared/validators';
import { formatQuota, formatTimestamp, groupRatioColor, usdPresets } from '../shared/format';
import { ColorTag } from '../shared/ColorTag';
import {
  BATCH_PRESETS,
  EXPIRY_OPTIONS,
  QUOTA_USD_PRESETS,
  TOKEN_DEFAULTS,
  asTokenForm,
  batchNames,
  expiryFromOption,
  parseBatchCount,
  tokenChecks,
  tokenPayload,
  tokenToForm,
  type TokenForm,
} from './tokenForm';

/**
 * Create/edit drawer for one token (/token/create, /token/:id): react-admin's CreateBase / EditBase
 * (POST / PUT /api/token/ through the data provider) around a SimpleForm whose inputs carry their
 * own validators. A batch (count > 1) is one create with `meta.names`: the data provider makes one
 * token per name, the first keeping the name, the others suffixed.
 */
export const TokenEditDrawer = ({ creating, editId, onClose }: { creating: boolean; editId?: string; onClose: () => void }) => (
  <SideDrawer open={creating || !!editId} onClose={onClose} title={creating ? 'res.token.create_title' : 'res.token.edit_title'} width={560}>
    {creating ? <TokenCreate onDone={onClose} /> : editId ? <TokenEdit key={editId} id={editId} onDone={onClose} /> : null}
  </SideDrawer>
);

type GroupInfo = { desc: string; ratio: number };

/** The options the form offers: the models the user may limit a token to, the user's groups. */
function useTokenOptions() {
  const dp = useGateway();
  const { data: models = [] } = useQuery({ queryKey: ['gateway', 'userModels'], queryFn: () => dp.userModels().then((r) => r.data) });
  const { data: groups = {} } = useQuery({ queryKey: ['gateway', 'selfGroups'], queryFn: () => dp.selfGroups().then((r) => r.data) });
  return { models, groups };
}

/** Save side effects: the message, a refresh, the drawer closed; a failure notified (and the list refreshed: part of a batch may exist). */
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
    onError: (e: unknown) => {
      notifyError(e);
      refresh();
    },
  };
}

const toPayload = (data: Record<string, unknown>) => tokenPayload(asTokenForm(data));

const TokenCreate = ({ onDone }: { onDone: () => void }) => {
  const { models, groups } = useTokenOptions();
  return (
    <CreateBase resource="token" redirect={false} transform={toPayload} mutationOptions={useSaveEffects('res.token.msg.created', onDone)}>
      <TokenCreateForm models={models} groups={groups} onDone={onDone} />
    </CreateBase>
  );
};

const TokenCreateForm = ({ models, groups, onDone }: { models: string[]; groups: Record<string, GroupInfo>; onDone: () => void }) => {
  const { save } = useSaveContext();
  // The batch's names go as the create's meta (one call per name in the data provider).
  const submit = (values: Record<string, unknown>) => {
    const form = asTokenForm(values);
    return save?.(values, { meta: { names: batchNames(form.name.trim(), parseBatchCount(form.count) ?? 1) } });
  };
  return (
    <SimpleForm noValidate record={TOKEN_DEFAULTS} onSubmit={submit} toolbar={<FormButtons onCancel={onDone} />} sx={{ p: 0 }}>
      <TokenFields isEdit={false} models={models} groups={groups} />
    </SimpleForm>
  );
};

const TokenEdit = ({ id, onDone }: { id: string; onDone: () => void }) => {
  const { models, groups } = useTokenOptions();
  const notifyError = useNotifyError();
  return (
    <EditBase
      resource="token"
      id={id}
      mutationMode="pessimistic"
      redirect={false}
      queryOptions={{
        onError: (e: unknown) => {
          notifyError(e);
          onDone();
        },
      }}
      transform={toPayload}
      mutationOptions={useSaveEffects('res.token.msg.updated', onDone)}
      loading={<Loading />}
    >
      <TokenEditForm models={models} groups={groups} onDone={onDone} />
    </EditBase>
  );
};

const TokenEditForm = ({ models, groups, onDone }: { models: string[]; groups: Record<string, GroupInfo>; onDone: () => void }) => {
  const { record } = useEditContext();
  if (!record) return <Loading />;
  return (
    <SimpleForm noValidate record={tokenToForm(record, formatTimestamp)} toolbar={<FormButtons onCancel={onDone} />} sx={{ p: 0 }}>
      <TokenFields isEdit models={models} groups={groups} />
    </SimpleForm>
  );
};

const Loading = () => (
  <Box sx={{ display: 'flex', justifyContent: 'center', p: 6 }}>
    <CircularProgress />
  </Box>
);

/** The inputs' validators: each runs its check on the whole form, its message under the input. */
function tokenValidators(isEdit: boolean) {
  return {
    name: isEdit ? undefined : requiredText('res.token.msg.name_required'),
    quota: fromCheck(tokenChecks.quota, asTokenForm),
    expiry: fromCheck(tokenChecks.expiry, asTokenForm),
    count: fromCheck((f: TokenForm) => tokenChecks.count(f, isEdit), asTokenForm),
  };
}

const TokenFields = ({ isEdit, models, groups }: { isEdit: boolean; models: string[]; groups: Record<string, GroupInfo> }) => {
  const translate = useTranslate();
  const display = useDisplaySettings();
  const { setValue } = useFormContext();
  const [expiredTime, unlimited, remainQuota, count, limitsEnabled] = useWatch({
    name: ['expired_time', 'unlimited_quota', 'remain_quota', 'count', 'model_limits_enabled'],
  });
  const set = (name: keyof TokenForm, value: unknown) => setValue(name, value, { shouldDirty: true, shouldValidate: true });
  const quotaNumber = parseInt(String(remainQuota), 10);
  const v = useMemo(() => tokenValidators(isEdit), [isEdit]);

  return (
    <Stack spacing={2} sx={{ width: '100%' }}>
      <TextInput source="name" label="res.token.fields.name" validate={v.name} helperText={false} />
      <SelectInput
        source="group"
        label="res.token.fields.group"
        helperText="res.token.hint.group"
        emptyText="res.token.user_group"
        slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}
        translateChoice={false}
        choices={Object.entries(groups).map(([name, g]) => ({ id: name, name, desc: g?.desc, ratio: g?.ratio }))}
        optionText={(c: { name: string; desc?: string; ratio?: number }) => (
          <Stack direction="row" spacing={1} alignItems="center" sx={{ width: '100%' }}>
            <span>{c.name}</span>
            {c.desc ? (
              <Typography variant="body2" color="text.secondary">
                {c.desc}
              </Typography>
            ) : null}
            <Box sx={{ flex: 1 }} />
            {c.ratio !== undefined ? <ColorTag tone={groupRatioColor(Number(c.ratio))} label={`${translate('res.token.ratio')} ${c.ratio}`} /> : null}
          </Stack>
        )}
      />

      <Divider textAlign="left">
        <Typography variant="caption">{translate('res.token.fields.expired_time')}</Typography>
      </Divider>
      <TextInput
        source="expired_time"
        label="res.token.fields.expired_time"
        placeholder="YYYY-MM-DD HH:mm:ss"
        validate={v.expiry}
        helperText={expiredTime ? false : 'res.token.never'}
      />
      <Stack direction="row" spacing={1}>
        {EXPIRY_OPTIONS.map((o) => (
          <Button
            key={o}
            size="small"
            variant="outlined"
            onClick={() => {
              const v = expiryFromOption(o);
              set('expired_time', v === -1 ? '' : formatTimestamp(v));
            }}
          >
            {translate(`res.token.expiry.${o}`)}
          </Button>
        ))}
      </Stack>

      <Divider textAlign="left">
        <Typography variant="caption">{translate('res.token.fields.quota')}</Typography>
      </Divider>
      <BooleanInput source="unlimited_quota" label="res.token.unlimited" helperText={false} />
      {!unlimited && (
        <>
          <TextInput
            source="remain_quota"
            type="number"
            label="res.token.fields.remain_quota"
            validate={v.quota}
            helperText={Number.isFinite(quotaNumber) ? `≈ ${formatQuota(quotaNumber, display)}` : false}
            slotProps={{ htmlInput: { step: 1 } }}
          />
          <Stack direction="row" spacing={1} sx={{ flexWrap: 'wrap', gap: 1 }}>
            {usdPresets(QUOTA_USD_PRESETS, display).map((p) => (
              <Chip
                key={p.value}
                label={p.label}
                clickable
                color={quotaNumber === p.value ? 'primary' : 'default'}
                onClick={() => set('remain_quota', p.value)}
              />
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
          <TextInput
            source="count"
            type="number"
            label="res.token.fields.count"
            validate={v.count}
            helperText="res.token.hint.count"
            slotProps={{ htmlInput: { min: 1, step: 1 } }}
          />
          <Stack direction="row" spacing={1}>
            {BATCH_PRESETS.map((n) => (
              <Chip key={n} label={n} clickable color={Number(count) === n ? 'primary' : 'default'} onClick={() => set('count', n)} />
            ))}
          </Stack>
        </>
      )}

      <Divider textAlign="left">
        <Typography variant="caption">{translate('res.token.access')}</Typography>
      </Divider>
      <BooleanInput source="model_limits_enabled" label="res.token.fields.model_limits_enabled" helperText={false} />
      {limitsEnabled && (
        <AutocompleteArrayInput
          source="model_limits"
          label="res.token.fields.model_limits"
          choices={models.map((m) => ({ id: m, name: m }))}
          translateChoice={false}
          disableCloseOnSelect
          filterSelectedOptions
          helperText={false}
        />
      )}
      <TextInput
        source="allow_ips"
        label="res.token.fields.allow_ips"
        multiline
        minRows={3}
        placeholder={'192.168.1.1\n10.0.0.2'}
        helperText="res.token.hint.allow_ips"
      />
    </Stack>
  );
};
