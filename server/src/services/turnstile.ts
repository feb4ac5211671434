import type Koa from 'koa';
import type { AppContext } from '../context';
import { BadRequestError } from '../lib/errors';
import { fetchPolicy, guardedFetch } from '../lib/guardedFetch';
import { sessionOf } from './sessions';

/** The message answered when the bot-check is on and no token came with the call. */
export const TURNSTILE_MISSING = 'turnstile.missing';
export const TURNSTILE_FAILED = 'turnstile.failed';

/**
 * Verifies a Turnstile token server-side: POSTs {secret, response, remoteip} form-encoded to the
 * `TurnstileVerifyURL` option (Cloudflare's siteverify by default). True only on `success: true`.
 */
export async function verifyTurnstile(app: AppContext, token: string, remoteip: string): Promise<boolean> {
  const url = app.options.get('TurnstileVerifyURL') || 'https://challenges.cloudflare.com/turnstile/v0/siteverify';
  const body = new URLSearchParams({ secret: app.options.get('TurnstileSecretKey'), response: token, remoteip });
  try {
    // Root configured the URL: the operator policy (private allowed, metadata not) applies.
    const res = await guardedFetch(app, url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
      timeoutMs: 10_000,
      maxBytes: 64 * 1024,
      policy: fetchPolicy(app, 'operator'),
    });
    if (res.status < 200 || res.status >= 300) return false;
    const data = JSON.parse(res.text()) as { success?: unknown };
    return data.success === true;
  } catch (err) {
    app.log.warn({ err: { message: (err as Error).message } }, 'turnstile verification request failed');
    return false;
  }
}

/**
 * Bot-check for login, registration, verification mail and password reset. When
 * `TurnstileCheckEnabled` is on, `?turnstile=` must be present and verify; like new-api, a
 * verified session is remembered so the same browser session is not asked again.
 */
export function turnstileCheck(app: AppContext): Koa.Middleware {
  return async (ctx, next) => {
    if (!app.options.bool('TurnstileCheckEnabled')) return next();
    const session = sessionOf(ctx);
    if (session.turnstile === true) return next();
    const token = typeof ctx.query.turnstile === 'string' ? ctx.query.turnstile.trim() : '';
    if (!token) throw new BadRequestError(TURNSTILE_MISSING);
    if (token.length > 4096 || !(await verifyTurnstile(app, token, ctx.ip))) throw new BadRequestError(TURNSTILE_FAILED);
    if (ctx.session) ctx.session.turnstile = true;
    return next();
  };
}
