import { z } from 'zod';
import { intLike, pagingQuery, qStr } from '../../lib/validate';
import { REDEMPTION_STATUS } from '../../repositories/redemptions';
import { REDEMPTION_BATCH_MAX, REDEMPTION_NAME_MAX } from '../../services/redemptions';

const nameField = z
  .string({ error: '兑换码名称必须是字符串' })
  .trim()
  .refine((s) => [...s].length <= REDEMPTION_NAME_MAX, `兑换码名称长度必须在1-${REDEMPTION_NAME_MAX}之间`);
const quotaField = intLike('额度必须是整数').refine((n) => n > 0, '额度必须大于 0');
const idField = intLike('id 必须是整数').refine((n) => n > 0 && n < 2 ** 31, 'id 无效');

export const createBody = z.object({
  name: nameField.optional(),
  quota: quotaField,
  count: intLike('兑换码个数必须是整数')
    .refine((n) => n >= 1, '兑换码个数必须大于0')
    .refine((n) => n <= REDEMPTION_BATCH_MAX, `一次兑换码批量生成的个数不能大于 ${REDEMPTION_BATCH_MAX}`)
    .optional(),
});
export const updateBody = z.object({ id: idField, name: nameField.optional(), quota: quotaField.optional() });
export const statusBody = z.object({
  id: idField,
  status: intLike('状态只能是 1 或 2').refine((s) => s === REDEMPTION_STATUS.unused || s === REDEMPTION_STATUS.disabled, '状态只能是 1（启用）或 2（禁用）'),
});

export const redeemBody = z.object({ key: z.string({ error: '请输入兑换码！' }).trim().min(1, '请输入兑换码！').max(64, '无效的兑换码') });

export type RedemptionCreate = z.infer<typeof createBody>;
export type RedemptionUpdate = z.infer<typeof updateBody>;
export type RedemptionStatus = z.infer<typeof statusBody>;
export type RedeemInput = z.infer<typeof redeemBody>;

export const listQuery = pagingQuery;
export const searchQuery = pagingQuery.extend({ keyword: qStr() });
