import type { Knex } from 'knex';
import { serverLang, t, type Lang } from '../i18n';
import type { AppContext } from '../context';
import { BadRequestError } from '../lib/errors';
import { hashPassword } from '../lib/password';
import { randomString } from '../lib/random';
import { nowSec } from '../lib/time';
import { insertLog, LOG_TYPE } from '../repositories/logs';
import { ROLE, USER_STATUS, type UserRow } from '../repositories/users';

export interface NewAccount {
  username: string;
  /** Plain password; empty for third-party-only accounts. */
  password?: string;
  display_name?: string;
  email?: string;
  role?: number;
  group?: string;
  /** Inviter's aff code (from `?aff=`); unknown codes are ignored. */
  affCode?: string;
  github_id?: string;
  oidc_id?: string;
  wechat_id?: string;
  telegram_id?: string;
  linux_do_id?: string;
}

/** Formats a quota amount for log text the way the console shows it ($ with 2 decimals). */
export function formatQuota(app: AppContext, quota: number, lang: Lang = serverLang(app)): string {
  return t(lang, 'log.quota_amount', { amount: (quota / app.options.quotaPerUnit).toFixed(6).replace(/\.?0+$/, '') });
}

/**
 * Creates a user with the new-user gift and invitation rewards, all in one transaction. Used by
 * registration, admin create, setup and third-party sign-up. Throws on a taken username.
 */
export async function createAccount(app: AppContext, input: NewAccount, outer?: Knex.Transaction): Promise<UserRow> {
  const passwordHash = input.password ? await hashPassword(input.password) : '';
  const run = async (trx: Knex.Transaction): Promise<UserRow> => {
    const taken = await trx('users').where({ username: input.username }).first('id');
    if (taken) throw new BadRequestError('user.username_taken');
    let inviter: UserRow | undefined;
    if (input.affCode) inviter = await trx<UserRow>('users').where({ aff_code: input.affCode }).whereNull('deleted_at').first();
    const quotaForNewUser = Math.max(0, Math.trunc(app.options.num('QuotaForNewUser')));
    const quotaForInvitee = inviter ? Math.max(0, Math.trunc(app.options.num('QuotaForInvitee'))) : 0;
    const quotaForInviter = inviter ? Math.max(0, Math.trunc(app.options.num('QuotaForInviter'))) : 0;
    const row = {
      username: input.username,
      password: passwordHash,
      display_name: input.display_name || input.username,
      role: input.role ?? ROLE.user,
      status: USER_STATUS.enabled,
      email: input.email ?? '',
      github_id: input.github_id ?? '',
      oidc_id: input.oidc_id ?? '',
      wechat_id: input.wechat_id ?? '',
      telegram_id: input.telegram_id ?? '',
      linux_do_id: input.linux_do_id ?? '',
      access_token: null,
      quota: quotaForNewUser + quotaForInvitee,
      group: input.group ?? 'default',
      aff_code: randomString(4) + randomString(4),
      inviter_id: inviter?.id ?? 0,
      setting: '',
      created_at: nowSec(),
    };
    const [inserted] = await trx('users').insert(row).returning('id');
    const id = typeof inserted === 'object' ? (inserted as { id: number }).id : (inserted as number);
    if (quotaForNewUser > 0) {
      await insertLog(trx, {
        user_id: id,
        type: LOG_TYPE.system,
        username: row.username,
        content: t(serverLang(app), 'log.new_user_gift', { amount: formatQuota(app, quotaForNewUser) }),
      });
    }
    if (inviter) {
      if (quotaForInvitee > 0) {
        await insertLog(trx, {
          user_id: id,
          type: LOG_TYPE.system,
          username: row.username,
          content: t(serverLang(app), 'log.invitee_gift', { amount: formatQuota(app, quotaForInvitee) }),
        });
      }
      await trx('users')
        .where({ id: inviter.id })
        .update({
          aff_count: trx.raw('aff_count + 1'),
          aff_quota: trx.raw('aff_quota + ?', [quotaForInviter]),
          aff_history_quota: trx.raw('aff_history_quota + ?', [quotaForInviter]),
        });
      if (quotaForInviter > 0) {
        await insertLog(trx, {
          user_id: inviter.id,
          type: LOG_TYPE.system,
          username: inviter.username,
          content: t(serverLang(app), 'log.inviter_gift', { amount: formatQuota(app, quotaForInviter) }),
        });
      }
    }
    return (await trx<UserRow>('users').where({ id }).first())!;
  };
  return outer ? run(outer) : app.knex.transaction(run);
}
