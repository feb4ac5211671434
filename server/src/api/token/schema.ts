import { z } from 'zod';
import { zmsg } from '../../i18n';
import { intLike, pagingQuery, qStr } from '../../lib/validate';
import { splitList } from '../../repositories/channels';
import { TOKEN_STATUS } from '../../repositories/tokens';
import { normaliseAllowIps, TOKEN_BATCH_MAX, TOKEN_NAME_MAX } from '../../services/tokens';

const boolLike = (what: string) =>
  z
    .union([z.boolean(), z.literal(0), z.literal(1), z.literal('true'), z.literal('false')], { error: zmsg('input.field_boolean', { what }) })
    .transform((v) => v === true || v === 1 || v === 'true');

const fields = {
  name: z
    .string({ error: 'token.name_not_string' })
    .trim()
    .refine((s) => [...s].length <= TOKEN_NAME_MAX, 'token.name_too_long'),
  remain_quota: intLike('common.quota_int').refine((n) => n >= 0, 'common.quota_negative'),
  unlimited_quota: boolLike('unlimited_quota'),
  expired_time: intLike('token.expiry_invalid').refine((n) => n === -1 || n > 0, 'token.expiry_invalid'),
  model_limits_enabled: boolLike('model_limits_enabled'),
  model_limits: z
    .union([z.string().max(100_000, 'token.models_too_long'), z.array(z.string().max(255, 'token.model_name_too_long')).max(5000)], {
      error: 'token.models_not_string',
    })
    .transform((v) => splitList(Array.isArray(v) ? v.join(',') : v).join(',')),
  allow_ips: z
    .union([z.string().max(10_000, 'token.allow_ips_too_long'), z.null()], { error: 'token.allow_ips_not_string' })
    .transform((v) => normaliseAllowIps(v ?? '')),
  group: z.string({ error: 'token.group_not_string' }).trim().max(64, 'token.group_too_long'),
  status: intLike('input.status_1_2').refine((s) => s === TOKEN_STATUS.enabled || s === TOKEN_STATUS.disabled, 'input.status_1_2_named'),
};

export const createBody = z
  .object({
    ...fields,
    name: fields.name.refine((s) => s.length > 0, 'token.name_empty'),
    count: intLike('token.count_positive')
      .refine((n) => n >= 1 && n <= TOKEN_BATCH_MAX, zmsg('token.count_range', { max: TOKEN_BATCH_MAX }))
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
  .extend({ id: intLike('input.id_int').refine((n) => n > 0 && n < 2 ** 31, 'input.id_invalid') });

export const listQuery = pagingQuery;
export const searchQuery = pagingQuery.extend({ keyword: qStr(), token: qStr() });
