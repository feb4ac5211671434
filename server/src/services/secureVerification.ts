import crypto from 'node:crypto';
import type Koa from 'koa';
import type { AppContext } from '../context';
import { BadRequestError } from '../lib/errors';
import { verifyPassword } from '../lib/password';
import { nowSec } from '../lib/time';
import { passkeyCount } from '../repositories/passkeys';
import { isTwoFactorEnabled } from '../repositories/twoFactor';
import type { UserRow } from '../repositories/users';
import { passkeysUsable } from './passkeys';
import { sessionId } from './sessions';
import { checkSecondFactor } from './twoFactor';
import { releaseLoginSlots, takeLoginSlots } from './users';

/**
 * Re-verification ("secure verification") before sensitive actions: showing a channel's key, a new
 * system access token, deleting the account, turning 2FA off, changing passkeys or 2FA. The caller
 * proves itself again with the strongest factor the account has — a TOTP/backup code or a passkey
 * when it has either, else its password — and the proof holds for `SecureVerificationWindowSeconds`
 * for this credential only (this browser session, or this access token): a KV record every node
 * sees, named by a hash of the credential. An account with no factor at all (a third-party login
 * without password, 2FA or passkey) has nothing to prove with, so its session alone passes.
 */
export type VerifyMethod = '2fa' | 'passkey' | 'password';

export const MSG = {
  required: 'verify.required',
  methodUnavailable: 'verify.method_unavailable',
  wrongPassword: 'verify.wrong_password',
  noCredential: 'verify.no_credential',
} as const;

export class VerificationRequiredError extends BadRequestError {
  constructor(methods: VerifyMethod[]) {
    super(MSG.required, 'verification_required');
    this.data = { verification_required: true, methods };
  }
}

const sha = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

/** Names the credential of this request (as `resolveUser` chose it: the access token wins). */
export function credentialKey(ctx: Koa.Context): string {
  const authz = ctx
    .get('Authorization')
    .replace(/^Bearer\s+/i, '')
    .trim();
  if (authz) return `tok:${sha(authz)}`;
  const sid = sessionId(ctx);
  return sid ? `sid:${sha(sid)}` : '';
}

const recordKey = (cred: string) => `secverify:${cred}`;
export const windowSeconds = (app: AppContext) => Math.max(30, app.options.num('SecureVerificationWindowSeconds', 300));

/** The methods this user can re-verify with (empty: nothing to prove with). */
export async function verificationMethods(app: AppContext, user: UserRow): Promise<VerifyMethod[]> {
  const [twoFa, passkeys] = await Promise.all([isTwoFactorEnabled(app.knex, user.id), passkeyCount(app.knex, user.id)]);
  const strong: VerifyMethod[] = [];
  if (twoFa) strong.push('2fa');
  if (passkeys > 0 && passkeysUsable(app)) strong.push('passkey');
  if (strong.length) return strong;
  return user.password ? ['password'] : [];
}

/** Records a successful re-verification of this credential for the window. */
export async function markVerified(app: AppContext, ctx: Koa.Context, user: Pick<UserRow, 'id'>, method: VerifyMethod): Promise<{ expires_at: number }> {
  const cred = credentialKey(ctx);
  if (!cred) throw new BadRequestError(MSG.noCredential);
  const at = nowSec();
  const ttl = windowSeconds(app);
  await app.kv.set(recordKey(cred), JSON.stringify({ uid: user.id, at, method }), ttl);
  return { expires_at: at + ttl };
}

/** When this credential's re-verification ends (0 = not verified now). The window is read now, so shortening it applies at once. */
export async function verifiedUntil(app: AppContext, ctx: Koa.Context, user: Pick<UserRow, 'id'>): Promise<number> {
  const cred = credentialKey(ctx);
  if (!cred) return 0;
  const raw = await app.kv.get(recordKey(cred));
  if (!raw) return 0;
  try {
    const rec = JSON.parse(raw) as { uid?: number; at?: number };
    if (Number(rec.uid) !== Number(user.id)) return 0;
    const until = Number(rec.at) + windowSeconds(app);
    return until > nowSec() ? until : 0;
  } catch {
    return 0;
  }
}

/** Throws `VerificationRequiredError` (with the methods) unless this credential re-verified within the window. */
export async function requireFreshVerification(app: AppContext, ctx: Koa.Context, user: UserRow): Promise<void> {
  if (await verifiedUntil(app, ctx, user)) return;
  const methods = await verificationMethods(app, user);
  if (!methods.length) return;
  throw new VerificationRequiredError(methods);
}

/** POST /api/verify with a code or a password (a passkey goes through /api/user/passkey/verify/*). */
export async function verifyWithSecret(
  app: AppContext,
  ctx: Koa.Context,
  user: UserRow,
  ip: string,
  input: { method: VerifyMethod; code?: string; password?: string },
): Promise<{ method: VerifyMethod; expires_at: number }> {
  const methods = await verificationMethods(app, user);
  if (!methods.includes(input.method) || input.method === 'passkey') throw new BadRequestError(MSG.methodUnavailable);
  if (!credentialKey(ctx)) throw new BadRequestError(MSG.noCredential);
  if (input.method === '2fa') {
    await checkSecondFactor(app, user, ip, input.code ?? '');
  } else {
    if (!input.password) throw new BadRequestError('verify.password_required');
    // Password guesses here count toward the same lockout as the login's.
    const slots = await takeLoginSlots(app, ip, user);
    if (!(await verifyPassword(input.password, user.password))) throw new BadRequestError(MSG.wrongPassword);
    await releaseLoginSlots(app, slots);
  }
  const { expires_at } = await markVerified(app, ctx, user, input.method);
  return { method: input.method, expires_at };
}

/** GET /api/verify: whether this credential is verified now, until when, and how it can verify. */
export async function verificationStatus(app: AppContext, ctx: Koa.Context, user: UserRow) {
  const until = await verifiedUntil(app, ctx, user);
  return { verified: until > 0, expires_at: until, methods: await verificationMethods(app, user), window_seconds: windowSeconds(app) };
}
