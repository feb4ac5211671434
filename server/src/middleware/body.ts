import type Koa from 'koa';
import { AppError, BadRequestError } from '../lib/errors';
import { msg } from '../i18n';
import { readRawBody } from '../lib/rawBody';

declare module 'koa' {
  interface Request {
    /** Parsed JSON body (undefined when the request had none). */
    body?: unknown;
    /** Raw body bytes, when read. */
    rawBody?: Buffer;
  }
}

export class BodyTimeoutError extends AppError {
  constructor(seconds: number) {
    super(msg('body.timeout', { seconds }), 408, 'request_timeout');
  }
}

/**
 * The body within `ms`, else a BodyTimeoutError and the connection closes after the answer (the
 * rest of the body will not be read): a console body is small, so a client that announces one
 * and sends it slowly or never gets no more than `ms` of a connection.
 */
function withinDeadline(ctx: Koa.Context, ms: number, read: Promise<Buffer>): Promise<Buffer> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ctx.set('Connection', 'close');
      ctx.req.pause();
      reject(new BodyTimeoutError(Math.ceil(ms / 1000)));
    }, ms);
  });
  read.catch(() => undefined); // a read that fails after the deadline is not ours to report
  return Promise.race([read, late]).finally(() => clearTimeout(timer));
}

/** JSON body parser for the console API: malformed JSON is a handled `success:false`; a body must arrive within `timeoutMs`. */
export function jsonBody(limit: number, timeoutMs = 30_000): Koa.Middleware {
  return async (ctx, next) => {
    if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method) && ctx.req.readable) {
      const raw = await withinDeadline(ctx, timeoutMs, readRawBody(ctx, limit)).catch((e: unknown) => {
        if (e instanceof BodyTimeoutError) throw e;
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
