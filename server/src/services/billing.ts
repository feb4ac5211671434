import type { Knex } from 'knex';
import type { AppContext } from '../context';
import { rowsOf } from '../db/knex';
import { RelayError } from '../relay/errors';
import { pgFast } from '../relay/pgFast';
import { fastMove, SQL_ADD, SQL_DEC, type MoveOutcome } from '../relay/balanceMoves';
import { OP, recordKnex, type ReservationRow } from '../ledger/records';

/**
 * Pricing and atomic balance moves for the relay.
 *
 * quota = round(group_ratio × model_ratio × (uncached_prompt + cached × cache_ratio + completion × completion_ratio))
 * or, for a model with a fixed ModelPrice: round(model_price × group_ratio × QuotaPerUnit) per call.
 */

/** Ratio used for a model without price or ratio when the user accepts unset models (one-api's default). */
export const UNSET_MODEL_RATIO = 37.5;

export interface PriceInfo {
  model: string;
  /** Fixed price per call (USD) when ModelPrice has the model. */
  usePrice: boolean;
  modelPrice: number;
  modelRatio: number;
  completionRatio: number;
  cacheRatio: number;
  groupRatio: number;
  /** The model had neither price nor ratio (accepted by user setting / self-use mode). */
  unset: boolean;
  /** Consume-log text of this price, built on first use (relay handler; formatting fractions costs per call). */
  logText?: { content: string; otherHead: string };
}

type NumMap = Record<string, number>;
const num = (m: NumMap, k: string): number | undefined => {
  const v = m?.[k];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};

export function groupRatio(app: AppContext, group: string): number {
  return num(app.options.json<NumMap>('GroupRatio', {}), group) ?? 1;
}

/** True when the model has a fixed price or a ratio. */
export function isPriced(app: AppContext, model: string): boolean {
  return num(app.options.json<NumMap>('ModelPrice', {}), model) !== undefined || num(app.options.json<NumMap>('ModelRatio', {}), model) !== undefined;
}

/**
 * Price of one call of `model` in `group`; throws a 403 RelayError for an unpriced model unless
 * `acceptUnset` (user setting accept_unset_model_ratio_model, or SelfUseModeEnabled).
 */
export function priceFor(app: AppContext, model: string, group: string, acceptUnset: boolean): PriceInfo {
  // Kept until the options change (a refusal is not kept: it throws each time), in nested maps:
  // a per-call key string would be built and hashed on every call.
  const byModel = app.options.derived('billing:prices', () => [new Map<string, Map<string, PriceInfo>>(), new Map<string, Map<string, PriceInfo>>()] as const)[acceptUnset ? 1 : 0];
  let byGroup = byModel.get(model);
  if (!byGroup) {
    if (byModel.size >= 10_000) byModel.clear(); // a bound, not a policy: prices are rebuilt on demand
    byModel.set(model, (byGroup = new Map()));
  }
  let price = byGroup.get(group);
  if (!price) byGroup.set(group, (price = computePrice(app, model, group, acceptUnset)));
  return price;
}

function computePrice(app: AppContext, model: string, group: string, acceptUnset: boolean): PriceInfo {
  const o = app.options;
  const price = num(o.json<NumMap>('ModelPrice', {}), model);
  const gr = groupRatio(app, group);
  const cr = num(o.json<NumMap>('CompletionRatio', {}), model) ?? 1;
  const cache = num(o.json<NumMap>('CacheRatio', {}), model) ?? 1;
  if (price !== undefined) {
    return { model, usePrice: true, modelPrice: price, modelRatio: 0, completionRatio: cr, cacheRatio: cache, groupRatio: gr, unset: false };
  }
  const ratio = num(o.json<NumMap>('ModelRatio', {}), model);
  if (ratio === undefined) {
    if (!acceptUnset && !o.bool('SelfUseModeEnabled')) {
      throw new RelayError(403, `模型 ${model} 倍率或价格未配置，请联系管理员设置或开始自用模式`, 'model_price_not_set');
    }
    return { model, usePrice: false, modelPrice: -1, modelRatio: UNSET_MODEL_RATIO, completionRatio: cr, cacheRatio: cache, groupRatio: gr, unset: true };
  }
  return { model, usePrice: false, modelPrice: -1, modelRatio: ratio, completionRatio: cr, cacheRatio: cache, groupRatio: gr, unset: false };
}

export interface UsageForBilling {
  promptTokens: number;
  completionTokens: number;
  /** Cached prompt tokens (part of promptTokens). */
  cachedTokens?: number;
  /** Calls (images: n); a fixed price is charged per call. Default 1. */
  calls?: number;
}

