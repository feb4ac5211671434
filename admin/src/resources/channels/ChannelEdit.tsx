import { useMemo, useRef, useState, type ReactNode } from 'react';
import { Alert, Box, Button, CircularProgress, Divider, Link, Stack, TextField, Typography } from '@mui/material';
import {
  AutocompleteArrayInput,
  BooleanInput,
  Confirm,
  CreateBase,
  EditBase,
  NumberInput,
  SelectInput,
  SimpleForm,
  TextInput,
  required,
  useEditContext,
  useNotify,
  useRefresh,
  useSaveContext,
  useTranslate,
  type Validator,
} from 'react-admin';
import { useFormContext, useWatch } from 'react-hook-form';
import { Link as RouterLink } from 'react-router-dom';
import { SideDrawer } from '../shared/SideDrawer';
import { FormButtons } from '../shared/FormButtons';
import { unpricedModels } from '../../features/pricing/pricingTable';
import { storedUserRole, useGateway, useApi } from '../shared/api';
import { ChannelKeyButton } from '../../features/security/ChannelKeyButton';
import { useNotifyError } from '../shared/hooks';
import { fromCheck, jsonObject, requiredText } from '../shared/validators';
import {
  CHANNEL_DEFAULTS,
  addCustomModels,
  asChannelForm,
  baseUrlEndsWithV1,
  changesKeyDestination,
  channelChecks,
  channelToForm,
  formToPayload,
  switchType,
  type ChannelForm,
  type ChannelWire,
} from './channelForm';
import { hasPredefinedModels, keyHint, kindFields, typeMenu, type ChannelTypeCatalogue } from './channelTypes';
import { useChannelTypes } from './useChannelTypes';
import { useChannelGroups, useChannelModels, useChannelTypeModels } from './useChannelOps';

/**
 * Create/edit drawer for one channel (/channel/create, /channel/:id): react-admin's CreateBase /
 * EditBase (POST / PUT /api/channel/ through the data provider) around a SimpleForm whose inputs
 * carry their own validators. The fields a kind shows, their labels and defaults follow the chosen
 * type (the catalogue of GET /api/channel/types).
 */
export const ChannelEditDrawer = ({ creating, editId, onClose }: { creating: boolean; editId?: string; onClose: () => void }) => (
  <SideDrawer open={creating || !!editId} onClose={onClose} title={creating ? 'res.channel.create_title' : 'res.channel.edit_title'} width={680}>
    {creating ? <ChannelCreate onDone={onClose} /> : editId ? <ChannelEdit key={editId} id={editId} onDone={onClose} /> : null}
  </SideDrawer>
);

/** The advanced JSON settings, each a multi-line text field with an example. */
const JSON_FIELDS = [
  ['status_code_mapping', '{"400": "500"}'],
  ['param_override', '{"temperature": 0}'],
  ['setting', '{"force_format": true}'],
] as const;

const Loading = () => (
  <Box sx={{ display: 'flex', justifyContent: 'center', p: 6 }}>
    <CircularProgress />
  </Box>
);

/** What both forms start from: the type catalogue (a failed load shows the plain form) and the models of each type. */
function useFormSources() {
  const { catalogue, loading } = useChannelTypes();
  const typeModels = useChannelTypeModels();
  return { catalogue, loading, typeModels };
}

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

const ChannelCreate = ({ onDone }: { onDone: () => void }) => {
  const { catalogue, loading, typeModels } = useFormSources();
  const mutationOptions = useSaveEffects('res.channel.msg.created', onDone);
  if (loading) return <Loading />;
  return (
    <CreateBase
      resource="channel"
      redirect={false}
      transform={(data: Record<string, unknown>) => formToPayload(asChannelForm(data), false, catalogue)}
      mutationOptions={mutationOptions}
    >
      <ChannelFormView isEdit={false} initial={CHANNEL_DEFAULTS} keyMask="" catalogue={catalogue} typeModels={typeModels} onDone={onDone} />
    </CreateBase>
  );
};

