import { currentUser } from '../../middleware/auth';
import { listDrawings, listTasks } from '../../repositories/tasks';
import { ok, type ConsoleRoutes } from '../route';
import { listQuery } from './schema';

/** Self lists hide the channel (an admin detail). */
const withoutChannel = <T extends Record<string, unknown>>(rows: T[]) => rows.map(({ channel_id: _c, ...rest }) => rest);

/**
 * Drawing (Midjourney) and creative-task (Suno…) logs. Lists answer a plain array (`data`),
 * fetched lazily page by page by the console (`p`, 1-based; `page_size`, default 10). Drawing
 * timestamps are milliseconds, task timestamps seconds.
 */
export function register(api: ConsoleRoutes): void {
  const { app } = api;
  api.route({ method: 'get', path: '/api/mj/', summary: 'Drawings of every user.', access: 'admin', query: listQuery }, async (ctx) => {
    ok(ctx, await listDrawings(app.knex, ctx.input.query));
  });
  api.route({ method: 'get', path: '/api/mj/self', summary: "The caller's drawings.", access: 'user', query: listQuery }, async (ctx) => {
    ok(ctx, withoutChannel(await listDrawings(app.knex, ctx.input.query, currentUser(ctx).id)));
  });
  api.route({ method: 'get', path: '/api/task/', summary: 'Creative tasks of every user.', access: 'admin', query: listQuery }, async (ctx) => {
    ok(ctx, await listTasks(app.knex, ctx.input.query));
  });
  api.route({ method: 'get', path: '/api/task/self', summary: "The caller's creative tasks.", access: 'user', query: listQuery }, async (ctx) => {
    ok(ctx, withoutChannel(await listTasks(app.knex, ctx.input.query, currentUser(ctx).id)));
  });
}
