import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { Box, Button, Card, Chip, CardContent, CardHeader, FormControlLabel, MenuItem, Stack, Switch, TextField, Typography } from '@mui/material';
import SaveIcon from '@mui/icons-material/SaveOutlined';
import { useMutation } from '@tanstack/react-query';
import { Confirm, useNotify, useTranslate } from 'react-admin';
import { useNotifyError } from '../../resources/shared/hooks';
import { api } from '../../lib/http';
import { useStatus } from '../../lib/StatusContext';
import { changedOptions, isJsonText, isSecretKey, numberRule, saveChanges, type OptionChange, type OptionMap } from './settingOptions';

/** The loaded options (GET /api/option/) shared by every tab, and a reload after saves. */
export interface OptionsState {
  options: OptionMap;
  reload(): Promise<void>;
}
export const OptionsCtx = createContext<OptionsState>({ options: {}, reload: async () => undefined });
export const useOptions = () => useContext(OptionsCtx);

/** The i18n key of an option's label (dots are i18next separators, so they become underscores). */
export const fieldLabelKey = (key: string) => `feat.setting.f.${key.replace(/\./g, '_')}`;

export type FieldType = 'switch' | 'text' | 'number' | 'json' | 'textarea' | 'secret' | 'select';

export interface FieldDef {
  key: string;
  type: FieldType;
  /** select choices (value → i18n key). */
  choices?: Array<{ value: string; label: string }>;
  /** i18n key of a helper text. */
  help?: string;
  /** Confirmation (i18n key) asked when the switch is turned off; cancelling restores it. */
  confirmOff?: string;
  /** Greyed out while this switch key is off in the form. */
  disabledUnless?: string;
  full?: boolean;
  rows?: number;
}

/**
 * Saving option changes, one PUT per key, as a react-query mutation (`isPending` is the busy state):
 * tells the outcome (saved, partly failed, failed) and reloads the options and the status when
 * something was saved; `mutateAsync` answers true then.
 */
export function useSaveOptions() {
  const notify = useNotify();
  const notifyError = useNotifyError();
  const { reload } = useOptions();
  const status = useStatus();
  return useMutation({
    mutationFn: async (changes: OptionChange[]): Promise<boolean> => {
      const res = await saveChanges(changes, async (key, value) => {
        await api().put('/api/option/', { key, value });
      });
      if (res.outcome === 'nothing') {
        notify('feat.setting.msg.nothing', { type: 'warning' });
        return false;
      }
      if (res.outcome === 'ok') notify('feat.setting.msg.saved', { type: 'success' });
      else {
        const detail = res.errors.map((e) => e.message).join('; ');
        notify(res.outcome === 'partial' ? 'feat.setting.msg.partial' : 'feat.setting.msg.failed', { type: 'error', messageArgs: { detail } });
      }
      if (res.saved.length) {
        await reload();
        // Site name, logo, footer, display switches… come back through /api/status.
        void status.reload();
      }
      return res.saved.length > 0;
    },
    onError: notifyError,
  });
}

export function SectionCard({ title, children, action }: { title: string; children: ReactNode; action?: ReactNode }) {
  const translate = useTranslate();
  return (
    <Card variant="outlined" sx={{ mb: 2 }}>
      <CardHeader title={translate(title)} titleTypographyProps={{ variant: 'subtitle1', fontWeight: 600 }} action={action} sx={{ pb: 0 }} />
      <CardContent>{children}</CardContent>
    </Card>
  );
}

interface SectionProps {
  title: string;
  fields: FieldDef[];
  /** Extra check before saving: an i18n key (or text) to warn with, or null. */
  validate?: (values: OptionMap, stored: OptionMap) => string | null;
  /** Last changes before the diff (trim URLs …). */
  transform?: (values: OptionMap) => OptionMap;
  /** Extra content under the fields (editors bound to the same values). */
  extra?: (values: OptionMap, set: (k: string, v: string) => void) => ReactNode;
  /** Keys edited only through `extra` (part of the diff). */
  extraKeys?: string[];
  testId?: string;
}

/**
 * A card of option fields with its own save button: tracks the form, validates JSON on blur and
 * number ranges, and saves only the changed keys (switches off first, others, then switches on).
 */