const ChannelEdit = ({ id, onDone }: { id: string; onDone: () => void }) => {
  const { catalogue, loading, typeModels } = useFormSources();
  const notifyError = useNotifyError();
  const mutationOptions = useSaveEffects('res.channel.msg.updated', onDone);
  if (loading) return <Loading />;
  return (
    <EditBase
      resource="channel"
      id={id}
      mutationMode="pessimistic"
      redirect={false}
      // The list's rows seed react-admin's getOne cache: the form waits for the server's own answer
      // (the masked key, every field), asked for on opening.
      queryOptions={{
        refetchOnMount: 'always',
        onError: (e: unknown) => {
          notifyError(e);
          onDone();
        },
      }}
      transform={(data: Record<string, unknown>) => formToPayload(asChannelForm(data), true, catalogue)}
      mutationOptions={mutationOptions}
    >
      <LoadedChannel catalogue={catalogue} typeModels={typeModels} onDone={onDone} />
    </EditBase>
  );
};

/**
 * The edit form once the server's answer is in. Its start values are taken once: later refetches
 * (a list refresh) leave the form alone, its values are the user's from then on.
 */
const LoadedChannel = ({ catalogue, typeModels, onDone }: { catalogue: ChannelTypeCatalogue; typeModels: Record<string, string[]>; onDone: () => void }) => {
  const { record, isFetching, error } = useEditContext<ChannelWire & { id: string | number }>();
  const [start, setStart] = useState<{ initial: ChannelForm; keyMask: string } | null>(null);
  if (!start && record && !isFetching && !error) {
    setStart({ initial: channelToForm(record), keyMask: record.key_masked && typeof record.key === 'string' ? record.key : '' });
  }
  if (!start) return <Loading />;
  return <ChannelFormView isEdit initial={start.initial} keyMask={start.keyMask} catalogue={catalogue} typeModels={typeModels} onDone={onDone} />;
};

