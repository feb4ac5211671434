import os from 'node:os';
import type { Knex } from 'knex';
import type { AppContext } from '../context';
import { insertLogs, LOG_TYPE, type NewLog } from '../repositories/logs';
import { nowSec } from '../lib/time';
import { rowsOf } from '../db/knex';

/**
 * Reconciliation of reservations a crash left behind (docs/billing.md, "Quota on a crash").
 *
 * Every node heartbeats in `gateway_nodes`. At start-up a node reconciles the rows it left itself
 * (same node id: NODE_ID, else host:port — stable across restarts) before it serves anything.
 * While running, it takes over the rows of nodes not seen for `ledgerStaleMs` — on SQLite too, so
 * that a second process on the same file never refunds the calls of a live one. Each row is reconciled in one transaction
 * that starts by deleting it, conditionally (still that node's, and — for another node — that
 * node still not seen): that delete is the lease, so with several nodes racing exactly one of
 * them moves the money and writes the log row, and a node that came back in the meantime keeps
 * its rows.
 *
 * An open row (reserved, never settled) is refunded in full — what was delivered before the crash
 * is not recorded durably, so the user is not charged for it; a settled row (money already moved)
 * gets its missing log row and usage counters.
 */

export const DEFAULT_HEARTBEAT_MS = 10_000;
export const DEFAULT_STALE_MS = 60_000;

/** This node's id in `reservations.node_id` / `gateway_nodes`. */
export function nodeId(app: AppContext): string {
  return app.memo('ledger:node', () => app.config.nodeId || `${os.hostname()}:${app.config.port}`);
}

/**
 * Ids of this run's reservations: the run's id (a row of `ledger_runs`, taken at start-up) × 2³²
 * plus a counter — unique across nodes and restarts, known without a round trip, and an integer
 * (SQLite's rowid). Run ids wrap at 2²¹ to stay below 2⁵³: the rows of a run 2 million starts ago
 * are long gone.
 */
export function runIds(app: AppContext): { base: number; n: number } {
  return app.memo('ledger:ids', () => ({ base: 0, n: 0 }));
}

async function newRun(app: AppContext): Promise<void> {
  const [row] = await app
    .knex('ledger_runs')
    .insert({ node_id: nodeId(app), started_at: Date.now() })
    .returning('id');
  const id = Number(typeof row === 'object' ? (row as { id: number }).id : row);
  const ids = runIds(app);
  ids.base = (id % 2 ** 21) * 2 ** 32;
  ids.n = 0;
  // Older runs' rows are reconciled right after this (start-up) or by their node's own start.
  await app.knex('ledger_runs').where('id', '<', id).andWhere('node_id', nodeId(app)).del();
}

interface ReservationDbRow {
  id: number | string;
  node_id: string;
  state: number;
  user_id: number;
  token_id: number;
  limited: boolean | number;
  channel_id: number;
  model_name: string;
  group: string;
  reserved: number | string;
  taken: number | string;
  prompt_tokens: number;
  completion_tokens: number;
  is_stream: boolean | number;
  created_at: number | string;
}

async function heartbeat(app: AppContext, startedAt: number): Promise<void> {
  await app
    .knex('gateway_nodes')
    .insert({ node_id: nodeId(app), seen_at: Date.now(), started_at: startedAt })
    .onConflict('node_id')
    .merge(['seen_at']);
}

export type Recovered = 'refunded' | 'settled';

/**
 * What a live node knows of a call whose own write failed (ledger/repair.ts): the cost to charge
 * when the client had the answer (0: refund it all), and the figures of its log row.
 */
export interface KnownOutcome {
  charge: number;
  channelId: number;
  promptTokens: number;
  completionTokens: number;
}

/**
 * Reconciles one reservation row of `owner` in one transaction; undefined when it was not this
 * call's to reconcile (gone already, or `owner` is another node seen since `staleBefore`). With
 * `known` (a live node repairing its own failed write) an open row is settled at `known.charge`
 * — as far as the balances reach, as a settle is — instead of refunded.
 */
