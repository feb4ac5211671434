/**
 * Users administered by admins: create, edit, promote/demote/disable/delete, the admin list and
 * one user; an admin only acts on users of a lower role.
 */
import type { AppContext } from '../context';
import { BadRequestError } from '../lib/errors';
import { hashPassword } from '../lib/password';
import { nowSec } from '../lib/time';
import type { Paging } from '../lib/validate';
import { isPrototypeName } from '../lib/own';
import { insertLog, LOG_TYPE } from '../repositories/logs';
import { passkeyCountsAmong } from '../repositories/passkeys';
import { twoFactorEnabledAmong } from '../repositories/twoFactor';
import { clientUser, findUserById, findUserByIdWithDeleted, isEmailTaken, queryUsers, ROLE, USER_STATUS, type UserRow } from '../repositories/users';
import { createAccount, formatQuota } from './accounts';
import { invalidateUser } from './invalidate';
import { endUserSessions } from './sessions';
import { serverLang, t } from '../i18n';
import { MSG, EMAIL_RE, checkPassword, checkUsername } from './users';

/** Throws unless `actor` outranks `target` (nobody acts on a user of the same or a higher role). */
export function assertOutranks(actor: UserRow, target: UserRow): void {
  if (Number(target.role) >= Number(actor.role)) throw new BadRequestError(MSG.sameOrHigher);
}

export async function adminCreateUser(
  app: AppContext,
  actor: UserRow,
  input: { username: string; password: string; display_name?: string; role?: number },
): Promise<UserRow> {
  if (!input.username.trim() || !input.password) throw new BadRequestError(MSG.usernameEmpty);
  const username = checkUsername(input.username);
  checkPassword(input.password);
  const role = input.role ?? ROLE.user;
  if (![ROLE.user, ROLE.admin, ROLE.root].includes(role as 1)) throw new BadRequestError('user.role_invalid');
  if (role >= Number(actor.role)) throw new BadRequestError(MSG.createHigher);
  const dn = (input.display_name ?? '').trim();
  if ([...dn].length > 20) throw new BadRequestError('user.display_name_long');
  if (await app.knex('users').where({ username }).first('id')) throw new BadRequestError('user.username_taken');
  try {
    return await createAccount(app, { username, password: input.password, display_name: dn || username, role });
  } catch (err) {
    if (err instanceof BadRequestError) throw err;
    if (/unique|duplicate|constraint/i.test(String((err as Error)?.message))) throw new BadRequestError('user.username_taken');
    throw err;
  }
}

export interface AdminUpdateInput {
  id: number;
  username?: string;
  display_name?: string;
  password?: string;
  email?: string;
  group?: string;
  quota?: number;
  remark?: string;
}

/** PUT /api/user/: fields left out keep their value; role changes go through manage only. */
export async function adminUpdateUser(app: AppContext, actor: UserRow, input: AdminUpdateInput): Promise<UserRow> {
  const target = await findUserById(app.knex, input.id);
  if (!target) throw new BadRequestError(MSG.userMissing);
  // Root has nobody above it, so it may edit its own record here (quota for testing, like new-api).
  const rootOnSelf = target.id === actor.id && Number(actor.role) >= ROLE.root;
  if (!rootOnSelf) assertOutranks(actor, target);
  const patch: Partial<UserRow> = {};
  if (input.username !== undefined && input.username.trim() !== target.username) {
    const username = checkUsername(input.username);
    if (await app.knex('users').where({ username }).whereNot({ id: target.id }).first('id')) throw new BadRequestError('user.username_taken');
    patch.username = username;
  }
  if (input.display_name !== undefined) {
    const dn = input.display_name.trim();
    if ([...dn].length > 20) throw new BadRequestError('user.display_name_long');
    patch.display_name = dn || (patch.username ?? target.username);
  }
  if (input.password) {
    checkPassword(input.password);
    patch.password = await hashPassword(input.password);
  }
  if (input.email !== undefined && input.email.trim() !== target.email) {
    const email = input.email.trim();
    if (email) {
      if (!EMAIL_RE.test(email) || email.length > 128) throw new BadRequestError(MSG.emailInvalid);
      if (await isEmailTaken(app.knex, email, target.id)) throw new BadRequestError(MSG.emailTaken);
    }
    patch.email = email;
  }
  if (input.group !== undefined) {
    const g = input.group.trim();
    // A name every object already has (`__proto__`, `constructor` …) is no group name.
    if (!g || g.length > 64 || /[\s,]/.test(g) || isPrototypeName(g)) throw new BadRequestError('user.group_invalid');
    patch.group = g;
  }
  if (input.remark !== undefined) {
    if (input.remark.length > 255) throw new BadRequestError('user.remark_long');
    patch.remark = input.remark;
  }
  const changingQuota = input.quota !== undefined;
  if (changingQuota) {
    const q = input.quota!;
    if (!Number.isSafeInteger(q)) throw new BadRequestError('common.quota_int');
    if (q < 0) throw new BadRequestError('common.quota_negative');
  }
  await app.knex.transaction(async (trx) => {
    if (changingQuota) {
      const locked = app.db.kind === 'postgres' ? trx('users').where({ id: target.id }).forUpdate() : trx('users').where({ id: target.id });
      const row = await locked.first('quota');
      const before = Number(row?.quota ?? 0);
      const after = input.quota!;
      if (before !== after) {
        await trx('users').where({ id: target.id }).update({ quota: after });
        await insertLog(trx, {
          user_id: target.id,
          type: LOG_TYPE.manage,
          username: target.username,
          quota: after - before,
          content: t(serverLang(app), 'log.admin_quota_change', { admin: actor.username, before: formatQuota(app, before), after: formatQuota(app, after) }),
        });
      }
    }
    if (Object.keys(patch).length) await trx('users').where({ id: target.id }).update(patch);
  });
  if (patch.password) await endUserSessions(app, target.id);
  await invalidateUser(app, target.id);
  return (await findUserById(app.knex, target.id))!;
}

