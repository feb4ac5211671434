import type Koa from 'koa';
import { ZodError } from 'zod';
import { AppError, RateLimitError } from '../lib/errors';
import { describeZodError } from '../lib/validate';
import { localize, requestLang, t } from '../i18n';
import type { AppContext } from '../context';

/**
 * Console API error envelope: every handled failure is `{success:false, message}`; HTTP 200 except
 * 401/403/429 (the console relies on those codes). Anything unexpected is logged and answered
 * with a generic 500 envelope (never a stack or SQL to the client).
 */
export function apiErrors(app: AppContext): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (err instanceof AppError) {
        ctx.status = [401, 403, 429].includes(err.status) ? err.status : 200;
        if (err instanceof RateLimitError) ctx.set('Retry-After', String(err.retryAfterSeconds));
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
