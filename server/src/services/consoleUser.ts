import type Koa from 'koa';
import type { AppContext } from '../context';
import { UnauthorizedError } from '../lib/errors';
import { findUserByAccessToken, USER_STATUS, type UserRow } from '../repositories/users';
import { sessionUser } from './sessions';

/**
 * Resolves the console's caller: a session cookie, or `Authorization: <system access token>`. Either way the
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