/** The exact quota a call costs. */
export function computeQuota(app: AppContext, p: PriceInfo, u: UsageForBilling): number {
  if (p.usePrice) return Math.round(p.modelPrice * p.groupRatio * app.options.quotaPerUnit * (u.calls ?? 1));
  const cached = Math.min(Math.max(0, u.cachedTokens ?? 0), Math.max(0, u.promptTokens));
  const prompt = Math.max(0, u.promptTokens) - cached;
  const weighted = prompt + cached * p.cacheRatio + Math.max(0, u.completionTokens) * p.completionRatio;
  return Math.round(p.groupRatio * p.modelRatio * weighted);
}

/**
 * The amount reserved before calling upstream: the cost of the estimated prompt plus `max_tokens`
 * of completion, at least PreConsumedQuota (fixed-price models: exactly their price).
 */
export function estimateQuota(app: AppContext, p: PriceInfo, promptTokens: number, maxTokens: number, calls = 1): number {
  if (p.usePrice) return computeQuota(app, p, { promptTokens: 0, completionTokens: 0, calls });
  const est = computeQuota(app, p, { promptTokens, completionTokens: Math.max(0, maxTokens) });
  return Math.max(est, Math.max(0, Math.floor(app.options.num('PreConsumedQuota', 0))));
}

export interface Payer {
  userId: number;
  /** A limited token (remain_quota is charged too); undefined for unlimited tokens / playground. */
  limitedTokenId?: number;
}

const isPg = (app: AppContext) => app.db.kind === 'postgres';


const firstV = (rows: Array<Record<string, unknown>>) => (rows.length ? Number(rows[0]!.v) : undefined);

