import { usageBatcher } from '../../ledger/usage';
import { computeQuota, type PriceInfo } from '../../services/billing';
import { serverLang, t, type Lang } from '../../i18n';
import type { BalanceAfter } from '../../ledger/balances';
import { maybeWarnQuota } from '../../services/notify';
import { invalidateToken } from '../../services/invalidate';
import { LOG_TYPE } from '../../repositories/logs';
import { markTokenUsedUp, TOKEN_STATUS } from '../../repositories/tokens';
import { nowSec } from '../../lib/time';
import { jsonName, jsonNumber } from '../../lib/json';
import type { RelayCall } from './relayCall';
import { ignore, unconvertedNote } from './relayCall';
import type { CallPlan } from './plan';
import type { CallMoney } from './money';
import type { Answer, RelayOutcome } from './outcome';

export type Settled = BalanceAfter & { taken: number };

/** Moves the reservation to the call's real cost; the outcome's quota is what was taken. */
export async function settleCall(call: RelayCall, plan: CallPlan, money: CallMoney, answer: Answer, outcome: RelayOutcome): Promise<Settled> {
  const t = answer.tokens;
  const actual =
    t.calls === 0 ? 0 : computeQuota(call.app, plan.price, { promptTokens: t.prompt, completionTokens: t.completion, cachedTokens: t.cached, calls: t.calls });
  const s = await money.res.settle(actual, answer.channel.info.id, t.prompt, t.completion).catch((err: unknown) => {
    // The settle failed and is repaired at the cost (ledger/repair.ts) — unless nothing of the
    // answer reached the client: then the call fails and is not charged.
    if (!call.ctx.res.headersSent) money.res.notDelivered();
    throw err;
  });
  money.view?.note(money.payer, s);
  outcome.quota = s.taken;
  return s;
}

/** The per-call fields of the consume log's `other` JSON (after the price's fields). */
export interface LogOtherTail {
  frt: number;
  is_model_mapped: boolean;
  cache_tokens: number;
  group: string;
  admin_info: { use_channel: number[]; is_multi_key?: boolean; multi_key_index?: number };
  upstream_model_name?: string;
  /** The client's protocol, the upstream's, and whether the body went unconverted. */
  request_format: string;
  upstream_format: string;
  passthrough: boolean;
  /** Built-in tools a conversion left out (see unconvertedNote). */
  unconverted?: string;
}

/**
 * `JSON.stringify(tail)` without its opening brace, written by hand (one row per relayed call:
 * the keys escaped per call were a measurable share of it). Keys in LogOtherTail's order; the
 * optional ones after, as recordUsage adds them.
 */
export function logTailJson(tail: LogOtherTail): string {
  const a = tail.admin_info;
  let channels = '';
  for (let i = 0; i < a.use_channel.length; i++) channels += (i ? ',' : '') + jsonNumber(a.use_channel[i]!);
  let admin = `{"use_channel":[${channels}]`;
  if (a.is_multi_key !== undefined) admin += `,"is_multi_key":${a.is_multi_key}`;
  if (a.multi_key_index !== undefined) admin += `,"multi_key_index":${jsonNumber(a.multi_key_index)}`;
  let s =
    `"frt":${jsonNumber(tail.frt)},"is_model_mapped":${tail.is_model_mapped},"cache_tokens":${jsonNumber(tail.cache_tokens)},` +
    `"group":${jsonName(tail.group)},"admin_info":${admin}},"request_format":${jsonName(tail.request_format)},` +
    `"upstream_format":${jsonName(tail.upstream_format)},"passthrough":${tail.passthrough}`;
  if (tail.unconverted !== undefined) s += `,"unconverted":${JSON.stringify(tail.unconverted)}`;
  if (tail.upstream_model_name !== undefined) s += `,"upstream_model_name":${jsonName(tail.upstream_model_name)}`;
  return s + '}';
}

/** The call's part of a queued consume log's `other` JSON, written with the row. */
class OtherTail {
  constructor(private readonly tail: LogOtherTail) {}
  json(): string {
    return logTailJson(this.tail);
  }
}

