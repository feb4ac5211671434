import { z } from 'zod';
import { msg, zmsg, type MessageKey, type MessageParam } from '../../i18n';
import { intLike, parse, pagingQuery, qBool, qIntOpt, qStr } from '../../lib/validate';
import { splitList } from '../../repositories/channels';
import { isKnownChannelType } from '../../channels/catalogue';
import { UPSTREAM_PROTOCOLS } from '../../channels/kinds';
import type { ChannelCreate } from '../../services/channels';

export const listQuery = pagingQuery.extend({
  id_sort: qBool(),
  tag_mode: qBool(),
  keyword: qStr(),
  group: qStr(),
  model: qStr(),
  status: qIntOpt(),
  type: qIntOpt(),
});

/** No suffix: the caller's language's ("_复制" / "_copy"), chosen by the route. */
export const copyQuery = z.object({ suffix: z.string().max(64, 'channel.suffix_too_long').optional() });

export const testQuery = z.object({ model: z.string().optional() });

export const fetchModelsBody = z.object({
  base_url: z.string().max(512).optional().default(''),
  type: z.coerce.number().int().min(1).max(1000),
  key: z.string().min(1, 'channel.key_required').max(65536),
  other: z.string().max(4096).optional(),
  openai_organization: z.string().max(128).optional(),
});

// Field schemas (shared by create, update and tag edits)

/** A comma string or a list of strings → normalised comma string (trimmed, deduplicated). */
const listField = (field: MessageKey, maxItem = 255, maxTotal = 100_000) => {
  const what = msg(field);
  return z
    .union(
      [
        z.string().max(100_000, zmsg('channel.list_too_long', { what })),
        z.array(z.string().max(maxItem, zmsg('channel.list_name_too_long', { what }))).max(5000, zmsg('channel.list_too_many', { what })),
      ],
      { error: zmsg('channel.list_not_string', { what }) },
    )
    .transform((v) => splitList(Array.isArray(v) ? v.join(',') : v))
    .refine((list) => list.every((x) => x.length <= maxItem), zmsg('channel.list_name_too_long', { what }))
    .transform((list) => list.join(','))
    .refine((joined) => joined.length <= maxTotal, zmsg('channel.list_too_long', { what }));
};

/** Text holding a JSON object (or empty); an object value is accepted and serialised. */
const jsonObjectField = (msg: string) =>
  z.union([z.string().max(1_000_000, msg), z.record(z.string(), z.unknown()), z.null()], { error: msg }).transform((v, ctx) => {
    if (v === null) return '';
    if (typeof v !== 'string') return JSON.stringify(v);
    if (!v.trim()) return '';
    try {
      const parsed: unknown = JSON.parse(v);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return v;
    } catch {
      /* fall through */
    }
    ctx.addIssue({ code: 'custom', message: msg });
    return z.NEVER;
  });

/** `setting.upstream_protocol`, when present, names one of the protocol choices (channels/providers channelSpeaks). */
function validUpstreamProtocol(setting: string): boolean {
  let p: unknown;
  try {
    p = setting ? (JSON.parse(setting) as Record<string, unknown>).upstream_protocol : undefined;
  } catch {
    return true; // not JSON: the field's own message says so
  }
  return p === undefined || (UPSTREAM_PROTOCOLS as readonly unknown[]).includes(p);
}

/** Columns declared `integer` hold 32 bits on PostgreSQL. */
const INT_MAX = 2 ** 31 - 1;

const str = (max: number, what: MessageParam) =>
  z.string({ error: zmsg('input.field_not_string', { what }) }).max(max, zmsg('input.field_too_long', { what, max }));

