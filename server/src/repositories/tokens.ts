import type { Knex } from 'knex';

export interface TokenRow {
  id: number;
  user_id: number;
  key: string;
  status: number;
  name: string;
  created_time: number;
  accessed_time: number;
  expired_time: number;
  remain_quota: number;
  unlimited_quota: boolean | number;
  model_limits_enabled: boolean | number;
  model_limits: string;
  allow_ips: string;
  used_quota: number;
  request_count: number;
  group: string;
  deleted_at: number | null;
}

export const TOKEN_STATUS = { enabled: 1, disabled: 2, expired: 3, exhausted: 4 } as const;

/**
 * A token key as lists and reads show it: enough to tell keys apart (`abcd…wxyz` for a 20+ character
 * key, `…yz` for 10–19, `…` below), never enough to use. The full key comes from one explicit call
 * per key (POST /api/token/:id/key).
 */
export function maskTokenKey(key: string): string {
  const k = String(key ?? '');
  if (k.length >= 20) return `${k.slice(0, 4)}…${k.slice(-4)}`;
  if (k.length >= 10) return `…${k.slice(-2)}`;
  return k ? '…' : '';
}

/**
 * The token as its owner sees it in lists, searches, reads and update answers: the key masked
 * (`key_masked: true`), booleans as booleans. `fullKey` only for the answer that creates the token.
 */
export function tokenView(t: TokenRow, fullKey = false) {
  return {
    id: Number(t.id),
    user_id: Number(t.user_id),
    key: fullKey ? t.key : maskTokenKey(t.key),
    key_masked: !fullKey,
    status: Number(t.status),
    name: t.name,
    created_time: Number(t.created_time),
    accessed_time: Number(t.accessed_time),
    expired_time: Number(t.expired_time),
    remain_quota: Number(t.remain_quota),
    unlimited_quota: Boolean(t.unlimited_quota),
    model_limits_enabled: Boolean(t.model_limits_enabled),
    model_limits: t.model_limits ?? '',
    allow_ips: t.allow_ips ?? '',
    used_quota: Number(t.used_quota),
    request_count: Number(t.request_count ?? 0),
    group: t.group ?? '',
  };
}

/** A live (not deleted) token of one user; undefined when it is missing or someone else's. */
export async function findOwnToken(knex: Knex | Knex.Transaction, userId: number, id: number): Promise<TokenRow | undefined> {
  return knex<TokenRow>('tokens').where({ id, user_id: userId }).whereNull('deleted_at').first();
}

/** A live (not deleted) token by its key (without `sk-`). */
export async function findTokenByKey(knex: Knex, key: string): Promise<TokenRow | undefined> {
  return knex<TokenRow>('tokens').where({ key }).whereNull('deleted_at').first();
}

/** What a token has spent and has left, and until when it may be used (the relay's billing endpoints). */
export async function tokenBalance(knex: Knex, id: number): Promise<Pick<TokenRow, 'remain_quota' | 'used_quota' | 'expired_time'> | undefined> {
  return knex<TokenRow>('tokens').where({ id }).first('remain_quota', 'used_quota', 'expired_time');
}

/**
 * An enabled token becomes exhausted (its limited quota is used up) or expired (its time has
 * passed); conditional, so a concurrent top-up or extension is not undone. Returns the rows changed.
 */
export function markTokenUsedUp(knex: Knex, id: number, status: typeof TOKEN_STATUS.exhausted | typeof TOKEN_STATUS.expired, now: number): Promise<number> {
  const q = knex('tokens').where({ id, status: TOKEN_STATUS.enabled });
  if (status === TOKEN_STATUS.exhausted) q.andWhere('remain_quota', '<=', 0).andWhere('unlimited_quota', false);
  else q.andWhere('expired_time', '>', 0).andWhere('expired_time', '<', now);
  return q.update({ status });
}

/**
 * Live tokens of one user, newest first, with optional filters: name (substring, case-insensitive)
 * and key (the whole key only: a substring search would read a key out a character at a time).
 */
export function ownTokensQuery(knex: Knex, userId: number, filter: { keyword?: string; key?: string } = {}): Knex.QueryBuilder {
  const qb = knex('tokens').where({ user_id: userId }).whereNull('deleted_at');
  const esc = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
  if (filter.keyword) qb.whereRaw("lower(??) like lower(?) escape '\\'", ['name', `%${esc(filter.keyword)}%`]);
  if (filter.key) qb.where('key', filter.key);
  return qb;
}
