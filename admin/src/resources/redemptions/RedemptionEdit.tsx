import { useEffect, useMemo, useState } from 'react';
import { Box, Chip, CircularProgress, InputAdornment, Stack, TextField } from '@mui/material';
import { CreateBase, EditBase, SimpleForm, TextInput, useEditContext, useNotify, useRefresh, useTranslate, type Validator } from 'react-admin';
import { useFormContext, useWatch } from 'react-hook-form';
import { SideDrawer } from '../shared/SideDrawer';
import { FormButtons } from '../shared/FormButtons';
import { useDisplaySettings, useNotifyError } from '../shared/hooks';
import { fromCheck } from '../shared/validators';
import { formatQuota, usdPresets, usdToQuota } from '../shared/format';
import {
  REDEMPTION_USD_PRESETS,
  amountText,
  asRedemptionForm,
  MAX_REDEMPTION_COUNT,
  codesFileText,
  redemptionChecks,
  redemptionPayload,
  type RedemptionForm,
} from './redemptionCodes';

/**
 * Create/edit drawer for one redemption code (/redemption/create, /redemption/:id): react-admin's
 * CreateBase / EditBase (POST / PUT /api/redemption/ through the data provider) around a SimpleForm
 * whose inputs carry their own validators. A create answers the new codes, offered as a download.
 */
