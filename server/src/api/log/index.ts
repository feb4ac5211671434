import { currentUser } from '../../middleware/auth';
import { listLogs, logStat, purgeLogs } from '../../services/logs';
import { ok, type ConsoleRoutes } from '../route';
import { listQuery, purgeQuery, statQuery } from './schema';

/** Usage logs: all (admin), own (any user), stats, and purge (root). */
export function register(api: ConsoleRoutes): void {
  const { app } = api;
  // The service parses the raw query (its filters depend on whose logs are read).
  api.route({ method: 'get', path: '/api/log/self/stat', summary: "Totals of the caller's logs.", access: 'user', documentedQuery: statQuery }, async (ctx) => {
    ok(ctx, await logStat(app, ctx.query, { userId: currentUser(ctx).id }));
  });
  api.route({ method: 'get', path: '/api/log/self', summary: "The caller's logs (paged).", access: 'user', documentedQuery: listQuery }, async (ctx) => {
    ok(ctx, await listLogs(app, ctx.query, { userId: currentUser(ctx).id }));
  });
  api.route({ method: 'get', path: '/api/log/stat', summary: 'Totals of all logs.', access: 'admin', documentedQuery: statQuery }, async (ctx) => {
    ok(ctx, await logStat(app, ctx.query));
  });
  api.route({ method: 'get', path: '/api/log', summary: 'All logs (paged).', access: 'admin', documentedQuery: listQuery }, async (ctx) => {
    ok(ctx, await listLogs(app, ctx.query));
  });
  api.route(
    { method: 'delete', path: '/api/log', summary: 'Delete logs older than `target_timestamp`.', access: 'root', documentedQuery: purgeQuery },
    async (ctx) => {
      ok(ctx, await purgeLogs(app, ctx.query));
    },
  );
}
