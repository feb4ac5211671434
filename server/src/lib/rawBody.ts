import type Koa from 'koa';
import { AppError, BadRequestError } from './errors';
import { msg } from '../i18n';
import { collectStream, type CollectErrors } from './collectStream';

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
