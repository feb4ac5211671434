import type Router from '@koa/router';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { AppContext } from '../context';
import { parse, qIntOpt } from '../lib/validate';
import { currentUser, requireAdmin, requireUser } from '../middleware/auth';

/**
 * Drawing (Midjourney) and creative-task (Suno…) logs: spec 002 §7. Lists answer a plain array
 * (`data`), fetched lazily page by page by the console (`p`, 1-based; `page_size`, default 10).
 * Drawing timestamps are milliseconds, task timestamps seconds.
 */
const listQuery = z.object({
  p: qIntOpt().pipe(z.number().int().min(1).max(1_000_000).optional()),
  page_size: qIntOpt().pipe(z.number().int().min(1).max(100).optional()),
  channel_id: qIntOpt(),
  mj_id: z.string().max(191).optional(),
  task_id: z.string().max(191).optional(),
  start_timestamp: qIntOpt(),
  end_timestamp: qIntOpt(),
});
type ListQuery = z.infer<typeof listQuery>;

function page<T extends object>(q: Knex.QueryBuilder<T>, query: ListQuery) {
  const size = query.page_size ?? 10;
  const p = query.p ?? 1;
  return q.orderBy('id', 'desc').limit(size).offset((p - 1) * size);
}

function mjQuery(app: AppContext, query: ListQuery, userId?: number) {
  const q = app.knex('midjourneys');
  if (userId !== undefined) q.where({ user_id: userId });
  else if (query.channel_id) q.where({ channel_id: query.channel_id });
  if (query.mj_id) q.where({ mj_id: query.mj_id });
  if (query.start_timestamp) q.where('submit_time', '>=', query.start_timestamp);
  if (query.end_timestamp) q.where('submit_time', '<=', query.end_timestamp);
  return page(q, query);
}

function taskQuery(app: AppContext, query: ListQuery, userId?: number) {
  const q = app.knex('tasks');
  if (userId !== undefined) q.where({ user_id: userId });
  else if (query.channel_id) q.where({ channel_id: query.channel_id });
  if (query.task_id) q.where({ task_id: query.task_id });
  if (query.start_timestamp) q.where('submit_time', '>=', query.start_timestamp);
  if (query.end_timestamp) q.where('submit_time', '<=', query.end_timestamp);
  return page(q, query);
}

/** Self lists hide the channel (an admin detail). */
const withoutChannel = <T extends Record<string, unknown>>(rows: T[]) => rows.map(({ channel_id: _c, ...rest }) => rest);

export function register(router: Router, app: AppContext): void {
  router.get('/api/mj/', requireAdmin(app), async (ctx) => {
    ctx.body = { success: true, message: '', data: await mjQuery(app, parse(listQuery, ctx.query)) };
  });
  router.get('/api/mj/self', requireUser(app), async (ctx) => {
    const rows = await mjQuery(app, parse(listQuery, ctx.query), currentUser(ctx).id);
    ctx.body = { success: true, message: '', data: withoutChannel(rows) };
  });
  router.get('/api/task/', requireAdmin(app), async (ctx) => {
    ctx.body = { success: true, message: '', data: await taskQuery(app, parse(listQuery, ctx.query)) };
  });
  router.get('/api/task/self', requireUser(app), async (ctx) => {
    const rows = await taskQuery(app, parse(listQuery, ctx.query), currentUser(ctx).id);
    ctx.body = { success: true, message: '', data: withoutChannel(rows) };
  });
}
