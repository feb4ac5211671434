import crypto from 'node:crypto';
import { msg } from '../i18n';
import type Koa from 'koa';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { AppContext } from '../context';
import { BadRequestError } from '../lib/errors';
import { randomString } from '../lib/random';
import { nowSec } from '../lib/time';
import {
  deletePasskey,
  deletePasskeysOf,
  findPasskeyByCredential,
  insertPasskey,
  passkeyCount,
  passkeysOf,
  renamePasskey,
  touchPasskey,
  type PasskeyRow,
} from '../repositories/passkeys';
import { findUserById, USER_STATUS, type UserRow } from '../repositories/users';

/**
 * The WebAuthn library, loaded on the first passkey ceremony: with its ASN.1, X.509 and CBOR
 * dependencies it holds ≈ 4 MB of heap for good, which a gateway whose users never register a
 * passkey (and every relay-only process) need not carry.
 */
const webauthn = () => import('@simplewebauthn/server');

/**
 * Passkeys (WebAuthn, @simplewebauthn/server): several per user, each named; discoverable
 * credentials, so the login page asks for no username. The relying party is `ServerAddress`: its
 * host is the RP id, its origin the only accepted origin (without it passkeys are off: the
 * request's Host is chosen by the caller and cannot name the RP). Challenges live in the KV (every
 * node sees them), are bound to the session (or the login attempt's cookie nonce) and the purpose,
 * expire after 5 minutes and are taken once.
 */
export const MSG = {
  disabled: 'passkey.disabled',
  noServerAddress: 'passkey.no_server_address',
  challenge: 'passkey.challenge',
  failed: 'passkey.failed',
  unknown: 'passkey.unknown',
  exists: 'passkey.exists',
  tooMany: 'passkey.too_many',
  none: 'passkey.none',
  name: 'passkey.name',
  missing: 'passkey.missing',
  banned: 'user.banned',
} as const;

const CHALLENGE_SECONDS = 300;
const MAX_PER_USER = 20;
type Purpose = 'register' | 'login' | 'verify';

interface RelyingParty {
  rpID: string;
  origin: string;
  rpName: string;
}

/** Whether passkeys can be used at all (switch on and ServerAddress set). */
export function passkeysUsable(app: AppContext): boolean {
  try {
    relyingParty(app);
    return true;
  } catch {
    return false;
  }
}

export function relyingParty(app: AppContext): RelyingParty {
  if (!app.options.bool('PasskeyLoginEnabled')) throw new BadRequestError(MSG.disabled);
  const raw = app.options.get('ServerAddress').trim();
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new BadRequestError(MSG.noServerAddress);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new BadRequestError(MSG.noServerAddress);
  return { rpID: u.hostname, origin: u.origin, rpName: app.options.get('SystemName') || 'AI Gateway' };
}

/* ------------------------------------------------------------------ challenges */

interface ChallengeRecord {
  purpose: Purpose;
  bind: string;
  uid?: number;
  userHandle?: string;
}

const challengeKey = (challenge: string) => `webauthn:challenge:${challenge}`;
const sha = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

async function saveChallenge(app: AppContext, challenge: string, rec: ChallengeRecord): Promise<void> {
  await app.kv.set(challengeKey(challenge), JSON.stringify(rec), CHALLENGE_SECONDS);
}

/** The challenge the browser signed (from clientDataJSON), or '' when the response is malformed. */
function signedChallenge(response: { response?: { clientDataJSON?: unknown } }): string {
  try {
    const json = Buffer.from(String(response.response?.clientDataJSON ?? ''), 'base64url').toString('utf8');
    const c = (JSON.parse(json) as { challenge?: unknown }).challenge;
    return typeof c === 'string' && c.length <= 128 ? c : '';
  } catch {
    return '';
  }
}

/** Takes (once) the challenge a response answers, checking its purpose and binding. */
async function takeChallenge(
  app: AppContext,
  response: { response?: { clientDataJSON?: unknown } },
  purpose: Purpose,
  bind: string,
): Promise<{ challenge: string; rec: ChallengeRecord }> {
  const challenge = signedChallenge(response);
  const raw = challenge ? await app.kv.take(challengeKey(challenge)) : null;
  if (!raw) throw new BadRequestError(MSG.challenge);
  const rec = JSON.parse(raw) as ChallengeRecord;
  if (rec.purpose !== purpose || !bind || rec.bind !== bind) throw new BadRequestError(MSG.challenge);
  return { challenge, rec };
}

/* ------------------------------------------------------------------ binding to the browser */

interface CookieSession {
  sid?: unknown;
  webauthn_login?: unknown;
  [key: string]: unknown;
}

/** A logged-in flow is bound to the user and this session (or access token). */
function userBind(ctx: Koa.Context, user: Pick<UserRow, 'id'>): string {
  const authz = ctx.get('Authorization').trim();
  const sid = (ctx.session as CookieSession | null)?.sid;
  const cred = authz ? `tok:${sha(authz)}` : typeof sid === 'string' && sid ? `sid:${sha(sid)}` : '';
  return cred ? `${user.id}:${cred}` : '';
}

