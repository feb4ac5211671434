import { monitorEventLoopDelay } from 'node:perf_hooks';
import os from 'node:os';
import type { AppContext } from '../context';
import { BadRequestError } from '../lib/errors';
import { nowSec } from '../lib/time';
import { usageBuckets, type UsageBucket } from '../repositories/usageBuckets';

const BUCKET = { hour: 3600, day: 86400, week: 604800 } as const;

export interface UsageQuery {
  start_timestamp?: number;
  end_timestamp?: number;
  default_time?: keyof typeof BUCKET;
  username?: string;
}

/**
 * Consumption per time bucket and model; the range defaults to the last 7 days and spans at most a
 * year. The dashboard is refreshed every `DataExportInterval` minutes (as new-api exports its
 * dashboard data on that period): the range is cut to the interval's grid (it ends at the last
 * boundary) and each answer is
 * kept in the KV (shared by all nodes) until the next one, so reloading the dashboard costs no
 * aggregation over the logs in between.
 */
export async function usageData(app: AppContext, query: UsageQuery, userId?: number): Promise<UsageBucket[]> {
  const now = nowSec();
  const end = query.end_timestamp ?? now;
  const start = query.start_timestamp ?? end - 7 * 86400;
  if (start > end) throw new BadRequestError('dashboard.start_after_end');
  if (end - start > 366 * 86400) throw new BadRequestError('dashboard.range_too_long');
  const interval = Math.max(1, Math.floor(app.options.num('DataExportInterval', 5))) * 60;
  const boundary = Math.floor(now / interval) * interval;
  // Both ends on the interval's grid, so every reload within one interval asks the same question.
  const from = Math.floor(start / interval) * interval;
  const to = Math.min(end, boundary - 1);
  if (to < from) return [];
  const gran = query.default_time ?? 'hour';
  const who = userId !== undefined ? `u${userId}` : query.username ? `n${query.username}` : 'all';
  const key = `dashboard:${interval}:${boundary}:${gran}:${who}:${from}:${to}`;
  const hit = await app.kv.get(key);
  if (hit) return JSON.parse(hit) as UsageBucket[];
  const rows = await usageBuckets(app.knex, { start: from, end: to, bucketSeconds: BUCKET[gran] }, { userId, username: query.username });
  await app.kv.set(key, JSON.stringify(rows), Math.max(1, boundary + interval - now));
  return rows;
}

/** Process metrics for the admin "performance" page. */
export function performance(app: AppContext) {
  const loop = app.memo('eventLoopDelay', () => {
    const h = monitorEventLoopDelay({ resolution: 20 });
    h.enable();
    app.onClose(() => {
      h.disable();
    });
    return h;
  });
  // Nanoseconds → milliseconds; an empty histogram (NaN) reads 0 instead of a JSON null.
  const ms = (ns: number) => (Number.isFinite(ns) ? Math.round(ns / 1e3) / 1e3 : 0);
  return () => {
    const mem = process.memoryUsage();
    const cpu = process.cpuUsage();
    return {
      uptime_seconds: Math.round(process.uptime()),
      // Sample time and precise uptime let the console turn two samples' CPU times into a percentage.
      sampled_at_ms: Date.now(),
      uptime_ms: Math.round(process.uptime() * 1000),
      pid: process.pid,
      platform: `${process.platform}/${process.arch}`,
      cpu_count: os.cpus().length,
      load_average: os.loadavg(),
      start_time: app.startTime,
      node_version: process.version,
      database: app.db.kind,
      cache: app.kv.kind,
      memory: { rss: mem.rss, heap_used: mem.heapUsed, heap_total: mem.heapTotal, external: mem.external },
      cpu_user_us: cpu.user,
      cpu_system_us: cpu.system,
      event_loop_delay_ms: { mean: ms(loop.mean), p99: ms(loop.percentile(99)), max: ms(loop.max) },
    };
  };
}
