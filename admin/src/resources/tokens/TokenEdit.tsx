import { Box, Button, Chip, CircularProgress, Divider, Stack, Typography } from '@mui/material';
import { useQuery } from '@tanstack/react-query';
import { useFormContext, useWatch } from 'react-hook-form';
import { AutocompleteArrayInput, BooleanInput, SelectInput, SimpleForm, TextInput, useGetOne, useNotify, useRefresh, useTranslate } from 'react-admin';
import { SideDrawer } from '../shared/SideDrawer';
import { FormButtons } from '../shared/FormButtons';
import { useGateway } from '../shared/api';
import { useDisplaySettings, useNotifyError } from '../shared/hooks';
import { formatQuota, formatTimestamp, groupRatioColor, usdPresets } from '../shared/format';
import { ColorTag } from '../shared/ColorTag';
import {
  BATCH_PRESETS,
  EXPIRY_OPTIONS,
  QUOTA_USD_PRESETS,
  TOKEN_DEFAULTS,
  batchNames,
  expiryFromOption,
  parseBatchCount,
  tokenErrors,
  tokenPayload,
  tokenToForm,
  type TokenForm,
} from './tokenForm';

export const TokenEditDrawer = ({ creating, editId, onClose }: { creating: boolean; editId?: string; onClose: () => void }) => (
  <SideDrawer open={creating || !!editId} onClose={onClose} title={creating ? 'res.token.create_title' : 'res.token.edit_title'} width={560}>
    <TokenFormView key={editId ?? 'new'} editId={creating ? undefined : editId} onDone={onClose} />
  </SideDrawer>
);

type GroupInfo = { desc: string; ratio: number };

const TokenFormView = ({ editId, onDone }: { editId?: string; onDone: () => void }) => {
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const dp = useGateway();
  const isEdit = !!editId;
  const { data: models = [] } = useQuery({ queryKey: ['gateway', 'userModels'], queryFn: () => dp.userModels().then((r) => r.data) });
  const { data: groups = {} } = useQuery({ queryKey: ['gateway', 'selfGroups'], queryFn: () => dp.selfGroups().then((r) => r.data) });
  const { data: token, isPending } = useGetOne(
    'token',
    { id: editId ?? '' },
    {
      enabled: isEdit,
      onError: (e) => {
        notifyError(e);
        onDone();
      },
    },
  );

  const submit = async (values: Record<string, unknown>) => {
    const form = values as unknown as TokenForm;
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
    }
  };

  if (isEdit && isPending) {
    return (
      <Box sx={{ display: 'flex', justifyContent: 'center', p: 6 }}>
        <CircularProgress />
      </Box>
    );
  }

  const record = isEdit && token ? tokenToForm(token, formatTimestamp) : TOKEN_DEFAULTS;
  return (
    <SimpleForm
      noValidate
      record={record as never}
      onSubmit={submit}
      validate={(v) => tokenErrors(v as TokenForm, isEdit)}
      toolbar={<FormButtons onCancel={onDone} />}
      sx={{ p: 0 }}
    >
      <TokenFields isEdit={isEdit} models={models} groups={groups} />
    </SimpleForm>
  );
};

const TokenFields = ({ isEdit, models, groups }: { isEdit: boolean; models: string[]; groups: Record<string, GroupInfo> }) => {
  const translate = useTranslate();
  const display = useDisplaySettings();
  const { setValue } = useFormContext();
  const [expiredTime, unlimited, remainQuota, count, limitsEnabled] = useWatch({
    name: ['expired_time', 'unlimited_quota', 'remain_quota', 'count', 'model_limits_enabled'],
  });
  const set = (name: keyof TokenForm, value: unknown) => setValue(name, value, { shouldDirty: true, shouldValidate: true });
  const quotaNumber = parseInt(String(remainQuota), 10);

  return (
    <Stack spacing={2} sx={{ width: '100%' }}>
      <TextInput source="name" label="res.token.fields.name" isRequired={!isEdit} helperText={false} />
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
