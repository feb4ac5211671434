import type { Knex } from 'knex';

/** A users row as stored (password hash included: never send this to a client as is). */
export interface UserRow {
  id: number;
  username: string;
  password: string;
  display_name: string;
  role: number;
  status: number;
  email: string;
  github_id: string;
  oidc_id: string;
  wechat_id: string;
  telegram_id: string;
  linux_do_id: string;
  access_token: string | null;
  quota: number;
  used_quota: number;
  request_count: number;
  group: string;
  aff_code: string | null;
  aff_count: number;
  aff_quota: number;
  aff_history_quota: number;
  inviter_id: number;
  setting: string;
  remark: string;
  created_at: number;
  deleted_at: number | null;
}

export const ROLE = { user: 1, admin: 10, root: 100 } as const;
export const USER_STATUS = { enabled: 1, disabled: 2 } as const;

/** Live (not deregistered) user by id. */
export async function findUserById(knex: Knex, id: number): Promise<UserRow | undefined> {
  return knex<UserRow>('users').where({ id }).whereNull('deleted_at').first();
}

/** What a user has spent and has left (the relay's billing endpoints). */
export async function userBalance(knex: Knex, id: number): Promise<Pick<UserRow, 'quota' | 'used_quota'> | undefined> {
  return knex<UserRow>('users').where({ id }).first('quota', 'used_quota');
}

/** The root user's email address, if there is a live root user. */
export async function rootEmail(knex: Knex): Promise<string | undefined> {
  const row = await knex<UserRow>('users').where({ role: ROLE.root }).whereNull('deleted_at').first('email');
  return row?.email ? String(row.email) : undefined;
}

export async function findUserByAccessToken(knex: Knex, token: string): Promise<UserRow | undefined> {
  return knex<UserRow>('users').where({ access_token: token }).whereNull('deleted_at').first();
}

/** The user as the API shows it: no password, no access token. */
export function publicUser(u: UserRow): Omit<UserRow, 'password' | 'access_token'> {
  const { password, access_token, ...rest } = u;
  return rest;
}

/** Any user row by id, deregistered ones included (admin views). */
export async function findUserByIdWithDeleted(knex: Knex, id: number): Promise<UserRow | undefined> {
  return knex<UserRow>('users').where({ id }).first();
}

/** Live user whose username or email equals `login` (password login). */
export async function findUserForLogin(knex: Knex, login: string): Promise<UserRow | undefined> {
  return knex<UserRow>('users')
    .whereNull('deleted_at')
    .andWhere((q) => q.where({ username: login }).orWhereRaw('lower(email) = ?', [login.toLowerCase()]))
    .orderByRaw('case when username = ? then 0 else 1 end', [login])
    .first();
}

/** Live user with this email (case-insensitive). */
export async function findUserByEmail(knex: Knex, email: string): Promise<UserRow | undefined> {
  if (!email) return undefined;
  return knex<UserRow>('users').whereNull('deleted_at').whereRaw('lower(email) = ?', [email.toLowerCase()]).first();
}

/** True when any user, deregistered ones included, uses this email. */
export async function isEmailTaken(knex: Knex, email: string, exceptId?: number): Promise<boolean> {
  const q = knex('users').whereRaw('lower(email) = ?', [email.toLowerCase()]);
  if (exceptId) q.whereNot({ id: exceptId });
  return Boolean(await q.first('id'));
}

/** The user setting JSON, parsed leniently. */
export interface UserSetting {
  notify_type?: 'email' | 'webhook';
  quota_warning_threshold?: number;
  webhook_url?: string;
  webhook_secret?: string;
  notification_email?: string;
  accept_unset_model_ratio_model?: boolean;
  [key: string]: unknown;
}

export function parseUserSetting(raw: string | null | undefined): UserSetting {
  if (!raw) return {};
  try {
    const v = JSON.parse(raw) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as UserSetting) : {};
  } catch {
    return {};
  }
}

export type ClientUser = Omit<UserRow, 'password' | 'access_token'> & { DeletedAt: number | null; setting: string };

/**
 * The user as a client sees it: never password or access token; numbers normalised; `DeletedAt`
 * mirrors `deleted_at` (the console marks such rows 'deregistered'). For anyone but the owner the
 * webhook secret is removed from the setting as well.
 */
export function clientUser(u: UserRow, opts: { owner?: boolean } = {}): ClientUser {
  const base = publicUser(u);
  let setting = u.setting ?? '';
  if (!opts.owner && setting) {
    const s = parseUserSetting(setting);
    if ('webhook_secret' in s) {
      delete s.webhook_secret;
      setting = JSON.stringify(s);
    }
  }
  const deletedAt = u.deleted_at === null || u.deleted_at === undefined ? null : Number(u.deleted_at);
  return {
    ...base,
    id: Number(u.id),
    role: Number(u.role),
    status: Number(u.status),
    quota: Number(u.quota),
    used_quota: Number(u.used_quota),
    request_count: Number(u.request_count),
    aff_count: Number(u.aff_count),
    aff_quota: Number(u.aff_quota),
    aff_history_quota: Number(u.aff_history_quota),
    inviter_id: Number(u.inviter_id),
    created_at: Number(u.created_at),
    deleted_at: deletedAt,
    DeletedAt: deletedAt,
    setting,
  };
}

export interface UserQuery {
  keyword?: string;
  group?: string;
  offset: number;
  limit: number;
}

/**
 * Admin list/search, newest first, deregistered users included. The keyword matches the id
 * exactly (when numeric) or username/email/display name as a substring.
 */
export async function queryUsers(knex: Knex, q: UserQuery): Promise<{ items: UserRow[]; total: number }> {
  const filter = (b: Knex.QueryBuilder) => {
    const kw = (q.keyword ?? '').trim();
    if (kw) {
      const like = `%${kw.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      b.where((w) => {
        if (/^\d{1,9}$/.test(kw)) w.orWhere('id', Number(kw));
        w.orWhereRaw("lower(username) like ? escape '\\'", [like])
          .orWhereRaw("lower(email) like ? escape '\\'", [like])
          .orWhereRaw("lower(display_name) like ? escape '\\'", [like]);
      });
    }
    if (q.group) b.where('group', q.group);
    return b;
  };
  const totalRow = await filter(knex('users')).count({ n: '*' }).first();
  const items = await filter(knex<UserRow>('users').select('*')).orderBy('id', 'desc').offset(q.offset).limit(q.limit);
  return { items: items as UserRow[], total: Number((totalRow as { n: number | string } | undefined)?.n ?? 0) };
}
