import type { AppContext } from '../context';
import { nodeId } from '../ledger/recovery';
import { serverLang, t } from '../i18n';
import {
  claimTask,
  dueTaskIds,
  releaseTaskLeases,
  taskRowsById,
  updateLeasedTask,
  upstreamIdColumn,
  type TaskRecord,
  type TaskTable,
} from '../repositories/tasks';
import { channelOfTask, DONE, refundFailedTask, type Picked } from './core';

/** What one poll learnt about a task. */
export interface PollResult {
  status: string;
  progress: string;
  failReason?: string;
  /** Stop following the task without finishing it (a Midjourney MODAL waits for the client's modal submit). */
  stop?: boolean;
  /** Platform columns to write (image URL, prompts, result data, times…). */
  patch: Record<string, unknown>;
}

/** One task platform as the poller sees it (midjourney.ts, suno.ts, video.ts). */
export interface TaskPlatform {
  name: string;
  table: TaskTable;
  /** Whether a row of `table` is this platform's. */
  owns(row: TaskRecord): boolean;
  /** Asks the upstream about these tasks of one channel and key; a task missing from the map is retried later. */
  poll(app: AppContext, picked: Picked, rows: TaskRecord[]): Promise<Map<number, PollResult>>;
  /** A row's status or progress changed (Midjourney's notifyHook). */
  changed?(app: AppContext, row: TaskRecord): void;
  /** Columns a terminal update sets (finish time in the table's unit). */
  finishPatch(nowMs: number, status: string): Record<string, unknown>;
}

/** A task unfinished this long after its submit is failed (and refunded). */
export const TASK_TIMEOUT_MS = 24 * 3600 * 1000;
/** Due rows taken per table per tick. */
const BATCH = 50;
/** The longest back-off after upstream errors. */
const MAX_BACKOFF_MS = 10 * 60 * 1000;

/**
 * Follows unfinished tasks on every node (docs/tasks.md): each tick takes the due rows whose lease
 * ran out, leases each with a conditional update (two nodes never poll one task at once), asks the
 * upstreams in batches per channel, writes what they said and gives the lease back. Upstream
 * errors push the task's next poll out exponentially. A restart finds the unfinished rows in the
 * table; a node that died holding leases loses them when they run out.
 */
