/**
 * The channel form without React: wire record ↔ form values, validations, custom models, the kind
 * switch and the copy body.
 */
import type { Identifier } from 'react-admin';
import { joinComma, splitComma } from '../shared/format';
import { OPENAI_CHANNEL_TYPE, kindFields, type ChannelTypeCatalogue } from './channelTypes';

export const CHANNEL_STATUS = { ENABLED: 1, MANUALLY_DISABLED: 2, AUTO_DISABLED: 3 } as const;

/** The channel as the form edits it: lists instead of comma strings, booleans instead of 0/1. */
export interface ChannelForm {
  id?: Identifier;
  name: string;
  type: number;
  key: string;
  openai_organization: string;
  max_input_tokens: number;
  base_url: string;
  other: string;
  model_mapping: string;
  status_code_mapping: string;
  models: string[];
  groups: string[];
  auto_ban: boolean;
  test_model: string;
  priority: number | string;
  weight: number | string;
  tag: string;
  setting: string;
  param_override: string;
  /** one key per line creates one channel per key */
  batch: boolean;
  /** one channel holding every key (new-api's multi_to_single) */
  multi?: boolean;
  multi_key_mode?: 'random' | 'polling';
}

export const CHANNEL_DEFAULTS: ChannelForm = {
  name: '',
  type: OPENAI_CHANNEL_TYPE,
  key: '',
  openai_organization: '',
  max_input_tokens: 0,
  base_url: '',
  other: '',
  model_mapping: '',
  status_code_mapping: '',
  models: [],
  groups: ['default'],
  auto_ban: true,
  test_model: '',
  priority: 0,
  weight: 0,
  tag: '',
  setting: '',
  param_override: '',
  batch: false,
  multi: false,
  multi_key_mode: 'random',
};

const str = (v: unknown) => (v === null || v === undefined ? '' : String(v));
function prettyJson(v: unknown): string {
  const s = str(v).trim();
  if (!s || s === '{}' || s === 'null') return '';
  try {
    return JSON.stringify(JSON.parse(s), null, 2);
  } catch {
    return s;
  }
}

/** A channel as the server sends it (a react-admin record): its id plus the wire fields, read defensively. */
export type ChannelWire = { id?: Identifier } & Record<string, unknown>;

/** Wire record → form values. */
export function channelToForm(ch: ChannelWire): ChannelForm {
  const groups = splitComma(str(ch.group));
  const info = (ch.channel_info ?? {}) as { is_multi_key?: boolean; multi_key_mode?: string };
  return {
    ...CHANNEL_DEFAULTS,
    id: ch.id,
    name: str(ch.name),
    type: Number(ch.type) || 1,
    key: '',
    openai_organization: str(ch.openai_organization),
    max_input_tokens: Number(ch.max_input_tokens) || 0,
    base_url: str(ch.base_url),
    other: str(ch.other),
    model_mapping: prettyJson(ch.model_mapping),
    status_code_mapping: prettyJson(ch.status_code_mapping),
    models: splitComma(str(ch.models)),
    groups: groups.length ? groups : ['default'],
    auto_ban: !(ch.auto_ban === 0 || ch.auto_ban === false),
    test_model: str(ch.test_model),
    priority: Number(ch.priority) || 0,
    weight: Number(ch.weight) || 0,
    tag: str(ch.tag),
    setting: str(ch.setting),
    param_override: str(ch.param_override),
    multi: info.is_multi_key === true,
    multi_key_mode: info.multi_key_mode === 'polling' ? 'polling' : 'random',
  };
}

/** Removes trailing slashes from a base URL. */
export function stripTrailingSlash(url: string): string {
  return url.trim().replace(/\/+$/, '');
}

