import type { AppContext } from '../context';
import { msg, serverLang, t } from '../i18n';
import { BadRequestError, NotFoundError } from '../lib/errors';
import { randomString } from '../lib/random';
import { nowSec } from '../lib/time';
import { type Paging } from '../lib/validate';
import { insertLog, LOG_TYPE } from '../repositories/logs';
import { claimRedemption, findRedemption, liveRedemptions, REDEMPTION_STATUS, redemptionView, type RedemptionRow } from '../repositories/redemptions';
import type { UserRow } from '../repositories/users';
import { formatQuota } from './accounts';
import { invalidateUser } from './invalidate';

/** What redemption codes are created with (the console's body, validated by api/redemption/schema.ts). */
export interface RedemptionCreate {
  quota: number;
  name?: string;
  count?: number;
}
export interface RedemptionUpdate {
  id: number;
  name?: string;
  quota?: number;
}
/** A code's status change: unused (1) or disabled (2). */
export interface RedemptionStatus {
  id: number;
  status: 1 | 2;
}
export interface RedeemInput {
  key: string;
}

export const REDEMPTION_NAME_MAX = 20;
export const REDEMPTION_BATCH_MAX = 100;

const esc = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export async function listRedemptions(app: AppContext, paging: Paging, keyword = '') {
  const q = () => {
    const qb = liveRedemptions(app.knex);
    if (keyword) {
      qb.where((w) => {
        if (/^\d{1,9}$/.test(keyword)) w.orWhere('id', Number(keyword));
        w.orWhereRaw("?? like ? escape '\\'", ['name', `%${esc(keyword)}%`]).orWhere('key', keyword);
      });
    }
    return qb;
  };
  const countRow = await q().count({ n: '*' }).first();
  const rows: RedemptionRow[] = await q()
    .select('*')
    .orderBy('id', 'desc')
    .limit(paging.page_size)
    .offset((paging.p - 1) * paging.page_size);
  return { items: rows.map(redemptionView), total: Number(countRow?.n ?? 0), page: paging.p, page_size: paging.page_size };
}

export async function getRedemption(app: AppContext, id: number) {
  const r = await findRedemption(app.knex, id);
  if (!r) throw new NotFoundError('redemption.not_found');
  return redemptionView(r);
}

/** Creates `count` codes (32 random characters each); answers their keys. */
export async function createRedemptions(app: AppContext, admin: UserRow, input: RedemptionCreate): Promise<string[]> {
  let name = input.name ?? '';
  if (!name) name = [...formatQuota(app, input.quota)].slice(0, REDEMPTION_NAME_MAX).join('');
  const now = nowSec();
  const rows = Array.from({ length: input.count ?? 1 }, () => ({
    user_id: admin.id,
    key: randomString(32),
    status: REDEMPTION_STATUS.unused,
    name,
    quota: input.quota,
    created_time: now,
  }));
  await app.knex.transaction(async (trx) => {
    for (let i = 0; i < rows.length; i += 50) await trx('redemptions').insert(rows.slice(i, i + 50));
  });
  return rows.map((r) => r.key);
}

/** Edits name/quota of an unused code (atomic: a code redeemed meanwhile is not touched). */
export async function updateRedemption(app: AppContext, input: RedemptionUpdate) {
  const patch: Partial<RedemptionRow> = {};
  if (input.name !== undefined) {
    if (!input.name) throw new BadRequestError(msg('redemption.name_length', { max: REDEMPTION_NAME_MAX }));
    patch.name = input.name;
  }
  if (input.quota !== undefined) patch.quota = input.quota;
  const old = await findRedemption(app.knex, input.id);
  if (!old) throw new NotFoundError('redemption.not_found');
  if (Number(old.status) !== REDEMPTION_STATUS.unused) throw new BadRequestError('redemption.edit_used');
  if (Object.keys(patch).length) {
    const n = await liveRedemptions(app.knex).where({ id: input.id, status: REDEMPTION_STATUS.unused }).update(patch);
    if (!n) throw new BadRequestError('redemption.edit_used');
  }
  return redemptionView((await findRedemption(app.knex, input.id))!);
}

/** Enables (1) or disables (2) a code; a used code keeps its status. */
export async function setRedemptionStatus(app: AppContext, input: RedemptionStatus) {
  const old = await findRedemption(app.knex, input.id);
  if (!old) throw new NotFoundError('redemption.not_found');
  const n = await liveRedemptions(app.knex).where({ id: input.id }).whereNot('status', REDEMPTION_STATUS.used).update({ status: input.status });
  if (!n) throw new BadRequestError('redemption.status_used');
  return redemptionView((await findRedemption(app.knex, input.id))!);
}

export async function deleteRedemption(app: AppContext, id: number) {
  const n = await liveRedemptions(app.knex).where({ id }).update({ deleted_at: nowSec() });
  if (!n) throw new NotFoundError('redemption.not_found');
}

/**
 * Redeems a code for `user`: one transaction holding the atomic claim (status 1 → 3), the quota
 * credit and the top-up log. Concurrent redeems of one code: exactly one succeeds.
 */
export async function redeem(app: AppContext, user: UserRow, input: RedeemInput): Promise<number> {
  const quota = await app.knex.transaction(async (trx) => {
    const claimed = await claimRedemption(trx, input.key, user.id, nowSec());
    if (!claimed) {
      const existing: RedemptionRow | undefined = await liveRedemptions(trx).where({ key: input.key }).first();
      if (!existing) throw new BadRequestError('redemption.invalid');
      if (Number(existing.status) === REDEMPTION_STATUS.used) throw new BadRequestError('redemption.used');
      throw new BadRequestError('redemption.disabled');
    }
    const q = Number(claimed.quota);
    const n = await trx('users').where({ id: user.id }).whereNull('deleted_at').increment('quota', q);
    if (!n) throw new BadRequestError('user.missing');
    await insertLog(trx, {
      user_id: user.id,
      type: LOG_TYPE.topup,
      username: user.username,
      quota: q,
      content: t(serverLang(app), 'log.redeemed', { amount: formatQuota(app, q), id: claimed.id }),
    });
    return q;
  });
  await invalidateUser(app, user.id);
  return quota;
}
