import type { AppContext } from '../context';
import { BadRequestError, NotFoundError, RateLimitError } from '../lib/errors';
import { hashPassword, verifyPassword } from '../lib/password';
import { randomString } from '../lib/random';
import { nowSec } from '../lib/time';
import { hitLimit } from './rateLimit';
import { emptyMap, hasOwn, own } from '../lib/own';
import { insertLog, LOG_TYPE } from '../repositories/logs';
import {
  clientUser,
  findUserByEmail,
  findUserByIdWithDeleted,
  findUserForLogin,
  isEmailTaken,
  parseUserSetting,
  ROLE,
  USER_STATUS,
  type UserRow,
  type UserSetting,
} from '../repositories/users';
import { createAccount, formatQuota } from './accounts';
import { invalidateUser } from './invalidate';
import { endUserSessions } from './sessions';
import { assertSetupDone } from './setup';
import { sendMail } from './mail';
import { msg, serverLang, t, type Lang } from '../i18n';
import { consumeCode, issueCode, verifyEmailCode } from './verification';

/* ------------------------------------------------------------------ messages */
export const MSG = {
  loginEmpty: 'user.login_empty',
  loginWrong: 'user.login_wrong',
  loginDisabled: 'user.password_login_disabled',
  banned: 'user.banned',
  passwordShort: 'user.password_short',
  passwordLong: 'user.password_long',
  passwordMismatch: 'user.password_mismatch',
  registerClosed: 'user.register_closed',
  passwordRegisterClosed: 'user.password_register_closed',
  emailCodeRequired: 'user.email_code_required',
  emailCodeWrong: 'user.email_code_wrong',
  emailTaken: 'user.email_taken',
  emailInvalid: 'user.email_invalid',
  emailDomain: 'user.email_domain',
  emailAlias: 'user.email_alias',
  emailUnknown: 'user.email_unknown',
  resetInvalid: 'user.reset_invalid',
  usernameEmpty: 'user.username_empty',
  usernameLong: 'user.username_long',
  originalPassword: 'user.original_password_wrong',
  sameOrHigher: 'user.same_or_higher',
  createHigher: 'user.create_higher',
  userMissing: 'user.missing',
  rootDelete: 'user.root_delete',
  serverAddressMissing: 'user.server_address_missing',
} as const;

export const EMAIL_RE = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;
export const RESEND_SECONDS = 30;
/** Verification / reset mails per IP per window. */
export const MAIL_IP_LIMIT = 20;
export const MAIL_IP_WINDOW_SECONDS = 10 * 60;
export const RESET_TTL_SECONDS = 15 * 60;

/* ------------------------------------------------------------------ checks */

export function checkPassword(password: string): void {
  if (password.length < 8) throw new BadRequestError(MSG.passwordShort);
  if (password.length > 20) throw new BadRequestError(MSG.passwordLong);
}

export function checkUsername(username: string): string {
  const name = username.trim();
  if (!name) throw new BadRequestError(MSG.usernameEmpty);
  if ([...name].length > 12) throw new BadRequestError(MSG.usernameLong);
  // eslint-disable-next-line no-control-regex -- control characters are exactly what a username may not hold
  if (/[\s\u0000-\u001f]/.test(name)) throw new BadRequestError('user.username_whitespace');
  return name;
}

/** Format, whitelist and alias rules for an email a user wants to use (registration, codes, binding). */
export function checkEmailAllowed(app: AppContext, email: string): string {
  const e = email.trim();
  if (!e || e.length > 128 || !EMAIL_RE.test(e)) throw new BadRequestError(MSG.emailInvalid);
  const at = e.lastIndexOf('@');
  const local = e.slice(0, at);
  const domain = e.slice(at + 1).toLowerCase();
  if (app.options.bool('EmailDomainRestrictionEnabled')) {
    const allowed = app.options
      .get('EmailDomainWhitelist')
      .split(',')
      .map((d) => d.trim().toLowerCase())
      .filter(Boolean);
    if (!allowed.includes(domain)) throw new BadRequestError(MSG.emailDomain);
  }
  if (app.options.bool('EmailAliasRestrictionEnabled') && (local.includes('+') || local.includes('='))) {
    throw new BadRequestError(MSG.emailAlias);
  }
  return e;
}

/* ------------------------------------------------------------------ login */