/** Runs one hot statement: on PostgreSQL outside a transaction as a prepared statement (pgFast), else through knex (or the trx). */
function hot(app: AppContext, trx: Knex | Knex.Transaction, sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>> {
  if (trx !== app.knex || app.db.kind !== 'postgres') return viaKnex(trx, sql, params);
  return pgFast(app, sql, params).then((rows) => rows ?? viaKnex(trx, sql, params));
}

async function viaKnex(trx: Knex | Knex.Transaction, sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>> {
  return rowsOf(await trx.raw(sql, params as Knex.RawBinding[]));
}

async function decrementIf(app: AppContext, trx: Knex | Knex.Transaction, table: 'users' | 'tokens', id: number, amount: number): Promise<number | undefined> {
  return firstV(await hot(app, trx, SQL_DEC[table]!, [amount, id, amount]));
}

async function add(app: AppContext, trx: Knex | Knex.Transaction, table: 'users' | 'tokens', id: number, amount: number): Promise<number | undefined> {
  return firstV(await hot(app, trx, SQL_ADD[table]!, [amount, id]));
}

async function readLocked(app: AppContext, trx: Knex | Knex.Transaction, table: 'users' | 'tokens', column: 'quota' | 'remain_quota', id: number): Promise<number> {
  const q = trx(table).where('id', id).first(column);
  if (isPg(app)) q.forUpdate();
  const row = (await q) as Record<string, number> | undefined;
  return Number(row?.[column] ?? 0);
}

export interface BalanceAfter {
  /** The user's quota after the move (undefined if unknown). */
  userQuota?: number;
  tokenRemain?: number;
  /** SQLite: when the move ran, in write order (sqliteFast.writeSeq); absent on other paths. */
  seq?: number;
}

const insufficientUser = () => new RelayError(403, '用户额度不足', 'insufficient_user_quota', 'insufficient_quota');
const insufficientToken = () => new RelayError(403, '令牌额度不足', 'insufficient_token_quota', 'insufficient_quota');

/**
 * Atomically takes `amount` from the user and (limited) token, or nothing: 403 when either lacks it.
 * SQLite: a move of the next group commit (relay/balanceMoves.ts); else one knex transaction.
 * With `res`, its reservation row is inserted (open) in the same commit as the take.
 */
export function preConsume(app: AppContext, payer: Payer, amount: number, res?: ReservationRow): Promise<BalanceAfter> {
  if (amount <= 0) return Promise.resolve({});
  // Not async: on the hot path each async layer is one more promise and microtask.
  return fastMove(app, payer.userId, payer.limitedTokenId, amount, true, res, res ? OP.open : 0).then((r) => {
    if (r === 'user') throw insufficientUser();
    if (r === 'token') throw insufficientToken();
    return r ?? slowPreConsume(app, payer, amount, res);
  });
}

function slowPreConsume(app: AppContext, payer: Payer, amount: number, res: ReservationRow | undefined): Promise<BalanceAfter> {
  const tokenId = payer.limitedTokenId;
  if (!tokenId && !res) {
    // One conditional statement: no transaction needed.
    return decrementIf(app, app.knex, 'users', payer.userId, amount).then((userQuota) => {
      if (userQuota === undefined) throw insufficientUser();
      return { userQuota };
    });
  }
  return app.knex.transaction(async (trx) => {
    const userQuota = await decrementIf(app, trx, 'users', payer.userId, amount);
    if (userQuota === undefined) throw insufficientUser();
    let tokenRemain: number | undefined;
    if (tokenId) {
      tokenRemain = await decrementIf(app, trx, 'tokens', tokenId, amount);
      if (tokenRemain === undefined) throw insufficientToken();
    }
    if (res) await recordKnex(trx, isPg(app), res, OP.open);
    return tokenId ? { userQuota, tokenRemain } : { userQuota };
  });
}

/**
 * Gives a reservation back (failed request). With `res`, its row is written in the same commit:
 * deleted (`op` close, the default) or marked settled (a settle below the reserved amount).
 */
export function refund(app: AppContext, payer: Payer, amount: number, res?: ReservationRow, op: number = OP.close): Promise<BalanceAfter> {
  if (amount <= 0) return Promise.resolve({});
  return fastMove(app, payer.userId, payer.limitedTokenId, amount, false, res, res ? op : 0).then((r) => (r as BalanceAfter | undefined) ?? slowRefund(app, payer, amount, res, op));
}

function slowRefund(app: AppContext, payer: Payer, amount: number, res: ReservationRow | undefined, op: number): Promise<BalanceAfter> {
  const tokenId = payer.limitedTokenId;
  if (!tokenId && !res) return add(app, app.knex, 'users', payer.userId, amount).then((userQuota) => ({ userQuota }));
  return app.knex.transaction(async (trx) => {
    const userQuota = await add(app, trx, 'users', payer.userId, amount);
    const tokenRemain = tokenId ? await add(app, trx, 'tokens', tokenId, amount) : undefined;
    if (res) await recordKnex(trx, isPg(app), res, op);
    return tokenId ? { userQuota, tokenRemain } : { userQuota };
  });
}

/**
 * Moves a reservation to the real cost. Extra cost is taken only as far as the balances reach
 * (never below zero: concurrent calls cannot overspend), so the result `taken` — what the log row
 * records — may be below `actual` when the balance ran out mid-call. With `res` (and `op`: settle,
 * or settleNew when nothing was reserved), its row is marked settled — `res.taken` is set before
 * the move is queued and corrected by the clamped path — in the same commit as the move.
 */
export function settle(app: AppContext, payer: Payer, reserved: number, actual: number, res?: ReservationRow, op = 0): Promise<BalanceAfter & { taken: number }> {
  const delta = actual - reserved;
  if (!res) op = 0;
  if (res) res.taken = actual;
  if (delta === 0) {
    if (op === 0) return Promise.resolve({ taken: actual });
    // Only the row changes: a move of amount 0.
    return fastMove(app, payer.userId, payer.limitedTokenId, 0, false, res, op).then((r) =>
      r !== undefined && typeof r !== 'string' ? Object.assign(r, { taken: actual }) : app.knex.transaction((trx) => recordKnex(trx, isPg(app), res!, op)).then(() => ({ taken: actual })),
    );
  }
  if (delta < 0) return refund(app, payer, -delta, res, op).then((after) => Object.assign(after, { taken: actual }));
  // The whole extra cost in one go; the clamped path only when a balance ran out (the refused
  // take wrote nothing) or the fast path is unavailable.
  return fastMove(app, payer.userId, payer.limitedTokenId, delta, true, res, op).then((r: MoveOutcome | undefined) =>
    r === undefined || typeof r === 'string' ? settleClamped(app, payer, reserved, delta, res, op) : Object.assign(r, { taken: actual }),
  );
}

/** Takes the extra cost `delta` as far as the balances reach, in one transaction (with the reservation row). */
function settleClamped(app: AppContext, payer: Payer, reserved: number, delta: number, res: ReservationRow | undefined, op: number): Promise<BalanceAfter & { taken: number }> {
  return app.knex.transaction(async (trx) => {
    let extra = delta;
    let userQuota = await decrementIf(app, trx, 'users', payer.userId, delta);
    if (userQuota === undefined) {
      const have = await readLocked(app, trx, 'users', 'quota', payer.userId);
      extra = Math.min(delta, Math.max(0, have));
      userQuota = extra > 0 ? await add(app, trx, 'users', payer.userId, -extra) : have;
    }
    let tokenRemain: number | undefined;
    if (payer.limitedTokenId && extra > 0) {
      tokenRemain = await decrementIf(app, trx, 'tokens', payer.limitedTokenId, extra);
      if (tokenRemain === undefined) {
        const have = await readLocked(app, trx, 'tokens', 'remain_quota', payer.limitedTokenId);
        const tokExtra = Math.min(extra, Math.max(0, have));
        if (tokExtra < extra) userQuota = await add(app, trx, 'users', payer.userId, extra - tokExtra);
        extra = tokExtra;
        tokenRemain = extra > 0 ? await add(app, trx, 'tokens', payer.limitedTokenId, -extra) : have;
      }
    }
    if (res && op !== 0) {
      res.taken = reserved + extra;
      await recordKnex(trx, isPg(app), res, op);
    }
    return { userQuota, tokenRemain, taken: reserved + extra };
  });
}
