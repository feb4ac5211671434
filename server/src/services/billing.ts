import type { AppContext } from '../context';
import { msg } from '../i18n';
import { RelayError } from '../relay/errors';
import { own } from '../lib/own';

/**
 * Pricing of relayed calls (the balance moves that charge them: ledger/balances).
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
  const v = own(m, k);
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
  const byModel = app.options.derived('billing:prices', () => [new Map<string, Map<string, PriceInfo>>(), new Map<string, Map<string, PriceInfo>>()] as const)[
    acceptUnset ? 1 : 0
  ];
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
      throw new RelayError(403, msg('billing.price_not_set', { model }), 'model_price_not_set');
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

/**
 * The largest amount one call may cost: an integer a double holds exactly and a bigint column
 * takes. A body's `max_tokens: 1e308` (or `n`) makes an estimate beyond it, which no balance
 * covers: the call is refused for quota instead of the database refusing the number.
 */
const MAX_CALL_QUOTA = Number.MAX_SAFE_INTEGER;

/** The exact quota a call costs (at most MAX_CALL_QUOTA). */
export function computeQuota(app: AppContext, p: PriceInfo, u: UsageForBilling): number {
  if (p.usePrice) return Math.min(MAX_CALL_QUOTA, Math.round(p.modelPrice * p.groupRatio * app.options.quotaPerUnit * (u.calls ?? 1)));
  const cached = Math.min(Math.max(0, u.cachedTokens ?? 0), Math.max(0, u.promptTokens));
  const prompt = Math.max(0, u.promptTokens) - cached;
  const weighted = prompt + cached * p.cacheRatio + Math.max(0, u.completionTokens) * p.completionRatio;
  return Math.min(MAX_CALL_QUOTA, Math.round(p.groupRatio * p.modelRatio * weighted));
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