/**
 * The channel form: react-admin inputs over ChannelForm values. `keyMask` is the stored key as the
 * server shows it to an admin (masked), shown as the key field's placeholder. A base URL ending in
 * /v1 asks for confirmation before the save (not for a kind whose URL is complete).
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
  const { save } = useSaveContext();
  const [confirmV1, setConfirmV1] = useState<Record<string, unknown> | null>(null);
  const submit = (values: Record<string, unknown>) => {
    const form = asChannelForm(values);
    if (baseUrlEndsWithV1(form.base_url) && !kindFields(catalogue, form.type).baseUrl?.fullUrl) return setConfirmV1(values);
    return save?.(values);
  };
  return (
    <>
      <SimpleForm noValidate record={initial} onSubmit={submit} toolbar={<FormButtons onCancel={onDone} />} sx={{ p: 0 }}>
        <ChannelFields isEdit={isEdit} initial={initial} keyMask={keyMask} catalogue={catalogue} typeModels={typeModels} />
      </SimpleForm>
      <Confirm
        isOpen={!!confirmV1}
        title="res.channel.confirm.v1_title"
        content="res.channel.confirm.v1"
        onClose={() => setConfirmV1(null)}
        onConfirm={() => {
          const values = confirmV1;
          setConfirmV1(null);
          if (values) save?.(values);
        }}
      />
    </>
  );
};

const Row = ({ children }: { children: ReactNode }) => (
  <Stack direction="row" spacing={2} sx={{ width: '100%' }}>
    {children}
  </Stack>
);

const ChannelFields = ({
  isEdit,
  initial,
  keyMask,
  catalogue,
  typeModels,
}: {
  isEdit: boolean;
  initial: ChannelForm;
  keyMask: string;
  catalogue: ChannelTypeCatalogue;
  typeModels: Record<string, string[]>;
}) => {
  const translate = useTranslate();
  const { setValue, getValues } = useFormContext();
  const form = asChannelForm(useWatch() as Record<string, unknown>);
  const set = (name: keyof ChannelForm, value: unknown) => setValue(name, value, { shouldDirty: true });
  const groups = useChannelGroups();
  const root = storedUserRole() >= 100;

  const kind = kindFields(catalogue, form.type);
  // An admin who sends the key somewhere new types it again (the server refuses it otherwise); root need not.
  const keyRequired = isEdit && !root && changesKeyDestination(initial, form, catalogue);

  // The validators read the whole form; they are made once per opening.
  const v = useMemo(() => {
    const read = (values: Record<string, unknown>) => asChannelForm(values);
    const needsKey = (f: ChannelForm) => isEdit && !root && changesKeyDestination(initial, f, catalogue);
    return {
      key: fromCheck((f: ChannelForm) => channelChecks.keyPresent(f, isEdit, needsKey(f)) ?? channelChecks.keyFormat(f, isEdit, catalogue), read),
      baseUrl: fromCheck((f: ChannelForm) => channelChecks.baseUrl(f, catalogue), read, { required: true }),
      models: fromCheck(channelChecks.models, read, { required: true }),
      name: [requiredText('res.channel.msg.name_key_required')] as Validator[],
      mapping: jsonObject('res.channel.msg.mapping_json'),
    };
  }, [isEdit, root, initial, catalogue]);

  // The type select's change: `other` takes the new kind's default; Midjourney and Suno channels serve a predefined model list.
  const lastType = useRef(form.type);
  lastType.current = form.type;
  const onTypeChange = () => {
    const before = asChannelForm({ ...getValues(), type: lastType.current });
    const type = Number(getValues('type'));
    const next = switchType(before, type, catalogue);
    set('other', next.other);
    const predefined = typeModels[String(type)] ?? [];
    if (hasPredefinedModels(catalogue, type) && predefined.length) set('models', [...predefined]);
  };

  const keyPlaceholder =
    isEdit && keyMask
      ? keyMask
      : form.batch
        ? translate('res.channel.placeholder.batch_key')
        : keyHint(catalogue, form.type) || translate('res.channel.placeholder.key');
  const keyHelp = keyRequired
    ? 'res.channel.hint.key_for_destination'
    : isEdit
      ? 'res.channel.hint.key_keep'
      : form.multi
        ? 'res.channel.multi_key.hint'
        : form.batch
          ? 'res.channel.hint.batch_key'
          : false;
  const longKey = form.batch || !!form.multi || !!kind.jsonKey;

  return (
    <Stack spacing={2} sx={{ width: '100%' }}>
      <SelectInput
        source="type"
        label="res.channel.fields.type"
        validate={required()}
        helperText={false}
        choices={typeMenu(catalogue, form.type)}
        optionValue="value"
        optionText={(t: { label: string; retired?: string }) => (
          <span title={t.retired}>{t.retired ? `${t.label}（${translate('res.channel.retired')}）` : t.label}</span>
        )}
        translateChoice={false}
        disableValue="disabled"
        onChange={onTypeChange}
      />
      {kind.hint && <Alert severity="info">{translate(kind.hint)}</Alert>}
      {catalogue.byId.get(form.type)?.retired && <Alert severity="warning">{catalogue.byId.get(form.type)?.retired}</Alert>}
      <TextInput source="name" label="res.channel.fields.name" validate={v.name} helperText={false} />

      {kind.baseUrl ? (
        <TextInput
          source="base_url"
          label={kind.baseUrl.label}
          placeholder={kind.baseUrl.placeholder}
          validate={kind.baseUrl.required ? v.baseUrl : undefined}
          helperText={false}
        />
      ) : (
        <TextInput
          source="base_url"
          label="res.channel.fields.base_url"
          placeholder={translate('res.channel.placeholder.base_url')}
          helperText="res.channel.hint.base_url"
        />
      )}
      {kind.other && (
        <TextInput
          source="other"
          label={kind.other.label}
          placeholder={kind.other.placeholder}
          multiline={kind.other.multiline}
          minRows={kind.other.multiline ? 2 : undefined}
          helperText={false}
        />
      )}
      {kind.organization && <TextInput source="openai_organization" label="res.channel.fields.openai_organization" placeholder="org-xxx" helperText={false} />}

      {isEdit && form.multi && <KeyOrderInput />}
      {!isEdit && (
        <Stack direction="row" spacing={2} alignItems="center" sx={{ flexWrap: 'wrap', width: '100%' }}>
          <BooleanInput
            source="batch"
            label="res.channel.batch_mode"
            helperText={false}
            onChange={(e: { target: { checked: boolean } }) => e.target.checked && set('multi', false)}
          />
          <BooleanInput
            source="multi"
            label="res.channel.multi_key.mode"
            helperText={false}
            onChange={(e: { target: { checked: boolean } }) => e.target.checked && set('batch', false)}
          />
          {form.multi && <KeyOrderInput />}
        </Stack>
      )}
      <TextInput
        source="key"
        label="res.channel.fields.key"
        isRequired={!isEdit || keyRequired}
        validate={v.key}
        placeholder={keyPlaceholder}
        helperText={keyHelp}
        multiline={longKey}
        minRows={longKey ? 4 : undefined}
        type={longKey ? 'text' : 'password'}
        autoComplete="new-password"
      />
      {/* Answers mask the key for everybody; root reads it after a re-verification. */}
      {isEdit && initial.id !== undefined && root ? <ChannelKeyButton id={initial.id} /> : null}

      <TagsInput source="groups" label="res.channel.fields.group" options={groups} />

      <Divider textAlign="left" sx={{ width: '100%' }}>
        <Typography variant="caption">{translate('res.channel.fields.models')}</Typography>
      </Divider>
      <ModelsInput typeModels={typeModels} validate={v.models} />

      <TextInput
        source="model_mapping"
        label="res.channel.fields.model_mapping"
        multiline
        minRows={3}
        placeholder={'{\n  "gpt-3.5-turbo": "gpt-35-turbo"\n}'}
        helperText="res.channel.hint.model_mapping"
        validate={v.mapping}
        slotProps={{ htmlInput: { style: { fontFamily: 'monospace', fontSize: 13 } } }}
      />

      <Row>
        <TextInput source="test_model" label="res.channel.fields.test_model" placeholder={form.models[0] ?? ''} helperText={false} />
        <TextInput source="tag" label="res.channel.fields.tag" helperText={false} />
      </Row>
      <Row>
        <NumberInput source="priority" label="res.channel.fields.priority" min={-999} step={1} helperText={false} />
        <NumberInput source="weight" label="res.channel.fields.weight" min={0} step={1} helperText={false} />
      </Row>
      <BooleanInput source="auto_ban" label="res.channel.fields.auto_ban" helperText={false} />

      <AdvancedFields />
    </Stack>
  );
};

