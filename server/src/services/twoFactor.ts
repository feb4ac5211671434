import crypto from 'node:crypto';
import type Koa from 'koa';
import type { AppContext } from '../context';
import { BadRequestError, ForbiddenError } from '../lib/errors';
import { randomString } from '../lib/random';
import { nowSec } from '../lib/time';
import {
  acceptStep,
  deleteTwoFactor,
  enableTwoFactor,
  findTwoFactor,
  isTwoFactorEnabled,
  replaceBackupCodes,
  savePendingTwoFactor,
  twoFactorStats,
  unusedBackupCodes,
  useBackupCode,
} from '../repositories/twoFactor';
import { findUserById, ROLE, USER_STATUS, type UserRow } from '../repositories/users';
import { endUserSessions } from './sessions';
import { loginSlotKeys, releaseLoginSlots, takeLoginSlots } from './users';

/** The TOTP and QR code libraries, loaded on first use (≈ 1.4 MB of heap a process without 2FA need not hold). */
const otplib = () => import('otplib');
const qrcode = () => import('qrcode');

/**
 * TOTP two-factor login (RFC 6238 through otplib: SHA-1, 6 digits, 30 s, ±1 step of clock drift).
 * Every accepted code moves the user's `last_step`, in a conditional UPDATE, so a code works once
 * even when it is replayed on another node within its window. Backup codes are stored as scrypt
 * hashes (one salt per enrolment) and used once each.
 */
export const MSG = {
  alreadyOn: '2fa.already_on',
  notSetUp: '2fa.not_set_up',
  notOn: '2fa.not_on',
  wrongCode: '2fa.wrong_code',
  codeEmpty: '2fa.code_empty',
  pendingExpired: '2fa.pending_expired',
  adminRequired: '2fa.admin_required',
  sameOrHigher: '2fa.same_or_higher',
  ownFirst: '2fa.own_first',
} as const;

export const BACKUP_CODE_COUNT = 10;
const PERIOD = 30;
/** Seconds of drift accepted either way: one time step. */
const TOLERANCE = 30;
const PENDING_LOGIN_SECONDS = 300;
const BACKUP_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** `XXXXX-XXXXX`: 50 random bits, no look-alike characters. */
function newBackupCode(): string {
  const raw = randomString(10, BACKUP_ALPHABET);
  return `${raw.slice(0, 5)}-${raw.slice(5)}`;
}

const normaliseBackup = (code: string) => code.toUpperCase().replace(/[\s-]/g, '');

/** scrypt keeps a stolen table from being walked through the 2^50 codes; one hash per try. */
function hashBackup(code: string, salt: string): string {
  return crypto.scryptSync(normaliseBackup(code), salt, 32, { N: 16384, r: 8, p: 1 }).toString('hex');
}

function issuer(app: AppContext): string {
  return (app.options.get('SystemName') || 'AI Gateway').replace(/:/g, ' ');
}

/** GET /api/user/2fa/status */
export async function twoFactorStatus(app: AppContext, user: UserRow) {
  const userId = user.id;
  const row = await findTwoFactor(app.knex, userId);
  const enabled = Boolean(row?.enabled);
  return {
    enabled,
    pending: Boolean(row && !row.enabled),
    backup_codes_remaining: enabled ? await unusedBackupCodes(app.knex, userId) : 0,
    required: requiresTwoFactor(app, user),
  };
}

/** POST /api/user/2fa/setup: a new secret (pending until confirmed), its otpauth URI and QR code. */
export async function setupTwoFactor(app: AppContext, user: UserRow) {
  const existing = await findTwoFactor(app.knex, user.id);
  if (existing?.enabled) throw new BadRequestError(MSG.alreadyOn);
  const { generateSecret, generateURI } = await otplib();
  const secret = generateSecret();
  await savePendingTwoFactor(app.knex, { user_id: user.id, secret, backup_salt: randomString(32), created_at: nowSec() });
  const uri = generateURI({ issuer: issuer(app), label: user.username, secret, period: PERIOD });
  const qr = await (await qrcode()).default.toDataURL(uri, { margin: 1, width: 240 });
  return { secret, qr_code_data: uri, qr_code: qr };
}