export async function reconcileOne(app: AppContext, id: number, owner: string, staleBefore?: number, known?: KnownOutcome): Promise<Recovered | undefined> {
  const me = nodeId(app);
  return app.knex.transaction(async (trx) => {
    const guard = staleBefore === undefined ? '' : ' and not exists (select 1 from "gateway_nodes" where "node_id" = ? and "seen_at" >= ?)';
    const params: Knex.RawBinding[] = staleBefore === undefined ? [id, owner] : [id, owner, owner, staleBefore];
    const deleted = rowsOf(await trx.raw(`delete from "reservations" where "id" = ? and "node_id" = ?${guard} returning *`, params));
    const r = deleted[0] as unknown as ReservationDbRow | undefined;
    if (!r) return undefined;
    const reserved = Number(r.reserved);
    const user = (await trx('users').where({ id: r.user_id }).first('username')) as { username?: string } | undefined;
    const token = r.token_id ? ((await trx('tokens').where({ id: r.token_id }).first('name')) as { name?: string } | undefined) : undefined;
    const channel = r.channel_id ? ((await trx('channels').where({ id: r.channel_id }).first('name')) as { name?: string } | undefined) : undefined;
    const limited = r.limited === true || Number(r.limited) === 1;
    let recovered: Recovered = Number(r.state) === 0 ? 'refunded' : 'settled';
    let taken = Number(r.taken);
    if (recovered === 'refunded' && known && known.charge > 0) {
      taken = await settleOpenRow(trx, r, reserved, known.charge, limited);
      Object.assign(r, { channel_id: known.channelId, prompt_tokens: known.promptTokens, completion_tokens: known.completionTokens });
      recovered = 'settled';
    } else if (recovered === 'refunded') {
      // Open: the whole reservation goes back to the user (and the limited token it was taken from).
      if (reserved > 0) {
        await trx('users').where({ id: r.user_id }).increment('quota', reserved);
        if (limited && r.token_id) await trx('tokens').where({ id: r.token_id }).increment('remain_quota', reserved);
      }
    } else {
      // Settled: the money moved already; what the usage batch would have written.
      await trx('users')
        .where({ id: r.user_id })
        .update({ used_quota: trx.raw('"used_quota" + ?', [taken]), request_count: trx.raw('"request_count" + 1') });
      if (r.token_id) {
        await trx('tokens')
          .where({ id: r.token_id })
          .update({ used_quota: trx.raw('"used_quota" + ?', [taken]), request_count: trx.raw('"request_count" + 1'), accessed_time: nowSec() });
      }
      if (r.channel_id)
        await trx('channels')
          .where({ id: r.channel_id })
          .update({ used_quota: trx.raw('"used_quota" + ?', [taken]), request_count: trx.raw('"request_count" + 1') });
    }
    const content = known
      ? recovered === 'refunded'
        ? `reservation refunded after a database error (request ${Number(r.id)}): ${reserved} reserved, 0 charged`
        : `reservation settled after a database error (request ${Number(r.id)}): ${taken} charged`
      : recovered === 'refunded'
        ? `reservation refunded after a restart (request ${Number(r.id)}): ${reserved} reserved, 0 charged`
        : `reservation settled before a restart, logged on recovery (request ${Number(r.id)}): ${taken} charged`;
    const log: NewLog = {
      user_id: r.user_id,
      type: LOG_TYPE.consume,
      content,
      username: user?.username ?? '',
      token_name: token?.name ?? '',
      token_id: r.token_id,
      model_name: r.model_name,
      quota: recovered === 'refunded' ? 0 : taken,
      prompt_tokens: recovered === 'refunded' ? 0 : r.prompt_tokens,
      completion_tokens: recovered === 'refunded' ? 0 : r.completion_tokens,
      is_stream: r.is_stream === true || Number(r.is_stream) === 1,
      channel_id: r.channel_id,
      channel_name: channel?.name ?? '',
      group: r.group,
      other: JSON.stringify({
        reservation: {
          id: Number(r.id),
          node: r.node_id,
          reserved,
          recovered,
          by: me,
          reserved_at: Number(r.created_at),
          ...(known ? { after: 'database_error' } : {}),
        },
      }),
    };
    await insertLogs(trx, [log]);
    return recovered;
  });
}