export type ManageAction = 'promote' | 'demote' | 'disable' | 'enable' | 'delete';

/** POST /api/user/manage: root is never disabled, deleted or demoted; the actor must outrank the target. Answers the new status and role. */
export async function manageUser(app: AppContext, actor: UserRow, id: number, action: ManageAction): Promise<{ status: number; role: number }> {
  const target = await findUserById(app.knex, id);
  if (!target) throw new BadRequestError(MSG.userMissing);
  const isRoot = Number(target.role) >= ROLE.root;
  // Root protections come first so that the message says what is refused.
  if (isRoot && action === 'disable') throw new BadRequestError('user.root_disable');
  if (isRoot && action === 'delete') throw new BadRequestError('user.root_delete_user');
  if (isRoot && action === 'demote') throw new BadRequestError('user.root_demote');
  assertOutranks(actor, target);
  let status = Number(target.status);
  let role = Number(target.role);
  const patch: Partial<UserRow> = {};
  switch (action) {
    case 'disable':
      status = USER_STATUS.disabled;
      patch.status = status;
      break;
    case 'enable':
      // Status 3 (deregistered) is a state the enable action must not lift.
      if (status !== USER_STATUS.enabled && status !== USER_STATUS.disabled) throw new BadRequestError('user.status_not_enableable');
      status = USER_STATUS.enabled;
      patch.status = status;
      break;
    case 'delete':
      patch.deleted_at = nowSec();
      break;
    case 'promote':
      if (Number(actor.role) < ROLE.root) throw new BadRequestError('user.admin_cannot_promote');
      if (role >= ROLE.admin) throw new BadRequestError('user.already_admin');
      role = ROLE.admin;
      patch.role = role;
      break;
    case 'demote':
      if (role === ROLE.user) throw new BadRequestError('user.already_user');
      role = ROLE.user;
      patch.role = role;
      break;
  }
  // The role condition keeps a concurrent promote/demote from being overtaken silently.
  const n = await app.knex('users').where({ id: target.id, role: target.role }).whereNull('deleted_at').update(patch);
  if (!n) throw new BadRequestError('user.status_changed');
  if (action === 'disable' || action === 'delete') await endUserSessions(app, target.id);
  await invalidateUser(app, target.id);
  return { status, role };
}

/** A page of users for the admin list (optionally filtered by keyword and group). */
export async function listUsers(app: AppContext, paging: Paging, filter: { keyword?: string; group?: string } = {}) {
  const { items, total } = await queryUsers(app.knex, { ...filter, offset: (paging.p - 1) * paging.page_size, limit: paging.page_size });
  // Admins see who has a second factor (two queries for the whole page).
  const ids = items.map((u) => Number(u.id));
  const [twoFa, passkeys] = await Promise.all([twoFactorEnabledAmong(app.knex, ids), passkeyCountsAmong(app.knex, ids)]);
  const rows = items.map((u) => ({ ...clientUser(u), two_fa_enabled: twoFa.has(Number(u.id)), passkey_count: passkeys.get(Number(u.id)) ?? 0 }));
  return { items: rows, total, page: paging.p, page_size: paging.page_size };
}

/** One user for an admin: never a user of the same or a higher role (oneself excepted). */
export async function userForAdmin(app: AppContext, actor: UserRow, id: number) {
  const target = await findUserByIdWithDeleted(app.knex, id);
  if (!target) throw new BadRequestError('user.missing');
  if (Number(target.role) >= Number(actor.role) && target.id !== actor.id) throw new BadRequestError('user.read_same_or_higher');
  return clientUser(target);
}
