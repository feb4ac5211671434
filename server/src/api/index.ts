import Router from '@koa/router';
import type Koa from 'koa';
import type { AppContext } from '../context';
import { apiErrors } from '../middleware/errors';
import { jsonBody } from '../middleware/body';
import { rateLimit } from '../middleware/rateLimit';
import * as status from './status';
import * as user from './user';
import * as option from './option';
import * as misc from './misc';
import * as channelUpstream from './channelUpstream';
import * as channel from './channel';
import * as token from './token';
import * as redemption from './redemption';
import * as log from './log';
import * as pricing from './pricing';
import * as oauth from './oauth';
import * as topup from './topup';
import * as tasks from './tasks';
import * as dashboard from './dashboard';

/**
 * The console API under /api. Areas register their own routes; more specific paths must be
 * registered before parameterised ones (`/api/user/self` before `/api/user/:id`), hence the order.
 */
export function apiMiddleware(app: AppContext): Koa.Middleware[] {
  const router = new Router();
  for (const area of [status, oauth, topup, tasks, dashboard, redemption, user, option, misc, channelUpstream, channel, token, log, pricing]) {
    area.register(router, app);
  }
  const guard: Koa.Middleware = async (ctx, next) => {
    if (!ctx.path.startsWith('/api/') && ctx.path !== '/api') return next();
    ctx.set('Cache-Control', 'no-store');
    await next();
    if (ctx.body === undefined && ctx.status === 404) {
      ctx.status = 404;
      ctx.body = { success: false, message: `接口不存在：${ctx.method} ${ctx.path}`, data: null };
    }
  };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const onlyApi = (mw: Koa.Middleware<any, any>): Koa.Middleware => (ctx, next) =>
    ctx.path.startsWith('/api/') ? mw(ctx, next) : next();
  const { count, windowSeconds } = app.config.apiRateLimit;
  // Global per-IP limit on the console API (shared through Redis when configured).
  const perIp = rateLimit(app, 'api', count, windowSeconds);
  return [guard, onlyApi(apiErrors(app)), onlyApi(perIp), onlyApi(jsonBody(app.config.apiBodyLimit)), onlyApi(router.routes()), onlyApi(router.allowedMethods())];
}
