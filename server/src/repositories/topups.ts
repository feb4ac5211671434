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
    // The username rides on the row (as on a redemption's) so admins find it by the username filter.
    const user: { username: string } | undefined = await trx('users').where({ id: order.user_id }).first('username');
    await insertLog(trx, { user_id: order.user_id, type: LOG_TYPE.topup, username: user?.username ?? '', quota, content });
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

/**
 * Orders of all users for admins, newest first, each with its user's name; `username` and `status`
 * filter exactly, `from`/`to` bound the creation time (inclusive).
 */
export async function listTopUps(
  knex: Knex,
  filter: { username?: string; status?: string; from?: number; to?: number },
  paging: { p: number; page_size: number },
): Promise<{ items: Array<TopUpRow & { username: string }>; total: number }> {
  const base = knex('top_ups').leftJoin('users', 'users.id', 'top_ups.user_id');
  if (filter.username) base.where('users.username', filter.username);
  if (filter.status) base.where('top_ups.status', filter.status);
  if (filter.from !== undefined) base.where('top_ups.create_time', '>=', filter.from);
  if (filter.to !== undefined) base.where('top_ups.create_time', '<=', filter.to);
  const counted = (await base.clone().count({ n: '*' }).first()) as { n?: number | string } | undefined;
  const items = (await base
    .clone()
    .select('top_ups.*', knex.raw("coalesce(users.username, '') as username"))
    .orderBy('top_ups.id', 'desc')
    .limit(paging.page_size)
    .offset((paging.p - 1) * paging.page_size)) as Array<TopUpRow & { username: string }>;
  return { items, total: Number(counted?.n ?? 0) };
}
