import type { Knex } from 'knex';

/** A user's TOTP enrolment (pending until confirmed with a code). */
export interface TwoFactorRow {
  user_id: number;
  secret: string;
  enabled: boolean | number;
  backup_salt: string;
  last_step: number | string | null;
  created_at: number;
  enabled_at: number | null;
}

const T = 'user_two_factor';
const CODES = 'user_backup_codes';

export async function findTwoFactor(knex: Knex, userId: number): Promise<TwoFactorRow | undefined> {
  return knex<TwoFactorRow>(T).where({ user_id: userId }).first();
}

export async function isTwoFactorEnabled(knex: Knex, userId: number): Promise<boolean> {
  const row = await knex(T).where({ user_id: userId, enabled: true }).first('user_id');
  return Boolean(row);
}

/** Ids among `userIds` with 2FA on (one query for a page of users). */
export async function twoFactorEnabledAmong(knex: Knex, userIds: number[]): Promise<Set<number>> {
  if (!userIds.length) return new Set();
  const rows = await knex(T).whereIn('user_id', userIds).andWhere({ enabled: true }).select('user_id');
  return new Set(rows.map((r: { user_id: number }) => Number(r.user_id)));
}

/** Replaces a pending enrolment (never an enabled one: the caller checked, the condition re-checks). */
export async function savePendingTwoFactor(knex: Knex, row: Omit<TwoFactorRow, 'enabled' | 'last_step' | 'enabled_at'>): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx(T).where({ user_id: row.user_id, enabled: false }).del();
    await trx(CODES).where({ user_id: row.user_id }).del();
    await trx(T).insert({ ...row, enabled: false, last_step: null, enabled_at: null });
  });
}

/**
 * Accepts a TOTP time step once: the row moves to `step` only when its last accepted step is
 * older, in one conditional UPDATE, so the same code cannot pass twice even on two nodes.
 */
export async function acceptStep(knex: Knex | Knex.Transaction, userId: number, step: number): Promise<boolean> {
  const n = await knex(T)
    .where({ user_id: userId })
    .andWhere((q) => q.whereNull('last_step').orWhere('last_step', '<', step))
    .update({ last_step: step });
  return n === 1;
}

/** Turns a pending enrolment on with its backup codes (hashes), in one transaction. */
export async function enableTwoFactor(knex: Knex, userId: number, step: number, codeHashes: string[], now: number): Promise<boolean> {
  return knex.transaction(async (trx) => {
    const n = await trx(T)
      .where({ user_id: userId, enabled: false })
      .andWhere((q) => q.whereNull('last_step').orWhere('last_step', '<', step))
      .update({ enabled: true, enabled_at: now, last_step: step });
    if (n !== 1) return false;
    await trx(CODES).where({ user_id: userId }).del();
    await trx(CODES).insert(codeHashes.map((code_hash) => ({ user_id: userId, code_hash, used_at: null })));
    return true;
  });
}

export async function replaceBackupCodes(knex: Knex, userId: number, codeHashes: string[]): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx(CODES).where({ user_id: userId }).del();
    await trx(CODES).insert(codeHashes.map((code_hash) => ({ user_id: userId, code_hash, used_at: null })));
  });
}

/** Uses a backup code once (conditional UPDATE: concurrent uses of one code, one wins). */
export async function useBackupCode(knex: Knex, userId: number, codeHash: string, now: number): Promise<boolean> {
  const n = await knex(CODES).where({ user_id: userId, code_hash: codeHash }).whereNull('used_at').update({ used_at: now });
  return n >= 1;
}

export async function unusedBackupCodes(knex: Knex, userId: number): Promise<number> {
  const row = await knex(CODES).where({ user_id: userId }).whereNull('used_at').count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/** Removes the enrolment and its codes; answers whether 2FA was on. */
export async function deleteTwoFactor(knex: Knex, userId: number): Promise<boolean> {
  return knex.transaction(async (trx) => {
    const row = await trx(T).where({ user_id: userId }).first('enabled');
    await trx(T).where({ user_id: userId }).del();
    await trx(CODES).where({ user_id: userId }).del();
    return Boolean(row?.enabled);
  });
}

export async function twoFactorStats(knex: Knex): Promise<{ total_users: number; enabled_users: number }> {
  const total = await knex('users').whereNull('deleted_at').count({ n: '*' }).first();
  const enabled = await knex(T)
    .join('users', 'users.id', `${T}.user_id`)
    .whereNull('users.deleted_at')
    .andWhere(`${T}.enabled`, true)
    .count({ n: '*' })
    .first();
  return { total_users: Number(total?.n ?? 0), enabled_users: Number(enabled?.n ?? 0) };
}
