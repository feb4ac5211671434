import type { Knex } from 'knex';

/** A stored WebAuthn credential (public key, counter) of one user. */
export interface PasskeyRow {
  id: number;
  user_id: number;
  /** base64url, as the browser reports `id`. */
  credential_id: string;
  /** COSE public key, base64url. */
  public_key: string;
  counter: number | string;
  /** Comma-separated transports the authenticator reported. */
  transports: string;
  /** The WebAuthn user handle (base64url), one per user. */
  webauthn_user_id: string;
  name: string;
  device_type: string;
  backed_up: boolean | number;
  created_at: number;
  last_used_at: number | null;
}

const T = 'user_passkeys';

export async function passkeysOf(knex: Knex, userId: number): Promise<PasskeyRow[]> {
  return knex<PasskeyRow>(T).where({ user_id: userId }).orderBy('id');
}

export async function passkeyCount(knex: Knex, userId: number): Promise<number> {
  const row = await knex(T).where({ user_id: userId }).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

export async function passkeyCountsAmong(knex: Knex, userIds: number[]): Promise<Map<number, number>> {
  if (!userIds.length) return new Map();
  const rows = (await knex(T).whereIn('user_id', userIds).groupBy('user_id').select('user_id').count({ n: '*' })) as Array<{
    user_id: number;
    n: number | string;
  }>;
  return new Map(rows.map((r) => [Number(r.user_id), Number(r.n)]));
}

export async function findPasskeyByCredential(knex: Knex, credentialId: string): Promise<PasskeyRow | undefined> {
  return knex<PasskeyRow>(T).where({ credential_id: credentialId }).first();
}

export async function insertPasskey(knex: Knex, row: Omit<PasskeyRow, 'id'>): Promise<number> {
  const [r] = await knex(T).insert(row).returning('id');
  return Number(typeof r === 'object' ? r.id : r);
}

/** Moves the signature counter forward only (a clone replaying an old counter loses the race). */
export async function touchPasskey(knex: Knex, id: number, oldCounter: number, newCounter: number, now: number): Promise<boolean> {
  const n = await knex(T).where({ id, counter: oldCounter }).update({ counter: newCounter, last_used_at: now });
  return n === 1;
}

export async function renamePasskey(knex: Knex, userId: number, id: number, name: string): Promise<boolean> {
  return (await knex(T).where({ id, user_id: userId }).update({ name })) === 1;
}

export async function deletePasskey(knex: Knex, userId: number, id: number): Promise<boolean> {
  return (await knex(T).where({ id, user_id: userId }).del()) === 1;
}

export async function deletePasskeysOf(knex: Knex, userId: number): Promise<number> {
  return knex(T).where({ user_id: userId }).del();
}