/**
 * An open row settled at `charge` inside reconcileOne's transaction: the difference to what was
 * reserved given back, or taken as far as the user's quota (and the limited token's) reaches —
 * never below zero, as a live settle. Returns what the call was charged in all.
 */
async function settleOpenRow(trx: Knex.Transaction, r: ReservationDbRow, reserved: number, charge: number, limited: boolean): Promise<number> {
  const delta = charge - reserved;
  if (delta < 0) {
    await trx('users').where({ id: r.user_id }).increment('quota', -delta);
    if (limited && r.token_id) await trx('tokens').where({ id: r.token_id }).increment('remain_quota', -delta);
    return charge;
  }
  if (delta === 0) return charge;
  // Rows locked for the read on PostgreSQL (SQLite has one writer: the transaction is the lock).
  const locked = <Q extends Knex.QueryBuilder>(q: Q): Q => (trx.client.config.client === 'pg' ? (q.forUpdate() as Q) : q);
  const user = (await locked(trx('users').where({ id: r.user_id })).first('quota')) as { quota?: number | string } | undefined;
  let extra = Math.min(delta, Math.max(0, Number(user?.quota ?? 0)));
  if (limited && r.token_id && extra > 0) {
    const token = (await locked(trx('tokens').where({ id: r.token_id })).first('remain_quota')) as { remain_quota?: number | string } | undefined;
    extra = Math.min(extra, Math.max(0, Number(token?.remain_quota ?? 0)));
    if (extra > 0) await trx('tokens').where({ id: r.token_id }).decrement('remain_quota', extra);
  }
  if (extra > 0) await trx('users').where({ id: r.user_id }).decrement('quota', extra);
  return reserved + extra;
}

/** The rows this node left (at start-up). */
export async function reconcileOwn(app: AppContext): Promise<number> {
  const me = nodeId(app);
  let n = 0;
  for (const r of (await app.knex('reservations').where('node_id', me).select('id')) as Array<{ id: number | string }>)
    if (await reconcileOne(app, Number(r.id), me)) n++;
  return n;
}

/** Takes over the rows of nodes not seen since `staleMs`. */
export async function reconcileStale(app: AppContext, staleMs = app.config.ledgerStaleMs ?? DEFAULT_STALE_MS): Promise<number> {
  const me = nodeId(app);
  const staleBefore = Date.now() - staleMs;
  const rows = (await app
    .knex('reservations as r')
    .leftJoin('gateway_nodes as n', 'n.node_id', 'r.node_id')
    .whereNot('r.node_id', me)
    .andWhere((w) => w.whereNull('n.seen_at').orWhere('n.seen_at', '<', staleBefore))
    .select('r.id', 'r.node_id')
    .limit(1000)) as Array<{ id: number | string; node_id: string }>;
  let n = 0;
  for (const r of rows) if (await reconcileOne(app, Number(r.id), r.node_id, staleBefore)) n++;
  return n;
}

/**
 * Start-up hook (app.ts): heartbeat, reconcile this node's rows, then keep heartbeating and taking
 * over gone nodes' rows every `ledgerHeartbeatMs`. Runs before the app serves anything.
 */
export async function startLedger(app: AppContext): Promise<void> {
  const startedAt = Date.now();
  await heartbeat(app, startedAt);
  await newRun(app);
  const own = await reconcileOwn(app);
  if (own) app.log.warn({ reservations: own }, 'reconciled reservations left by a previous run');
  let running: Promise<void> | undefined;
  const tick = () => {
    running ??= (async () => {
      try {
        await heartbeat(app, startedAt);
        const taken = await reconcileStale(app);
        if (taken) app.log.warn({ reservations: taken }, 'reconciled reservations of a gone node');
      } catch (err) {
        app.log.error({ err }, 'reservation heartbeat failed');
      } finally {
        running = undefined;
      }
    })();
  };
  tick();
  const timer = setInterval(tick, app.config.ledgerHeartbeatMs ?? DEFAULT_HEARTBEAT_MS);
  timer.unref();
  app.onClose(async () => {
    clearInterval(timer);
    await running;
  });
}