/**
 * The login lockout's counters for one attempt (a password, a second-factor code or a
 * re-verification): per account and per IP, taken atomically BEFORE the secret is checked (each
 * attempt takes a slot, a success gives it back), so N concurrent guesses take N slots and at most
 * `limit` of them ever reach the check in a window. The account key is the user id (username and
 * email hit the same counter); unknown names get one per name.
 */
export interface LoginSlots {
  accountKey: string;
  ipKey: string;
}

/** The counters an attempt from `ip` on `account` takes (without taking them). */
export function loginSlotKeys(ip: string, account: { id: number } | string): LoginSlots {
  return {
    accountKey: `rl:loginfail:user:${typeof account === 'string' ? account.trim().toLowerCase() : `#${account.id}`}`,
    ipKey: `rl:loginfail:ip:${ip}`,
  };
}

export async function takeLoginSlots(app: AppContext, ip: string, account: { id: number } | string): Promise<LoginSlots> {
  const { perAccount, perIp, windowSeconds } = app.config.loginLimit;
  const { accountKey, ipKey } = loginSlotKeys(ip, account);
  const [byIp, byAccount] = await Promise.all([perIp > 0 ? app.kv.incr(ipKey, windowSeconds) : 0, perAccount > 0 ? app.kv.incr(accountKey, windowSeconds) : 0]);
  if (byIp > perIp || byAccount > perAccount) {
    const key = byIp > perIp ? ipKey : accountKey;
    const ttl = await app.kv.ttl(key);
    throw new RateLimitError('user.login_too_many', ttl > 0 ? ttl : windowSeconds);
  }
  return { accountKey, ipKey };
}

/** The owner got in: the account's count starts over, the IP's slot is given back. */
export async function releaseLoginSlots(app: AppContext, slots: LoginSlots): Promise<void> {
  const { perAccount, perIp } = app.config.loginLimit;
  await Promise.all([perAccount > 0 ? app.kv.del(slots.accountKey) : undefined, perIp > 0 ? app.kv.decr(slots.ipKey) : undefined]);
}

/**
 * Checks a password login. With `keepCount` (the account has a second factor) a right password
 * leaves the counters as they are: they are released only when the second step succeeds, so
 * wrong codes after a right password still count toward the same lockout.
 */
export async function passwordLogin(
  app: AppContext,
  ip: string,
  username: string,
  password: string,
  keepCount?: (user: UserRow) => Promise<boolean>,
): Promise<UserRow> {
  if (!app.options.bool('PasswordLoginEnabled')) throw new BadRequestError(MSG.loginDisabled);
  if (!username.trim() || !password) throw new BadRequestError(MSG.loginEmpty);
  const user = await findUserForLogin(app.knex, username.trim());
  const slots = await takeLoginSlots(app, ip, user ?? username);
  // Unknown names cost a bcrypt comparison too, so timing does not reveal which accounts exist.
  const dummy = app.memo('users:dummyHash', () => hashPassword(randomString(24)));
  const ok = user?.password ? await verifyPassword(password, user.password) : (await verifyPassword(password, await dummy), false);
  if (!user || !ok) throw new BadRequestError(MSG.loginWrong);
  if (!(keepCount && (await keepCount(user)))) await releaseLoginSlots(app, slots);
  if (Number(user.status) !== USER_STATUS.enabled) throw new BadRequestError(MSG.banned);
  return user;
}

/* ------------------------------------------------------------------ registration */

export interface RegisterInput {
  username: string;
  password: string;
  password2?: string;
  email?: string;
  verification_code?: string;
  aff_code?: string;
}

export async function register(app: AppContext, input: RegisterInput): Promise<UserRow> {
  const o = app.options;
  await assertSetupDone(app);
  if (!o.bool('RegisterEnabled')) throw new BadRequestError(MSG.registerClosed);
  if (!o.bool('PasswordRegisterEnabled')) throw new BadRequestError(MSG.passwordRegisterClosed);
  if (!input.username.trim() || !input.password) throw new BadRequestError(MSG.usernameEmpty);
  const username = checkUsername(input.username);
  checkPassword(input.password);
  if (input.password2 !== undefined && input.password2 !== input.password) throw new BadRequestError(MSG.passwordMismatch);
  let email: string | undefined;
  if (o.bool('EmailVerificationEnabled')) {
    if (!input.email?.trim() || !input.verification_code?.trim()) throw new BadRequestError(MSG.emailCodeRequired);
    email = checkEmailAllowed(app, input.email);
    if (await isEmailTaken(app.knex, email)) throw new BadRequestError(MSG.emailTaken);
  }
  if (await app.knex('users').where({ username }).first('id')) throw new BadRequestError('user.username_taken');
  // The code is consumed only once everything else is known to be fine.
  if (email && !(await verifyEmailCode(app, email, input.verification_code!.trim()))) throw new BadRequestError(MSG.emailCodeWrong);
  try {
    return await createAccount(app, { username, password: input.password, email, affCode: input.aff_code?.trim() || undefined });
  } catch (err) {
    if (err instanceof BadRequestError) throw err;
    if (/unique|duplicate|constraint/i.test(String((err as Error)?.message))) throw new BadRequestError('user.username_taken');
    throw err;
  }
}

