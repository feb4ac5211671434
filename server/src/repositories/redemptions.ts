import type { Knex } from 'knex';

export interface RedemptionRow {
  id: number;
  user_id: number;
  key: string;
  status: number;
  name: string;
  quota: number;
  created_time: number;
  redeemed_time: number;
  used_user_id: number;
  deleted_at: number | null;
}

export const REDEMPTION_STATUS = { unused: 1, disabled: 2, used: 3 } as const;

export function redemptionView(r: RedemptionRow) {
  return {
    id: Number(r.id),
    user_id: Number(r.user_id),
    key: r.key,
    status: Number(r.status),
    name: r.name,
    quota: Number(r.quota),
    created_time: Number(r.created_time),
    redeemed_time: Number(r.redeemed_time),
    used_user_id: Number(r.used_user_id),
  };
}

export function liveRedemptions(knex: Knex | Knex.Transaction): Knex.QueryBuilder {
  return knex('redemptions').whereNull('deleted_at');
}

export async function findRedemption(knex: Knex | Knex.Transaction, id: number): Promise<RedemptionRow | undefined> {
  return liveRedemptions(knex).where({ id }).first();
}

/**
 * Marks an unused code as used by `userId`, atomically: of any number of concurrent calls for one
 * code exactly one gets the row back. Run it inside the transaction that credits the user.
 */
export async function claimRedemption(trx: Knex.Transaction, key: string, userId: number, now: number): Promise<RedemptionRow | undefined> {
  const n = await trx('redemptions')
    .where({ key, status: REDEMPTION_STATUS.unused })
    .whereNull('deleted_at')
    .update({ status: REDEMPTION_STATUS.used, used_user_id: userId, redeemed_time: now });
  if (!n) return undefined;
  return trx<RedemptionRow>('redemptions').where({ key }).first();
}

/**
 * The codes `userId` redeemed (newest first, at most `limit`), soft-deleted ones included: the
 * user's history does not change when an admin later deletes a used code. Never the key.
 */
export function redeemedBy(knex: Knex, userId: number, limit = 100): Promise<Array<{ id: number; name: string; quota: number; redeemed_time: number }>> {
  return knex('redemptions')
    .where({ used_user_id: userId, status: REDEMPTION_STATUS.used })
    .orderBy('redeemed_time', 'desc')
    .limit(limit)
    .select('id', 'name', 'quota', 'redeemed_time');
}
