import type { Knex } from 'knex';
import { withoutTimeouts } from '../db/knex';
import { nowSec } from '../lib/time';
import { DIM, ROLLUP_DIMS_002, rollupUpsertSql } from '../../../migrations/002_log_rollups';
import { addRollupsSqlite, isSqlite } from './logRollups';

export const LOG_TYPE = { unknown: 0, topup: 1, consume: 2, manage: 3, system: 4, error: 5 } as const;

export interface LogRow {
  id?: number;
  user_id: number;
  created_at: number;
  type: number;
  content: string;
  username: string;
  token_name: string;
  token_id: number;
  model_name: string;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  use_time: number;
  is_stream: boolean;
  channel_id: number;
  channel_name: string;
  group: string;
  ip: string;
  other: string;
}

export type NewLog = Partial<LogRow> & Pick<LogRow, 'user_id' | 'type'>;

export function logRow(log: NewLog): LogRow {
  return {
    created_at: nowSec(),
    content: '',
    username: '',
    token_name: '',
    token_id: 0,
    model_name: '',
    quota: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    use_time: 0,
    is_stream: false,
    channel_id: 0,
    channel_name: '',
    group: '',
    ip: '',
    other: '',
    ...log,
  };
}

/** Writes one log row now (top-up, admin and system logs; consume logs go through the batcher). */
export async function insertLog(knex: Knex, log: NewLog): Promise<void> {
  await insertLogs(knex, [log]);
}

/**
 * Writes log rows with their rollups in one transaction (`knex` may be a transaction already).
 * The one way to insert logs besides the usage batcher: on SQLite the rollups are kept here, not by
 * a trigger (logRollups.ts).
 */
export async function insertLogs(knex: Knex, logs: NewLog[]): Promise<void> {
  if (!logs.length) return;
  const rows = logs.map(logRow);
  const write = async (trx: Knex) => {
    for (let i = 0; i < rows.length; i += 200) await trx('logs').insert(rows.slice(i, i + 200));
    if (isSqlite(trx)) await addRollupsSqlite(trx, rows);
  };
  if (!isSqlite(knex) || knex.isTransaction) await write(knex);
  else await knex.transaction(write);
}

/** Console log filters (all optional; exact matches except the time range, which is inclusive). */
export interface LogFilter {
  type?: number;
  user_id?: number;
  username?: string;
  token_name?: string;
  model_name?: string;
  start_timestamp?: number;
  end_timestamp?: number;
  channel?: number;
  group?: string;
}

function applyLogFilter(qb: Knex.QueryBuilder, f: LogFilter, opts: { time?: boolean; type?: boolean } = {}): Knex.QueryBuilder {
  if (f.user_id !== undefined) qb.where('user_id', f.user_id);
  if (opts.type !== false && f.type) qb.where('type', f.type);
  if (f.username) qb.where('username', f.username);
  if (f.token_name) qb.where('token_name', f.token_name);
  if (f.model_name) qb.where('model_name', f.model_name);
  if (f.channel) qb.where('channel_id', f.channel);
  if (f.group) qb.where('group', f.group);
  if (opts.time !== false) {
    if (f.start_timestamp) qb.where('created_at', '>=', f.start_timestamp);
    if (f.end_timestamp) qb.where('created_at', '<=', f.end_timestamp);
  }
  return qb;
}

/**
 * Rollups (migrations/002_log_rollups.ts, docs/logs.md): per bucket (hour or day) × type × dimension
 * counts and sums, kept by triggers on `logs`. A filter whose exact-match part is one maintained
 * dimension is answered from whole buckets of rollups plus the partial edge buckets read from
 * `logs`; any other filter reads `logs` directly. Both give the same numbers.
 */
const DIM_OF: Array<[keyof LogFilter, number]> = [
  ['user_id', DIM.user_id],
  ['username', DIM.username],
  ['token_name', DIM.token_name],
  ['model_name', DIM.model_name],
  ['channel', DIM.channel_id],
  ['group', DIM.group],
];
const MAINTAINED = new Map<number, number>(ROLLUP_DIMS_002.map((d) => [d.dim, d.secs]));

