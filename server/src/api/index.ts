import Router from '@koa/router';
import type Koa from 'koa';
import type { AppContext } from '../context';
import { apiErrors } from '../middleware/errors';
import { jsonBody } from '../middleware/body';
import { rateLimit } from '../middleware/rateLimit';
import { ConsoleRoutes, reply, type RegisteredRoute } from './route';
import { openApiDocument } from './openapi';
import * as status from './status';
import * as user from './user';
import * as option from './option';
import * as misc from './misc';
import * as channel from './channel';
import * as token from './token';
import * as redemption from './redemption';
import * as log from './log';
import * as pricing from './pricing';
import * as oauth from './oauth';
import * as topup from './topup';
import * as tasks from './tasks';
import * as dashboard from './dashboard';
import { msg } from '../i18n';

/**
 * The console API's areas in mounting order: more specific paths must come before parameterised
 * ones of another area (`/api/user/self` before `/api/user/:id`, `/api/channel/test` before
 * `/api/channel/:id`).
 */
const AREAS = [
  ['status', status],
  ['oauth', oauth],
  ['topup', topup],
  ['tasks', tasks],
  ['dashboard', dashboard],
  ['redemption', redemption],
  ['user', user],
  ['option', option],
  ['misc', misc],
  ['channel', channel],
  ['token', token],
  ['log', log],
  ['pricing', pricing],
] as const;

export interface ConsoleApi {
  router: Router;
  /** Every route mounted on `router`, as described in /api/openapi.json. */
  routes: RegisteredRoute[];
}

/** Mounts every area's routes on one router, plus GET /api/openapi.json describing them. */
export function consoleApi(app: AppContext): ConsoleApi {
  const router = new Router();
  const routes: RegisteredRoute[] = [];
  for (const [tag, area] of AREAS) area.register(new ConsoleRoutes(router, app, routes, tag));
  let document: object | undefined;
  new ConsoleRoutes(router, app, routes, 'meta').route(
    { method: 'get', path: '/api/openapi.json', summary: 'This description of the console API (OpenAPI 3.1).', access: 'public' },
    (ctx: { body: unknown }) => {
      document ??= openApiDocument(routes, app.config.version);
      ctx.body = document;
    },
  );
  return { router, routes };
}

export function apiMiddleware(app: AppContext): Koa.Middleware[] {
  const { router } = consoleApi(app);
  const guard: Koa.Middleware = async (ctx, next) => {
    if (!ctx.path.startsWith('/api/') && ctx.path !== '/api') return next();
    ctx.set('Cache-Control', 'no-store');
    await next();
    if (ctx.body === undefined && ctx.status === 404) {
      ctx.status = 404;
      // Outside the error middleware, which answers HTTP 200 for handled outcomes: this one stays 404.
      reply(ctx, false, msg('api.not_found', { method: ctx.method, path: ctx.path }), { data: null });
    }
  };
  const onlyApi =
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the router's middleware carries its own context type
    (mw: Koa.Middleware<any, any>): Koa.Middleware =>
      (ctx, next) =>
        ctx.path.startsWith('/api/') ? mw(ctx, next) : next();
  const { count, windowSeconds } = app.config.apiRateLimit;
  // Global per-IP limit on the console API (shared through Redis when configured).
  const perIp = rateLimit(app, 'api', count, windowSeconds);
  return [
    guard,
    onlyApi(apiErrors(app)),
    onlyApi(perIp),
    onlyApi(jsonBody(app.config.apiBodyLimit, app.config.apiBodyTimeoutMs)),
    onlyApi(router.routes()),
    onlyApi(router.allowedMethods()),
  ];
}
