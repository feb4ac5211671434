import type { Knex } from 'knex';
import { nowSec } from '../lib/time';
import { insertLog, LOG_TYPE } from './logs';

export interface TopUpRow {
  id: number;
  user_id: number;
  amount: number;
  money: number;
  trade_no: string;
  payment_method: string;
  create_time: number;
  complete_time?: number;
  status: string;
}

export async function insertPendingTopUp(knex: Knex, row: Pick<TopUpRow, 'user_id' | 'amount' | 'money' | 'trade_no' | 'payment_method'>): Promise<void> {
  await knex('top_ups').insert({ ...row, create_time: nowSec(), status: 'pending' });
}

/**
 * Marks a pending order paid and credits the user, with its log row, in one transaction. Of
 * concurrent or repeated notifications exactly one wins (conditional update). Answers the user
 * credited, or undefined (unknown order, or already paid).
 */
export async function completeTopUp(knex: Knex, tradeNo: string, credit: (order: TopUpRow) => { quota: number; content: string }): Promise<number | undefined> {
  return knex.transaction(async (trx) => {
    const order: TopUpRow | undefined = await trx('top_ups').where({ trade_no: tradeNo }).first();
    if (!order) return undefined;
    const won = await trx('top_ups').where({ id: order.id, status: 'pending' }).update({ status: 'success', complete_time: nowSec() });
    if (!won) return undefined;
    const { quota, content } = credit(order);
    await trx('users').where({ id: order.user_id }).increment('quota', quota);
    await insertLog(trx, { user_id: order.user_id, type: LOG_TYPE.topup, quota, content });
    return Number(order.user_id);
  });
}

export async function findTopUpUser(knex: Knex, tradeNo: string): Promise<number | undefined> {
  const row: { user_id: number } | undefined = await knex('top_ups').where({ trade_no: tradeNo }).first('user_id');
  return row ? Number(row.user_id) : undefined;
}

/** The user's latest orders (at most 100), newest first. */
export function recentTopUps(knex: Knex, userId: number): Promise<TopUpRow[]> {
  return knex('top_ups').where({ user_id: userId }).orderBy('id', 'desc').limit(100);
}
