import { z } from 'zod';
import { zmsg } from '../../i18n';
import { intLike, pagingQuery, qStr } from '../../lib/validate';
import { REDEMPTION_STATUS } from '../../repositories/redemptions';
import { REDEMPTION_BATCH_MAX, REDEMPTION_NAME_MAX } from '../../services/redemptions';

const nameField = z
  .string({ error: 'redemption.name_not_string' })
  .trim()
  .refine((s) => [...s].length <= REDEMPTION_NAME_MAX, zmsg('redemption.name_length', { max: REDEMPTION_NAME_MAX }));
const quotaField = intLike('common.quota_int').refine((n) => n > 0, 'redemption.quota_positive');
const idField = intLike('input.id_int').refine((n) => n > 0 && n < 2 ** 31, 'input.id_invalid');

export const createBody = z.object({
  name: nameField.optional(),
  quota: quotaField,
  count: intLike('redemption.count_int')
    .refine((n) => n >= 1, 'redemption.count_positive')
    .refine((n) => n <= REDEMPTION_BATCH_MAX, zmsg('redemption.batch_max', { max: REDEMPTION_BATCH_MAX }))
    .optional(),
});
export const updateBody = z.object({ id: idField, name: nameField.optional(), quota: quotaField.optional() });
export const statusBody = z.object({
  id: idField,
  status: intLike('input.status_1_2').refine((s) => s === REDEMPTION_STATUS.unused || s === REDEMPTION_STATUS.disabled, 'input.status_1_2_named'),
});

export const redeemBody = z.object({
  key: z.string({ error: 'redemption.key_required' }).trim().min(1, 'redemption.key_required').max(64, 'redemption.invalid'),
});

export const listQuery = pagingQuery;
export const searchQuery = pagingQuery.extend({ keyword: qStr() });