/* ------------------------------------------------------------------ views */

export function passkeyView(row: PasskeyRow) {
  return {
    id: Number(row.id),
    name: row.name,
    created_at: Number(row.created_at),
    last_used_at: row.last_used_at == null ? null : Number(row.last_used_at),
    backed_up: Boolean(row.backed_up),
    device_type: row.device_type,
  };
}

/** GET /api/user/passkey */
export async function listPasskeys(app: AppContext, userId: number) {
  const rows = await passkeysOf(app.knex, userId);
  return { enabled: rows.length > 0, available: passkeysUsable(app), items: rows.map(passkeyView) };
}

const transportsOf = (row: PasskeyRow) => (row.transports ? row.transports.split(',').filter(Boolean) : []) as never[];

/* ------------------------------------------------------------------ registration */

/** POST /api/user/passkey/register/begin (after a fresh re-verification, checked by the route). */
export async function registrationOptions(app: AppContext, ctx: Koa.Context, user: UserRow) {
  const rp = relyingParty(app);
  const bind = userBind(ctx, user);
  if (!bind) throw new BadRequestError(MSG.challenge);
  const existing = await passkeysOf(app.knex, user.id);
  if (existing.length >= MAX_PER_USER) throw new BadRequestError(MSG.tooMany);
  // One user handle per user, so an authenticator keeps one credential per account.
  const handle = existing[0]?.webauthn_user_id ?? Buffer.from(crypto.randomBytes(32)).toString('base64url');
  const { generateRegistrationOptions } = await webauthn();
  const options = await generateRegistrationOptions({
    rpName: rp.rpName,
    rpID: rp.rpID,
    userName: user.username,
    userDisplayName: user.display_name || user.username,
    userID: new Uint8Array(Buffer.from(handle, 'base64url')),
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: transportsOf(p) })),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    timeout: CHALLENGE_SECONDS * 1000,
  });
  await saveChallenge(app, options.challenge, { purpose: 'register', bind, uid: user.id, userHandle: handle });
  return options;
}

export function checkPasskeyName(name: string): string {
  const n = name.trim();
  if (!n || [...n].length > 64) throw new BadRequestError(MSG.name);
  return n;
}

/** POST /api/user/passkey/register/finish */
export async function finishRegistration(app: AppContext, ctx: Koa.Context, user: UserRow, input: { name: string; credential: RegistrationResponseJSON }) {
  const name = checkPasskeyName(input.name);
  const rp = relyingParty(app);
  const { challenge, rec } = await takeChallenge(app, input.credential, 'register', userBind(ctx, user));
  // Loaded outside the try: a library that fails to load is an error, not a failed verification.
  const { verifyRegistrationResponse } = await webauthn();
  let info;
  try {
    const r = await verifyRegistrationResponse({
      response: input.credential,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpID,
      requireUserVerification: true,
    });
    if (!r.verified) throw new Error('not verified');
    info = r.registrationInfo;
  } catch (err) {
    throw new BadRequestError(msg('passkey.failed_reason', { reason: (err as Error).message }));
  }
  if (await findPasskeyByCredential(app.knex, info.credential.id)) throw new BadRequestError(MSG.exists);
  if ((await passkeyCount(app.knex, user.id)) >= MAX_PER_USER) throw new BadRequestError(MSG.tooMany);
  try {
    const id = await insertPasskey(app.knex, {
      user_id: user.id,
      credential_id: info.credential.id,
      public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
      counter: info.credential.counter,
      transports: (info.credential.transports ?? []).join(','),
      webauthn_user_id: rec.userHandle ?? '',
      name,
      device_type: info.credentialDeviceType,
      backed_up: info.credentialBackedUp,
      created_at: nowSec(),
      last_used_at: null,
    });
    return { id, name };
  } catch (err) {
    if (/unique|duplicate|constraint/i.test(String((err as Error)?.message))) throw new BadRequestError(MSG.exists);
    throw err;
  }
}

/* ------------------------------------------------------------------ assertions */

/** Verifies an assertion against its stored credential and moves the counter on. */
async function checkAssertion(app: AppContext, rp: RelyingParty, challenge: string, response: AuthenticationResponseJSON, row: PasskeyRow): Promise<void> {
  const { verifyAuthenticationResponse } = await webauthn();
  let newCounter: number;
  try {
    const r = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpID,
      credential: {
        id: row.credential_id,
        publicKey: new Uint8Array(Buffer.from(row.public_key, 'base64url')),
        counter: Number(row.counter),
        transports: transportsOf(row),
      },
      requireUserVerification: true,
    });
    if (!r.verified) throw new Error('not verified');
    newCounter = r.authenticationInfo.newCounter;
  } catch (err) {
    throw new BadRequestError(msg('passkey.failed_reason', { reason: (err as Error).message }));
  }
  // Counter-less authenticators (always 0) stay at 0; others must move forward, once.
  if (!(await touchPasskey(app.knex, Number(row.id), Number(row.counter), newCounter, nowSec()))) throw new BadRequestError(MSG.failed);
}

