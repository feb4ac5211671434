import { useEffect, useState } from 'react';
import { Box, Chip, CircularProgress, InputAdornment, Stack, TextField } from '@mui/material';
import { SimpleForm, TextInput, useGetOne, useNotify, useRefresh, useTranslate } from 'react-admin';
import { useFormContext, useWatch } from 'react-hook-form';
import { SideDrawer } from '../shared/SideDrawer';
import { FormButtons } from '../shared/FormButtons';
import { useApi, useGateway } from '../shared/api';
import { useDisplaySettings, useNotifyError } from '../shared/hooks';
import { formatQuota, usdPresets, usdToQuota } from '../shared/format';
import {
  REDEMPTION_USD_PRESETS,
  amountText,
  MAX_REDEMPTION_COUNT,
  codesFileText,
  redemptionErrors,
  redemptionPayload,
  type RedemptionForm,
} from './redemptionCodes';

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
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const dp = useGateway();
  const http = useApi();
  const display = useDisplaySettings();
  const isEdit = !!editId;
  const { data: code, isPending } = useGetOne(
    'redemption',
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
    const form = values as unknown as RedemptionForm;
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
    }
  };

  if (isEdit && isPending) {
    return (
      <Box sx={{ display: 'flex', justifyContent: 'center', p: 6 }}>
        <CircularProgress />
      </Box>
    );
  }
  const record: RedemptionForm =
    isEdit && code
      ? { id: code.id as number, name: String(code.name ?? ''), quota: Number(code.quota) || 0, count: 1 }
      : { name: '', quota: usdToQuota(REDEMPTION_USD_PRESETS[0], display.quotaPerUnit), count: 1 };
  return (
    <SimpleForm
      noValidate
      record={record as never}
      onSubmit={submit}
      validate={(v) => redemptionErrors(v as RedemptionForm, isEdit)}
      toolbar={<FormButtons onCancel={onDone} />}
      sx={{ p: 0 }}
    >
      <TextInput source="name" label="res.redemption.fields.name" helperText="res.redemption.hint.name" slotProps={{ htmlInput: { maxLength: 20 } }} />
      <QuotaInput />
      {!isEdit && (
        <TextInput
          source="count"
          type="number"
          label="res.redemption.fields.count"
          helperText={<CountHint />}
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
const QuotaInput = () => {
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
