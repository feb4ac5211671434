import type Router from '@koa/router';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { z } from 'zod';
import type { AppContext } from '../context';
import { BadRequestError } from '../lib/errors';
import { parse, qIntOpt } from '../lib/validate';
import { nowSec } from '../lib/time';
import { currentUser, requireAdmin, requireUser } from '../middleware/auth';
import { LOG_TYPE } from '../repositories/logs';

/**
 * Dashboard data (spec 002 /detail): consumption aggregated from the logs per time bucket and
 * model. Not in the spec's call list, so documented in docs/dashboard.md:
 * `GET /api/data/?start_timestamp&end_timestamp&default_time=hour|day|week&username` (admin) and
 * `GET /api/data/self/?…` → data: [{created_at (bucket start, s), model_name, count, quota, token_used}].
 */
const BUCKET = { hour: 3600, day: 86400, week: 604800 } as const;

const dataQuery = z.object({
  start_timestamp: qIntOpt(),
  end_timestamp: qIntOpt(),
  default_time: z.enum(['hour', 'day', 'week']).optional(),
  username: z.string().max(64).optional(),
});

async function aggregate(app: AppContext, query: z.infer<typeof dataQuery>, userId?: number) {
  const end = query.end_timestamp ?? nowSec();
  const start = query.start_timestamp ?? end - 7 * 86400;
  if (start > end) throw new BadRequestError('开始时间不能晚于结束时间');
  if (end - start > 366 * 86400) throw new BadRequestError('时间范围不能超过一年');
  const bucket = BUCKET[query.default_time ?? 'hour'];
  const k = app.knex;
  const q = k('logs')
    .where('type', LOG_TYPE.consume)
    .whereBetween('created_at', [start, end])
        // Inlined (from a fixed enum): a bound parameter would make SQLite divide as REAL.
    .select(k.raw(`(created_at / ${bucket}) * ${bucket} as bucket`), 'model_name')
    .count({ count: '*' })
    .sum({ quota: 'quota' })
    .sum({ token_used: k.raw('prompt_tokens + completion_tokens') })
    .groupBy('bucket', 'model_name')
    .orderBy('bucket', 'asc');
  if (userId !== undefined) q.where('user_id', userId);
  else if (query.username) q.where('username', query.username);
  const rows = (await q) as Array<{ bucket: number | string; model_name: string; count: number | string; quota: number | string | null; token_used: number | string | null }>;
  return rows.map((r) => ({
    created_at: Number(r.bucket),
    model_name: r.model_name,
    count: Number(r.count),
    quota: Number(r.quota ?? 0),
    token_used: Number(r.token_used ?? 0),
  }));
}

export function register(router: Router, app: AppContext): void {
  router.get('/api/data/', requireAdmin(app), async (ctx) => {
    ctx.body = { success: true, message: '', data: await aggregate(app, parse(dataQuery, ctx.query)) };
  });
  router.get('/api/data/self', requireUser(app), async (ctx) => {
    const q = parse(dataQuery, ctx.query);
    ctx.body = { success: true, message: '', data: await aggregate(app, { ...q, username: undefined }, currentUser(ctx).id) };
  });

  // Process metrics for the admin "performance" page.
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
  router.get('/api/performance', requireAdmin(app), async (ctx) => {
    const mem = process.memoryUsage();
    const cpu = process.cpuUsage();
    ctx.body = {
      success: true,
      message: '',
      data: {
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
      },
    };
  });
}
