import { z } from 'zod';
import { intLike, pagingQuery, qStr } from '../../lib/validate';
import { splitList } from '../../repositories/channels';
import { TOKEN_STATUS } from '../../repositories/tokens';
import { normaliseAllowIps, TOKEN_BATCH_MAX, TOKEN_NAME_MAX } from '../../services/tokens';

const boolLike = (what: string) =>
  z
    .union([z.boolean(), z.literal(0), z.literal(1), z.literal('true'), z.literal('false')], { error: `${what} 必须是布尔值` })
    .transform((v) => v === true || v === 1 || v === 'true');

const fields = {
  name: z
    .string({ error: '令牌名称必须是字符串' })
    .trim()
    .refine((s) => [...s].length <= TOKEN_NAME_MAX, '令牌名称过长'),
  remain_quota: intLike('额度必须是整数').refine((n) => n >= 0, '额度不能为负数'),
  unlimited_quota: boolLike('unlimited_quota'),
  expired_time: intLike('过期时间格式错误！').refine((n) => n === -1 || n > 0, '过期时间格式错误！'),
  model_limits_enabled: boolLike('model_limits_enabled'),
  model_limits: z
    .union([z.string().max(100_000, '模型限制过长'), z.array(z.string().max(255, '模型名称过长')).max(5000)], { error: '模型限制必须是逗号分隔的字符串' })
    .transform((v) => splitList(Array.isArray(v) ? v.join(',') : v).join(',')),
  allow_ips: z.union([z.string().max(10_000, 'IP 白名单过长'), z.null()], { error: 'IP 白名单必须是字符串' }).transform((v) => normaliseAllowIps(v ?? '')),
  group: z.string({ error: '分组必须是字符串' }).trim().max(64, '分组名称过长'),
  status: intLike('状态只能是 1 或 2').refine((s) => s === TOKEN_STATUS.enabled || s === TOKEN_STATUS.disabled, '状态只能是 1（启用）或 2（禁用）'),
};

export const createBody = z
  .object({
    ...fields,
    name: fields.name.refine((s) => s.length > 0, '令牌名称不能为空'),
    count: intLike('数量必须是正整数')
      .refine((n) => n >= 1 && n <= TOKEN_BATCH_MAX, `数量必须在 1 到 ${TOKEN_BATCH_MAX} 之间`)
      .optional(),
  })
  .partial({
    remain_quota: true,
    unlimited_quota: true,
    expired_time: true,
    model_limits_enabled: true,
    model_limits: true,
    allow_ips: true,
    group: true,
    status: true,
  });

export const updateBody = z
  .object(fields)
  .partial()
  .extend({ id: intLike('id 必须是整数').refine((n) => n > 0 && n < 2 ** 31, 'id 无效') });

export type TokenCreate = z.infer<typeof createBody>;
export type TokenUpdate = z.infer<typeof updateBody>;

export const listQuery = pagingQuery;
export const searchQuery = pagingQuery.extend({ keyword: qStr(), token: qStr() });
