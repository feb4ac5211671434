import type Koa from 'koa';
import { ZodError } from 'zod';
import { AppError, RateLimitError } from '../lib/errors';
import { describeZodError } from '../lib/validate';
import { localize, requestLang, t } from '../i18n';
import type { AppContext } from '../context';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../db/errors';

/**
 * Console API error envelope: every handled failure is `{success:false, message}`; HTTP 200 except
 * 401/403/429 (the console relies on those codes), 408 (a body that did not arrive) and 503 (the
 * database did not answer: a lost connection, a statement or lock timeout). Anything unexpected is
 * logged and answered with a generic 500 envelope (never a stack or SQL to the client).
 */
export function apiErrors(app: AppContext): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (caught) {
      let err = caught;
      if (!(err instanceof AppError) && isDatabaseUnavailable(err)) {
        app.log.warn({ err, path: ctx.path, method: ctx.method }, 'database unavailable');
        err = new DatabaseUnavailableError(err);
      }
      if (err instanceof AppError) {
        ctx.status = [401, 403, 408, 429, 503].includes(err.status) ? err.status : 200;
        if (err instanceof RateLimitError || err instanceof DatabaseUnavailableError) ctx.set('Retry-After', String(err.retryAfterSeconds));
        ctx.body = { success: false, message: localize(err, requestLang(ctx)), data: err.data ?? null };
        return;
      }
      if (err instanceof ZodError) {
        ctx.status = 200;
        ctx.body = { success: false, message: t(requestLang(ctx), describeZodError(err)), data: null };
        return;
      }
      app.log.error({ err, path: ctx.path, method: ctx.method }, 'unhandled error in API');
      ctx.status = 500;
      ctx.body = { success: false, message: t(requestLang(ctx), 'common.internal_error'), data: null };
    }
  };
}
