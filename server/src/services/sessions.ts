import crypto from 'node:crypto';
import type Koa from 'koa';
import type { AppContext } from '../context';
import { BadRequestError, UnauthorizedError } from '../lib/errors';
import { randomString } from '../lib/random';
import { nowSec } from '../lib/time';
import type { UserRow } from '../repositories/users';

/**
 * Revocable console sessions. The signed koa-session cookie carries `uid` and a random `sid`; the
 * `user_sessions` table (shared by every node) holds SHA-256(sid). A cookie counts only while its
 * record exists and has not expired, so ending a session is deleting its row: logout ends one,
 * "log out everywhere", a password change/reset, a disable and a delete end all of a user's.
 * Checking it costs nothing extra per call: the user row was already read per call, now it is
 * read joined with the session row.
 */

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
export const SESSION_MAX_AGE_SECONDS = 30 * 24 * 3600;

interface SessionCookie {
  uid?: unknown;
  sid?: unknown;
  [key: string]: unknown;
}

const TABLE = 'user_sessions';
const hashSid = (sid: string) => crypto.createHash('sha256').update(sid).digest('hex');
const cookieOf = (ctx: Koa.Context): SessionCookie => (ctx.session ?? {}) as SessionCookie;

/** The session id of this request's cookie ('' when none). */
export function sessionId(ctx: Koa.Context): string {
  const sid = cookieOf(ctx).sid;
  return typeof sid === 'string' ? sid : '';
}

/** Logs `user` in on this browser: a new session record and cookie (a previous one is ended). */
export async function startSession(app: AppContext, ctx: Koa.Context, user: Pick<UserRow, 'id'>): Promise<void> {
  if (!ctx.session) throw new BadRequestError('common.session_unavailable');
  const old = sessionId(ctx);
  const sid = randomString(43);
  const now = nowSec();
  await app.knex.transaction(async (trx) => {
    if (old)
      await trx(TABLE)
        .where({ id: hashSid(old) })
        .del();
    await trx(TABLE).insert({ id: hashSid(sid), user_id: user.id, created_at: now, expires_at: now + SESSION_MAX_AGE_SECONDS });
  });
  // Expired records (of anybody) go at each login, so nothing else has to sweep the table (indexed).
  await app.knex(TABLE).where('expires_at', '<=', now).del();
  ctx.session.uid = Number(user.id);
  ctx.session.sid = sid;
}

/**
 * The user of this request's session cookie, or undefined when the cookie names nobody. Throws 401
 * (and clears the cookie) when the cookie names a user but its session was ended or has expired;
 * with `lenient` such a cookie counts as nobody (login flows, which replace it anyway).
 */
export async function sessionUser(app: AppContext, ctx: Koa.Context, lenient = false): Promise<UserRow | undefined> {
  const c = cookieOf(ctx);
  if (!c.uid) return undefined;
  const sid = typeof c.sid === 'string' ? c.sid : '';
  const now = nowSec();
  const row = sid
    ? await app
        .knex('users')
        .join(TABLE, `${TABLE}.user_id`, 'users.id')
        .where(`${TABLE}.id`, hashSid(sid))
        .andWhere('users.id', Number(c.uid))
        .andWhere(`${TABLE}.expires_at`, '>', now)
        .whereNull('users.deleted_at')
        .first('users.*', `${TABLE}.expires_at as session_expires_at`)
    : undefined;
  if (!row) {
    if (lenient) return undefined;
    // Cookies from before revocable sessions (no sid) end here too: one more login.
    ctx.session = null;
    throw new UnauthorizedError();
  }
  const { session_expires_at: expiresAt, ...user } = row as UserRow & { session_expires_at: number | string };
  // Sliding expiry like the cookie's: written at most once per half lifetime.
  if (Number(expiresAt) - now < SESSION_MAX_AGE_SECONDS / 2) {
    await app
      .knex(TABLE)
      .where({ id: hashSid(sid) })
      .update({ expires_at: now + SESSION_MAX_AGE_SECONDS });
  }
  return user as UserRow;
}

/** Logout: ends this request's session on the server and clears the cookie. */
export async function endSession(app: AppContext, ctx: Koa.Context): Promise<void> {
  const sid = sessionId(ctx);
  if (sid)
    await app
      .knex(TABLE)
      .where({ id: hashSid(sid) })
      .del();
  ctx.session = null;
}

/** Ends every session of `userId` on every node, except `keepSid` (the caller's own) when given. */
export async function endUserSessions(app: AppContext, userId: number, keepSid?: string): Promise<number> {
  const q = app.knex(TABLE).where({ user_id: userId });
  if (keepSid) q.whereNot({ id: hashSid(keepSid) });
  return q.del();
}
