/**
 * The channel-type catalogue as the console reads it from `GET /api/channel/types`: labels, colours,
 * the type menu, key hints and the special form fields of each kind.
 */
import type { TagColor } from '../shared/format';
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

/**
 * The kind a new channel starts as: OpenAI. Ids are the server's stored numbering (new-api's) and
 * the types answer marks no default, so the console names this one id here; it is the server's
 * `CHANNEL_TYPE.OpenAI` (channelTypes.test.ts checks that they agree).
 */
export const OPENAI_CHANNEL_TYPE = 1;

const TAG_COLORS: readonly TagColor[] = [
  'grey',
  'green',
  'lime',
  'yellow',
  'orange',
  'red',
  'blue',
  'purple',
  'cyan',
  'teal',
  'pink',
  'indigo',
  'amber',
  'violet',
  'light-blue',
  'white',
];
const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
const isTagColor = (v: unknown): v is TagColor => (TAG_COLORS as readonly unknown[]).includes(v);
const optStr = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Turns the endpoint's answer into the catalogue; malformed items are skipped, never thrown on. */
export function catalogueFrom(answer: unknown): ChannelTypeCatalogue {
  const list: ChannelTypeInfo[] = [];
  for (const raw of Array.isArray(answer) ? answer : []) {
    const t = obj(raw);
    if (!t || typeof t.id !== 'number' || !Number.isInteger(t.id) || typeof t.label !== 'string') continue;
    const f = obj(t.fields) ?? {};
    const fields: ChannelTypeInfo['fields'] = {};
    if (f.organization === true) fields.organization = true;
    const b = obj(f.base_url);
    if (b && typeof b.label === 'string')
      fields.base_url = { label: b.label, placeholder: optStr(b.placeholder), required: b.required === true, full_url: b.full_url === true };
    const o = obj(f.other);
    if (o && typeof o.label === 'string')
      fields.other = { label: o.label, placeholder: optStr(o.placeholder), default: optStr(o.default), multiline: o.multiline === true };
    if (f.strip_model_dots === true) fields.strip_model_dots = true;
    if (typeof f.hint === 'string' && f.hint) fields.hint = f.hint;
    list.push({
      id: t.id,
      name: String(t.name ?? ''),
      label: t.label,
      color: isTagColor(t.color) ? t.color : 'grey',
      offered: t.offered !== false,
      key_hint: typeof t.key_hint === 'string' ? t.key_hint : '',
      json_key: t.json_key === true,
      predefined_models: t.predefined_models === true,
      retired: typeof t.retired === 'string' ? t.retired : '',
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

/**
 * The type menu: the offered kinds, plus the channel's own kind when it is not offered (or unknown).
 * A retired kind (PaLM2) is listed disabled with its reason, selectable only as the channel's own.
 */
export function typeMenu(cat: ChannelTypeCatalogue, current: number): { value: number; label: string; retired?: string; disabled?: boolean }[] {
  const items: { value: number; label: string; retired?: string; disabled?: boolean }[] = cat.list
    .filter((t) => t.offered || t.id === current)
    .map((t) => (t.retired ? { value: t.id, label: t.label, retired: t.retired, disabled: t.id !== current } : { value: t.id, label: t.label }));
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