const channelFields = {
  name: str(128, msg('field.channel_name')).trim(),
  type: intLike('channel.type_int').refine(isKnownChannelType, 'channel.type_unknown'),
  key: z.string({ error: 'channel.key_not_string' }).max(1_000_000, 'channel.key_too_long'),
  openai_organization: str(128, 'organization').trim(),
  test_model: str(128, msg('field.test_model')).trim(),
  base_url: str(512, 'Base URL')
    .trim()
    .transform((v) => v.replace(/\/+$/, '')),
  other: str(10_000, 'other'),
  models: listField('field.models'),
  // The channels.group column holds 255 characters.
  group: listField('field.groups', 64, 255),
  groups: listField('field.groups', 64, 255),
  model_mapping: jsonObjectField('channel.model_mapping_json'),
  status_code_mapping: jsonObjectField('channel.status_code_mapping_json'),
  setting: jsonObjectField('channel.setting_json').refine(validUpstreamProtocol, zmsg('channel.upstream_protocol', { values: UPSTREAM_PROTOCOLS.join(', ') })),
  param_override: jsonObjectField('channel.param_override_json'),
  auto_ban: z.union([z.boolean(), intLike('channel.auto_ban')]).transform((v) => (v === true || v === 1 ? 1 : 0)),
  priority: intLike('channel.priority_int'),
  weight: intLike('channel.weight_int')
    .refine((w) => w <= INT_MAX, 'channel.weight_too_large')
    .transform((w) => Math.max(0, w)),
  tag: z.union([str(128, msg('field.tag')), z.null()]).transform((v) => (v && v.trim() ? v.trim() : null)),
  status: intLike('channel.status_values').refine((s) => s === 1 || s === 2 || s === 3, 'channel.status_values'),
  max_input_tokens: intLike('channel.max_input_tokens').refine((n) => n >= 0 && n <= INT_MAX, 'channel.max_input_tokens'),
};

const channelInput = z.object(channelFields).partial();

/** The create call's wrapper (new-api's shape); without `channel` the body itself is the record. */
export const createBody = z
  .object({
    mode: z.enum(['single', 'batch', 'multi_to_single'], { error: 'channel.mode_values' }).optional(),
    multi_key_mode: z.enum(['random', 'polling'], { error: 'channel.multi_key_mode_values' }).optional(),
    channel: z.record(z.string(), z.unknown()).optional(),
  })
  .passthrough();

/** Reads a create body: the wrapper first, then the record it carries (or the body itself). */
export function parseChannelCreate(body: Record<string, unknown>): ChannelCreate {
  const wrapper = parse(createBody, body);
  return { mode: wrapper.mode, multiKeyMode: wrapper.multi_key_mode, input: parse(channelInput, wrapper.channel ?? body) };
}

export const updateBody = channelInput.extend({
  id: intLike('input.id_int').refine((n) => n > 0, 'input.id_positive'),
  /** A multi-key channel's order of keys. */
  multi_key_mode: z.enum(['random', 'polling'], { error: 'channel.multi_key_mode_values' }).optional(),
});

const tagName = z.string({ error: 'channel.tag_empty' }).trim().min(1, 'channel.tag_empty').max(128, 'channel.tag_too_long');

export const tagEditBody = z.object({
  tag: tagName,
  new_tag: z.union([z.string().max(128, 'channel.tag_too_long'), z.null()]).optional(),
  model_mapping: channelFields.model_mapping.optional(),
  groups: channelFields.groups.optional(),
  models: channelFields.models.optional(),
  priority: intLike('channel.priority_int').nullable().optional(),
  weight: intLike('channel.weight_non_negative')
    .refine((w) => w >= 0, 'channel.weight_non_negative')
    .refine((w) => w <= INT_MAX, 'channel.weight_too_large')
    .nullable()
    .optional(),
});
export const tagBody = z.object({ tag: tagName });

const idList = z
  .array(z.number({ error: 'channel.ids_list' }).int('channel.ids_list').positive('channel.ids_positive'), { error: 'channel.ids_list' })
  .max(10_000, 'channel.ids_too_many');

export const batchIdsBody = z.object({ ids: idList.min(1, 'channel.select_to_delete') });

export const batchTagBody = z.object({
  ids: idList.min(1, 'channel.select_to_tag'),
  tag: z.union([z.string().max(128, 'channel.tag_too_long'), z.null()], { error: 'channel.tag_empty' }),
});

/** Single-key actions on a multi-key channel (new-api's `/api/channel/multi_key/manage`). */
export const KEY_ACTIONS = [
  'get_key_status',
  'enable_key',
  'disable_key',
  'delete_key',
  'enable_all_keys',
  'disable_all_keys',
  'delete_disabled_keys',
] as const;
export const manageKeysBody = z.object({
  channel_id: intLike('channel.channel_id_int').refine((n) => n > 0, 'channel.channel_id_positive'),
  action: z.enum(KEY_ACTIONS, { error: zmsg('channel.key_action_values', { values: KEY_ACTIONS.join(', ') }) }),
  key_index: intLike('channel.key_index_int')
    .refine((n) => n >= 0, 'channel.key_index_non_negative')
    .optional(),
});
