import type { Knex } from 'knex';
import { msg, serverLang, t, type Message, type MessageKey, type MessageParam } from '../../i18n';
import type { AppContext } from '../../context';
import { BadRequestError } from '../../lib/errors';
import { randomString } from '../../lib/random';
import { USER_STATUS, clientUser, type UserRow } from '../../repositories/users';
import { createAccount } from '../accounts';
import { invalidateUser } from '../invalidate';
import { assertSetupDone } from '../setup';
import type { ExternalProfile } from './providers';

export type IdentityProvider = 'github' | 'oidc' | 'linuxdo' | 'wechat' | 'telegram';

export const IDENTITY_COLUMN = {
  github: 'github_id',
  oidc: 'oidc_id',
  linuxdo: 'linux_do_id',
  wechat: 'wechat_id',
  telegram: 'telegram_id',
} as const satisfies Record<IdentityProvider, keyof UserRow>;

export const PROVIDER_LABEL: Record<IdentityProvider, MessageParam> = {
  github: 'GitHub',
  oidc: 'OIDC',
  linuxdo: 'LinuxDO',
  wechat: msg('oauth.provider_wechat'),
  telegram: 'Telegram',
};

const ENABLED_OPTION: Record<IdentityProvider, string> = {
  github: 'GitHubOAuthEnabled',
  oidc: 'oidc.enabled',
  linuxdo: 'LinuxDOOAuthEnabled',
  wechat: 'WeChatAuthEnabled',
  telegram: 'TelegramOAuthEnabled',
};

const USERNAME_PREFIX: Record<IdentityProvider, string> = {
  github: 'github',
  oidc: 'oidc',
  linuxdo: 'linuxdo',
  wechat: 'wechat',
  telegram: 'telegram',
};

export const MSG = {
  banned: 'user.banned',
  deleted: 'user.deleted',
  registerClosed: 'user.register_closed',
  busy: 'common.too_frequent',
  disabled: (p: IdentityProvider) => msg('oauth.provider_disabled', { provider: PROVIDER_LABEL[p] }),
  taken: (p: IdentityProvider) => msg('oauth.account_taken', { provider: PROVIDER_LABEL[p] }),
} as const satisfies Record<string, MessageKey | ((p: IdentityProvider) => Message)>;

export function assertEnabled(app: AppContext, provider: IdentityProvider): void {
  if (!app.options.bool(ENABLED_OPTION[provider])) throw new BadRequestError(MSG.disabled(provider));
}

/** The user as answered to the client after a login: same shape as the password login. */
export function loginView(u: UserRow) {
  return clientUser(u, { owner: true });
}

/** Checks a user may act (live, enabled); throws the matching message. */
export function assertActive(u: UserRow | undefined): asserts u is UserRow {
  if (!u || (u.deleted_at !== null && u.deleted_at !== undefined)) throw new BadRequestError(MSG.deleted);
  if (Number(u.status) !== USER_STATUS.enabled) throw new BadRequestError(MSG.banned);
}

/** The holder of an identity, deregistered users included (a deregistered account keeps its bindings). */
async function holderOf(knex: Knex, provider: IdentityProvider, id: string): Promise<UserRow | undefined> {
  return knex<UserRow>('users').where(IDENTITY_COLUMN[provider], id).orderByRaw('case when deleted_at is null then 0 else 1 end').orderBy('id').first();
}

/**
 * Serialises work on one external identity across requests and nodes (the KV is shared when
 * Redis is configured), so two concurrent callbacks cannot register or bind it twice.
 */
async function withIdentityLock<T>(app: AppContext, provider: IdentityProvider, id: string, fn: () => Promise<T>): Promise<T> {
  const key = `oauth:lock:${provider}:${id}`;
  const token = randomString(16);
  // Wait a little for a concurrent callback on the same identity (a double click) to finish.
  let acquired = false;
  for (let i = 0; i < 100 && !acquired; i++) {
    acquired = await app.kv.setNX(key, token, 30);
    if (!acquired) await new Promise((r) => setTimeout(r, 50));
  }
  if (!acquired) throw new BadRequestError(MSG.busy);
  try {
    return await fn();
  } finally {
    if ((await app.kv.get(key)) === token) await app.kv.del(key);
  }
}

