/**
 * Channel screen logic without React: the channel-type catalogue from the server (labels, per-kind
 * special fields), form ↔ wire transform, validations, tag-mode grouping. Unit-tested in logic.test.ts.
 */
import { joinComma, splitComma, type TagColor } from '../shared/format';
import type { ConsoleChannelType } from '../../../../server/src/channels/catalogue';

/**
 * One channel type as `GET /api/channel/types` answers it: the server's own type (so the two cannot
 * drift), with `name` and `color` as the console reads them from an answer it does not trust.
 */
export type ChannelTypeInfo = Omit<ConsoleChannelType, 'name' | 'color'> & { name: string; color: TagColor };

/** The answer indexed by id; `list` keeps the server's (menu) order. */
export interface ChannelTypeCatalogue {
  list: ChannelTypeInfo[];
  byId: ReadonlyMap<number, ChannelTypeInfo>;
}

export const EMPTY_CATALOGUE: ChannelTypeCatalogue = { list: [], byId: new Map() };

const TAG_COLORS: readonly TagColor[] = ['grey', 'green', 'lime', 'yellow', 'orange', 'red', 'blue', 'purple', 'cyan', 'teal', 'pink', 'indigo', 'amber', 'violet', 'light-blue', 'white'];
const obj = (v: unknown): Record<string, any> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : undefined);
const optStr = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Turns the endpoint's answer into the catalogue; malformed items are skipped, never thrown on. */
export function catalogueFrom(answer: unknown): ChannelTypeCatalogue {
  const list: ChannelTypeInfo[] = [];
  for (const raw of Array.isArray(answer) ? answer : []) {
    const t = obj(raw);
    if (!t || !Number.isInteger(t.id) || typeof t.label !== 'string') continue;
    const f = obj(t.fields) ?? {};
    const fields: ChannelTypeInfo['fields'] = {};
    if (f.organization === true) fields.organization = true;
    const b = obj(f.base_url);
    if (b && typeof b.label === 'string') fields.base_url = { label: b.label, placeholder: optStr(b.placeholder), required: b.required === true, full_url: b.full_url === true };
    const o = obj(f.other);
    if (o && typeof o.label === 'string') fields.other = { label: o.label, placeholder: optStr(o.placeholder), default: optStr(o.default), multiline: o.multiline === true };
    if (f.strip_model_dots === true) fields.strip_model_dots = true;
    if (typeof f.hint === 'string' && f.hint) fields.hint = f.hint;
    list.push({
      id: t.id,
      name: String(t.name ?? ''),
      label: t.label,
      color: TAG_COLORS.includes(t.color) ? t.color : 'grey',
      offered: t.offered !== false,
      key_hint: typeof t.key_hint === 'string' ? t.key_hint : '',
      json_key: t.json_key === true,
      predefined_models: t.predefined_models === true,
      fields,
    });
  }
  return { list, byId: new Map(list.map((t) => [t.id, t])) };
}

export function channelTypeLabel(cat: ChannelTypeCatalogue, type: number): string {
  return cat.byId.get(type)?.label ?? `#${type}`;
}
export function channelTypeColor(cat: ChannelTypeCatalogue, type: number): TagColor {
  return cat.byId.get(type)?.color ?? 'grey';
}

/** The type menu: the offered kinds, plus the channel's own kind when it is not offered (or unknown). */
export function typeMenu(cat: ChannelTypeCatalogue, current: number): { value: number; label: string }[] {
  const items = cat.list.filter((t) => t.offered || t.id === current).map((t) => ({ value: t.id, label: t.label }));
  if (!cat.byId.has(current)) items.push({ value: current, label: channelTypeLabel(cat, current) });
  return items;
}

/** Placeholder of the key field for a kind ('' = the generic one). */
export function keyHint(cat: ChannelTypeCatalogue, type: number): string {
  return cat.byId.get(type)?.key_hint ?? '';
}

/** Kinds whose model list is predefined (Midjourney Proxy, Midjourney Proxy Plus, Suno): choosing the kind fills it. */
export function hasPredefinedModels(cat: ChannelTypeCatalogue, type: number): boolean {
  return cat.byId.get(type)?.predefined_models === true;
}

export const CHANNEL_STATUS = { ENABLED: 1, MANUALLY_DISABLED: 2, AUTO_DISABLED: 3 } as const;

/** Which special fields a kind shows. */
export interface KindFields {
  organization?: boolean;
  /** i18n key of the base URL label, when the kind relabels it; `required` when it must be filled;
   *  `fullUrl` when it is the whole request URL (no /v1 warning) */
  baseUrl?: { label: string; placeholder?: string; required?: boolean; fullUrl?: boolean };
  /** `other` field: label, placeholder, default */
  other?: { label: string; placeholder?: string; default?: string; multiline?: boolean };
  /** the key is a JSON document (service-account JSON) */
  jsonKey?: boolean;
  /** models are removed of dots (Azure deployment names) */
  stripModelDots?: boolean;
  /** i18n key of an information note shown under the type menu */
  hint?: string;
}

/** The form fields of a kind, from the catalogue (an unknown kind, or none loaded yet: no special field). */
export function kindFields(cat: ChannelTypeCatalogue, type: number): KindFields {
  const t = cat.byId.get(type);
  if (!t) return {};
  const out: KindFields = {};
  if (t.fields.organization) out.organization = true;
  if (t.fields.base_url) {
    const { full_url, ...rest } = t.fields.base_url;
    out.baseUrl = { ...rest, fullUrl: full_url === true };
  }
  if (t.fields.other) out.other = { ...t.fields.other };
  if (t.json_key) out.jsonKey = true;
  if (t.fields.strip_model_dots) out.stripModelDots = true;
  if (t.fields.hint) out.hint = t.fields.hint;
  return out;
}