/** The advanced settings, behind a toggle (hidden inputs keep their values). */
const AdvancedFields = () => {
  const translate = useTranslate();
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button size="small" onClick={() => setOpen((o) => !o)} sx={{ alignSelf: 'flex-start' }}>
        {translate(open ? 'res.channel.hide_advanced' : 'res.channel.show_advanced')}
      </Button>
      {open && (
        <Stack spacing={2} sx={{ width: '100%' }}>
          {JSON_FIELDS.map(([key, placeholder]) => (
            <TextInput key={key} source={key} label={`res.channel.fields.${key}`} multiline minRows={2} placeholder={placeholder} helperText={false} />
          ))}
          <NumberInput source="max_input_tokens" label="res.channel.fields.max_input_tokens" helperText={false} />
        </Stack>
      )}
    </>
  );
};

/** A list of names picked from `options` or typed (Enter adds what was typed). */
const TagsInput = ({
  source,
  label,
  options,
  validate,
  placeholder,
}: {
  source: string;
  label: string;
  options: string[];
  validate?: Validator;
  placeholder?: string;
}) => {
  const value = useWatch({ name: source }) as string[] | null;
  const choices = useMemo(() => Array.from(new Set([...options, ...(value ?? [])])).map((m) => ({ id: m, name: m })), [options, value]);
  return (
    <AutocompleteArrayInput
      source={source}
      label={label}
      choices={choices}
      translateChoice={false}
      onCreate={(text?: string) => {
        const name = String(text ?? '').trim();
        return name ? { id: name, name } : undefined;
      }}
      validate={validate}
      TextFieldProps={{ placeholder }}
      disableCloseOnSelect
      filterSelectedOptions
      helperText={false}
    />
  );
};

