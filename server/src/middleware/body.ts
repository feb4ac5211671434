import type Koa from 'koa';
import { AppError, BadRequestError } from '../lib/errors';
import { msg } from '../i18n';
import { collectStream, type CollectErrors } from '../lib/collectStream';

declare module 'koa' {
  interface Request {
    /** Parsed JSON body (undefined when the request had none). */
    body?: unknown;
    /** Raw body bytes, when read. */
    rawBody?: Buffer;
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(limit: number) {
    super(msg('body.too_large', { limit }), 413, 'payload_too_large');
  }
}

const consoleBodyErrors = (limit: number): CollectErrors => ({
  tooLarge: () => new PayloadTooLargeError(limit),
  failed: (err) => new BadRequestError(msg('body.read_failed', { reason: err.message })),
  closed: () => new BadRequestError('body.incomplete'),
});

/**
 * Reads the whole request body, refusing more than `limit` bytes without buffering the excess
 * (the rest is drained so the refusal can still be delivered). `errors` shapes the failures
 * (the relay answers them in its callers' formats).
 */
export function readRawBody(ctx: Pick<Koa.Context, 'get' | 'req'>, limit: number, errors: CollectErrors = consoleBodyErrors(limit)): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) {
    ctx.req.resume();
    return Promise.reject(errors.tooLarge());
  }
  return collectStream(ctx.req, limit, errors, 'drain');
}

/** JSON body parser for the console API: malformed JSON is a handled `success:false`. */
export function jsonBody(limit: number): Koa.Middleware {
  return async (ctx, next) => {
    if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method) && ctx.req.readable) {
      const raw = await readRawBody(ctx, limit).catch((e: unknown) => {
        throw e instanceof AppError ? new BadRequestError(e.msg) : e;
      });
      ctx.request.rawBody = raw;
      if (raw.length) {
        const type = ctx.get('content-type');
        if (!type || type.includes('json') || type.includes('text/plain')) {
          try {
            ctx.request.body = JSON.parse(raw.toString('utf8'));
          } catch {
            throw new BadRequestError('body.bad_json_param');
          }
        } else if (type.includes('application/x-www-form-urlencoded')) {
          ctx.request.body = Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
        }
      }
    }
    await next();
  };
}
