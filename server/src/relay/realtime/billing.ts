import type { AppContext } from '../../context';
import { computeQuota, estimateQuota, type PriceInfo } from '../../services/billing';
import { serverLang, t } from '../../i18n';
import { Reservation } from '../../ledger/reservation';
import type { Payer } from '../../ledger/balances';
import { usageBatcher } from '../../ledger/usage';
import { LOG_TYPE } from '../../repositories/logs';
import { markTokenUsedUp, TOKEN_STATUS } from '../../repositories/tokens';
import { invalidateToken } from '../../services/invalidate';
import { nowSec } from '../../lib/time';
import type { Principal } from '../auth';
import type { ChannelInfo } from '../types';
import { isRecord } from '../adaptors/shared';

/** Token counts of one realtime response (`response.done`'s `response.usage`). */
export interface RealtimeUsage {
  textIn: number;
  audioIn: number;
  /** Cached input tokens (part of textIn + audioIn), billed at the cache ratio. */
  cachedText: number;
  cachedAudio: number;
  textOut: number;
  audioOut: number;
}

const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
/** A usage sub-object, or an empty one when the event left it out. */
const rec = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : {});

/**
 * `response.usage` → counts. The details split text from audio; when they are missing the totals
 * count as text (the cheaper side never over-bills an unknown split).
 */
export function realtimeUsage(raw: unknown): RealtimeUsage | undefined {
  const u = rec(raw);
  if (!('input_tokens' in u) && !('output_tokens' in u) && !('total_tokens' in u)) return undefined;
  const inD = rec(u.input_token_details);
  const outD = rec(u.output_token_details);
  const cachedD = rec(inD.cached_tokens_details);
  const input = n(u.input_tokens);
  const output = n(u.output_tokens);
  const audioIn = Math.min(n(inD.audio_tokens), input);
  const audioOut = Math.min(n(outD.audio_tokens), output);
  // Image tokens (gpt-realtime) are billed as text input.
  const textIn = input - audioIn;
  const textOut = output - audioOut;
  const cached = Math.min(n(inD.cached_tokens), input);
  const cachedAudio = Math.min(n(cachedD.audio_tokens), audioIn, cached);
  const cachedText = Math.min(cached - cachedAudio, textIn);
  return { textIn, audioIn, cachedText, cachedAudio, textOut, audioOut };
}

type NumMap = Record<string, number>;
const ratioOf = (app: AppContext, key: string, model: string): number => {
  const v = app.options.json<NumMap>(key, {})?.[model];
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 1;
};

/**
 * The quota of one realtime response. Ratios: text input 1, text output CompletionRatio, audio
 * input AudioRatio, audio output AudioRatio × AudioCompletionRatio (both option maps, default 1),
 * cached input × CacheRatio; all × model ratio × group ratio. A fixed ModelPrice is per response.
 */
export function realtimeQuota(app: AppContext, price: PriceInfo, u: RealtimeUsage): number {
  if (price.usePrice) return computeQuota(app, price, { promptTokens: 0, completionTokens: 0, calls: 1 });
  const audio = ratioOf(app, 'AudioRatio', price.model);
  const audioOut = ratioOf(app, 'AudioCompletionRatio', price.model);
  const weighted =
    u.textIn -
    u.cachedText +
    u.cachedText * price.cacheRatio +
    (u.audioIn - u.cachedAudio) * audio +
    u.cachedAudio * audio * price.cacheRatio +
    u.textOut * price.completionRatio +
    u.audioOut * audio * audioOut;
  return Math.round(price.groupRatio * price.modelRatio * weighted);
}

/** Output tokens the reservation of each stretch of a session covers (at the text output price). */
const RESERVE_TOKENS = 4096;

export class QuotaExhausted extends Error {}

/**
 * The money of one realtime session: a reservation is open at all times while it runs. Each
 * `response.done` settles it to that response's cost (one log row per response) and opens the
 * next one; a session whose next reservation cannot be taken, or whose response cost more than
 * the balances held, is out of quota. The close refunds the reservation still open.
 */
export class RealtimeMeter {
  private res: Reservation | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly payer: Payer;
  private readonly amount: number;
  private closed = false;
  private readonly started = Date.now();

  constructor(
    private readonly app: AppContext,
    private readonly principal: Principal,
    private readonly model: string,
    private readonly price: PriceInfo,
    private readonly channel: ChannelInfo,
    private readonly ip: string,
    private readonly upstreamModel: string,
  ) {
    this.payer = { userId: principal.user.id, limitedTokenId: principal.token && !principal.token.unlimited ? principal.token.id : undefined };
    this.amount = estimateQuota(app, price, 0, RESERVE_TOKENS);
  }

