import { z } from 'zod';
import { pagingQuery, qIntOpt, qStr } from '../../lib/validate';

export const payBody = z.object({
  amount: z.coerce.number().int('topup.amount_int').min(1, 'topup.amount_min').max(10_000_000),
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