async function freeUsername(app: AppContext, prefix: string): Promise<string> {
  const row = (await app.knex('users').max({ m: 'id' }).first()) as { m: number | string | null } | undefined;
  const next = Number(row?.m ?? 0) + 1;
  for (const candidate of [`${prefix}_${next}`, `${prefix}_${next}_${randomString(4).toLowerCase()}`, `${prefix}_${randomString(8).toLowerCase()}`]) {
    if (!(await app.knex('users').where({ username: candidate }).first('id'))) return candidate;
  }
  return `${prefix}_${randomString(12).toLowerCase()}`;
}

async function emailIfFree(app: AppContext, email: string | undefined): Promise<string> {
  const e = (email ?? '').trim();
  if (!e || e.length > 128 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(e)) return '';
  const taken = await app.knex('users').whereRaw('lower(email) = ?', [e.toLowerCase()]).first('id');
  return taken ? '' : e;
}

export interface LoginOptions {
  /** Inviter code carried by the state. */
  aff?: string;
  /** False for providers that only log in bound accounts (Telegram). */
  allowRegister?: boolean;
}

/**
 * Logs in the account bound to `profile.id`, or registers a new one (when registration is open).
 * Registration goes through createAccount: new-user gift and inviter rewards in one transaction.
 */
export async function loginOrRegister(
  app: AppContext,
  provider: IdentityProvider,
  profile: ExternalProfile,
  opts: LoginOptions = {},
): Promise<{ user: UserRow; created: boolean }> {
  return withIdentityLock(app, provider, profile.id, async () => {
    const holder = await holderOf(app.knex, provider, profile.id);
    if (holder) {
      assertActive(holder);
      return { user: holder, created: false };
    }
    if (opts.allowRegister === false) throw new BadRequestError(msg('oauth.account_unbound', { provider: PROVIDER_LABEL[provider] }));
    await assertSetupDone(app);
    if (!app.options.bool('RegisterEnabled')) throw new BadRequestError(MSG.registerClosed);
    const prefix = USERNAME_PREFIX[provider];
    const displayName =
      (profile.displayName ?? '').trim().slice(0, 20) || `${t(serverLang(app), msg('common.verbatim', { text: PROVIDER_LABEL[provider] }))} User`;
    for (let attempt = 0; ; attempt++) {
      const username = await freeUsername(app, prefix);
      try {
        const user = await createAccount(app, {
          username,
          display_name: displayName,
          email: await emailIfFree(app, profile.email),
          affCode: opts.aff || undefined,
          [IDENTITY_COLUMN[provider]]: profile.id,
        });
        app.log.info({ userId: user.id, provider }, 'user registered through third-party login');
        return { user, created: true };
      } catch (err) {
        // A concurrent registration took the generated username: try another one.
        if (attempt < 3 && err instanceof BadRequestError && err.msg.key === 'user.username_taken') continue;
        throw err;
      }
    }
  });
}

/** Binds `profile.id` to the user `userId`; refuses an identity held by another account. */
export async function bindIdentity(app: AppContext, provider: IdentityProvider, profile: ExternalProfile, userId: number): Promise<UserRow> {
  return withIdentityLock(app, provider, profile.id, async () => {
    const user = await app.knex<UserRow>('users').where({ id: userId }).first();
    assertActive(user);
    const holder = await holderOf(app.knex, provider, profile.id);
    if (holder && Number(holder.id) !== Number(user.id)) throw new BadRequestError(MSG.taken(provider));
    if (!holder) {
      const column = IDENTITY_COLUMN[provider];
      const n = await app
        .knex('users')
        .where({ id: user.id, status: USER_STATUS.enabled })
        .whereNull('deleted_at')
        .update({ [column]: profile.id });
      if (!n) throw new BadRequestError(MSG.deleted);
      await invalidateUser(app, Number(user.id));
    }
    return (await app.knex<UserRow>('users').where({ id: user.id }).first())!;
  });
}
