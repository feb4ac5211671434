/** The token form (defaults, presets, checks, wire body) and the list's status and key display. Unit-tested in tokenForm.test.ts. */
import type { Identifier } from 'react-admin';
import { joinComma, parseDateText, randomSuffix, splitComma } from '../shared/format';

export const TOKEN_STATUS = { ENABLED: 1, DISABLED: 2, EXPIRED: 3, EXHAUSTED: 4 } as const;

/** Quota presets: value and label at 500000 per dollar. */
export const QUOTA_PRESETS = [
  { value: 500000, label: '$1' },
  { value: 5000000, label: '$10' },
  { value: 25000000, label: '$50' },
  { value: 50000000, label: '$100' },
  { value: 250000000, label: '$500' },
  { value: 500000000, label: '$1000' },
];
/** The same presets in dollars: the form turns them into quota at the configured quota per unit (usdPresets). */
export const QUOTA_USD_PRESETS = [1, 10, 50, 100, 500, 1000];
export const DEFAULT_TOKEN_QUOTA = 500000;
export const BATCH_PRESETS = [10, 20, 30, 100];

export type ExpiryOption = 'never' | 'hour' | 'day' | 'month';
export const EXPIRY_OPTIONS: ExpiryOption[] = ['never', 'hour', 'day', 'month'];

/** Quick expiry: never → -1, otherwise now + 1 hour / 1 day / 30 days (epoch seconds). */
export function expiryFromOption(option: ExpiryOption, nowSeconds = Math.floor(Date.now() / 1000)): number {
  switch (option) {
    case 'never':
      return -1;
    case 'hour':
      return nowSeconds + 3600;
    case 'day':
      return nowSeconds + 86400;
    case 'month':
      return nowSeconds + 30 * 86400;
  }
}

/**
 * Expiry text → expired_time. Empty or -1 means never (-1); anything else must parse as a date,
 * otherwise the error key 过期时间格式错误！ is returned.
 */
export function parseExpiry(text: string | number | null | undefined): { value: number } | { error: string } {
  if (text === null || text === undefined) return { value: -1 };
  const t = String(text).trim();
  if (t === '' || t === '-1') return { value: -1 };
  const ts = parseDateText(t);
  if (ts === null) return { error: 'res.token.msg.expiry_invalid' };
  return { value: ts };
}

/** Batch count: positive integer, else null. */
export function parseBatchCount(v: unknown): number | null {
  const s = String(v ?? '').trim();
  if (!/^\d+$/.test(s)) return null;
  const n = Number(s);
  return n >= 1 ? n : null;
}

/** Names of a batch: the first keeps the name, each further one gets a random 6-character alphanumeric suffix. */
export function batchNames(name: string, count: number, rnd: () => number = Math.random): string[] {
  const names: string[] = [];
  for (let i = 0; i < count; i++) names.push(i === 0 ? name : `${name}-${randomSuffix(6, rnd)}`);
  return names;
}

export interface TokenForm {
  id?: Identifier;
  name: string;
  remain_quota: number | string;
  unlimited_quota: boolean;
  expired_time: string; // '' / '-1' = never, else date text
  model_limits_enabled: boolean;
  model_limits: string[];
  allow_ips: string;
  group: string;
  count: number | string;
}

export const TOKEN_DEFAULTS: TokenForm = {
  name: '',
  remain_quota: DEFAULT_TOKEN_QUOTA,
  unlimited_quota: false,
  expired_time: '',
  model_limits_enabled: false,
  model_limits: [],
  allow_ips: '',
  group: '',
  count: 1,
};

/**
 * The form as react-admin's inputs hold it → TokenForm: an emptied text input holds null (read as
 * empty text, so an emptied quota or count is refused rather than replaced by a default).
 */
export function asTokenForm(values: Record<string, unknown>): TokenForm {
  const text = (k: string) => (values[k] === null || values[k] === undefined ? '' : String(values[k]));
  const num = (k: string) => (values[k] === null || values[k] === undefined ? '' : (values[k] as number | string));
  return {
    ...(values.id !== undefined && values.id !== null ? { id: values.id as Identifier } : {}),
    name: text('name'),
    remain_quota: num('remain_quota'),
    unlimited_quota: !!values.unlimited_quota,
    expired_time: text('expired_time'),
    model_limits_enabled: !!values.model_limits_enabled,
    model_limits: Array.isArray(values.model_limits) ? values.model_limits.map(String) : [],
    allow_ips: text('allow_ips'),
    group: text('group'),
    count: num('count'),
  };
}

