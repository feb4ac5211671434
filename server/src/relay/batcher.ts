import type { AppContext } from '../context';
import { insertLogs, logRow, type NewLog, type LogRow } from '../repositories/logs';
import { nowSec } from '../lib/time';
import { fastTx, requestCheckpoint } from './sqliteFast';
import { withPgConn, type PgConn } from './pgFast';
import { aggregateRollups, SQL_ROLLUP_ADD, SQL_ROLLUP_DIMS, type RollupDim } from '../repositories/logRollups';
import { SQL_RES } from '../ledger/records';

const LOG_COLUMNS = ['user_id', 'created_at', 'type', 'content', 'username', 'token_name', 'token_id', 'model_name', 'quota', 'prompt_tokens', 'completion_tokens', 'use_time', 'is_stream', 'channel_id', 'channel_name', 'group', 'ip', 'other'] as const;
const SQL_LOG = `insert into "logs" (${LOG_COLUMNS.map((c) => `"${c}"`).join(', ')}) values (${LOG_COLUMNS.map(() => '?').join(', ')})`;
/** Statement parameters of one row, in LOG_COLUMNS order (plain property reads: `l[c]` over 18 keys is a megamorphic lookup per column). */
const logParams = (l: LogRow): unknown[] => [
  l.user_id,
  l.created_at,
  l.type,
  l.content,
  l.username,
  l.token_name,
  l.token_id,
  l.model_name,
  l.quota,
  l.prompt_tokens,
  l.completion_tokens,
  l.use_time,
  l.is_stream ? 1 : 0,
  l.channel_id,
  l.channel_name,
  l.group,
  l.ip,
  l.other,
];
/**
 * PostgreSQL: the whole batch as one prepared statement per table, the rows passed as one array
 * per column (`unnest`), instead of knex building a 200-row INSERT with 3 600 bindings that the
 * server parses again each time. The statement-level rollup trigger sees one INSERT per batch.
 */
const PG_LOG_TYPE: Record<(typeof LOG_COLUMNS)[number], string> = {
  user_id: 'int',
  created_at: 'bigint',
  type: 'int',
  content: 'text',
  username: 'text',
  token_name: 'text',
  token_id: 'int',
  model_name: 'text',
  quota: 'bigint',
  prompt_tokens: 'int',
  completion_tokens: 'int',
  use_time: 'int',
  is_stream: 'boolean',
  channel_id: 'int',
  channel_name: 'text',
  group: 'text',
  ip: 'text',
  other: 'text',
};
const PG_LOG = {
  name: 'gw_usage_logs',
  text: `insert into "logs" (${LOG_COLUMNS.map((c) => `"${c}"`).join(', ')}) select ${LOG_COLUMNS.map((_, i) => `c${i}`).join(', ')} from unnest(${LOG_COLUMNS.map((c, i) => `$${i + 1}::${PG_LOG_TYPE[c]}[]`).join(', ')}) with ordinality as r(${LOG_COLUMNS.map((_, i) => `c${i}`).join(', ')}, ord) order by ord`,
};
/** logParams writes is_stream as 1/0 for SQLite; PostgreSQL's column is a boolean. */
const IS_STREAM = LOG_COLUMNS.indexOf('is_stream');
const PG_COUNTERS = {
  users: { name: 'gw_usage_users', text: 'update "users" as u set "used_quota" = u."used_quota" + m.q, "request_count" = u."request_count" + m.n from unnest($1::int[], $2::bigint[], $3::int[]) as m(id, q, n) where u."id" = m.id' },
  tokens: { name: 'gw_usage_tokens', text: 'update "tokens" as t set "used_quota" = t."used_quota" + m.q, "request_count" = t."request_count" + m.n, "accessed_time" = $4 from unnest($1::int[], $2::bigint[], $3::int[]) as m(id, q, n) where t."id" = m.id' },
  channels: { name: 'gw_usage_channels', text: 'update "channels" as c set "used_quota" = c."used_quota" + m.q, "request_count" = c."request_count" + m.n from unnest($1::int[], $2::bigint[], $3::int[]) as m(id, q, n) where c."id" = m.id' },
} as const;

const PG_RES_DEL = { name: 'gw_usage_reservations', text: 'delete from "reservations" where "id" = any($1::bigint[])' };