/** The time step a TOTP code belongs to, or undefined when it matches none around now. */
async function totpStep(secret: string, code: string, after: number | undefined): Promise<number | undefined> {
  if (!/^\d{6}$/.test(code)) return undefined;
  const { verify } = await otplib();
  try {
    const r = await verify({ secret, token: code, period: PERIOD, epochTolerance: TOLERANCE, ...(after !== undefined ? { afterTimeStep: after } : {}) });
    return r.valid && 'timeStep' in r ? r.timeStep : undefined;
  } catch {
    return undefined;
  }
}

/** POST /api/user/2fa/enable: confirms the pending secret with a code; answers the backup codes (shown once). */
export async function enableTwoFactorWithCode(app: AppContext, user: UserRow, ip: string, rawCode: string): Promise<{ backup_codes: string[] }> {
  const code = rawCode.trim();
  if (!code) throw new BadRequestError(MSG.codeEmpty);
  const row = await findTwoFactor(app.knex, user.id);
  if (!row) throw new BadRequestError(MSG.notSetUp);
  if (row.enabled) throw new BadRequestError(MSG.alreadyOn);
  const slots = await takeLoginSlots(app, ip, user);
  const step = await totpStep(row.secret, code, row.last_step == null ? undefined : Number(row.last_step));
  if (step === undefined) throw new BadRequestError(MSG.wrongCode);
  const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
  const ok = await enableTwoFactor(
    app.knex,
    user.id,
    step,
    codes.map((c) => hashBackup(c, row.backup_salt)),
    nowSec(),
  );
  if (!ok) throw new BadRequestError(MSG.wrongCode);
  await releaseLoginSlots(app, slots);
  return { backup_codes: codes };
}

/**
 * Checks a TOTP or backup code of a user with 2FA on and uses it up. Counts toward the login
 * lockout (a slot taken before the check, given back on success). Answers how it passed.
 */
export async function checkSecondFactor(app: AppContext, user: Pick<UserRow, 'id'>, ip: string, rawCode: string): Promise<'totp' | 'backup'> {
  const code = rawCode.trim();
  if (!code) throw new BadRequestError(MSG.codeEmpty);
  const row = await findTwoFactor(app.knex, user.id);
  if (!row?.enabled) throw new BadRequestError(MSG.notOn);
  const slots = await takeLoginSlots(app, ip, user);
  let how: 'totp' | 'backup' | undefined;
  const step = await totpStep(row.secret, code, row.last_step == null ? undefined : Number(row.last_step));
  if (step !== undefined && (await acceptStep(app.knex, user.id, step))) how = 'totp';
  else if (normaliseBackup(code).length === 10 && (await useBackupCode(app.knex, user.id, hashBackup(code, row.backup_salt), nowSec()))) how = 'backup';
  if (!how) throw new BadRequestError(MSG.wrongCode);
  await releaseLoginSlots(app, slots);
  return how;
}

/** POST /api/user/2fa/disable (the caller proved itself: a code, or a fresh re-verification). */
export async function disableTwoFactor(app: AppContext, userId: number): Promise<void> {
  if (!(await deleteTwoFactor(app.knex, userId))) throw new BadRequestError(MSG.notOn);
}

/** POST /api/user/2fa/backup_codes: a new set of ten; the old ones stop working. */
export async function regenerateBackupCodes(app: AppContext, userId: number): Promise<{ backup_codes: string[] }> {
  const row = await findTwoFactor(app.knex, userId);
  if (!row?.enabled) throw new BadRequestError(MSG.notOn);
  const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
  await replaceBackupCodes(
    app.knex,
    userId,
    codes.map((c) => hashBackup(c, row.backup_salt)),
  );
  return { backup_codes: codes };
}

/** DELETE /api/user/:id/2fa: an admin turns off 2FA of a user below them (lost phone); their sessions end. */
export async function adminResetTwoFactor(app: AppContext, actor: UserRow, targetId: number): Promise<void> {
  const target = await findUserById(app.knex, targetId);
  if (!target) throw new BadRequestError('user.missing');
  if (Number(target.role) >= Number(actor.role)) throw new BadRequestError(MSG.sameOrHigher);
  if (!(await deleteTwoFactor(app.knex, target.id))) throw new BadRequestError(MSG.notOn);
  await endUserSessions(app, target.id);
}

