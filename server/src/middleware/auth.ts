import type Koa from 'koa';
import type { AppContext } from '../context';
import { ForbiddenError, UnauthorizedError } from '../lib/errors';
import { findUserByAccessToken, USER_STATUS, type UserRow } from '../repositories/users';
import { sessionUser } from '../services/sessions';
import { assertAdminTwoFactor } from '../services/twoFactor';

declare module 'koa' {
  interface DefaultState {
    /** The authenticated user, set by `requireAuth`. */
    user?: UserRow;
  }
}

export interface SessionData {
  uid?: number;
  /** Session id; the cookie is valid only while its server record exists (services/sessions.ts). */
  sid?: string;
  /** OAuth state etc. live here too (see api/oauth). */
  [key: string]: unknown;
}

/** Session cookie payload (koa-session, signed with SESSION_SECRET). */
export function sessionOf(ctx: Koa.Context): SessionData {
  return (ctx.session ?? {}) as SessionData;
}

/**
 * Resolves the caller: a session cookie, or `Authorization: <system access token>`. Either way the
 * `New-Api-User` header must name the same user (the console's clients send both). Returns undefined when nobody is
 * logged in; throws 401 when a credential is present but wrong.
 */
export async function resolveUser(app: AppContext, ctx: Koa.Context): Promise<UserRow | undefined> {
  const header = ctx.get('New-Api-User');
  const authz = ctx
    .get('Authorization')
    .replace(/^Bearer\s+/i, '')
    .trim();
  let user: UserRow | undefined;
  if (authz) {
    if (authz.startsWith('sk-') || authz.length > 128) throw new UnauthorizedError('auth.access_token_invalid');
    user = await findUserByAccessToken(app.knex, authz);
    if (!user) throw new UnauthorizedError('auth.access_token_invalid');
  } else {
    // The cookie counts only while its server-side session exists (services/sessions.ts).
    user = await sessionUser(app, ctx);
    if (!user) return undefined;
  }
  if (!header) throw new UnauthorizedError('auth.no_user_header');
  if (String(user.id) !== header.trim()) throw new UnauthorizedError('auth.user_header_mismatch');
  if (user.status !== USER_STATUS.enabled) {
    if (!authz) ctx.session = null;
    throw new UnauthorizedError('user.banned');
  }
  return user;
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
