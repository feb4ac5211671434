import type Koa from 'koa';
import type { AppContext } from '../context';
import { ForbiddenError, UnauthorizedError } from '../lib/errors';
import type { UserRow } from '../repositories/users';
import { assertAdminTwoFactor } from '../services/twoFactor';
import { resolveUser } from '../services/consoleUser';

declare module 'koa' {
  interface DefaultState {
    /** The authenticated user, set by `requireAuth`. */
    user?: UserRow;
  }
}

/**
 * Login CSRF guard for the calls that log a browser in from credentials in the request alone
 * (password login, WeChat code, Telegram widget data as JSON): a page on another site could
 * otherwise log the visitor into the attacker's account (a text/plain form posts JSON here).
 * Browsers say who started a request in Sec-Fetch-Site; the console's own calls are same-origin.
 * Without the header (scripts, old browsers) the call passes.
 */
export function assertNotCrossSite(ctx: Koa.Context): void {
  const site = ctx.get('Sec-Fetch-Site');
  if (site && site !== 'same-origin' && site !== 'none') throw new ForbiddenError('auth.cross_site_login');
}

/** Requires a logged-in user with at least `minRole` (1 user, 10 admin, 100 root). */
export function requireAuth(app: AppContext, minRole = 1): Koa.Middleware {
  return async (ctx, next) => {
    const user = ctx.state.user ?? (await resolveUser(app, ctx));
    if (!user) throw new UnauthorizedError();
    if (user.role < minRole) throw new ForbiddenError('auth.role_too_low');
    // Root may make 2FA compulsory for admins: admin routes wait until it is on.
    if (minRole >= 10) await assertAdminTwoFactor(app, user);
    ctx.state.user = user;
    await next();
  };
}

export const requireUser = (app: AppContext) => requireAuth(app, 1);
export const requireAdmin = (app: AppContext) => requireAuth(app, 10);
export const requireRoot = (app: AppContext) => requireAuth(app, 100);

/** The authenticated user (use after requireAuth). */
export function currentUser(ctx: Koa.Context): UserRow {
  const u = ctx.state.user;
  if (!u) throw new UnauthorizedError();
  return u;
}
