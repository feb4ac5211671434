import net from 'node:net';
import { msg, serverLang, t as translate } from '../i18n';
import type { AppContext } from '../context';
import { BadRequestError, NotFoundError } from '../lib/errors';
import { randomString } from '../lib/random';
import { nowSec } from '../lib/time';
import { type Paging } from '../lib/validate';
import { findOwnToken, ownTokensQuery, TOKEN_STATUS, tokenView, type TokenRow } from '../repositories/tokens';
import type { UserRow } from '../repositories/users';
import { invalidateToken } from './invalidate';
import { usableGroups } from './pricing';
import { hitLimit } from './rateLimit';
import { insertLog, LOG_TYPE } from '../repositories/logs';
import { hasOwn } from '../lib/own';

/** What a token is created with (the console's body, validated by api/token/schema.ts). */
export interface TokenCreate {
  name: string;
  count?: number;
  remain_quota?: number;
  unlimited_quota?: boolean;
  expired_time?: number;
  model_limits_enabled?: boolean;
  model_limits?: string;
  allow_ips?: string;
  group?: string;
  status?: 1 | 2;
}

/** A token's changes: its id and the fields that change. */
export interface TokenUpdate extends Partial<Omit<TokenCreate, 'count'>> {
  id: number;
}

export const TOKEN_NAME_MAX = 30;
export const TOKEN_BATCH_MAX = 100;
/** Full keys one user may read per window (POST /api/token/:id/key): a page of tokens copied one by one fits. */
export const TOKEN_KEY_READS = { limit: 60, windowSeconds: 60 } as const;

/** One IPv4/IPv6 address or CIDR range per line (commas accepted too); normalised to one per line. */
export function normaliseAllowIps(raw: string): string {
  const items = raw
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
  for (const item of items) {
    const [addr, bits, extra] = item.split('/');
    const kind = net.isIP(addr ?? '');
    const okBits = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (kind === 6 ? 128 : 32));
    if (!kind || !okBits || extra !== undefined) throw new BadRequestError(msg('token.allow_ip_invalid', { item }));
  }
  return Array.from(new Set(items)).join('\n');
}

function checkGroup(app: AppContext, user: UserRow, group: string | undefined) {
  if (!group) return;
  // Own keys only: `'constructor' in {}` is true (issue 40 item 9).
  if (!hasOwn(usableGroups(app, user.group), group)) throw new BadRequestError(msg('token.group_forbidden', { group }));
}

function checkExpiry(expired: number | undefined) {
  if (expired !== undefined && expired !== -1 && expired <= nowSec()) throw new BadRequestError('token.expiry_past');
}

export async function listTokens(app: AppContext, user: UserRow, paging: Paging, filter: { keyword?: string; key?: string } = {}) {
  const key = filter.key?.replace(/^sk-/, '');
  const countRow = await ownTokensQuery(app.knex, user.id, { ...filter, key })
    .count({ n: '*' })
    .first();
  const rows: TokenRow[] = await ownTokensQuery(app.knex, user.id, { ...filter, key })
    .select('*')
    .orderBy('id', 'desc')
    .limit(paging.page_size)
    .offset((paging.p - 1) * paging.page_size);
  return { items: rows.map((row) => tokenView(row)), total: Number(countRow?.n ?? 0), page: paging.p, page_size: paging.page_size };
}

export async function getToken(app: AppContext, user: UserRow, id: number) {
  const t = await findOwnToken(app.knex, user.id, id);
  if (!t) throw new NotFoundError('token.not_found');
  return tokenView(t);
}

/**
 * The full key of one own token (the console's copy buttons and chat links ask for it, one key per
 * call). Counted per user before anything is read (TOKEN_KEY_READS, in the shared KV, so every node
 * counts together), and written to the user's logs with the caller's IP.
 */
export async function revealTokenKey(app: AppContext, user: UserRow, id: number, ip: string): Promise<{ key: string }> {
  await hitLimit(app, `token_key:${user.id}`, TOKEN_KEY_READS.limit, TOKEN_KEY_READS.windowSeconds);
  const t = await findOwnToken(app.knex, user.id, id);
  if (!t) throw new NotFoundError('token.not_found');
  await insertLog(app.knex, {
    user_id: user.id,
    type: LOG_TYPE.system,
    username: user.username,
    token_id: Number(t.id),
    token_name: t.name,
    ip,
    content: translate(serverLang(app), 'log.token_key_read', { name: t.name, id: Number(t.id) }),
  });
  return { key: t.key };
}