export class TaskPoller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  readonly owner: string;

  constructor(
    private readonly app: AppContext,
    private readonly platforms: TaskPlatform[],
    readonly intervalMs: number,
  ) {
    this.owner = nodeId(app);
  }

  get leaseMs(): number {
    return Math.max(60_000, this.intervalMs * 4);
  }

  start(): void {
    if (this.intervalMs <= 0 || this.stopped) return;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.tick().finally(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }

  /** One round over both tables; concurrent calls share the round in progress. */
  tick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return (this.running ??= this.round()
      .catch((err: unknown) => this.app.log.error({ err }, 'task poll round failed'))
      .finally(() => {
        this.running = undefined;
      }));
  }

  private async round(): Promise<void> {
    const tables = [...new Set(this.platforms.map((p) => p.table))];
    for (const table of tables) await this.roundOf(table);
  }

  private async roundOf(table: TaskTable): Promise<void> {
    const { knex } = this.app;
    const now = Date.now();
    const ids = await dueTaskIds(knex, table, now, BATCH);
    const mine: number[] = [];
    for (const id of ids) if (await claimTask(knex, table, id, this.owner, now, now + this.leaseMs)) mine.push(id);
    if (!mine.length) return;
    const rows = await taskRowsById(knex, table, mine);
    const groups = new Map<string, { platform: TaskPlatform; rows: TaskRecord[] }>();
    for (const row of rows) {
      const platform = this.platforms.find((p) => p.table === table && p.owns(row));
      if (!platform) {
        await this.finish(table, row, undefined, {
          status: 'FAILURE',
          progress: '100%',
          failReason: t(serverLang(this.app), 'task.unknown_platform'),
          patch: {},
        });
        continue;
      }
      const k = `${platform.name}\n${row.channel_id}\n${row.key_index}`;
      const g = groups.get(k);
      if (g) g.rows.push(row);
      else groups.set(k, { platform, rows: [row] });
    }
    await Promise.all([...groups.values()].map((g) => this.pollGroup(table, g.platform, g.rows)));
  }

  private async pollGroup(table: TaskTable, platform: TaskPlatform, rows: TaskRecord[]): Promise<void> {
    const picked = await channelOfTask(this.app, rows[0]!);
    if (!picked) {
      for (const row of rows)
        await this.finish(table, row, platform, {
          status: 'FAILURE',
          progress: '100%',
          failReason: t(serverLang(this.app), 'task.channel_deleted'),
          patch: {},
        });
      return;
    }
    let results: Map<number, PollResult>;
    try {
      results = await platform.poll(this.app, picked, rows);
    } catch (err) {
      this.app.log.warn({ err: String(err), platform: platform.name, channel: picked.channel.info.id }, 'task upstream poll failed');
      results = new Map();
    }
    for (const row of rows) {
      const r = results.get(row.id);
      if (r && (DONE.has(r.status) || r.stop || !this.expired(table, row))) await this.finish(table, row, platform, r);
      else if (r) await this.finish(table, row, platform, { ...r, status: 'FAILURE', failReason: t(serverLang(this.app), 'task.timed_out') });
      else await this.backOff(table, row, platform);
    }
  }

  /** Unfinished this long after its submit: failed (and refunded), whether the upstream answers or not. */
  private expired(table: TaskTable, row: TaskRecord): boolean {
    const submitMs = table === 'midjourneys' ? Number(row.submit_time) : Number(row.submit_time) * 1000;
    return Date.now() - submitMs > TASK_TIMEOUT_MS;
  }

  /** No answer for this task: poll it later, longer after each consecutive error; fail it past the timeout. */
  private async backOff(table: TaskTable, row: TaskRecord, platform: TaskPlatform): Promise<void> {
    if (this.expired(table, row)) {
      await this.finish(table, row, platform, { status: 'FAILURE', progress: '100%', failReason: t(serverLang(this.app), 'task.timed_out'), patch: {} });
      return;
    }
    const errors = Number(row.poll_errors ?? 0) + 1;
    const delay = Math.min(MAX_BACKOFF_MS, Math.max(1000, this.intervalMs) * 2 ** Math.min(errors, 12));
    await updateLeasedTask(this.app.knex, table, row.id, this.owner, {
      poll_errors: errors,
      next_poll_at: Date.now() + delay,
      lease_owner: '',
      lease_until: 0,
    });
  }

  private async finish(table: TaskTable, row: TaskRecord, platform: TaskPlatform | undefined, r: PollResult): Promise<void> {
    const now = Date.now();
    const done = DONE.has(r.status);
    const patch: Record<string, unknown> = {
      ...r.patch,
      status: r.status,
      progress: r.progress,
      poll_errors: 0,
      next_poll_at: now + this.intervalMs,
      lease_owner: '',
      lease_until: 0,
      active: done || r.stop ? 0 : 1,
    };
    if (r.status === 'FAILURE') patch.fail_reason = r.failReason || t(serverLang(this.app), 'task.failed');
    if (done && platform) {
      // The upstream's own finish time wins when it gave one.
      for (const [k, v] of Object.entries(platform.finishPatch(now, r.status))) if (!patch[k]) patch[k] = v;
    }
    if (table === 'tasks') patch.updated_at = Math.floor(now / 1000);
    if (!(await updateLeasedTask(this.app.knex, table, row.id, this.owner, patch))) return;
    const upstreamId = String(row[upstreamIdColumn(table)] ?? '');
    if (r.status === 'FAILURE') await refundFailedTask(this.app, table, row, upstreamId, String(patch.fail_reason));
    if (platform?.changed && (row.status !== r.status || row.progress !== r.progress)) platform.changed(this.app, { ...row, ...patch } as TaskRecord);
  }

  /** Stops the timer, waits for the round in progress and gives back this node's leases. */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    const tables = [...new Set(this.platforms.map((p) => p.table))];
    for (const table of tables) await releaseTaskLeases(this.app.knex, table, this.owner).catch(() => undefined);
  }
}