/** The consume log's text for one price: the `content` line and the head of the `other` JSON. */
function priceLogText(price: PriceInfo, lang: Lang): { content: string; otherHead: string } {
  const head = {
    model_ratio: price.modelRatio,
    completion_ratio: price.completionRatio,
    cache_ratio: price.cacheRatio,
    group_ratio: price.groupRatio,
    model_price: price.usePrice ? price.modelPrice : -1,
  };
  return {
    content: price.usePrice
      ? t(lang, 'log.price', { price: price.modelPrice, group: price.groupRatio })
      : t(lang, 'log.ratios', { model: price.modelRatio, completion: price.completionRatio, group: price.groupRatio }),
    otherHead: `${JSON.stringify(head).slice(0, -1)},`,
  };
}

/** After the answer: usage counters and the consume log row (batched), the quota warning, an exhausted token. */
export function recordUsage(call: RelayCall, plan: CallPlan, money: CallMoney, answer: Answer, outcome: RelayOutcome, s: Settled): void {
  const { app, principal } = call;
  const taken = s.taken;
  const channel = answer.channel.info;
  const batcher = usageBatcher(app);
  // The settled reservation row is deleted by the flush that writes this call's log row and counters.
  const resId = money.res.handOver();
  if (resId !== undefined) batcher.closeReservation(resId);
  if (taken > 0 || answer.tokens.calls > 0) batcher.addUsage(principal.user.id, principal.token?.id, channel.id, taken);
  if (app.options.bool('LogConsumeEnabled')) {
    const price = plan.price;
    const text = (price.logText ??= priceLogText(price, serverLang(app)));
    const mapped = outcome.upstreamModel !== call.model;
    // The `other` JSON in two parts: the price's once per price (PriceInfo is cached until the
    // options change: formatting its ratios per call was measurable), this call's here;
    // `otherHead` ends with a comma, so the call's object is joined without its brace.
    const tail: LogOtherTail = {
      frt: outcome.frtMs,
      is_model_mapped: mapped,
      cache_tokens: outcome.cachedTokens,
      group: principal.group,
      admin_info: { use_channel: outcome.channels },
      request_format: call.inbound.name,
      upstream_format: call.upstreamFormat ?? call.inbound.name,
      passthrough: call.passthrough ?? true,
    };
    // A multi-key channel's key by its index (never the key itself).
    if (outcome.keyIndex >= 0) tail.admin_info = { use_channel: outcome.channels, is_multi_key: true, multi_key_index: outcome.keyIndex };
    const note = call.passthrough === false ? unconvertedNote(call) : undefined;
    if (note) tail.unconverted = note;
    if (mapped) tail.upstream_model_name = outcome.upstreamModel;
    // A complete row (no defaults to merge in): this runs once per relayed call.
    batcher.addRow({
      user_id: principal.user.id,
      created_at: nowSec(),
      type: LOG_TYPE.consume,
      username: principal.user.username,
      token_name: principal.tokenName,
      token_id: principal.token?.id ?? 0,
      model_name: call.model,
      quota: taken,
      prompt_tokens: outcome.promptTokens,
      completion_tokens: outcome.completionTokens,
      use_time: Math.floor(call.timer.totalMs() / 1000),
      is_stream: call.stream,
      channel_id: channel.id,
      channel_name: channel.name,
      group: principal.group,
      ip: call.ip,
      content: text.content,
      // The call's part is written with the row (QueuedLog says why).
      other: text.otherHead,
      otherTail: new OtherTail(tail),
    });
  }
  const pre = money.pre;
  const after = s.userQuota ?? (pre.userQuota !== undefined ? pre.userQuota + money.reserved - taken : undefined);
  if (after !== undefined) maybeWarnQuota(app, principal.user, after + taken, after);
  const tokenRemain = s.tokenRemain ?? pre.tokenRemain;
  if (money.payer.limitedTokenId && tokenRemain !== undefined && tokenRemain <= 0 && principal.token) {
    const token = principal.token;
    void markTokenUsedUp(app.knex, token.id, TOKEN_STATUS.exhausted, nowSec())
      .then((n) => (n ? invalidateToken(app, token.key) : undefined))
      .catch(ignore);
  }
}