/** Creates one token, or `count` tokens (the first keeps the name, the others get a random suffix). */
export async function createTokens(app: AppContext, user: UserRow, input: TokenCreate) {
  checkGroup(app, user, input.group);
  checkExpiry(input.expired_time);
  const count = input.count ?? 1;
  const now = nowSec();
  const base = {
    user_id: user.id,
    status: TOKEN_STATUS.enabled,
    created_time: now,
    accessed_time: now,
    expired_time: input.expired_time ?? -1,
    remain_quota: input.remain_quota ?? 0,
    unlimited_quota: input.unlimited_quota ?? false,
    model_limits_enabled: input.model_limits_enabled ?? false,
    model_limits: input.model_limits ?? '',
    allow_ips: input.allow_ips ?? '',
    group: input.group ?? '',
  };
  const rows = Array.from({ length: count }, (_, i) => ({ ...base, name: i === 0 ? input.name : `${input.name}-${randomString(6)}`, key: randomString(48) }));
  const ids = await app.knex.transaction(async (trx) => {
    const out: number[] = [];
    for (const row of rows) {
      const [inserted] = await trx('tokens').insert(row).returning('id');
      out.push(typeof inserted === 'object' ? (inserted as { id: number }).id : (inserted as number));
    }
    return out;
  });
  const saved: TokenRow[] = await app.knex('tokens').whereIn('id', ids).orderBy('id');
  // The one answer with full keys: the caller just made them (lists and reads mask them).
  const views = saved.map((row) => tokenView(row, true));
  return count > 1 ? views : views[0]!;
}

/**
 * Updates the caller's own token. `statusOnly` changes only the status (enable/disable). Enabling
 * an expired or exhausted token is refused until its expiry or quota allows it.
 */
export async function updateToken(app: AppContext, user: UserRow, input: TokenUpdate, statusOnly: boolean) {
  if (statusOnly && input.status === undefined) throw new BadRequestError('token.status_missing');
  if (input.name !== undefined && !input.name) throw new BadRequestError('token.name_empty');
  checkGroup(app, user, input.group);
  const patch: Partial<TokenRow> = {};
  if (statusOnly) patch.status = input.status!;
  else {
    for (const k of [
      'name',
      'remain_quota',
      'unlimited_quota',
      'expired_time',
      'model_limits_enabled',
      'model_limits',
      'allow_ips',
      'group',
      'status',
    ] as const) {
      if (input[k] !== undefined) (patch as Record<string, unknown>)[k] = input[k];
    }
  }
  const saved = await app.knex.transaction(async (trx) => {
    const old = await findOwnToken(trx, user.id, input.id);
    if (!old) throw new NotFoundError('token.not_found');
    if (patch.expired_time !== undefined && Number(patch.expired_time) !== Number(old.expired_time)) checkExpiry(Number(patch.expired_time));
    const merged = { ...tokenView(old), ...patch } as ReturnType<typeof tokenView>;
    const now = nowSec();
    if (patch.status === TOKEN_STATUS.enabled && Number(old.status) !== TOKEN_STATUS.enabled) {
      if (merged.expired_time !== -1 && merged.expired_time <= now) {
        throw new BadRequestError('token.enable_expired');
      }
      if (Number(old.status) === TOKEN_STATUS.exhausted && !merged.unlimited_quota && merged.remain_quota <= 0) {
        throw new BadRequestError('token.enable_exhausted');
      }
    }
    if (Object.keys(patch).length) await trx('tokens').where({ id: old.id, user_id: user.id }).whereNull('deleted_at').update(patch);
    return (await findOwnToken(trx, user.id, input.id))!;
  });
  await invalidateToken(app, saved.key);
  return tokenView(saved);
}

export async function deleteToken(app: AppContext, user: UserRow, id: number) {
  const t = await findOwnToken(app.knex, user.id, id);
  if (!t) throw new NotFoundError('token.not_found');
  const n = await app.knex('tokens').where({ id, user_id: user.id }).whereNull('deleted_at').update({ deleted_at: nowSec() });
  if (!n) throw new NotFoundError('token.not_found');
  await invalidateToken(app, t.key);
}
