import type Koa from 'koa';
import type { AppContext } from '../context';
import { RateLimitError } from '../lib/errors';

/**
 * Fixed-window counter in the shared KV (Redis script when configured, so the limit is global
 * across nodes). `keyOf` picks what is limited (IP, user, …).
 */
export async function hitLimit(app: AppContext, key: string, limit: number, windowSeconds: number): Promise<void> {
  if (limit <= 0) return;
  const n = await app.kv.incr(`rl:${key}`, windowSeconds);
  if (n > limit) {
    const ttl = await app.kv.ttl(`rl:${key}`);
    throw new RateLimitError('common.rate_limited', ttl > 0 ? ttl : windowSeconds);
  }
}

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