/** POST /api/user/passkey/login/begin: a discoverable-credential request, bound to a nonce in this browser's cookie. */
export async function loginOptions(app: AppContext, ctx: Koa.Context) {
  const rp = relyingParty(app);
  if (!ctx.session) throw new BadRequestError('common.session_unavailable');
  const nonce = randomString(32);
  (ctx.session as CookieSession).webauthn_login = nonce;
  const { generateAuthenticationOptions } = await webauthn();
  const options = await generateAuthenticationOptions({ rpID: rp.rpID, userVerification: 'required', timeout: CHALLENGE_SECONDS * 1000 });
  await saveChallenge(app, options.challenge, { purpose: 'login', bind: `login:${nonce}` });
  return options;
}

/** POST /api/user/passkey/login/finish: the user whose passkey signed the challenge. */
export async function finishLogin(app: AppContext, ctx: Koa.Context, credential: AuthenticationResponseJSON): Promise<UserRow> {
  const rp = relyingParty(app);
  const nonce = (ctx.session as CookieSession | null)?.webauthn_login;
  const { challenge } = await takeChallenge(app, credential, 'login', typeof nonce === 'string' ? `login:${nonce}` : '');
  if (ctx.session) delete (ctx.session as CookieSession).webauthn_login;
  const row = typeof credential.id === 'string' ? await findPasskeyByCredential(app.knex, credential.id) : undefined;
  if (!row) throw new BadRequestError(MSG.unknown);
  // A discoverable credential names its user: it must be the one the credential was made for.
  const handle = credential.response?.userHandle;
  if (handle && handle !== row.webauthn_user_id) throw new BadRequestError(MSG.failed);
  const user = await findUserById(app.knex, Number(row.user_id));
  if (!user) throw new BadRequestError(MSG.unknown);
  if (Number(user.status) !== USER_STATUS.enabled) throw new BadRequestError(MSG.banned);
  await checkAssertion(app, rp, challenge, credential, row);
  return user;
}

/** POST /api/user/passkey/verify/begin: re-verification with one of the caller's passkeys. */
export async function verifyOptions(app: AppContext, ctx: Koa.Context, user: UserRow) {
  const rp = relyingParty(app);
  const bind = userBind(ctx, user);
  if (!bind) throw new BadRequestError(MSG.challenge);
  const rows = await passkeysOf(app.knex, user.id);
  if (!rows.length) throw new BadRequestError(MSG.none);
  const { generateAuthenticationOptions } = await webauthn();
  const options = await generateAuthenticationOptions({
    rpID: rp.rpID,
    userVerification: 'required',
    allowCredentials: rows.map((p) => ({ id: p.credential_id, transports: transportsOf(p) })),
    timeout: CHALLENGE_SECONDS * 1000,
  });
  await saveChallenge(app, options.challenge, { purpose: 'verify', bind, uid: user.id });
  return options;
}

/** POST /api/user/passkey/verify/finish: checks the assertion (the route then records the re-verification). */
export async function finishVerify(app: AppContext, ctx: Koa.Context, user: UserRow, credential: AuthenticationResponseJSON): Promise<void> {
  const rp = relyingParty(app);
  const { challenge } = await takeChallenge(app, credential, 'verify', userBind(ctx, user));
  const row = typeof credential.id === 'string' ? await findPasskeyByCredential(app.knex, credential.id) : undefined;
  if (!row || Number(row.user_id) !== Number(user.id)) throw new BadRequestError(MSG.unknown);
  await checkAssertion(app, rp, challenge, credential, row);
}

/* ------------------------------------------------------------------ management */

export async function renameOwnPasskey(app: AppContext, user: UserRow, id: number, name: string): Promise<void> {
  if (!(await renamePasskey(app.knex, user.id, id, checkPasskeyName(name)))) throw new BadRequestError(MSG.missing);
}

export async function deleteOwnPasskey(app: AppContext, user: UserRow, id: number): Promise<void> {
  if (!(await deletePasskey(app.knex, user.id, id))) throw new BadRequestError(MSG.missing);
}

/** DELETE /api/user/:id/reset_passkey: an admin removes every passkey of a user below them. */
export async function adminResetPasskeys(app: AppContext, actor: UserRow, targetId: number): Promise<number> {
  const target = await findUserById(app.knex, targetId);
  if (!target) throw new BadRequestError('user.missing');
  if (Number(target.role) >= Number(actor.role)) throw new BadRequestError('passkey.same_or_higher');
  const n = await deletePasskeysOf(app.knex, target.id);
  if (!n) throw new BadRequestError(MSG.none);
  return n;
}
