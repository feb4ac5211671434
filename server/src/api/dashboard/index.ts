import { currentUser } from '../../middleware/auth';
import { performance, usageData } from '../../services/dashboard';
import { ok, type ConsoleRoutes } from '../route';
import { dataQuery } from './schema';

/**
 * Dashboard data (docs/dashboard.md): consumption from the logs per time bucket and model, as
 * `[{ created_at (bucket start, s), model_name, count, quota, token_used }]`; and process metrics.
 */
export function register(api: ConsoleRoutes): void {
  const { app } = api;
  api.route(
    { method: 'get', path: '/api/data/', summary: 'Consumption per time bucket and model (all users, or `username`).', access: 'admin', query: dataQuery },
    async (ctx) => {
      ok(ctx, await usageData(app, ctx.input.query));
    },
  );
  api.route(
    { method: 'get', path: '/api/data/self', summary: "The caller's consumption per time bucket and model.", access: 'user', query: dataQuery },
    async (ctx) => {
      ok(ctx, await usageData(app, { ...ctx.input.query, username: undefined }, currentUser(ctx).id));
    },
  );

  const sample = performance(app);
  api.route({ method: 'get', path: '/api/performance', summary: 'Process metrics (memory, CPU, event-loop delay).', access: 'admin' }, (ctx) => {
    ok(ctx, sample());
  });
}