/** A base URL ending in /v1 (the API adds /v1 itself): the form asks for confirmation. */
export function baseUrlEndsWithV1(url: string): boolean {
  return /\/v1\/*$/i.test(url.trim());
}

/** Azure deployment names carry no dots: gpt-3.5-turbo → gpt-35-turbo. */
export function stripModelDots(models: readonly string[]): string[] {
  return splitComma(models.map((m) => m.replace(/\./g, '')).join(','));
}

/** Priority: integer, minimum -999. */
export function parsePriority(v: unknown): number {
  const n = parseInt(String(v ?? '0'), 10);
  if (!Number.isFinite(n)) return 0;
  return Math.max(-999, n);
}

/** Single-channel weight: integer, below 0 clamped to 0. */
export function parseWeight(v: unknown): number {
  const n = parseInt(String(v ?? '0'), 10);
  if (!Number.isFinite(n) || n < 0) return 0;
  return n;
}

/** Keys of a batch create: one per line, blanks ignored. */
export function batchKeys(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((k) => k.trim())
    .filter(Boolean);
}

function isJsonList(text: string): boolean {
  try {
    return Array.isArray(JSON.parse(text));
  } catch {
    return false;
  }
}

export function isValidJsonObject(text: string): boolean {
  if (!text.trim()) return true;
  try {
    const v = JSON.parse(text);
    return !!v && typeof v === 'object' && !Array.isArray(v);
  } catch {
    return false;
  }
}

/** scheme://host:port of a URL; the text itself when it is not one. */
function originOf(url: string): string {
  try {
    const u = new URL(url);
    return u.host ? `${u.protocol}//${u.host}` : url;
  } catch {
    return url;
  }
}

function proxyOf(setting: string): string {
  try {
    const v = (JSON.parse(setting) as Record<string, unknown> | null)?.proxy;
    return typeof v === 'string' ? v.trim() : '';
  } catch {
    return '';
  }
}

/** Where the channel's key goes, as the server tells them apart (services/channels.ts keyDestinations). */
function keyDestinations(form: ChannelForm, cat: ChannelTypeCatalogue): string[] {
  const out: string[] = [];
  const proxy = proxyOf(form.setting);
  if (proxy) out.push(`proxy ${originOf(proxy)}`);
  const base = stripTrailingSlash(form.base_url);
  if (base) out.push(originOf(base));
  // Without a base URL the kind's own host: for a kind whose `other` is a region (Vertex AI), it is in the host name.
  else if (kindFields(cat, form.type).other?.label === 'res.channel.fields.region') out.push(`type ${form.type} ${form.other.trim()}`);
  else out.push(`type ${form.type}`);
  return out;
}

/**
 * Does the edit send the stored key somewhere new (another base URL host, proxy, kind or region)?
 * Then an admin must type the key again: the server refuses it otherwise (only root may re-point
 * a channel without the key).
 */
export function changesKeyDestination(initial: ChannelForm, form: ChannelForm, cat: ChannelTypeCatalogue): boolean {
  const known = new Set(keyDestinations(initial, cat));
  return keyDestinations(form, cat).some((d) => !known.has(d));
}

/**
 * The form as react-admin's inputs hold it → ChannelForm: an emptied text input holds null, a
 * cleared number input null; both read as the field's default.
 */
export function asChannelForm(values: Record<string, unknown>): ChannelForm {
  const out: Record<string, unknown> = { ...CHANNEL_DEFAULTS, ...values };
  for (const [k, d] of Object.entries(CHANNEL_DEFAULTS)) if (out[k] === null || out[k] === undefined) out[k] = d;
  return out as unknown as ChannelForm;
}

/**
 * The per-field checks (each the i18n key of its problem, or null), used by the form's inputs as
 * validators and, in order, by validateChannel. `keyRequired`: an edit that must carry the key (an
 * admin re-pointing the channel, see changesKeyDestination).
 */
export const channelChecks = {
  name: (form: ChannelForm): string | null => (form.name.trim() ? null : 'res.channel.msg.name_key_required'),
  /** The key is there when it must be: always on create, on an admin's re-pointing edit. */
  keyPresent: (form: ChannelForm, isEdit: boolean, keyRequired = false): string | null => {
    if (form.key.trim()) return null;
    if (!isEdit) return 'res.channel.msg.name_key_required';
    return keyRequired ? 'res.channel.msg.key_for_destination' : null;
  },
  /** A JSON-credential kind's key is a JSON object (a JSON list of them in multi-key mode). */
  keyFormat: (form: ChannelForm, isEdit: boolean, cat: ChannelTypeCatalogue): string | null => {
    if (kindFields(cat, form.type).jsonKey && form.key.trim() && !form.batch && !form.multi && !isValidJsonObject(form.key)) return 'res.channel.msg.key_json';
    if (form.multi && !isEdit && form.key.trim().startsWith('[') && !isJsonList(form.key)) return 'res.channel.msg.key_json';
    return null;
  },
  /** A kind whose base URL is its endpoint (Azure) needs one. */
  baseUrl: (form: ChannelForm, cat: ChannelTypeCatalogue): string | null =>
    kindFields(cat, form.type).baseUrl?.required && !form.base_url.trim() ? 'ra.validation.required' : null,
  models: (form: ChannelForm): string | null => (form.models.length ? null : 'res.channel.msg.models_required'),
  mapping: (form: ChannelForm): string | null => (isValidJsonObject(form.model_mapping) ? null : 'res.channel.msg.mapping_json'),
};

/**
 * Validates the whole form; returns the i18n key of the first problem, or null. `keyRequired`: an
 * edit that must carry the key (an admin re-pointing the channel, see changesKeyDestination).
 */
export function validateChannel(form: ChannelForm, isEdit: boolean, cat: ChannelTypeCatalogue, keyRequired = false): string | null {
  return (
    channelChecks.name(form) ??
    channelChecks.keyPresent(form, isEdit, keyRequired) ??
    channelChecks.baseUrl(form, cat) ??
    channelChecks.models(form) ??
    channelChecks.mapping(form) ??
    channelChecks.keyFormat(form, isEdit, cat)
  );
}

/** Form values → wire body for POST/PUT /api/channel/. */
export function formToPayload(form: ChannelForm, isEdit: boolean, cat: ChannelTypeCatalogue): Record<string, unknown> {
  const kind = kindFields(cat, form.type);
  let other = form.other.trim();
  if (!other && kind.other?.default) other = kind.other.default;
  const models = kind.stripModelDots ? stripModelDots(form.models) : splitComma(form.models.join(','));
  const body: Record<string, unknown> = {
    name: form.name.trim(),
    type: form.type,
    openai_organization: kind.organization ? form.openai_organization.trim() : '',
    max_input_tokens: Number(form.max_input_tokens) || 0,
    base_url: stripTrailingSlash(form.base_url),
    other,
    model_mapping: form.model_mapping.trim(),
    status_code_mapping: form.status_code_mapping.trim(),
    models: joinComma(models),
    group: joinComma(form.groups.length ? form.groups : ['default']),
    auto_ban: form.auto_ban ? 1 : 0,
    test_model: form.test_model.trim(),
    priority: parsePriority(form.priority),
    weight: parseWeight(form.weight),
    tag: form.tag.trim(),
    setting: form.setting.trim(),
    param_override: form.param_override.trim(),
  };
  if (isEdit) {
    body.id = form.id;
    if (form.key.trim()) body.key = form.key.trim();
    if (form.multi) body.multi_key_mode = form.multi_key_mode ?? 'random';
  } else if (form.multi) {
    // A JSON list (JSON-credential kinds) goes as typed: the server splits it into keys.
    body.key = form.key.trim().startsWith('[') ? form.key.trim() : batchKeys(form.key).join('\n');
    body.mode = 'multi_to_single';
    body.multi_key_mode = form.multi_key_mode ?? 'random';
  } else if (form.batch) {
    body.key = batchKeys(form.key).join('\n');
    body.mode = 'batch';
  } else {
    body.key = form.key.trim();
  }
  return body;
}

/**
 * Custom model entry (comma separated) merged into the selection. Returns the new list and whether
 * some entries were already present (某些模型已存在！).
 */
export function addCustomModels(existing: readonly string[], input: string): { models: string[]; duplicate: boolean } {
  const wanted = splitComma(input);
  const models = [...existing];
  let duplicate = false;
  for (const m of wanted) {
    if (models.includes(m)) duplicate = true;
    else models.push(m);
  }
  return { models, duplicate };
}
/**
 * Body that creates a copy of a channel (the row's "copy" action): same settings and key, name
 * with a suffix, and fresh counters (balance, used quota, response time, test time are not copied).
 */
export function copyPayload(ch: Record<string, unknown>, suffix = '_复制'): Record<string, unknown> {
  const keep = [
    'type',
    'key',
    'openai_organization',
    'max_input_tokens',
    'base_url',
    'other',
    'model_mapping',
    'status_code_mapping',
    'models',
    'group',
    'auto_ban',
    'test_model',
    'priority',
    'weight',
    'tag',
    'setting',
    'param_override',
    'status',
  ];
  const body: Record<string, unknown> = { name: `${str(ch.name)}${suffix}` };
  for (const k of keep) if (ch[k] !== undefined && ch[k] !== null) body[k] = ch[k];
  return body;
}

/**
 * Changing the kind: the `other` field takes the new kind's default (Azure API version, iFlytek
 * version), is cleared when the old kind used it for something else, and is kept otherwise.
 */
export function switchType(form: ChannelForm, type: number, cat: ChannelTypeCatalogue): ChannelForm {
  const next = kindFields(cat, type).other;
  const prev = kindFields(cat, form.type).other;
  let other = form.other;
  if (next?.default) other = next.default;
  else if (prev || next) other = '';
  return { ...form, type, other };
}
