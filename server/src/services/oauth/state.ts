import crypto from 'node:crypto';
import type Koa from 'koa';
import type { AppContext } from '../../context';
import { BadRequestError } from '../../lib/errors';
import { randomString } from '../../lib/random';
import { sessionOf } from '../sessions';

/**
 * One-time OAuth `state` values. A state is bound to the browser session twice over: the session
 * cookie carries it (`oauth_state`), and the shared KV keeps its record under the state itself.
 * A callback must present the state its own session holds (CSRF), and the KV record is taken
 * atomically (a replayed state, even with an old copy of the cookie, finds nothing).
 */
export interface StateRecord {
  /** Inviter code from `?aff=` when the state was issued. */
  aff: string;
  /** Provider the state was issued for ('' = any, from the plain GET /api/oauth/state). */
  provider: string;
  /** PKCE code_verifier; set when the server built the authorization redirect with a challenge. */
  verifier?: string;
  /** redirect_uri sent in the authorization request (the token call must repeat it). */
  redirectUri?: string;
  /** The logged-in user when the state was issued (0 = nobody). */
  uid: number;
  createdAt: number;
}

export const STATE_TTL_SECONDS = 10 * 60;
const SESSION_KEY = 'oauth_state';
const kvKey = (state: string) => `oauth:state:${state}`;

export const BAD_STATE_MESSAGE = 'oauth.bad_state';

export async function issueState(
  app: AppContext,
  ctx: Koa.Context,
  opts: { aff?: string; provider?: string; pkce?: boolean; redirectUri?: string } = {},
): Promise<{ state: string; record: StateRecord }> {
  const state = randomString(32);
  const session = sessionOf(ctx);
  const record: StateRecord = {
    aff: (opts.aff ?? '').trim().slice(0, 32),
    provider: opts.provider ?? '',
    uid: typeof session.uid === 'number' ? session.uid : 0,
    createdAt: Date.now(),
    ...(opts.pkce ? { verifier: pkceVerifier() } : {}),
    ...(opts.redirectUri ? { redirectUri: opts.redirectUri } : {}),
  };
  await app.kv.set(kvKey(state), JSON.stringify(record), STATE_TTL_SECONDS);
  if (ctx.session) (ctx.session as Record<string, unknown>)[SESSION_KEY] = state;
  return { state, record };
}

/**
 * Checks `state` against the caller's session and consumes it. Throws BadRequestError when the
 * state is missing, not this session's, already used, expired, or issued for another provider.
 */
export async function takeState(app: AppContext, ctx: Koa.Context, state: string, provider: string): Promise<StateRecord> {
  const session = sessionOf(ctx);
  const expected = session[SESSION_KEY];
  if (!state || typeof expected !== 'string' || !safeEqual(expected, state)) throw new BadRequestError(BAD_STATE_MESSAGE);
  // The session's state is spent whatever happens next.
  if (ctx.session) delete (ctx.session as Record<string, unknown>)[SESSION_KEY];
  const raw = await app.kv.take(kvKey(state));
  if (!raw) throw new BadRequestError(BAD_STATE_MESSAGE);
  let record: StateRecord;
  try {
    record = JSON.parse(raw) as StateRecord;
  } catch {
    throw new BadRequestError(BAD_STATE_MESSAGE);
  }
  if (record.provider && record.provider !== provider) throw new BadRequestError(BAD_STATE_MESSAGE);
  return record;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

/** RFC 7636 verifier: 43..128 chars of [A-Za-z0-9-._~]; 64 random alphanumerics here. */
export function pkceVerifier(): string {
  return randomString(64);
}

export function pkceChallenge(verifier: string): string {
  return crypto.createHash('sha256').update(verifier).digest('base64url');
}