/** The model picker and its helpers: fill related / all, fetch from the upstream, clear, add custom names. */
const ModelsInput = ({ typeModels, validate }: { typeModels: Record<string, string[]>; validate: Validator }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const dp = useGateway();
  const http = useApi();
  const allModels = useChannelModels();
  const { setValue, getValues } = useFormContext();
  const [type, models] = useWatch({ name: ['type', 'models'] }) as [number, string[] | null];
  const selected = models ?? [];
  const setModels = (list: string[]) => setValue('models', Array.from(new Set(list)), { shouldDirty: true, shouldValidate: true });
  const [custom, setCustom] = useState('');
  const [fetching, setFetching] = useState(false);
  // Fetched models that have no price or ratio: the relay would refuse them until one is set.
  const [unpriced, setUnpriced] = useState<string[]>([]);
  const related = useMemo(() => typeModels[String(type)] ?? [], [typeModels, type]);
  const options = useMemo(() => Array.from(new Set([...allModels, ...related])), [allModels, related]);

  const fetchModels = async () => {
    const form = asChannelForm(getValues());
    const isEdit = form.id !== undefined;
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
      setModels(fetched);
      notify('res.channel.msg.models_fetched', { type: 'success' });
      setUnpriced(await unpricedOf(fetched));
    } catch (e) {
      notifyError(e instanceof Error && e.message ? e : translate('res.channel.msg.models_fetch_failed'));
    } finally {
      setFetching(false);
    }
  };

  /** The fetched models lacking a ModelPrice/ModelRatio entry (the option list is an admin call; failures hide the warning). */
  const unpricedOf = async (list: string[]): Promise<string[]> => {
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
      return unpricedModels(list, [], { price: parse('ModelPrice'), ratio: parse('ModelRatio') });
    } catch {
      return [];
    }
  };

  const addCustom = () => {
    if (!custom.trim()) return;
    const { models: next, duplicate } = addCustomModels(selected, custom);
    setModels(next);
    setCustom('');
    if (duplicate) notify('res.channel.msg.models_exist', { type: 'warning' });
  };
  const shownUnpriced = unpriced.filter((m) => selected.includes(m));

  return (
    <>
      <TagsInput
        source="models"
        label="res.channel.fields.models"
        options={options}
        validate={validate}
        placeholder={translate('res.channel.placeholder.models')}
      />
      <Stack direction="row" spacing={1} sx={{ flexWrap: 'wrap', gap: 1 }}>
        <Button size="small" variant="outlined" disabled={!related.length} onClick={() => setModels([...selected, ...related])}>
          {translate('res.channel.fill_related')}
        </Button>
        <Button size="small" variant="outlined" onClick={() => setModels([...selected, ...allModels])}>
          {translate('res.channel.fill_all')}
        </Button>
        <Button size="small" variant="outlined" onClick={fetchModels} disabled={fetching} startIcon={fetching ? <CircularProgress size={14} /> : undefined}>
          {translate('res.channel.fetch_models')}
        </Button>
        <Button size="small" color="warning" onClick={() => setModels([])}>
          {translate('res.channel.clear_models')}
        </Button>
      </Stack>
      {shownUnpriced.length > 0 && (
        <Alert severity="warning" data-testid="channel-unpriced-warning" onClose={() => setUnpriced([])} sx={{ width: '100%' }}>
          {translate('res.channel.msg.unpriced_models', { count: shownUnpriced.length, models: shownUnpriced.join(', ') })}{' '}
          <Link component={RouterLink} to="/setting?tab=operation">
            {translate('res.channel.msg.set_ratios')}
          </Link>
        </Alert>
      )}
      <Stack direction="row" spacing={1} sx={{ width: '100%' }}>
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
    </>
  );
};

/** The order a multi-key channel uses its keys in (create and edit). */
const KeyOrderInput = () => (
  <SelectInput
    source="multi_key_mode"
    label="res.channel.multi_key.order"
    choices={[
      { id: 'random', name: 'res.channel.multi_key.random' },
      { id: 'polling', name: 'res.channel.multi_key.polling' },
    ]}
    helperText={false}
    sx={{ minWidth: 160, maxWidth: 220 }}
  />
);
