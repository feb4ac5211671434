import type { AppContext } from '../../context';
import { logRow, type NewLog } from '../../repositories/logs';
import { nowSec } from '../../lib/time';
import type { Counter, QueuedLog, UsageWriter } from './rows';
import { sqliteUsage } from './sqlite';
import { postgresUsage } from './postgres';

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

/**
 * Consume logs and usage counters (used_quota / request_count of users, tokens, channels) are
 * written in batches: every second, when FLUSH_AT items queue up, and on app close, each batch in
 * one transaction by the database's UsageWriter (sqlite.ts, postgres.ts). Balances are not part of
 * it: they move with each call (ledger/balances). (Flushing in every SQLite group commit instead
 * was measured: batches of a few rows cost ≈ 10 % more CPU per call in counter and rollup upserts.)
 */
export class UsageBatcher {
  private logs: QueuedLog[] = [];
  /** Settled reservations whose log rows and counters are queued: deleted in the same flush. */
  private resIds: number[] = [];
  private users = new Map<number, Counter>();
  private tokens = new Map<number, Counter>();
  private channels = new Map<number, Counter>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;
  private fullFlushQueued = false;
  /** The database's writer, chosen once. */
  private readonly writer: UsageWriter;

  constructor(private readonly app: AppContext) {
    this.writer = app.db.kind === 'postgres' ? postgresUsage(app) : sqliteUsage(app);
  }

  addLog(log: NewLog): void {
    this.addRow(logRow(log));
  }

  /** A complete row (the relay's consume log). */
  addRow(row: QueuedLog): void {
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
      await this.writer.write({ logs, users, tokens, channels, now: nowSec(), resIds });
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
  return app.memo('ledger:usage', () => {
    const b = new UsageBatcher(app);
    app.onClose(() => b.close());
    return b;
  });
}