export const RedemptionEditDrawer = ({ creating, editId, onClose }: { creating: boolean; editId?: string; onClose: () => void }) => (
  <SideDrawer open={creating || !!editId} onClose={onClose} title={creating ? 'res.redemption.create_title' : 'res.redemption.edit_title'} width={480}>
    {creating ? <RedemptionCreate onDone={onClose} /> : editId ? <RedemptionEdit key={editId} id={editId} onDone={onClose} /> : null}
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

/** The codes of a create's answer (the data provider's `batch`: strings, or records with a key). */
function createdCodes(data: unknown): string[] {
  const batch = (data as { batch?: unknown } | undefined)?.batch;
  const list = Array.isArray(batch) ? batch : [];
  return list.map((c) => (typeof c === 'string' ? c : String((c as { key?: unknown })?.key ?? ''))).filter(Boolean);
}

const Loading = () => (
  <Box sx={{ display: 'flex', justifyContent: 'center', p: 6 }}>
    <CircularProgress />
  </Box>
);

/** The inputs' validators: each runs its check on the whole form, its message under the input. */
function redemptionValidators(isEdit: boolean) {
  return {
    name: fromCheck(redemptionChecks.name, asRedemptionForm),
    quota: fromCheck(redemptionChecks.quota, asRedemptionForm),
    count: fromCheck((f: RedemptionForm) => redemptionChecks.count(f, isEdit), asRedemptionForm),
  };
}

const RedemptionCreate = ({ onDone }: { onDone: () => void }) => {
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const display = useDisplaySettings();
  const transform = (data: Record<string, unknown>) => redemptionPayload(asRedemptionForm(data), false, display);
  return (
    <CreateBase
      resource="redemption"
      redirect={false}
      transform={transform}
      mutationOptions={{
        onSuccess: (data: unknown, variables: { data?: Record<string, unknown> }) => {
          const codes = createdCodes(data);
          notify('res.redemption.msg.created', { type: 'success' });
          if (codes.length) downloadCodes(codes, String(variables?.data?.name ?? ''));
          refresh();
          onDone();
        },
        onError: (e: unknown) => notifyError(e),
      }}
    >
      <RedemptionFormView isEdit={false} record={{ name: '', quota: usdToQuota(REDEMPTION_USD_PRESETS[0], display.quotaPerUnit), count: 1 }} onDone={onDone} />
    </CreateBase>
  );
};

const RedemptionEdit = ({ id, onDone }: { id: string; onDone: () => void }) => {
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const display = useDisplaySettings();
  const transform = (data: Record<string, unknown>) => redemptionPayload(asRedemptionForm(data), true, display);
  return (
    <EditBase
      resource="redemption"
      id={id}
      mutationMode="pessimistic"
      redirect={false}
      queryOptions={{
        onError: (e: unknown) => {
          notifyError(e);
          onDone();
        },
      }}
      transform={transform}
      mutationOptions={{
        onSuccess: () => {
          notify('res.redemption.msg.updated', { type: 'success' });
          refresh();
          onDone();
        },
        onError: (e: unknown) => notifyError(e),
      }}
      loading={<Loading />}
    >
      <LoadedRedemption onDone={onDone} />
    </EditBase>
  );
};

const LoadedRedemption = ({ onDone }: { onDone: () => void }) => {
  const { record } = useEditContext();
  if (!record) return <Loading />;
  return (
    <RedemptionFormView
      isEdit
      record={{ id: Number(record.id), name: String(record.name ?? ''), quota: Number(record.quota) || 0, count: 1 }}
      onDone={onDone}
    />
  );
};

const RedemptionFormView = ({ isEdit, record, onDone }: { isEdit: boolean; record: RedemptionForm; onDone: () => void }) => {
  const v = useMemo(() => redemptionValidators(isEdit), [isEdit]);
  return (
    <SimpleForm noValidate record={record} toolbar={<FormButtons onCancel={onDone} />} sx={{ p: 0 }}>
      <TextInput
        source="name"
        label="res.redemption.fields.name"
        helperText="res.redemption.hint.name"
        validate={v.name}
        slotProps={{ htmlInput: { maxLength: 20 } }}
      />
      <QuotaInput validate={v.quota} />
      {!isEdit && (
        <TextInput
          source="count"
          type="number"
          label="res.redemption.fields.count"
          helperText={<CountHint />}
          validate={v.count}
          slotProps={{ htmlInput: { min: 1, max: MAX_REDEMPTION_COUNT, step: 1 } }}
        />
      )}
    </SimpleForm>
  );
};

/**
 * The amount, entered in dollars (with presets, as the token form does) or in quota units; the two
 * fields follow each other at the configured quota per unit, and the hint shows both.
 */
const QuotaInput = ({ validate }: { validate: Validator }) => {
  const translate = useTranslate();
  const display = useDisplaySettings();
  const { setValue } = useFormContext();
  const raw = useWatch({ name: 'quota' });
  const q = parseInt(String(raw), 10);
  const [usd, setUsd] = useState(() => amountText(q, display.quotaPerUnit));
  // Follow edits of the units field (and the loaded record) unless the dollar field is being typed in.
  const [typing, setTyping] = useState(false);
  useEffect(() => {
    if (!typing) setUsd(amountText(q, display.quotaPerUnit));
  }, [q, display.quotaPerUnit, typing]);
  const setQuota = (value: number) => setValue('quota', value, { shouldDirty: true, shouldValidate: true });
  return (
    <Box sx={{ width: '100%', display: 'flex', flexDirection: 'column', gap: 1, mb: 1 }}>
      <TextField
        label={translate('res.redemption.fields.amount')}
        value={usd}
        type="number"
        onFocus={() => setTyping(true)}
        onBlur={() => setTyping(false)}
        onChange={(e) => {
          setUsd(e.target.value);
          const v = Number(e.target.value);
          if (e.target.value.trim() !== '' && Number.isFinite(v) && v >= 0) setQuota(usdToQuota(v, display.quotaPerUnit));
        }}
        slotProps={{
          htmlInput: { min: 0, step: 'any', 'data-testid': 'redemption-amount' },
          input: { startAdornment: <InputAdornment position="start">$</InputAdornment> },
        }}
        helperText={translate('res.redemption.hint.amount', { per: display.quotaPerUnit.toLocaleString('en-US') })}
      />
      <Stack direction="row" sx={{ flexWrap: 'wrap', gap: 1 }}>
        {usdPresets(REDEMPTION_USD_PRESETS, { ...display, displayInCurrency: true }).map((p) => (
          <Chip
            key={p.usd}
            label={p.label}
            clickable
            color={q === p.value ? 'primary' : 'default'}
            onClick={() => setQuota(p.value)}
            data-testid={`redemption-preset-${p.usd}`}
          />
        ))}
      </Stack>
      <TextInput
        source="quota"
        type="number"
        label="res.redemption.fields.quota_units"
        validate={validate}
        helperText={
          Number.isFinite(q)
            ? translate('res.redemption.hint.quota_both', { units: q.toLocaleString('en-US'), amount: formatQuota(q, { ...display, displayInCurrency: true }) })
            : false
        }
        slotProps={{ htmlInput: { min: 0, step: 1 } }}
      />
    </Box>
  );
};

const CountHint = () => {
  const translate = useTranslate();
  return <>{translate('res.redemption.hint.count', { max: MAX_REDEMPTION_COUNT })}</>;
};