/** The rollup dimension (and its bucket size) that answers this filter's exact-match part, if maintained. */
export function rollupDim(f: LogFilter): { dim: number; secs: number } | undefined {
  let dim = 0;
  for (const [k, bit] of DIM_OF) if (isSet(f, k)) dim |= bit;
  const secs = MAINTAINED.get(dim);
  return secs === undefined ? undefined : { dim, secs };
}

function isSet(f: LogFilter, k: keyof LogFilter): boolean {
  if (k === 'user_id') return f.user_id !== undefined;
  return Boolean(f[k]);
}

type Term = { sign: 1 | -1; rollup?: { from?: number; to?: number }; raw?: { from: number; to: number } };

/**
 * Splits the inclusive time range into rollup buckets and raw edge pieces: each partial edge bucket
 * is read either directly (its inside part) or as the whole bucket minus its outside part, whichever
 * holds less time that has already happened (up to `now`). So a range ending now reads only the
 * seconds between its end and now, however far into the current bucket it is: the current bucket
 * is where a busy gateway's rows are densest.
 */
export function planRange(start: number | undefined, end: number | undefined, H: number, now = Infinity): Term[] {
  const s = start ?? 0;
  const terms: Term[] = [];
  if (end !== undefined && s > end) return terms;
  /** Seconds of [from, to] at or before now: what a raw read of that piece may have to scan. */
  const past = (from: number, to: number) => Math.max(0, Math.min(to, now) - from + 1);
  const bs = s - (s % H);
  if (end !== undefined && end - (end % H) === bs) {
    // One bucket: the inside directly, or the bucket minus what lies either side.
    if (past(s, end) <= past(bs, s - 1) + past(end + 1, bs + H - 1)) return [{ sign: 1, raw: { from: s, to: end } }];
    terms.push({ sign: 1, rollup: { from: bs, to: bs } });
    if (s > bs) terms.push({ sign: -1, raw: { from: bs, to: s - 1 } });
    if (end < bs + H - 1) terms.push({ sign: -1, raw: { from: end + 1, to: bs + H - 1 } });
    return terms;
  }
  let from = bs;
  if (s > bs) {
    if (past(bs, s - 1) <= past(s, bs + H - 1)) terms.push({ sign: -1, raw: { from: bs, to: s - 1 } });
    else {
      terms.push({ sign: 1, raw: { from: s, to: bs + H - 1 } });
      from = bs + H;
    }
  }
  let to: number | undefined;
  if (end !== undefined) {
    const be = end - (end % H);
    to = be;
    if (end < be + H - 1) {
      if (past(end + 1, be + H - 1) <= past(be, end)) terms.push({ sign: -1, raw: { from: end + 1, to: be + H - 1 } });
      else {
        terms.push({ sign: 1, raw: { from: be, to: end } });
        to = be - H;
      }
    }
  }
  if (to === undefined || from <= to) terms.push({ sign: 1, rollup: { from: from || undefined, to } });
  return terms;
}

/**
 * Exact count (`what` = 'n') or quota sum ('quota') of the logs matching `f`, with `type` (when
 * given) instead of f.type. One statement, so on PostgreSQL every part reads the same snapshot.
 */