async function flushPg(conn: PgConn, logs: LogRow[], counters: { users: Map<number, Counter>; tokens: Map<number, Counter>; channels: Map<number, Counter> }, now: number, resIds: number[]): Promise<void> {
  if (logs.length) {
    const columns: unknown[][] = LOG_COLUMNS.map(() => new Array<unknown>(logs.length));
    for (let r = 0; r < logs.length; r++) {
      const params = logParams(logs[r]!);
      params[IS_STREAM] = params[IS_STREAM] === 1;
      for (let c = 0; c < params.length; c++) columns[c]![r] = params[c];
    }
    await conn.query({ ...PG_LOG, values: columns });
  }
  for (const table of ['users', 'tokens', 'channels'] as const) {
    const m = counters[table];
    if (!m.size) continue;
    const values: unknown[] = [[...m.keys()], [...m.values()].map((c) => c.quota), [...m.values()].map((c) => c.count)];
    if (table === 'tokens') values.push(now);
    await conn.query({ ...PG_COUNTERS[table], values });
  }
  if (resIds.length) await conn.query({ ...PG_RES_DEL, values: [resIds] });
}

const SQL_USER = 'update "users" set "used_quota" = "used_quota" + ?, "request_count" = "request_count" + ? where "id" = ?';
const SQL_TOKEN = 'update "tokens" set "used_quota" = "used_quota" + ?, "request_count" = "request_count" + ?, "accessed_time" = ? where "id" = ?';
const SQL_CHANNEL = 'update "channels" set "used_quota" = "used_quota" + ?, "request_count" = "request_count" + ? where "id" = ?';

/**
 * Items (log rows + counter keys) that trigger a flush before the second is up.
 *
 * SQLite: 400. The flush runs inside a group commit that callers wait on (100 rows ≈ 1 ms here, 2–3
 * ms on a slow hour), so at one connection every FLUSH_AT-th call waits for it: at 100 that was 1 %
 * of calls, exactly the p99 — side by side at c=1 on a slow hour, p99 2.4–3.6 ms at 100 against
 * 1.7–2.1 ms at 400 (and 1.4–2.0 ms with the timer flush alone), throughput at c=50 the same within
 * the noise. In instructions (callgrind, c=10) 100, 200 and 400 cost the same per call: a longer
 * queue costs ≈ +2.5 k in GC (rows that live through two scavenges are promoted; at 500-row
 * batches, before the hot path lost most of its garbage, that was ≈ 18 k) and saves ≈ 1.4 k of
 * rollup upserts in SQLite. Four times fewer flushes also write the WAL four times less often.
 *
 * PostgreSQL: every flush is a transaction of its own (round trips, and the rollup trigger runs
 * once per INSERT statement), which outweighs the GC saving: 500.
 */
export const FLUSH_AT = { sqlite: 400, postgres: 500 } as const;

interface Counter {
  quota: number;
  count: number;
}

/**
 * Consume logs and usage counters (used_quota / request_count of users, tokens, channels) are
 * written in batches: every second, when FLUSH_AT items queue up, and on app close. Balances are NOT
 * batched (billing.ts moves them synchronously). (Flushing in every SQLite group commit instead
 * was measured: batches of a few rows cost ≈ 10 % more CPU per call in counter and rollup upserts.)
 */
export class UsageBatcher {
  private logs: LogRow[] = [];
  /** Settled reservations whose log rows and counters are queued: deleted in the same flush. */
  private resIds: number[] = [];
  private users = new Map<number, Counter>();
  private tokens = new Map<number, Counter>();
  private channels = new Map<number, Counter>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;
  private fullFlushQueued = false;
  /** Rollup dimensions (log_rollup_dims), read on the first SQLite fast-path flush. */
  private dims: RollupDim[] | undefined;

  constructor(private readonly app: AppContext) {}

  addLog(log: NewLog): void {
    this.addRow(logRow(log));
  }

  /** A complete row (the relay's consume log). */
  addRow(row: LogRow): void {
    this.logs.push(row);
    this.schedule();
  }

  /** A settled reservation (ledger/reservation.ts): its row is deleted by the flush that writes this call's row and counters. */
  closeReservation(id: number): void {
    this.resIds.push(id);
    this.schedule();
  }

  /** One billed call: `quota` taken; counts one request for each of user, token and channel. */
  addUsage(userId: number, tokenId: number | undefined, channelId: number | undefined, quota: number): void {
    bump(this.users, userId, quota);
    if (tokenId) bump(this.tokens, tokenId, quota);
    if (channelId) bump(this.channels, channelId, quota);
    this.schedule();
  }

