import { useState } from 'react';
import {
  Alert,
  Autocomplete,
  Box,
  Button,
  Chip,
  CircularProgress,
  Divider,
  FormControlLabel,
  Link,
  MenuItem,
  Stack,
  Switch,
  TextField,
  Typography,
} from '@mui/material';
import { Confirm, useGetOne, useNotify, useRefresh, useTranslate } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import { SideDrawer, STICKY_ACTIONS_SX } from '../shared/SideDrawer';
import { unpricedModels } from '../../features/pricing/pricingTable';
import { storedUserRole, useGateway, useApi } from '../shared/api';
import { ChannelKeyButton } from '../../features/security/ChannelKeyButton';
import { useNotifyError } from '../shared/hooks';
import {
  CHANNEL_DEFAULTS,
  addCustomModels,
  baseUrlEndsWithV1,
  changesKeyDestination,
  channelToForm,
  formToPayload,
  switchType,
  validateChannel,
  type ChannelForm,
} from './channelForm';
import { hasPredefinedModels, keyHint, kindFields, typeMenu, type ChannelTypeCatalogue } from './channelTypes';
import { useChannelTypes } from './useChannelTypes';
import { useChannelGroups, useChannelModels, useChannelTypeModels } from './useChannelOps';

/** Create/edit drawer for one channel (/channel/create, /channel/:id). */

/** The advanced JSON settings, each a multi-line text field with an example. */
const JSON_FIELDS = [
  ['status_code_mapping', '{"400": "500"}'],
  ['param_override', '{"temperature": 0}'],
  ['setting', '{"force_format": true}'],
] as const;
export const ChannelEditDrawer = ({ creating, editId, onClose }: { creating: boolean; editId?: string; onClose: () => void }) => {
  const open = creating || !!editId;
  return (
    <SideDrawer open={open} onClose={onClose} title={creating ? 'res.channel.create_title' : 'res.channel.edit_title'} width={680}>
      <ChannelForm key={editId ?? 'new'} editId={creating ? undefined : editId} onDone={onClose} />
    </SideDrawer>
  );
};

/**
 * Loads what the form starts from: the channel (react-admin's getOne) when editing, the
 * channel-type catalogue (the form needs the kinds' special fields; a failed load shows the plain
 * form) and the models of each type.
 */
const ChannelForm = ({ editId, onDone }: { editId?: string; onDone: () => void }) => {
  const notifyError = useNotifyError();
  const { catalogue, loading: typesLoading } = useChannelTypes();
  const typeModels = useChannelTypeModels();
  const {
    data: record,
    error,
    isFetchedAfterMount,
  } = useGetOne(
    'channel',
    { id: editId ?? '' },
    {
      enabled: !!editId,
      // The list's rows seed react-admin's getOne cache: the form waits for the server's own
      // answer (the masked key, every field), asked for on opening. Later refetches (a refresh)
      // leave the form alone: its values are the user's from then on.
      refetchOnMount: 'always',
      refetchOnWindowFocus: false,
      retry: false,
      onError: (e) => {
        notifyError(e);
        onDone();
      },
    },
  );

  if (typesLoading || (editId && (!isFetchedAfterMount || error || !record))) {
    return (
      <Box sx={{ display: 'flex', justifyContent: 'center', p: 6 }}>
        <CircularProgress />
      </Box>
    );
  }
  return (
    <ChannelFormView
      isEdit={!!editId}
      initial={record ? channelToForm(record) : CHANNEL_DEFAULTS}
      keyMask={record?.key_masked && typeof record.key === 'string' ? record.key : ''}
      catalogue={catalogue}
      typeModels={typeModels}
      onDone={onDone}
    />
  );
};

/**
 * The channel form itself: a controlled form, as the fields it shows, their labels and defaults
 * change with the chosen kind. `keyMask` is the stored key as the server shows it to an admin
 * (masked), shown as the key field's placeholder.
 */