export function OptionSection({ title, fields, validate, transform, extra, extraKeys = [], testId }: SectionProps) {
  const translate = useTranslate();
  const notify = useNotify();
  const { options } = useOptions();
  const save = useSaveOptions();
  const keys = useMemo(() => [...fields.map((f) => f.key), ...extraKeys], [fields, extraKeys]);
  const initial = useMemo(() => {
    const o: OptionMap = {};
    for (const k of keys) o[k] = isSecretKey(k) ? '' : (options[k] ?? '');
    return o;
  }, [keys, options]);
  const snapshot = JSON.stringify(initial);
  const [values, setValues] = useState<OptionMap>(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [confirmKey, setConfirmKey] = useState<FieldDef | null>(null);
  // eslint-disable-next-line react-hooks/exhaustive-deps -- `snapshot` is `initial` as JSON: reset on a content change only, not on each new `initial` object (that would drop unsaved edits)
  useEffect(() => setValues(initial), [snapshot]);

  const set = (k: string, v: string) => setValues((s) => ({ ...s, [k]: v }));

  const checkField = (f: FieldDef, v: string): string | null => {
    if (f.type === 'json' && !isJsonText(v)) return 'feat.setting.err.json';
    if (f.type === 'number') {
      if (v.trim() !== '' && !Number.isFinite(Number(v))) return 'feat.setting.ratio.err.number';
      return numberRule(f.key, v);
    }
    return null;
  };
  const blur = (f: FieldDef) => {
    const e = checkField(f, values[f.key] ?? '');
    setErrors((s) => ({ ...s, [f.key]: e ?? '' }));
  };

  const submit = async () => {
    const errs: Record<string, string> = {};
    for (const f of fields) {
      if (f.disabledUnless && values[f.disabledUnless] !== 'true') continue;
      const e = checkField(f, values[f.key] ?? '');
      if (e) errs[f.key] = e;
    }
    setErrors(errs);
    const first = Object.values(errs)[0];
    if (first) return notify(first, { type: 'warning' });
    const v = transform ? transform(values) : values;
    const custom = validate?.(v, options);
    if (custom) return notify(custom, { type: 'warning' });
    save.mutate(changedOptions(initial, v));
  };

  const renderField = (f: FieldDef) => {
    const label = translate(fieldLabelKey(f.key));
    const v = values[f.key] ?? '';
    const disabled = !!f.disabledUnless && values[f.disabledUnless] !== 'true';
    const err = errors[f.key];
    const helper = err ? translate(err) : f.help ? translate(f.help) : undefined;
    if (f.type === 'switch') {
      return (
        <FormControlLabel
          key={f.key}
          sx={{ minWidth: 240, mr: 2 }}
          control={
            <Switch
              checked={v === 'true'}
              name={f.key}
              slotProps={{ input: { 'aria-label': label } as Record<string, string> }}
              onChange={(e) => {
                if (!e.target.checked && f.confirmOff) setConfirmKey(f);
                set(f.key, e.target.checked ? 'true' : 'false');
              }}
            />
          }
          label={label}
        />
      );
    }
    const multiline = f.type === 'json' || f.type === 'textarea';
    return (
      <TextField
        key={f.key}
        name={f.key}
        label={label}
        size="small"
        value={v}
        select={f.type === 'select'}
        disabled={disabled}
        type={f.type === 'secret' ? 'password' : 'text'}
        autoComplete={f.type === 'secret' ? 'new-password' : 'off'}
        placeholder={f.type === 'secret' ? translate('feat.setting.secret_placeholder') : undefined}
        multiline={multiline}
        minRows={multiline ? (f.rows ?? 4) : undefined}
        maxRows={multiline ? 18 : undefined}
        error={!!err}
        helperText={helper}
        onChange={(e) => set(f.key, e.target.value)}
        onBlur={() => blur(f)}
        sx={{ gridColumn: f.full || multiline ? '1 / -1' : undefined, '& textarea': multiline ? { fontFamily: 'monospace', fontSize: 13 } : undefined }}
      >
        {f.choices?.map((c) => (
          <MenuItem key={c.value} value={c.value}>
            {translate(c.label)}
          </MenuItem>
        ))}
      </TextField>
    );
  };

  const dirty = changedOptions(initial, values).length > 0;
  const switches = fields.filter((f) => f.type === 'switch');
  const inputs = fields.filter((f) => f.type !== 'switch');
  return (
    <SectionCard
      title={title}
      action={dirty ? <Chip size="small" color="warning" variant="outlined" label={translate('feat.setting.unsaved')} sx={{ mt: 1, mr: 1 }} /> : undefined}
    >
      <Box data-testid={testId}>
        {switches.length > 0 && <Box sx={{ display: 'flex', flexWrap: 'wrap', mb: inputs.length ? 1.5 : 0 }}>{switches.map(renderField)}</Box>}
        {inputs.length > 0 && (
          <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', sm: 'repeat(2, minmax(0, 1fr))', lg: 'repeat(3, minmax(0, 1fr))' } }}>
            {inputs.map(renderField)}
          </Box>
        )}
        {extra?.(values, set)}
        <Stack direction="row" sx={{ mt: 2 }}>
          <Button variant="contained" startIcon={<SaveIcon />} onClick={submit} disabled={save.isPending}>
            {translate('feat.setting.save_section', { name: translate(title) })}
          </Button>
        </Stack>
      </Box>
      <Confirm
        isOpen={!!confirmKey}
        title={translate('feat.setting.confirm_title')}
        content={confirmKey?.confirmOff ? translate(confirmKey.confirmOff) : ''}
        onConfirm={() => setConfirmKey(null)}
        onClose={() => {
          if (confirmKey) set(confirmKey.key, 'true');
          setConfirmKey(null);
        }}
      />
    </SectionCard>
  );
}

/** A read-only line: label and value. */
export function InfoLine({ label, value }: { label: string; value: ReactNode }) {
  const translate = useTranslate();
  return (
    <Typography variant="body2" sx={{ mb: 0.5 }}>
      <Box component="span" sx={{ color: 'text.secondary', mr: 1 }}>
        {translate(label)}
      </Box>
      {value}
    </Typography>
  );
}
