import { currentUser } from '../../middleware/auth';
import { parsePaging } from '../../lib/validate';
import { listLogs, logStat, purgeLogs } from '../../services/logs';
import { ok, type ConsoleRoutes } from '../route';
import { listQuery, purgeQuery, statQuery } from './schema';

/** Usage logs: all (admin), own (any user), stats, and purge (root). */
export function register(api: ConsoleRoutes): void {
  const { app } = api;
  api.route({ method: 'get', path: '/api/log/self/stat', summary: "Totals of the caller's logs.", access: 'user', query: statQuery }, async (ctx) => {
    ok(ctx, await logStat(app, ctx.input.query, { userId: currentUser(ctx).id }));
  });
  api.route({ method: 'get', path: '/api/log/self', summary: "The caller's logs (paged).", access: 'user', query: listQuery }, async (ctx) => {
    ok(ctx, await listLogs(app, ctx.input.query, parsePaging(ctx.input.query), { userId: currentUser(ctx).id }));
  });
  api.route({ method: 'get', path: '/api/log/stat', summary: 'Totals of all logs.', access: 'admin', query: statQuery }, async (ctx) => {
    ok(ctx, await logStat(app, ctx.input.query));
  });
  api.route({ method: 'get', path: '/api/log', summary: 'All logs (paged).', access: 'admin', query: listQuery }, async (ctx) => {
    ok(ctx, await listLogs(app, ctx.input.query, parsePaging(ctx.input.query)));
  });
  api.route({ method: 'delete', path: '/api/log', summary: 'Delete logs older than `target_timestamp`.', access: 'root', query: purgeQuery }, async (ctx) => {
    ok(ctx, await purgeLogs(app, ctx.input.query.target_timestamp));
  });
}
