import { z } from 'zod';
import { pagingQuery, qIntOpt, qStr } from '../../lib/validate';

export const payBody = z.object({
  amount: z.coerce.number().int('充值数量必须是整数').min(1, '充值数量不能小于 1').max(10_000_000),
  top_up_code: z.string().max(64).optional().default(''),
  payment_method: z.string().max(16).optional().default('zfb'),
});

/** The provider's notification fields (query or form); checked by their signature, not by shape. */
export const notifyFields = z.record(z.string(), z.string());

/** Admin list of orders: paging, an exact username, a status, and a creation-time range (unix seconds, inclusive). */
export const topUpListQuery = pagingQuery.extend({
  username: qStr(),
  status: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['pending', 'success']).optional()),
  start_timestamp: qIntOpt(),
  end_timestamp: qIntOpt(),
});
