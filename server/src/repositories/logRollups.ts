import type { Knex } from 'knex';
import { DIM } from '../../../migrations/002_log_rollups';
import type { LogRow } from './logs';

/**
 * Insert-side rollup maintenance on SQLite (docs/logs.md). PostgreSQL keeps `log_rollups` with
 * statement triggers; on SQLite a row trigger would cost ≈ 10 µs per inserted log even when idle,
 * so every insert path (insertLogs, the usage batcher) adds its rows here, in its own transaction,
 * one upsert per distinct rollup key — exactly what the PostgreSQL trigger adds.
 */

export const isSqlite = (knex: Knex) => /sqlite/.test(String(knex.client.config.client));

const ROLLUP_KEY = ['dim', 'user_id', 'username', 'token_name', 'model_name', 'channel_id', 'group', 'bucket', 'type'] as const;

/** Adds one aggregate to a rollup row (insert, or add to the existing counts). Both dialects. */
export const SQL_ROLLUP_ADD =
  `insert into "log_rollups" (${[...ROLLUP_KEY, 'n', 'quota', 'tokens'].map((c) => `"${c}"`).join(', ')}) values (${[...ROLLUP_KEY, 1, 2, 3].map(() => '?').join(', ')}) ` +
  `on conflict (${ROLLUP_KEY.map((c) => `"${c}"`).join(', ')}) do update set "n" = "log_rollups"."n" + excluded."n", ` +
  `"quota" = "log_rollups"."quota" + excluded."quota", "tokens" = "log_rollups"."tokens" + excluded."tokens"`;

export const SQL_ROLLUP_DIMS = 'select "dim", "secs" from "log_rollup_dims" order by "dim"';

export interface RollupDim {
  dim: number;
  secs: number;
}

type RollupKey = [
  dim: number,
  userId: number,
  username: string,
  tokenName: string,
  model: string,
  channelId: number,
  group: string,
  bucket: number,
  type: number,
];

/** One distinct (attributes, second, type) of a batch: its first row and the batch's sums. */
interface RowSum {
  l: LogRow;
  n: number;
  quota: number;
  tokens: number;
}

/** How many of the latest sums a row is compared with before its key is built. */
const RECENT_SUMS = 4;

/** Whether two rows add to the same rollup rows (the fields of aggregateRollups' first key). */
function sameRollupRow(a: LogRow, b: LogRow): boolean {
  return (
    a.created_at === b.created_at &&
    a.channel_id === b.channel_id &&
    a.user_id === b.user_id &&
    a.type === b.type &&
    a.model_name === b.model_name &&
    a.token_name === b.token_name &&
    a.username === b.username &&
    a.group === b.group
  );
}

/**
 * Sums rows per rollup key (every maintained dimension × bucket × type): the upsert parameters.
 * Two steps: rows are first summed per distinct (attributes, second, type) — a batch of a second's
 * calls has few of them — and only those sums are spread over the dimensions (building a key per
 * row × dimension cost ≈ 1 µs per dimension per row). The first step compares a row with the last
 * few sums' rows field by field before it builds a string key: consecutive rows of a batch mostly
 * share their attributes, and the key's text and hash were most of this function's cost.
 */
export function aggregateRollups(logs: LogRow[], dims: RollupDim[]): unknown[][] {
  const sums: RowSum[] = [];
  const byKey = new Map<string, RowSum>();
  next: for (const l of logs) {
    const quota = Number(l.quota);
    const tokens = Number(l.prompt_tokens) + Number(l.completion_tokens);
    for (let i = sums.length - 1; i >= 0 && i >= sums.length - RECENT_SUMS; i--) {
      const r = sums[i]!;
      if (sameRollupRow(r.l, l)) {
        r.n += 1;
        r.quota += quota;
        r.tokens += tokens;
        continue next;
      }
    }
    const k = `${l.user_id}\u0000${l.username}\u0000${l.token_name}\u0000${l.model_name}\u0000${l.channel_id}\u0000${l.group}\u0000${l.created_at}\u0000${l.type}`;
    const r = byKey.get(k);
    if (r) {
      r.n += 1;
      r.quota += quota;
      r.tokens += tokens;
      // Recent again: the next rows are compared with it first.
      sums.push(r);
    } else {
      const sum = { l, n: 1, quota, tokens };
      byKey.set(k, sum);
      sums.push(sum);
    }
  }
  const acc = new Map<string, { key: RollupKey; n: number; quota: number; tokens: number }>();
  for (const { l, n, quota, tokens } of byKey.values()) {
    for (const { dim, secs } of dims) {
      const userId = dim & DIM.user_id ? l.user_id : 0;
      const username = dim & DIM.username ? l.username : '';
      const tokenName = dim & DIM.token_name ? l.token_name : '';
      const model = dim & DIM.model_name ? l.model_name : '';
      const channelId = dim & DIM.channel_id ? l.channel_id : 0;
      const group = dim & DIM.group ? l.group : '';
      const bucket = Math.floor(l.created_at / secs) * secs;
      const k = `${dim}\u0000${userId}\u0000${username}\u0000${tokenName}\u0000${model}\u0000${channelId}\u0000${group}\u0000${bucket}\u0000${l.type}`;
      const a = acc.get(k);
      if (a) {
        a.n += n;
        a.quota += quota;
        a.tokens += tokens;
      } else acc.set(k, { key: [dim, userId, username, tokenName, model, channelId, group, bucket, l.type], n, quota, tokens });
    }
  }
  return [...acc.values()].map((a) => [...a.key, a.n, a.quota, a.tokens]);
}

/** SQLite: adds inserted rows to the rollups through `trx` (the transaction that inserted them). */
export async function addRollupsSqlite(trx: Knex | Knex.Transaction, logs: LogRow[]): Promise<void> {
  if (!logs.length) return;
  const dims = ((await trx.raw(SQL_ROLLUP_DIMS)) as Array<{ dim: number; secs: number }>).map((d) => ({ dim: Number(d.dim), secs: Number(d.secs) }));
  for (const params of aggregateRollups(logs, dims)) await trx.raw(SQL_ROLLUP_ADD, params as Knex.RawBinding[]);
}
