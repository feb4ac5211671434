import { z } from 'zod';
import { intLike, parse, pagingQuery, qBool, qIntOpt, qStr } from '../../lib/validate';
import { splitList } from '../../repositories/channels';
import { isKnownChannelType, UPSTREAM_PROTOCOLS } from '../../channels/catalogue';

export const listQuery = pagingQuery.extend({
  id_sort: qBool(),
  tag_mode: qBool(),
  keyword: qStr(),
  group: qStr(),
  model: qStr(),
  status: qIntOpt(),
  type: qIntOpt(),
});

export const copyQuery = z.object({ suffix: z.string().max(64, 'suffix 过长').optional().default('_复制') });

/** A channel id in the path, parsed by the route (a bad one is answered, not passed on). */
export const rawIdParams = z.object({ id: z.string() });

export const testQuery = z.object({ model: z.string().optional() });

export const fetchModelsBody = z.object({
  base_url: z.string().max(512).optional().default(''),
  type: z.coerce.number().int().min(1).max(1000),
  key: z.string().min(1, '请填写密钥').max(65536),
  other: z.string().max(4096).optional(),
  openai_organization: z.string().max(128).optional(),
});

// Field schemas (shared by create, update and tag edits)

/** A comma string or a list of strings → normalised comma string (trimmed, deduplicated). */
const listField = (what: string, maxItem = 255, maxTotal = 100_000) =>
  z
    .union([z.string().max(100_000, `${what}过长`), z.array(z.string().max(maxItem, `${what}名称过长`)).max(5000, `${what}过多`)], {
      error: `${what}必须是逗号分隔的字符串`,
    })
    .transform((v) => splitList(Array.isArray(v) ? v.join(',') : v))
    .refine((list) => list.every((x) => x.length <= maxItem), `${what}名称过长`)
    .transform((list) => list.join(','))
    .refine((joined) => joined.length <= maxTotal, `${what}过长`);

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

/** `setting.upstream_protocol`, when present, names one of the protocol choices (relay/adaptors channelSpeaks). */
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

const str = (max: number, what: string) => z.string({ error: `${what}必须是字符串` }).max(max, `${what}长度不能超过 ${max}`);

const channelFields = {
  name: str(128, '渠道名称').trim(),
  type: intLike('渠道类型必须是整数').refine(isKnownChannelType, '未知的渠道类型'),
  key: z.string({ error: '渠道密钥必须是字符串' }).max(1_000_000, '渠道密钥过长'),
  openai_organization: str(128, 'organization').trim(),
  test_model: str(128, '测试模型').trim(),
  base_url: str(512, 'Base URL')
    .trim()
    .transform((v) => v.replace(/\/+$/, '')),
  other: str(10_000, 'other'),
  models: listField('模型'),
  // The channels.group column holds 255 characters.
  group: listField('分组', 64, 255),
  groups: listField('分组', 64, 255),
  model_mapping: jsonObjectField('模型映射必须是合法的 JSON 格式！'),
  status_code_mapping: jsonObjectField('状态码映射必须是合法的 JSON 格式！'),
  setting: jsonObjectField('渠道额外设置必须是合法的 JSON 格式！').refine(
    validUpstreamProtocol,
    `渠道额外设置中的 upstream_protocol 只能是 ${UPSTREAM_PROTOCOLS.join('、')} 之一`,
  ),
  param_override: jsonObjectField('参数覆盖必须是合法的 JSON 格式！'),
  auto_ban: z.union([z.boolean(), intLike('auto_ban 只能是 0 或 1')]).transform((v) => (v === true || v === 1 ? 1 : 0)),
  priority: intLike('优先级必须是整数！'),
  weight: intLike('权重必须是整数！')
    .refine((w) => w <= INT_MAX, '权重过大')
    .transform((w) => Math.max(0, w)),
  tag: z.union([str(128, '标签'), z.null()]).transform((v) => (v && v.trim() ? v.trim() : null)),
  status: intLike('状态只能是 1、2 或 3').refine((s) => s === 1 || s === 2 || s === 3, '状态只能是 1、2 或 3'),
  max_input_tokens: intLike('max_input_tokens 必须是非负整数').refine((n) => n >= 0 && n <= INT_MAX, 'max_input_tokens 必须是非负整数'),
};