async function countOrQuota(knex: Knex, f: LogFilter, type: number | undefined, what: 'n' | 'quota'): Promise<number> {
  const noTime = { ...f, start_timestamp: undefined, end_timestamp: undefined };
  const rawQ = (from?: number, to?: number) => {
    const qb = applyLogFilter(knex('logs'), noTime, { type: false, time: false });
    if (type) qb.where('type', type);
    if (from !== undefined) qb.where('created_at', '>=', from);
    if (to !== undefined) qb.where('created_at', '<=', to);
    return qb.select(knex.raw(what === 'n' ? 'count(*)' : 'coalesce(sum(quota), 0)'));
  };
  const start = f.start_timestamp || undefined;
  const end = f.end_timestamp || undefined;
  const rd = rollupDim(f);
  const parts: Array<{ sign: number; qb: Knex.QueryBuilder }> = [];
  if (rd === undefined) parts.push({ sign: 1, qb: rawQ(start, end) });
  else {
    const dim = rd.dim;
    for (const t of planRange(start, end, rd.secs, nowSec())) {
      if (t.raw) {
        parts.push({ sign: t.sign, qb: rawQ(t.raw.from, t.raw.to) });
        continue;
      }
      const qb = knex('log_rollups').where({
        dim,
        user_id: dim & DIM.user_id ? f.user_id : 0,
        username: dim & DIM.username ? f.username : '',
        token_name: dim & DIM.token_name ? f.token_name : '',
        model_name: dim & DIM.model_name ? f.model_name : '',
        channel_id: dim & DIM.channel_id ? f.channel : 0,
        group: dim & DIM.group ? f.group : '',
      });
      if (t.rollup!.from !== undefined) qb.where('bucket', '>=', t.rollup!.from);
      if (t.rollup!.to !== undefined) qb.where('bucket', '<=', t.rollup!.to);
      if (type) qb.where('type', type);
      parts.push({ sign: t.sign, qb: qb.select(knex.raw(what === 'n' ? 'coalesce(sum(n), 0)' : 'coalesce(sum(quota), 0)')) });
    }
  }
  if (!parts.length) return 0;
  // select (…) as v0, (…) as v1, … : every part is a one-value subquery.
  const row = (await knex.first(parts.map((p, i) => knex.raw('(?) as ??', [p.qb, `v${i}`])))) as Record<string, number | string | null>;
  return parts.reduce((acc, p, i) => acc + p.sign * Number(row[`v${i}`] ?? 0), 0);
}

/** A page of logs, newest first, plus the total count under the same filter. */
export async function queryLogs(knex: Knex, f: LogFilter, page: { p: number; page_size: number }): Promise<{ rows: LogRow[]; total: number }> {
  const n = await countOrQuota(knex, f, f.type || undefined, 'n');
  const rows: LogRow[] =
    n === 0 || (page.p - 1) * page.page_size >= n
      ? []
      : await applyLogFilter(knex('logs'), f)
          .select('*')
          .orderBy([
            { column: 'created_at', order: 'desc' },
            { column: 'id', order: 'desc' },
          ])
          .limit(page.page_size)
          .offset((page.p - 1) * page.page_size);
  return { rows, total: n };
}

/**
 * Usage figures under a filter: quota = sum over consumption logs (type 2) in the time range;
 * rpm / tpm = consumption requests / tokens in the last 60 seconds (time range ignored).
 */
export async function logStats(knex: Knex, f: LogFilter, now: number): Promise<{ quota: number; rpm: number; tpm: number }> {
  const quota = await countOrQuota(knex, f, LOG_TYPE.consume, 'quota');
  const recent = await applyLogFilter(knex('logs'), f, { type: false, time: false })
    .where('type', LOG_TYPE.consume)
    .where('created_at', '>=', now - 60)
    .first(knex.raw('count(*) as n'), knex.raw('coalesce(sum(prompt_tokens + completion_tokens), 0) as t'));
  const r = (recent ?? {}) as { n?: number | string; t?: number | string };
  return { quota, rpm: Number(r.n ?? 0), tpm: Number(r.t ?? 0) };
}

/**
 * Deletes logs created before `target` (epoch s); returns how many. The delete triggers take the
 * rows out of the rollups in the same transaction; rollup rows left at zero are then dropped.
 */
export async function deleteLogsBefore(knex: Knex, target: number): Promise<number> {
  return knex.transaction(async (trx) => {
    // Millions of rows may go: longer than any call's statement may run.
    await withoutTimeouts(trx);
    const n = await trx('logs').where('created_at', '<', target).delete();
    if (n) await trx('log_rollups').where('bucket', '<', target).where({ n: 0, quota: 0, tokens: 0 }).delete();
    return n;
  });
}

/**
 * Recomputes every rollup from `logs` (after a bulk load with the triggers disabled, or to repair).
 * Run it in a transaction that no log writer can interleave with (the bench holds the only connection).
 */
export async function rebuildLogRollups(knex: Knex): Promise<void> {
  await knex('log_rollups').delete();
  const dims = (await knex('log_rollup_dims').select('dim').orderBy('dim')) as Array<{ dim: number }>;
  for (const { dim } of dims) await knex.raw(rollupUpsertSql('(SELECT logs.*, 1 AS s FROM logs)', 'log_rollups', 'log_rollup_dims', `d.dim = ${Number(dim)}`));
}