  /** Takes the first reservation; throws the 403 RelayError when it does not fit. */
  async open(): Promise<void> {
    const res = this.newReservation();
    await res.open();
    this.res = res;
  }

  private newReservation(): Reservation {
    const p = this.principal;
    return new Reservation(this.app, this.payer, this.amount, { tokenId: p.token?.id ?? 0, model: this.model, group: p.group, stream: true });
  }

  /**
   * Bills one response; resolves false when the session is out of quota (no reservation left
   * open). Calls are serialised: each settles the reservation the previous one opened.
   */
  bill(usage: RealtimeUsage, responseId: string): Promise<boolean> {
    const next = this.chain.then(() => this.billNow(usage, responseId));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async billNow(usage: RealtimeUsage, responseId: string): Promise<boolean> {
    const res = this.res;
    // A response that finished as the session closed is still billed (close() waits for the chain).
    if (!res) return false;
    this.res = undefined;
    const actual = realtimeQuota(this.app, this.price, usage);
    const prompt = usage.textIn + usage.audioIn;
    const completion = usage.textOut + usage.audioOut;
    const s = await res.settle(actual, this.channel.id, prompt, completion);
    this.log(res, s.taken, usage, responseId);
    if (s.taken < actual) return false;
    // Opened even when the session is closing: a response already queued behind this one settles
    // it, and close() refunds what is left once the queue is done.
    const nextRes = this.newReservation();
    try {
      await nextRes.open();
    } catch {
      return false;
    }
    this.res = nextRes;
    return true;
  }

  private log(res: Reservation, taken: number, u: RealtimeUsage, responseId: string): void {
    const { app, principal } = this;
    const batcher = usageBatcher(app);
    const resId = res.handOver();
    if (resId !== undefined) batcher.closeReservation(resId);
    batcher.addUsage(principal.user.id, principal.token?.id, this.channel.id, taken);
    if (app.options.bool('LogConsumeEnabled')) {
      const p = this.price;
      const other = {
        model_ratio: p.modelRatio,
        completion_ratio: p.completionRatio,
        cache_ratio: p.cacheRatio,
        group_ratio: p.groupRatio,
        model_price: p.usePrice ? p.modelPrice : -1,
        audio_ratio: ratioOf(app, 'AudioRatio', this.model),
        audio_completion_ratio: ratioOf(app, 'AudioCompletionRatio', this.model),
        realtime: true,
        response_id: responseId,
        text_input: u.textIn,
        audio_input: u.audioIn,
        text_output: u.textOut,
        audio_output: u.audioOut,
        cache_tokens: u.cachedText + u.cachedAudio,
        group: principal.group,
        admin_info: { use_channel: [this.channel.id] },
        request_format: 'realtime',
        upstream_format: 'realtime',
        passthrough: true,
        ...(this.upstreamModel !== this.model ? { is_model_mapped: true, upstream_model_name: this.upstreamModel } : {}),
      };
      batcher.addRow({
        user_id: principal.user.id,
        created_at: nowSec(),
        type: LOG_TYPE.consume,
        username: principal.user.username,
        token_name: principal.tokenName,
        token_id: principal.token?.id ?? 0,
        model_name: this.model,
        quota: taken,
        prompt_tokens: u.textIn + u.audioIn,
        completion_tokens: u.textOut + u.audioOut,
        use_time: Math.floor((Date.now() - this.started) / 1000),
        is_stream: true,
        channel_id: this.channel.id,
        channel_name: this.channel.name,
        group: principal.group,
        ip: this.ip,
        content: p.usePrice
          ? t(serverLang(this.app), 'log.realtime_price', { price: p.modelPrice, group: p.groupRatio })
          : t(serverLang(this.app), 'log.realtime_ratios', {
              model: p.modelRatio,
              completion: p.completionRatio,
              audio: other.audio_ratio,
              audioCompletion: other.audio_completion_ratio,
              group: p.groupRatio,
            }),
        other: JSON.stringify(other),
      });
    }
  }

  /** The session ended: the reservation still open goes back (after any bill in flight). */
  async close(): Promise<void> {
    this.closed = true;
    await this.chain;
    const res = this.res;
    this.res = undefined;
    if (res) await res.refund().catch((err: unknown) => this.app.log.warn({ err }, 'realtime refund failed'));
    // A limited token used up by this session is marked, like the relay does after a call.
    const token = this.principal.token;
    if (token && this.payer.limitedTokenId) {
      void markTokenUsedUp(this.app.knex, token.id, TOKEN_STATUS.exhausted, nowSec())
        .then((k) => (k ? invalidateToken(this.app, token.key) : undefined))
        .catch(() => undefined);
    }
  }
}