export async function adminTwoFactorStats(app: AppContext) {
  const s = await twoFactorStats(app.knex);
  return { ...s, enabled_rate: s.total_users ? Math.round((s.enabled_users / s.total_users) * 10000) / 100 : 0 };
}

/* ------------------------------------------------------------------ login, second step */

interface PendingCookie {
  pending_2fa?: unknown;
  [key: string]: unknown;
}
interface PendingRecord {
  uid: number;
  ip: string;
}
function parsePending(raw: string | null): PendingRecord | undefined {
  if (!raw) return undefined;
  try {
    const r = JSON.parse(raw) as Partial<PendingRecord>;
    return Number(r.uid) > 0 && typeof r.ip === 'string' ? { uid: Number(r.uid), ip: r.ip } : undefined;
  } catch {
    return undefined;
  }
}
const pendingKey = (token: string) => `login2fa:${crypto.createHash('sha256').update(token).digest('hex')}`;

/**
 * After a right password on an account with 2FA: no session yet; a one-time pending record in the
 * KV (every node sees it, 5 minutes) named by a random token in this browser's signed cookie.
 */
export async function startPendingLogin(app: AppContext, ctx: Koa.Context, user: UserRow, ip: string): Promise<void> {
  if (!ctx.session) throw new BadRequestError('common.session_unavailable');
  const token = randomString(43);
  // The password step's IP slot stays taken until the code passes; its IP is kept to give it back.
  const rec: PendingRecord = { uid: user.id, ip };
  await app.kv.set(pendingKey(token), JSON.stringify(rec), PENDING_LOGIN_SECONDS);
  (ctx.session as PendingCookie).pending_2fa = token;
}

/** POST /api/user/login/2fa: the pending login of this browser, finished with a TOTP or backup code. */
export async function finishPendingLogin(app: AppContext, ctx: Koa.Context, ip: string, code: string): Promise<UserRow> {
  const token = (ctx.session as PendingCookie | null)?.pending_2fa;
  if (typeof token !== 'string' || !token) throw new BadRequestError(MSG.pendingExpired);
  const rec = parsePending(await app.kv.get(pendingKey(token)));
  const user = rec ? await findUserById(app.knex, rec.uid) : undefined;
  if (!rec || !user) throw new BadRequestError(MSG.pendingExpired);
  if (Number(user.status) !== USER_STATUS.enabled) throw new BadRequestError('user.banned');
  await checkSecondFactor(app, user, ip, code);
  // One use: of two concurrent right answers only the one that takes the record logs in.
  if (!(await app.kv.take(pendingKey(token)))) throw new BadRequestError(MSG.pendingExpired);
  delete (ctx.session as PendingCookie).pending_2fa;
  // The owner got in: the password step's IP slot is given back too (the code's was, above), so
  // successful 2FA logins do not pile up toward the per-IP lockout.
  await releaseLoginSlots(app, loginSlotKeys(rec.ip, user));
  return user;
}

/* ------------------------------------------------------------------ admins must use 2FA */

/** Whether the root option makes 2FA compulsory for this user (admins and root). */
export function requiresTwoFactor(app: AppContext, user: Pick<UserRow, 'role'>): boolean {
  return app.options.bool('AdminTwoFactorRequired') && Number(user.role) >= ROLE.admin;
}

/**
 * With `AdminTwoFactorRequired`, an admin without 2FA may still use the user-level API (personal
 * settings, to enrol) but no admin route: 403 with what to do.
 */
export async function assertAdminTwoFactor(app: AppContext, user: UserRow): Promise<void> {
  if (!requiresTwoFactor(app, user)) return;
  if (!(await isTwoFactorEnabled(app.knex, user.id))) throw new ForbiddenError(MSG.adminRequired);
}

/**
 * Root turning `AdminTwoFactorRequired` on must have 2FA on already: otherwise the very call would
 * shut the caller out of every admin route, this settings page included.
 */
export async function assertCanRequireAdminTwoFactor(app: AppContext, actor: UserRow, key: string, value: string): Promise<void> {
  if (key !== 'AdminTwoFactorRequired' || value !== 'true') return;
  if (!(await isTwoFactorEnabled(app.knex, actor.id))) throw new BadRequestError(MSG.ownFirst);
}
