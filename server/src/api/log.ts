import type Router from '@koa/router';
import type Koa from 'koa';
import type { AppContext } from '../context';
import { currentUser, requireAdmin, requireRoot, requireUser } from '../middleware/auth';
import { listLogs, logStat, purgeLogs } from '../services/logs';

const ok = (ctx: Koa.Context, data: unknown, message = '') => {
  ctx.body = { success: true, message, data };
};

/** Usage logs: all (admin), own (any user), stats, and purge (root). */
export function register(router: Router, app: AppContext): void {
  const q = (ctx: Koa.Context) => ctx.query as Record<string, unknown>;
  router.get('/api/log/self/stat', requireUser(app), async (ctx) => {
    ok(ctx, await logStat(app, q(ctx), { userId: currentUser(ctx).id }));
  });
  router.get('/api/log/self', requireUser(app), async (ctx) => {
    ok(ctx, await listLogs(app, q(ctx), { userId: currentUser(ctx).id }));
  });
  router.get('/api/log/stat', requireAdmin(app), async (ctx) => {
    ok(ctx, await logStat(app, q(ctx)));
  });
  router.get('/api/log', requireAdmin(app), async (ctx) => {
    ok(ctx, await listLogs(app, q(ctx)));
  });
  router.delete('/api/log', requireRoot(app), async (ctx) => {
    ok(ctx, await purgeLogs(app, q(ctx)));
  });
}