/** The per-field checks (each the i18n key of its problem, or null): the inputs' validators, and validateToken in order. */
export const tokenChecks = {
  name: (form: TokenForm, isEdit: boolean): string | null => (!isEdit && !form.name.trim() ? 'res.token.msg.name_required' : null),
  quota: (form: TokenForm): string | null =>
    !form.unlimited_quota && !/^-?\d+$/.test(String(form.remain_quota).trim()) ? 'res.token.msg.quota_integer' : null,
  expiry: (form: TokenForm): string | null => {
    const exp = parseExpiry(form.expired_time);
    return 'error' in exp ? exp.error : null;
  },
  count: (form: TokenForm, isEdit: boolean): string | null => (!isEdit && parseBatchCount(form.count) === null ? 'res.token.msg.count_invalid' : null),
};

/** Validates; returns the i18n key of the first problem or null. */
export function validateToken(form: TokenForm, isEdit: boolean): string | null {
  return tokenChecks.name(form, isEdit) ?? tokenChecks.quota(form) ?? tokenChecks.expiry(form) ?? tokenChecks.count(form, isEdit);
}

/** Normalises the allow-list: one IP per line, blanks dropped. */
export function normaliseAllowIps(text: string): string {
  return text
    .split(/\r?\n/)
    .map((s) => s.trim())
    .filter(Boolean)
    .join('\n');
}

/** Form → wire body (without the name, set per token in a batch). */
export function tokenPayload(form: TokenForm): Record<string, unknown> {
  const exp = parseExpiry(form.expired_time);
  return {
    ...(form.id ? { id: form.id } : {}),
    name: form.name.trim(),
    remain_quota: form.unlimited_quota ? 0 : parseInt(String(form.remain_quota), 10) || 0,
    unlimited_quota: form.unlimited_quota,
    expired_time: 'value' in exp ? exp.value : -1,
    model_limits_enabled: form.model_limits_enabled && form.model_limits.length > 0,
    model_limits: joinComma(form.model_limits),
    allow_ips: normaliseAllowIps(form.allow_ips),
    group: form.group,
  };
}

/** A token as the server sends it (a react-admin record): its id plus the wire fields, read defensively. */
export type TokenWire = { id?: Identifier } & Record<string, unknown>;

export function tokenToForm(t: TokenWire, toText: (ts: number) => string): TokenForm {
  const exp = Number(t.expired_time);
  return {
    id: t.id,
    name: String(t.name ?? ''),
    remain_quota: Number(t.remain_quota) || 0,
    unlimited_quota: !!t.unlimited_quota,
    expired_time: !exp || exp === -1 ? '' : toText(exp),
    model_limits_enabled: !!t.model_limits_enabled,
    model_limits: splitComma(String(t.model_limits ?? '')),
    allow_ips: String(t.allow_ips ?? ''),
    group: String(t.group ?? ''),
    count: 1,
  };
}

/** Status shown for a token: 'enabled_limited' when enabled with model limits. */
export function tokenStatusKey(t: { status: number; model_limits_enabled?: boolean | number }): string {
  switch (Number(t.status)) {
    case 1:
      return t.model_limits_enabled ? 'enabled_limited' : 'enabled';
    case 2:
      return 'disabled';
    case 3:
      return 'expired';
    case 4:
      return 'exhausted';
    default:
      return 'unknown';
  }
}

/**
 * Key as shown in the list: sk- prefix, middle masked. The server answers keys masked already
 * (`abcd…wxyz`), shown as they come; the copy buttons ask for the whole key (tokenKey.ts).
 */
export function maskKey(key: string): string {
  if (key.includes('…')) return `sk-${key}`;
  return key.length > 12 ? `sk-${key.slice(0, 4)}**********${key.slice(-4)}` : `sk-${key}`;
}