/* ------------------------------------------------------------------ mails */

async function mailLimits(app: AppContext, ip: string, purpose: string, email: string): Promise<string> {
  await hitLimit(app, `mail:${ip}`, MAIL_IP_LIMIT, MAIL_IP_WINDOW_SECONDS);
  const lock = `resend:${purpose}:${email.toLowerCase()}`;
  if (!(await app.kv.setNX(lock, '1', RESEND_SECONDS))) {
    const ttl = await app.kv.ttl(lock);
    throw new RateLimitError(msg('user.mail_too_frequent', { seconds: ttl > 0 ? ttl : RESEND_SECONDS }), ttl > 0 ? ttl : RESEND_SECONDS);
  }
  return lock;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** GET /api/verification: mails a 6-digit code for an email nobody uses yet. */
export async function sendVerificationCode(app: AppContext, ip: string, rawEmail: string, lang: Lang = serverLang(app)): Promise<void> {
  const email = checkEmailAllowed(app, rawEmail);
  if (await isEmailTaken(app.knex, email)) throw new BadRequestError(MSG.emailTaken);
  const lock = await mailLimits(app, ip, 'email', email);
  const code = await issueCode(app, 'email', email);
  const name = escapeHtml(app.options.get('SystemName') || 'AI Gateway');
  const html = t(lang, 'mail.verification_html', { name, code });
  try {
    await sendMail(app, email, t(lang, 'mail.verification_subject', { name: app.options.get('SystemName') || 'AI Gateway' }), html);
  } catch (err) {
    await app.kv.del(lock);
    await app.kv.del(`code:email:${email.toLowerCase()}`);
    throw err;
  }
}

/**
 * Base URL for links in mails: ServerAddress only. Never the request's Host/Origin: whoever asks
 * for the mail chooses those, and a reset link pointing at their host hands them the token.
 */
export function mailLinkBase(app: AppContext): string {
  const base = app.options.get('ServerAddress').trim().replace(/\/+$/, '');
  if (!/^https?:\/\/[^/\s]+/i.test(base)) throw new BadRequestError(MSG.serverAddressMissing);
  return base;
}

/** GET /api/reset_password: mails a one-time reset link to a registered email. */
export async function sendPasswordReset(app: AppContext, ip: string, rawEmail: string, lang: Lang = serverLang(app)): Promise<void> {
  const base = mailLinkBase(app);
  const email = rawEmail.trim();
  if (!email || !EMAIL_RE.test(email)) throw new BadRequestError(MSG.emailInvalid);
  const user = await findUserByEmail(app.knex, email);
  if (!user) throw new BadRequestError(MSG.emailUnknown);
  const lock = await mailLimits(app, ip, 'reset', email);
  const token = await issueCode(app, 'reset', email, randomString(32), RESET_TTL_SECONDS);
  const link = `${base}/user/reset?email=${encodeURIComponent(email)}&token=${encodeURIComponent(token)}`;
  const name = app.options.get('SystemName') || 'AI Gateway';
  const html = t(lang, 'mail.reset_html', { name: escapeHtml(name), link: escapeHtml(link), minutes: RESET_TTL_SECONDS / 60 });
  try {
    await sendMail(app, email, t(lang, 'mail.reset_subject', { name }), html);
  } catch (err) {
    await app.kv.del(lock);
    await app.kv.del(`code:reset:${email.toLowerCase()}`);
    throw err;
  }
}

/** POST /api/user/reset: consumes the token, sets and returns a new random password. */
export async function resetPassword(app: AppContext, rawEmail: string, token: string): Promise<string> {
  const email = rawEmail.trim();
  if (!email || !token || !(await consumeCode(app, 'reset', email, token))) throw new BadRequestError(MSG.resetInvalid);
  const user = await findUserByEmail(app.knex, email);
  if (!user) throw new BadRequestError(MSG.resetInvalid);
  const password = randomString(12);
  await app
    .knex('users')
    .where({ id: user.id })
    .update({ password: await hashPassword(password) });
  await endUserSessions(app, user.id);
  await invalidateUser(app, user.id);
  return password;
}

/* ------------------------------------------------------------------ self service */

export async function updateSelf(
  app: AppContext,
  user: UserRow,
  input: { display_name?: string; password?: string; original_password?: string; password2?: string },
): Promise<{ passwordChanged: boolean }> {
  const patch: Partial<UserRow> = {};
  if (input.display_name !== undefined) {
    const dn = input.display_name.trim();
    if ([...dn].length > 20) throw new BadRequestError('user.display_name_long');
    patch.display_name = dn || user.username;
  }
  if (input.password) {
    checkPassword(input.password);
    if (input.password2 !== undefined && input.password2 !== input.password) throw new BadRequestError('user.password_mismatch_bang');
    if (user.password && !(await verifyPassword(input.original_password ?? '', user.password))) throw new BadRequestError(MSG.originalPassword);
    patch.password = await hashPassword(input.password);
  }
  if (Object.keys(patch).length) {
    await app.knex('users').where({ id: user.id }).whereNull('deleted_at').update(patch);
    // A new password ends every session (the caller's is re-issued by the route).
    if (patch.password) await endUserSessions(app, user.id);
    await invalidateUser(app, user.id);
  }
  return { passwordChanged: Boolean(patch.password) };
}

export async function deleteSelf(app: AppContext, user: UserRow): Promise<void> {
  if (Number(user.role) >= ROLE.root) throw new BadRequestError(MSG.rootDelete);
  await app.knex('users').where({ id: user.id }).whereNull('deleted_at').update({ deleted_at: nowSec() });
  await endUserSessions(app, user.id);
  await invalidateUser(app, user.id);
}

/** New 32-char system access token (unique), replacing the previous one. */
export async function regenerateAccessToken(app: AppContext, userId: number): Promise<string> {
  for (let i = 0; i < 5; i++) {
    const token = randomString(32);
    try {
      const n = await app.knex('users').where({ id: userId }).whereNull('deleted_at').update({ access_token: token });
      if (!n) throw new NotFoundError(MSG.userMissing);
      await invalidateUser(app, userId);
      return token;
    } catch (err) {
      if (!/unique|duplicate|constraint/i.test(String((err as Error)?.message))) throw err;
    }
  }
  throw new BadRequestError('user.access_token_failed');
}

/** The user's invitation code, created on first use. */
export async function ensureAffCode(app: AppContext, user: UserRow): Promise<string> {
  if (user.aff_code) return user.aff_code;
  for (let i = 0; i < 5; i++) {
    const code = randomString(8);
    try {
      await app.knex('users').where({ id: user.id }).whereNull('aff_code').update({ aff_code: code });
      const row = await app.knex('users').where({ id: user.id }).first('aff_code');
      if (row?.aff_code) {
        await invalidateUser(app, user.id);
        return row.aff_code as string;
      }
    } catch (err) {
      if (!/unique|duplicate|constraint/i.test(String((err as Error)?.message))) throw err;
    }
  }
  throw new BadRequestError('user.aff_code_failed');
}

export function renderAmount(app: AppContext, quota: number): string {
  if (app.options.bool('DisplayInCurrencyEnabled')) return `$${(quota / app.options.quotaPerUnit).toFixed(2)}`;
  return String(quota);
}

/** Moves invitation earnings into the balance, atomically (never overspends aff_quota). */
export async function transferAffQuota(app: AppContext, user: UserRow, quota: number): Promise<void> {
  const min = app.options.quotaPerUnit;
  if (!Number.isSafeInteger(quota) || quota < min) throw new BadRequestError(msg('user.transfer_minimum', { amount: renderAmount(app, min) }));
  await app.knex.transaction(async (trx) => {
    const n = await trx('users')
      .where({ id: user.id })
      .whereNull('deleted_at')
      .andWhere('aff_quota', '>=', quota)
      .update({ aff_quota: trx.raw('aff_quota - ?', [quota]), quota: trx.raw('quota + ?', [quota]) });
    if (!n) throw new BadRequestError('user.aff_quota_insufficient');
    await insertLog(trx, {
      user_id: user.id,
      type: LOG_TYPE.system,
      username: user.username,
      content: t(serverLang(app), 'log.aff_transfer', { amount: formatQuota(app, quota) }),
    });
  });
  await invalidateUser(app, user.id);
}

export interface SettingInput {
  notify_type?: string;
  quota_warning_threshold?: number;
  webhook_url?: string;
  webhook_secret?: string;
  notification_email?: string;
  accept_unset_model_ratio_model?: boolean;
}

/** Validates and stores the notification/price settings; other keys in `setting` are kept. */
export async function updateSetting(app: AppContext, user: UserRow, input: SettingInput): Promise<UserSetting> {
  const notifyType = input.notify_type ?? 'email';
  if (notifyType !== 'email' && notifyType !== 'webhook') throw new BadRequestError('user.notify_type_invalid');
  const threshold = input.quota_warning_threshold ?? 500000;
  if (!Number.isFinite(threshold) || threshold <= 0) throw new BadRequestError('user.notify_threshold_invalid');
  const webhookUrl = (input.webhook_url ?? '').trim();
  if (notifyType === 'webhook' && !webhookUrl) throw new BadRequestError('user.webhook_empty');
  if (webhookUrl) {
    let u: URL;
    try {
      u = new URL(webhookUrl);
    } catch {
      throw new BadRequestError('user.webhook_invalid');
    }
    if (u.protocol !== 'https:') throw new BadRequestError('user.webhook_https');
  }
  const notificationEmail = (input.notification_email ?? '').trim();
  if (notificationEmail && (!EMAIL_RE.test(notificationEmail) || notificationEmail.length > 128)) throw new BadRequestError(MSG.emailInvalid);
  if ((input.webhook_secret ?? '').length > 512) throw new BadRequestError('user.webhook_secret_long');
  const current = await app.knex('users').where({ id: user.id }).first('setting');
  const setting: UserSetting = {
    ...parseUserSetting(current?.setting as string | undefined),
    notify_type: notifyType,
    quota_warning_threshold: threshold,
    webhook_url: webhookUrl,
    webhook_secret: input.webhook_secret ?? '',
    notification_email: notificationEmail,
    accept_unset_model_ratio_model: Boolean(input.accept_unset_model_ratio_model),
  };
  await app
    .knex('users')
    .where({ id: user.id })
    .update({ setting: JSON.stringify(setting) });
  await invalidateUser(app, user.id);
  return setting;
}

/* ------------------------------------------------------------------ administration */
/* ------------------------------------------------------------------ reading users */

/** The caller as the console shows it to its owner (fresh from the database). */
export async function selfView(app: AppContext, user: UserRow) {
  const fresh = await findUserByIdWithDeleted(app.knex, user.id);
  return clientUser(fresh!, { owner: true });
}

/** Groups the caller may pick for a token, with their ratios; the caller's own group is always there. */
export function selfGroups(app: AppContext, user: UserRow, lang: Lang = serverLang(app)): Record<string, { desc: string; ratio: number }> {
  const usable = app.options.json<Record<string, string>>('UserUsableGroups', {});
  const ratios = app.options.json<Record<string, number>>('GroupRatio', {});
  // Own keys only, into a map without a prototype: a group named `constructor` is an ordinary group.
  const ratioOf = (group: string) => {
    const r = own(ratios, group);
    return typeof r === 'number' && Number.isFinite(r) ? r : 1;
  };
  const out = emptyMap<{ desc: string; ratio: number }>();
  for (const [group, desc] of Object.entries(usable)) out[group] = { desc: String(desc), ratio: ratioOf(group) };
  if (!hasOwn(out, user.group)) out[user.group] = { desc: t(lang, 'user.group_desc'), ratio: ratioOf(user.group) };
  return out;
}

/** Binds an email (not used by another account) to the user, with a code mailed to it. */
export async function bindEmail(app: AppContext, user: UserRow, email: string, code: string): Promise<void> {
  if (await isEmailTaken(app.knex, email, user.id)) throw new BadRequestError('user.email_taken');
  if (!(await verifyEmailCode(app, email, code))) throw new BadRequestError('user.email_code_wrong_bang');
  await app.knex('users').where({ id: user.id }).update({ email });
  await invalidateUser(app, Number(user.id));
}