const ChannelFormView = ({
  isEdit,
  initial,
  keyMask,
  catalogue,
  typeModels,
  onDone,
}: {
  isEdit: boolean;
  initial: ChannelForm;
  keyMask: string;
  catalogue: ChannelTypeCatalogue;
  /** The models of each channel type (GET /api/models). */
  typeModels: Record<string, string[]>;
  onDone: () => void;
}) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const dp = useGateway();
  const http = useApi();
  const [form, setForm] = useState<ChannelForm>(initial);
  const [saving, setSaving] = useState(false);
  const groups = useChannelGroups();
  const allModels = useChannelModels();
  const [custom, setCustom] = useState('');
  const [fetching, setFetching] = useState(false);
  // Fetched models that have no price or ratio: the relay would refuse them until one is set.
  const [unpriced, setUnpriced] = useState<string[]>([]);
  const [confirmV1, setConfirmV1] = useState(false);
  const [showAdvanced, setShowAdvanced] = useState(false);

  const set = <K extends keyof ChannelForm>(k: K, v: ChannelForm[K]) => setForm((f) => ({ ...f, [k]: v }));

  const kind = kindFields(catalogue, form.type);
  // An admin who sends the key somewhere new types it again (the server refuses it otherwise); root need not.
  const keyRequired = isEdit && storedUserRole() < 100 && changesKeyDestination(initial, form, catalogue);

  const submit = async (skipV1Check = false) => {
    const err = validateChannel(form, isEdit, catalogue, keyRequired);
    if (err) return notify(err, { type: 'warning' });
    if (!skipV1Check && baseUrlEndsWithV1(form.base_url) && !kind.baseUrl?.fullUrl) return setConfirmV1(true);
    setSaving(true);
    try {
      const body = formToPayload(form, isEdit, catalogue);
      if (isEdit) {
        await dp.update('channel', { id: form.id!, data: body, previousData: { id: form.id! } });
        notify('res.channel.msg.updated', { type: 'success' });
      } else {
        await dp.create('channel', { data: body });
        notify('res.channel.msg.created', { type: 'success' });
      }
      refresh();
      onDone();
    } catch (e) {
      notifyError(e);
    } finally {
      setSaving(false);
    }
  };

  const fetchModels = async () => {
    if (!isEdit && !form.key.trim()) return notify('res.channel.msg.key_needed', { type: 'warning' });
    setFetching(true);
    try {
      const r =
        isEdit && !form.key.trim()
          ? await dp.fetchModels(form.id!)
          : await dp.fetchModels({
              base_url: form.base_url.trim().replace(/\/+$/, ''),
              type: form.type,
              key: form.batch ? form.key.split(/\r?\n/)[0].trim() : form.key.trim(),
            });
      const fetched = Array.from(new Set(r.data));
      set('models', fetched);
      notify('res.channel.msg.models_fetched', { type: 'success' });
      setUnpriced(await unpricedOf(fetched));
    } catch (e) {
      notifyError(e instanceof Error && e.message ? e : translate('res.channel.msg.models_fetch_failed'));
    } finally {
      setFetching(false);
    }
  };

  /** The fetched models lacking a ModelPrice/ModelRatio entry (the option list is an admin call; failures hide the warning). */
  const unpricedOf = async (models: string[]): Promise<string[]> => {
    try {
      const res = await http.get<Array<{ key: string; value: string }>>('/api/option/');
      const opts = Array.isArray(res.data) ? res.data : [];
      const parse = (k: string): object => {
        try {
          const v = JSON.parse(opts.find((o) => o.key === k)?.value ?? '{}') as unknown;
          return v && typeof v === 'object' ? v : {};
        } catch {
          return {};
        }
      };
      return unpricedModels(models, [], { price: parse('ModelPrice'), ratio: parse('ModelRatio') });
    } catch {
      return [];
    }
  };

  const addCustom = () => {
    if (!custom.trim()) return;
    const { models, duplicate } = addCustomModels(form.models, custom);
    set('models', models);
    setCustom('');
    if (duplicate) notify('res.channel.msg.models_exist', { type: 'warning' });
  };

  const related = typeModels[String(form.type)] ?? [];
  const modelOptions = Array.from(new Set([...allModels, ...related]));

  return (
    <Box
      component="form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <Stack spacing={2}>
        <TextField
          select
          label={translate('res.channel.fields.type')}
          value={form.type}
          onChange={(e) => {
            const type = Number(e.target.value);
            setForm((f) => {
              const next = switchType(f, type, catalogue);
              // Midjourney and Suno channels serve a predefined model list.
              const predefined = typeModels[String(type)] ?? [];
              return hasPredefinedModels(catalogue, type) && predefined.length ? { ...next, models: [...predefined] } : next;
            });
          }}
          size="small"
        >
          {typeMenu(catalogue, form.type).map((t) => (
            <MenuItem key={t.value} value={t.value} disabled={t.disabled} title={t.retired}>
              {t.retired ? `${t.label}（${translate('res.channel.retired')}）` : t.label}
            </MenuItem>
          ))}
        </TextField>
        {kind.hint && <Alert severity="info">{translate(kind.hint)}</Alert>}
        {catalogue.byId.get(form.type)?.retired && <Alert severity="warning">{catalogue.byId.get(form.type)?.retired}</Alert>}
        <TextField required size="small" label={translate('res.channel.fields.name')} value={form.name} onChange={(e) => set('name', e.target.value)} />

        {kind.baseUrl ? (
          <TextField
            size="small"
            required={kind.baseUrl.required}
            label={translate(kind.baseUrl.label)}
            placeholder={kind.baseUrl.placeholder}
            value={form.base_url}
            onChange={(e) => set('base_url', e.target.value)}
          />
        ) : (
          <TextField
            size="small"
            label={translate('res.channel.fields.base_url')}
            placeholder={translate('res.channel.placeholder.base_url')}
            value={form.base_url}
            onChange={(e) => set('base_url', e.target.value)}
            helperText={translate('res.channel.hint.base_url')}
          />
        )}
        {kind.other && (
          <TextField
            size="small"
            label={translate(kind.other.label)}
            placeholder={kind.other.placeholder}
            value={form.other}
            multiline={kind.other.multiline}
            minRows={kind.other.multiline ? 2 : undefined}
            onChange={(e) => set('other', e.target.value)}
          />
        )}
        {kind.organization && (
          <TextField
            size="small"
            label={translate('res.channel.fields.openai_organization')}
            placeholder="org-xxx"
            value={form.openai_organization}
            onChange={(e) => set('openai_organization', e.target.value)}
          />
        )}

        {isEdit && form.multi && <KeyOrderSelect value={form.multi_key_mode} onChange={(v) => set('multi_key_mode', v)} />}
        {!isEdit && (
          <Stack direction="row" spacing={2} alignItems="center" sx={{ flexWrap: 'wrap' }}>
            <FormControlLabel
              control={
                <Switch
                  checked={form.batch}
                  onChange={(e) => {
                    set('batch', e.target.checked);
                    if (e.target.checked) set('multi', false);
                  }}
                />
              }
              label={translate('res.channel.batch_mode')}
            />
            <FormControlLabel
              control={
                <Switch
                  checked={!!form.multi}
                  inputProps={{ 'aria-label': translate('res.channel.multi_key.mode') }}
                  onChange={(e) => {
                    set('multi', e.target.checked);
                    if (e.target.checked) set('batch', false);
                  }}
                />
              }
              label={translate('res.channel.multi_key.mode')}
            />
            {form.multi && <KeyOrderSelect value={form.multi_key_mode} onChange={(v) => set('multi_key_mode', v)} />}
          </Stack>
        )}
        <TextField
          size="small"
          required={!isEdit || keyRequired}
          label={translate('res.channel.fields.key')}
          placeholder={
            isEdit && keyMask
              ? keyMask
              : form.batch
                ? translate('res.channel.placeholder.batch_key')
                : keyHint(catalogue, form.type) || translate('res.channel.placeholder.key')
          }
          helperText={
            keyRequired
              ? translate('res.channel.hint.key_for_destination')
              : isEdit
                ? translate('res.channel.hint.key_keep')
                : form.multi
                  ? translate('res.channel.multi_key.hint')
                  : form.batch
                    ? translate('res.channel.hint.batch_key')
                    : undefined
          }
          value={form.key}
          multiline={form.batch || !!form.multi || kind.jsonKey}
          minRows={form.batch || form.multi || kind.jsonKey ? 4 : undefined}
          type={form.batch || form.multi || kind.jsonKey ? 'text' : 'password'}
          autoComplete="new-password"
          onChange={(e) => set('key', e.target.value)}
        />
        {/* Answers mask the key for everybody; root reads it after a re-verification. */}
        {isEdit && form.id !== undefined && storedUserRole() >= 100 ? <ChannelKeyButton id={form.id} /> : null}

        <Autocomplete
          multiple
          freeSolo
          size="small"
          options={groups}
          value={form.groups}
          onChange={(_, v) => set('groups', v as string[])}
          renderInput={(p) => <TextField {...p} label={translate('res.channel.fields.group')} />}
        />

        <Divider textAlign="left">
          <Typography variant="caption">{translate('res.channel.fields.models')}</Typography>
        </Divider>
        <Autocomplete
          multiple
          freeSolo
          size="small"
          disableCloseOnSelect
          filterSelectedOptions
          options={modelOptions}
          value={form.models}
          onChange={(_, v) => set('models', Array.from(new Set((v as string[]).map((m) => m.trim()).filter(Boolean))))}
          renderValue={(value, getItemProps) =>
            value.map((option, index) => {
              const { key, ...itemProps } = getItemProps({ index });
              return <Chip key={key} size="small" label={option} {...itemProps} />;
            })
          }
          renderInput={(p) => (
            <TextField {...p} required label={translate('res.channel.fields.models')} placeholder={translate('res.channel.placeholder.models')} />
          )}
        />
        <Stack direction="row" spacing={1} sx={{ flexWrap: 'wrap', gap: 1 }}>
          <Button size="small" variant="outlined" disabled={!related.length} onClick={() => set('models', Array.from(new Set([...form.models, ...related])))}>
            {translate('res.channel.fill_related')}
          </Button>
          <Button size="small" variant="outlined" onClick={() => set('models', Array.from(new Set([...form.models, ...allModels])))}>
            {translate('res.channel.fill_all')}
          </Button>
          <Button size="small" variant="outlined" onClick={fetchModels} disabled={fetching} startIcon={fetching ? <CircularProgress size={14} /> : undefined}>
            {translate('res.channel.fetch_models')}
          </Button>
          <Button size="small" color="warning" onClick={() => set('models', [])}>
            {translate('res.channel.clear_models')}
          </Button>
        </Stack>
        {unpriced.filter((m) => form.models.includes(m)).length > 0 && (
          <Alert severity="warning" data-testid="channel-unpriced-warning" onClose={() => setUnpriced([])}>
            {translate('res.channel.msg.unpriced_models', {
              count: unpriced.filter((m) => form.models.includes(m)).length,
              models: unpriced.filter((m) => form.models.includes(m)).join(', '),
            })}{' '}
            <Link component={RouterLink} to="/setting?tab=operation">
              {translate('res.channel.msg.set_ratios')}
            </Link>
          </Alert>
        )}
        <Stack direction="row" spacing={1}>
          <TextField
            size="small"
            fullWidth
            label={translate('res.channel.custom_models')}
            placeholder={translate('res.channel.placeholder.custom_models')}
            value={custom}
            onChange={(e) => setCustom(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                addCustom();
              }
            }}
          />
          <Button variant="outlined" onClick={addCustom}>
            {translate('res.common.add')}
          </Button>
        </Stack>

        <TextField
          size="small"
          multiline
          minRows={3}
          label={translate('res.channel.fields.model_mapping')}
          placeholder={'{\n  "gpt-3.5-turbo": "gpt-35-turbo"\n}'}
          value={form.model_mapping}
          onChange={(e) => set('model_mapping', e.target.value)}
          helperText={translate('res.channel.hint.model_mapping')}
          slotProps={{ htmlInput: { style: { fontFamily: 'monospace', fontSize: 13 } } }}
        />

        <Stack direction="row" spacing={2}>
          <TextField
            size="small"
            fullWidth
            label={translate('res.channel.fields.test_model')}
            value={form.test_model}
            onChange={(e) => set('test_model', e.target.value)}
            placeholder={form.models[0] ?? ''}
          />
          <TextField size="small" fullWidth label={translate('res.channel.fields.tag')} value={form.tag} onChange={(e) => set('tag', e.target.value)} />
        </Stack>
        <Stack direction="row" spacing={2}>
          <TextField
            size="small"
            fullWidth
            type="number"
            label={translate('res.channel.fields.priority')}
            value={form.priority}
            onChange={(e) => set('priority', e.target.value)}
            slotProps={{ htmlInput: { min: -999, step: 1 } }}
          />
          <TextField
            size="small"
            fullWidth
            type="number"
            label={translate('res.channel.fields.weight')}
            value={form.weight}
            onChange={(e) => set('weight', e.target.value)}
            slotProps={{ htmlInput: { min: 0, step: 1 } }}
          />
        </Stack>
        <FormControlLabel
          control={<Switch checked={form.auto_ban} onChange={(e) => set('auto_ban', e.target.checked)} />}
          label={translate('res.channel.fields.auto_ban')}
        />

        <Button size="small" onClick={() => setShowAdvanced((v) => !v)} sx={{ alignSelf: 'flex-start' }}>
          {translate(showAdvanced ? 'res.channel.hide_advanced' : 'res.channel.show_advanced')}
        </Button>
        {showAdvanced && (
          <Stack spacing={2}>
            {JSON_FIELDS.map(([key, placeholder]) => (
              <TextField
                key={key}
                size="small"
                multiline
                minRows={2}
                label={translate(`res.channel.fields.${key}`)}
                placeholder={placeholder}
                value={form[key]}
                onChange={(e) => set(key, e.target.value)}
              />
            ))}
            <TextField
              size="small"
              type="number"
              label={translate('res.channel.fields.max_input_tokens')}
              value={form.max_input_tokens}
              onChange={(e) => set('max_input_tokens', Number(e.target.value) || 0)}
            />
          </Stack>
        )}

        <Stack direction="row" spacing={1} justifyContent="flex-end" sx={STICKY_ACTIONS_SX} data-testid="drawer-actions">
          <Button onClick={onDone}>{translate('res.common.cancel')}</Button>
          <Button type="submit" variant="contained" disabled={saving}>
            {translate('res.common.submit')}
          </Button>
        </Stack>
      </Stack>
      <Confirm
        isOpen={confirmV1}
        title="res.channel.confirm.v1_title"
        content="res.channel.confirm.v1"
        onClose={() => setConfirmV1(false)}
        onConfirm={() => {
          setConfirmV1(false);
          submit(true);
        }}
      />
    </Box>
  );
};

/** The order a multi-key channel uses its keys in (create and edit). */
function KeyOrderSelect({ value, onChange }: { value: 'random' | 'polling' | undefined; onChange(v: 'random' | 'polling'): void }) {
  const translate = useTranslate();
  return (
    <TextField
      select
      size="small"
      label={translate('res.channel.multi_key.order')}
      value={value ?? 'random'}
      onChange={(e) => onChange(e.target.value as 'random' | 'polling')}
      sx={{ minWidth: 160, maxWidth: 220 }}
      SelectProps={{ native: true }}
    >
      <option value="random">{translate('res.channel.multi_key.random')}</option>
      <option value="polling">{translate('res.channel.multi_key.polling')}</option>
    </TextField>
  );
}
