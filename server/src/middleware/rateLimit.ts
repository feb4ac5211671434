import type Koa from 'koa';
import type { AppContext } from '../context';
import { hitLimit } from '../services/rateLimit';

/** A route's rate limit: a fixed window per `keyOf` (services/rateLimit.ts). */
export function rateLimit(
  app: AppContext,
  name: string,
  limit: number | (() => number),
  windowSeconds: number,
  keyOf: (ctx: Koa.Context) => string = (ctx) => ctx.ip,
): Koa.Middleware {
  return async (ctx, next) => {
    const max = typeof limit === 'function' ? limit() : limit;
    await hitLimit(app, `${name}:${keyOf(ctx)}`, max, windowSeconds);
    await next();
  };
}
