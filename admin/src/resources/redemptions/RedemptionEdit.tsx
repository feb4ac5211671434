import { Box, CircularProgress } from '@mui/material';
import { SimpleForm, TextInput, useGetOne, useNotify, useRefresh, useTranslate } from 'react-admin';
import { useWatch } from 'react-hook-form';
import { SideDrawer } from '../shared/SideDrawer';
import { FormButtons } from '../shared/FormButtons';
import { useApi, useGateway } from '../shared/api';
import { useDisplaySettings, useNotifyError } from '../shared/hooks';
import { formatQuota } from '../shared/format';
import { DEFAULT_REDEMPTION_QUOTA, MAX_REDEMPTION_COUNT, codesFileText, redemptionErrors, redemptionPayload, type RedemptionForm } from './redemptionCodes';

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
      : { name: '', quota: DEFAULT_REDEMPTION_QUOTA, count: 1 };
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

/** The quota field, with the amount it stands for as its hint. */
const QuotaInput = () => {
  const display = useDisplaySettings();
  const q = parseInt(String(useWatch({ name: 'quota' })), 10);
  return (
    <TextInput
      source="quota"
      type="number"
      label="res.redemption.fields.quota"
      helperText={Number.isFinite(q) ? `≈ ${formatQuota(q, display)}` : false}
      slotProps={{ htmlInput: { min: 0, step: 1 } }}
    />
  );
};

const CountHint = () => {
  const translate = useTranslate();
  return <>{translate('res.redemption.hint.count', { max: MAX_REDEMPTION_COUNT })}</>;
};