  private get size() {
    return this.logs.length + this.users.size + this.tokens.size + this.channels.size;
  }

  private schedule(): void {
    if (this.size >= FLUSH_AT[this.app.db.kind]) {
      // One full-batch flush queued at a time: while it waits its turn, new items join it (else
      // every call past FLUSH_AT would queue its own flush and the batches would shrink to a few rows).
      if (!this.fullFlushQueued) {
        this.fullFlushQueued = true;
        void this.flush();
      }
      return;
    }
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, 1000);
    this.timer.unref();
  }

  /** Writes everything queued so far; resolves when written (tests call it). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.doFlush());
    return this.flushing;
  }

  private async doFlush(): Promise<void> {
    this.fullFlushQueued = false;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (!this.size && !this.resIds.length) return;
    const logs = this.logs;
    const resIds = this.resIds;
    this.resIds = [];
    const users = this.users;
    const tokens = this.tokens;
    const channels = this.channels;
    this.logs = [];
    this.users = new Map();
    this.tokens = new Map();
    this.channels = new Map();
    try {
      const knex = this.app.knex;
      const now = nowSec();
      // SQLite: one synchronous transaction with cached statements; else knex.
      requestCheckpoint(this.app);
      const done = await fastTx(this.app, (run) => {
        if (logs.length) {
          // SQLite has no insert trigger for the rollups: the batch adds itself, one upsert per key.
          this.dims ??= run(SQL_ROLLUP_DIMS, []).map((d) => ({ dim: Number(d.dim), secs: Number(d.secs) }));
          for (const l of logs) run(SQL_LOG, logParams(l));
          for (const params of aggregateRollups(logs, this.dims)) run(SQL_ROLLUP_ADD, params);
        }
        for (const [id, c] of users) run(SQL_USER, [c.quota, c.count, id]);
        for (const [id, c] of tokens) run(SQL_TOKEN, [c.quota, c.count, now, id]);
        for (const [id, c] of channels) run(SQL_CHANNEL, [c.quota, c.count, id]);
        // One statement for the batch's rows (half the cost of one delete per row).
        if (resIds.length) run(SQL_RES.closeMany, [JSON.stringify(resIds)]);
        return true;
      });
      if (done) return;
      if (this.app.db.kind === 'postgres') {
        await withPgConn(this.app, true, (conn) => flushPg(conn, logs, { users, tokens, channels }, now, resIds));
        return;
      }
      await knex.transaction(async (trx) => {
        await insertLogs(trx, logs); // rows and (SQLite) their rollups
        for (const [id, c] of users) {
          await trx('users').where({ id }).update({ used_quota: trx.raw('used_quota + ?', [c.quota]), request_count: trx.raw('request_count + ?', [c.count]) });
        }
        for (const [id, c] of tokens) {
          await trx('tokens').where({ id }).update({ used_quota: trx.raw('used_quota + ?', [c.quota]), request_count: trx.raw('request_count + ?', [c.count]), accessed_time: now });
        }
        for (const [id, c] of channels) {
          await trx('channels').where({ id }).update({ used_quota: trx.raw('used_quota + ?', [c.quota]), request_count: trx.raw('request_count + ?', [c.count]) });
        }
        for (let i = 0; i < resIds.length; i += 500) await trx('reservations').whereIn('id', resIds.slice(i, i + 500)).del();
      });
    } catch (err) {
      this.app.log.error({ err }, 'usage batch flush failed; will retry');
      if (!this.closed && this.logs.length < 100_000) {
        this.logs.unshift(...logs);
        this.resIds.unshift(...resIds);
        for (const [id, c] of users) bump(this.users, id, c.quota, c.count);
        for (const [id, c] of tokens) bump(this.tokens, id, c.quota, c.count);
        for (const [id, c] of channels) bump(this.channels, id, c.quota, c.count);
        this.schedule();
      }
    }
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }
}

function bump(map: Map<number, Counter>, id: number, quota: number, count = 1) {
  const c = map.get(id);
  if (c) {
    c.quota += quota;
    c.count += count;
  } else map.set(id, { quota, count });
}

export function usageBatcher(app: AppContext): UsageBatcher {
  return app.memo('relay:batcher', () => {
    const b = new UsageBatcher(app);
    app.onClose(() => b.close());
    return b;
  });
}