/** The channel as the form edits it: lists instead of comma strings, booleans instead of 0/1. */
export interface ChannelForm {
  id?: number;
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
}

export const CHANNEL_DEFAULTS: ChannelForm = {
  name: '',
  type: 1,
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

/** Wire record → form values. */
export function channelToForm(ch: Record<string, any>): ChannelForm {
  const groups = splitComma(str(ch.group));
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

/** Tag-level priority must be an integer: error key or null. */
export function validateTagPriority(v: unknown): string | null {
  return /^-?\d+$/.test(String(v ?? '').trim()) ? null : 'res.channel.msg.priority_integer';
}
/** Tag-level weight must be a non-negative integer: error key or null. */
export function validateTagWeight(v: unknown): string | null {
  return /^\d+$/.test(String(v ?? '').trim()) ? null : 'res.channel.msg.weight_nonnegative';
}

/** Keys of a batch create: one per line, blanks ignored. */
export function batchKeys(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((k) => k.trim())
    .filter(Boolean);
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

/** Validates the form; returns the i18n key of the first problem, or null. */
export function validateChannel(form: ChannelForm, isEdit: boolean, cat: ChannelTypeCatalogue): string | null {
  if (!form.name.trim() || (!isEdit && !form.key.trim())) return 'res.channel.msg.name_key_required';
  if (form.models.length === 0) return 'res.channel.msg.models_required';
  if (!isValidJsonObject(form.model_mapping)) return 'res.channel.msg.mapping_json';
  if (kindFields(cat, form.type).jsonKey && form.key.trim() && !form.batch && !isValidJsonObject(form.key))
    return 'res.channel.msg.key_json';
  return null;
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

/** A row of the tag-mode list: an aggregate of the channels that share a tag. */
export interface TagRow {
  id: string;
  key: string;
  tag: string;
  name: string;
  group: string;
  used_quota: number;
  response_time: number;
  priority: number;
  weight: number;
  status: number;
  type: number;
  children: Record<string, any>[];
  isTag: true;
}

/**
 * Tag mode: channels that share a tag become one aggregate row holding them as children (group is
 * the union, used quota the sum, response time the mean of tested children, priority/weight from the
 * first child, status enabled when any child is enabled). Untagged channels stay single rows.
 * Rows the server already aggregated (with `children`) pass through unchanged.
 */
export function groupByTag(channels: readonly Record<string, any>[]): (Record<string, any> | TagRow)[] {
  const out: (Record<string, any> | TagRow)[] = [];
  const byTag = new Map<string, TagRow>();
  for (const ch of channels) {
    if (Array.isArray(ch.children)) {
      // The server already aggregated this tag (tag_mode=true answers aggregate rows): keep it.
      out.push({ ...ch, id: ch.id ?? `tag:${ch.tag}`, isTag: true } as TagRow);
      continue;
    }
    const tag = str(ch.tag).trim();
    if (!tag) {
      out.push(ch);
      continue;
    }
    let row = byTag.get(tag);
    if (!row) {
      row = {
        id: `tag:${tag}`,
        key: `tag:${tag}`,
        tag,
        name: tag,
        group: '',
        used_quota: 0,
        response_time: 0,
        priority: Number(ch.priority) || 0,
        weight: Number(ch.weight) || 0,
        status: 2,
        type: Number(ch.type) || 0,
        children: [],
        isTag: true,
      };
      byTag.set(tag, row);
      out.push(row);
    }
    row.children.push(ch);
  }
  for (const row of byTag.values()) {
    const groups: string[] = [];
    let tested = 0;
    let rtSum = 0;
    for (const c of row.children) {
      for (const g of splitComma(str(c.group))) if (!groups.includes(g)) groups.push(g);
      row.used_quota += Number(c.used_quota) || 0;
      const rt = Number(c.response_time) || 0;
      if (rt > 0) {
        tested++;
        rtSum += rt;
      }
      if (Number(c.status) === 1) row.status = 1;
    }
    row.group = groups.join(',');
    row.response_time = tested ? Math.round(rtSum / tested) : 0;
  }
  return out;
}

export function isTagRow(r: unknown): r is TagRow {
  return !!r && typeof r === 'object' && (r as TagRow).isTag === true;
}

/** Tag edit payload: returns null when nothing changed (没有任何修改！). */
export function tagEditPayload(
  original: { tag: string; model_mapping: string; groups: string[]; models: string[] },
  edited: { new_tag: string; model_mapping: string; groups: string[]; models: string[] },
): Record<string, unknown> | null {
  const body: Record<string, unknown> = { tag: original.tag };
  let changed = false;
  if (edited.new_tag.trim() !== original.tag) {
    body.new_tag = edited.new_tag.trim();
    changed = true;
  }
  if (edited.model_mapping.trim() !== original.model_mapping.trim()) {
    body.model_mapping = edited.model_mapping.trim();
    changed = true;
  }
  if (joinComma(edited.groups) !== joinComma(original.groups)) {
    body.groups = joinComma(edited.groups);
    changed = true;
  }
  if (joinComma(edited.models) !== joinComma(original.models)) {
    body.models = joinComma(edited.models);
    changed = true;
  }
  return changed ? body : null;
}

/**
 * Body that creates a copy of a channel (the row's "copy" action): same settings and key, name
 * with a suffix, and fresh counters (balance, used quota, response time, test time are not copied).
 */
export function copyPayload(ch: Record<string, any>, suffix = '_复制'): Record<string, unknown> {
  const keep = [
    'type', 'key', 'openai_organization', 'max_input_tokens', 'base_url', 'other', 'model_mapping', 'status_code_mapping',
    'models', 'group', 'auto_ban', 'test_model', 'priority', 'weight', 'tag', 'setting', 'param_override', 'status',
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