const channelInput = z.object(channelFields).partial();
export type ChannelInput = z.infer<typeof channelInput>;

/** The create call's wrapper (new-api's shape); without `channel` the body itself is the record. */
export const createBody = z
  .object({
    mode: z.enum(['single', 'batch', 'multi_to_single'], { error: 'mode 只能是 single、batch 或 multi_to_single' }).optional(),
    multi_key_mode: z.enum(['random', 'polling'], { error: 'multi_key_mode 只能是 random 或 polling' }).optional(),
    channel: z.record(z.string(), z.unknown()).optional(),
  })
  .passthrough();

export interface ChannelCreate {
  mode?: z.infer<typeof createBody>['mode'];
  multiKeyMode?: 'random' | 'polling';
  input: ChannelInput;
}

/** Reads a create body: the wrapper first, then the record it carries (or the body itself). */
export function parseChannelCreate(body: Record<string, unknown>): ChannelCreate {
  const wrapper = parse(createBody, body);
  return { mode: wrapper.mode, multiKeyMode: wrapper.multi_key_mode, input: parse(channelInput, wrapper.channel ?? body) };
}

export const updateBody = channelInput.extend({
  id: intLike('id 必须是整数').refine((n) => n > 0, 'id 必须是正整数'),
  /** A multi-key channel's order of keys. */
  multi_key_mode: z.enum(['random', 'polling'], { error: 'multi_key_mode 只能是 random 或 polling' }).optional(),
});
export type ChannelUpdate = z.infer<typeof updateBody>;

const tagName = z.string({ error: '标签不能为空！' }).trim().min(1, '标签不能为空！').max(128, '标签长度不能超过 128');

export const tagEditBody = z.object({
  tag: tagName,
  new_tag: z.union([z.string().max(128, '标签长度不能超过 128'), z.null()]).optional(),
  model_mapping: channelFields.model_mapping.optional(),
  groups: channelFields.groups.optional(),
  models: channelFields.models.optional(),
  priority: intLike('优先级必须是整数！').nullable().optional(),
  weight: intLike('权重必须是非负整数！')
    .refine((w) => w >= 0, '权重必须是非负整数！')
    .refine((w) => w <= INT_MAX, '权重过大')
    .nullable()
    .optional(),
});

export type TagEdit = z.infer<typeof tagEditBody>;
export const tagBody = z.object({ tag: tagName });

const idList = z
  .array(z.number({ error: 'ids 必须是整数列表' }).int('ids 必须是整数列表').positive('ids 必须是正整数'), { error: 'ids 必须是整数列表' })
  .max(10_000, '一次最多 10000 个');

export const batchIdsBody = z.object({ ids: idList.min(1, '请先选择要删除的通道！') });

export const batchTagBody = z.object({
  ids: idList.min(1, '请先选择要设置标签的渠道！'),
  tag: z.union([z.string().max(128, '标签长度不能超过 128'), z.null()], { error: '标签不能为空！' }),
});

export type BatchTag = z.infer<typeof batchTagBody>;

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
  channel_id: intLike('channel_id 必须是整数').refine((n) => n > 0, 'channel_id 必须是正整数'),
  action: z.enum(KEY_ACTIONS, { error: `action 只能是 ${KEY_ACTIONS.join('、')} 之一` }),
  key_index: intLike('key_index 必须是整数')
    .refine((n) => n >= 0, 'key_index 必须是非负整数')
    .optional(),
});
export type ManageKeys = z.infer<typeof manageKeysBody>;
