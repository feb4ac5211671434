import type { AppContext } from '../context';
import { logRow, type NewLog, type LogRow } from '../repositories/logs';
import { nowSec } from '../lib/time';
import { fastTx } from './sqliteFast';
import { DIM, SQLITE_BYPASS_TABLE } from '../../../migrations/002_log_rollups';

const LOG_COLUMNS = ['user_id', 'created_at', 'type', 'content', 'username', 'token_name', 'token_id', 'model_name', 'quota', 'prompt_tokens', 'completion_tokens', 'use_time', 'is_stream', 'channel_id', 'channel_name', 'group', 'ip', 'other'] as const;
const SQL_LOG = `insert into "logs" (${LOG_COLUMNS.map((c) => `"${c}"`).join(', ')}) values (${LOG_COLUMNS.map(() => '?').join(', ')})`;
// Rollups for a batch (SQLite fast path): the per-row trigger is bypassed (it would run ten
// upserts per row) and the batch is aggregated here, one upsert per distinct rollup key — the
// same rows the trigger would have written (migrations/002_log_rollups.ts). The dimensions are
// the rows of log_rollup_dims, read once.
const SQL_BYPASS_ON = `update "${SQLITE_BYPASS_TABLE}" set "bypass" = 1`;
const SQL_BYPASS_OFF = `update "${SQLITE_BYPASS_TABLE}" set "bypass" = 0`;
const SQL_DIMS = 'select "dim", "secs" from "log_rollup_dims" order by "dim"';
const ROLLUP_KEY = ['dim', 'user_id', 'username', 'token_name', 'model_name', 'channel_id', 'group', 'bucket', 'type'] as const;
const SQL_ROLLUP_ADD =
  `insert into "log_rollups" (${[...ROLLUP_KEY, 'n', 'quota', 'tokens'].map((c) => `"${c}"`).join(', ')}) values (${[...ROLLUP_KEY, 1, 2, 3].map(() => '?').join(', ')}) ` +
  `on conflict (${ROLLUP_KEY.map((c) => `"${c}"`).join(', ')}) do update set "n" = "n" + excluded."n", "quota" = "quota" + excluded."quota", "tokens" = "tokens" + excluded."tokens"`;

type RollupKey = [dim: number, userId: number, username: string, tokenName: string, model: string, channelId: number, group: string, bucket: number, type: number];

/** Sums a batch of logs per rollup key: the rows one aggregated trigger run would upsert. */
export function aggregateRollups(logs: LogRow[], dims: Array<{ dim: number; secs: number }>): Array<{ key: RollupKey; n: number; quota: number; tokens: number }> {
  const acc = new Map<string, { key: RollupKey; n: number; quota: number; tokens: number }>();
  for (const l of logs) {
    const tokens = Number(l.prompt_tokens) + Number(l.completion_tokens);
    for (const { dim, secs } of dims) {
      const key: RollupKey = [
        dim,
        dim & DIM.user_id ? l.user_id : 0,
        dim & DIM.username ? l.username : '',
        dim & DIM.token_name ? l.token_name : '',
        dim & DIM.model_name ? l.model_name : '',
        dim & DIM.channel_id ? l.channel_id : 0,
        dim & DIM.group ? l.group : '',
        Math.floor(l.created_at / secs) * secs,
        l.type,
      ];
      const k = key.join('\u0000');
      const a = acc.get(k);
      if (a) {
        a.n += 1;
        a.quota += Number(l.quota);
        a.tokens += tokens;
      } else acc.set(k, { key, n: 1, quota: Number(l.quota), tokens });
    }
  }
  return [...acc.values()];
}

const SQL_USER = 'update "users" set "used_quota" = "used_quota" + ?, "request_count" = "request_count" + ? where "id" = ?';
const SQL_TOKEN = 'update "tokens" set "used_quota" = "used_quota" + ?, "request_count" = "request_count" + ?, "accessed_time" = ? where "id" = ?';
const SQL_CHANNEL = 'update "channels" set "used_quota" = "used_quota" + ?, "request_count" = "request_count" + ? where "id" = ?';

interface Counter {
  quota: number;
  count: number;
}

/**
 * Consume logs and usage counters (used_quota / request_count of users, tokens, channels) are
 * written in batches: every second, when 500 items queue up, and on app close. Balances are NOT
 * batched (billing.ts moves them synchronously).
 */
export class UsageBatcher {
  private logs: LogRow[] = [];
  private users = new Map<number, Counter>();
  private tokens = new Map<number, Counter>();
  private channels = new Map<number, Counter>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;
  private fullFlushQueued = false;
  /** Rollup dimensions (log_rollup_dims), read on the first SQLite fast-path flush. */
  private dims: Array<{ dim: number; secs: number }> | undefined;

  constructor(private readonly app: AppContext) {}

  addLog(log: NewLog): void {
    this.logs.push(logRow(log));
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
    if (this.size >= 500) {
      // One full-batch flush queued at a time: while it waits its turn, new items join it (else
      // every call past 500 would queue its own flush and the batches would shrink to a few rows).
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
    if (!this.size) return;
    const logs = this.logs;
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
      const done = await fastTx(this.app, (run) => {
        if (logs.length) {
          this.dims ??= run(SQL_DIMS, []).map((d) => ({ dim: Number(d.dim), secs: Number(d.secs) }));
          run(SQL_BYPASS_ON, []);
          for (const l of logs) run(SQL_LOG, LOG_COLUMNS.map((c) => (c === 'is_stream' ? (l.is_stream ? 1 : 0) : l[c])));
          for (const r of aggregateRollups(logs, this.dims)) run(SQL_ROLLUP_ADD, [...r.key, r.n, r.quota, r.tokens]);
          run(SQL_BYPASS_OFF, []);
        }
        for (const [id, c] of users) run(SQL_USER, [c.quota, c.count, id]);
        for (const [id, c] of tokens) run(SQL_TOKEN, [c.quota, c.count, now, id]);
        for (const [id, c] of channels) run(SQL_CHANNEL, [c.quota, c.count, id]);
        return true;
      });
      if (done) return;
      await knex.transaction(async (trx) => {
        for (let i = 0; i < logs.length; i += 200) await trx('logs').insert(logs.slice(i, i + 200));
        for (const [id, c] of users) {
          await trx('users').where({ id }).update({ used_quota: trx.raw('used_quota + ?', [c.quota]), request_count: trx.raw('request_count + ?', [c.count]) });
        }
        for (const [id, c] of tokens) {
          await trx('tokens').where({ id }).update({ used_quota: trx.raw('used_quota + ?', [c.quota]), request_count: trx.raw('request_count + ?', [c.count]), accessed_time: now });
        }
        for (const [id, c] of channels) {
          await trx('channels').where({ id }).update({ used_quota: trx.raw('used_quota + ?', [c.quota]), request_count: trx.raw('request_count + ?', [c.count]) });
        }
      });
    } catch (err) {
      this.app.log.error({ err }, 'usage batch flush failed; will retry');
      if (!this.closed && this.logs.length < 100_000) {
        this.logs.unshift(...logs);
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
