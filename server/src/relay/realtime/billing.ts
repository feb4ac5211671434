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
import { isRecord } from '../../protocols/shared';
import { countTextTokens } from '../tokenizer';

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
  return Math.min(Number.MAX_SAFE_INTEGER, Math.round(price.groupRatio * price.modelRatio * weighted));
}

/** Output tokens the reservation held for each response covers. */
export const RESERVE_TOKENS = 4096;
/** Assistant audio is counted one token per 50 ms (OpenAI's count for realtime output audio). */
const AUDIO_OUT_TOKENS_PER_SECOND = 20;

const NO_USAGE: RealtimeUsage = { textIn: 0, audioIn: 0, cachedText: 0, cachedAudio: 0, textOut: 0, audioOut: 0 };

/**
 * The output of a response the client got, counted when the upstream reported no usage for it (the
 * client left and the cancelled response's `response.done` did not come in time, or the upstream
 * went away): text deltas through the tokenizer, audio from its duration (bytes at the format's
 * rate). The input the response read is unknown without the upstream's count and is not billed.
 */
export function deliveredUsage(text: string, audioBytes: number, bytesPerSecond: number, model: string): RealtimeUsage {
  const textOut = countTextTokens(text, model);
  const audioOut = audioBytes > 0 && bytesPerSecond > 0 ? Math.ceil((audioBytes * AUDIO_OUT_TOKENS_PER_SECOND) / bytesPerSecond) : 0;
  return { ...NO_USAGE, textOut, audioOut };
}

/** What a bill came to: settled and the next reservation held; the response cost more than the balances held; or the next reservation could not be taken. */
export type BillResult = 'ok' | 'exhausted' | 'uncovered';

/** How a response's bill was made, for its log row. */
export interface BillNote {
  /** Billed after the client left (the response was cancelled upstream). */
  clientGone?: boolean;
  /** Counted from what was relayed (`deliveredUsage`), not from the upstream's usage. */
  estimated?: boolean;
}

/**
 * The money of one realtime session: a reservation is open at all times while it runs, sized for
 * RESERVE_TOKENS of output at the price of what the session can produce — the audio output price
 * while its modalities include audio (OpenAI's default), the text output price for a text-only
 * session. Each `response.done` settles it to that response's cost (one log row per response) and
 * opens the next one; a session whose next reservation cannot be taken, or whose response cost
 * more than the balances held, is out of quota. The close refunds the reservation still open.
 */
export class RealtimeMeter {
  private res: Reservation | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  /** Steps queued on the chain and not finished. */
  private queued = 0;
  private readonly payer: Payer;
  /** The reservation for a response of text, and for one that may speak. */
  readonly textReserve: number;
  readonly audioReserve: number;
  /** The session's modalities include audio: the next reservation is sized for audio. */
  private audio = true;
  /** No new reservation is taken: the session is ending (client gone) or closed. */
  private ending = false;
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
    this.textReserve = estimateQuota(app, price, 0, RESERVE_TOKENS);
    this.audioReserve = Math.max(this.textReserve, realtimeQuota(app, price, { ...NO_USAGE, audioOut: RESERVE_TOKENS }));
  }

  /** The amount reserved for a response that may speak (`audio`) or not. */
  reserveFor(audio: boolean): number {
    return audio ? this.audioReserve : this.textReserve;
  }

  /** The upstream's word on the session's modalities: sizes the reservations taken from now on. */
  setAudio(audio: boolean): void {
    this.audio = audio;
  }

  /** Takes the first reservation (sized for audio: a new session speaks); throws the 403 RelayError when it does not fit. */
  async open(): Promise<void> {
    const res = this.newReservation(this.reserveFor(this.audio));
    await res.open();
    this.res = res;
  }

  private newReservation(amount: number): Reservation {
    const p = this.principal;
    return new Reservation(this.app, this.payer, amount, { tokenId: p.token?.id ?? 0, model: this.model, group: p.group, stream: true });
  }

  private enqueue<T>(step: () => Promise<T>): Promise<T> {
    this.queued++;
    const next = this.chain.then(step).finally(() => this.queued--);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** The reservation held now covers a response that may speak (`audio`) or not, with nothing queued that would replace it. */
  covers(audio: boolean): boolean {
    return this.queued === 0 && this.res !== undefined && this.res.amount >= this.reserveFor(audio);
  }

  /**
   * Makes the reservation held cover a response that may speak (`audio`) or not: a smaller one is
   * given back and the bigger one taken. Resolves false when it cannot be taken (nothing is held
   * then: the session is out of quota).
   */
  cover(audio: boolean): Promise<boolean> {
    return this.enqueue(async () => {
      const res = this.res;
      if (!res || this.ending) return false;
      const want = this.reserveFor(audio);
      if (res.amount >= want) return true;
      this.res = undefined;
      await res.refund();
      return this.openNext(want);
    });
  }

  private async openNext(amount: number): Promise<boolean> {
    const next = this.newReservation(amount);
    try {
      await next.open();
    } catch {
      return false;
    }
    this.res = next;
    return true;
  }

  /** The session is ending (its client left): bills still come, but no new reservation is taken after them. */
  stopReserving(): void {
    this.ending = true;
  }

  /**
   * Bills one response. Calls are serialised: each settles the reservation the previous one opened
   * (or, once none is held, takes the cost as far as the balances reach).
   */
  bill(usage: RealtimeUsage, responseId: string, note: BillNote = {}): Promise<BillResult> {
    return this.enqueue(() => this.billNow(usage, responseId, note));
  }

  private async billNow(usage: RealtimeUsage, responseId: string, note: BillNote): Promise<BillResult> {
    // A response that ends after the reservation went (out of quota, or the session ending) is still
    // billed: a reservation of nothing settles to the cost as far as the balances reach.
    const res = this.res ?? this.newReservation(0);
    this.res = undefined;
    const actual = realtimeQuota(this.app, this.price, usage);
    const prompt = usage.textIn + usage.audioIn;
    const completion = usage.textOut + usage.audioOut;
    const s = await res.settle(actual, this.channel.id, prompt, completion);
    this.log(res, s.taken, usage, responseId, note);
    if (s.taken < actual) return 'exhausted';
    if (this.ending) return 'ok';
    return (await this.openNext(this.reserveFor(this.audio))) ? 'ok' : 'uncovered';
  }

  private log(res: Reservation, taken: number, u: RealtimeUsage, responseId: string, note: BillNote): void {
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
        ...(note.clientGone ? { client_gone: true } : {}),
        ...(note.estimated ? { usage_estimated: true } : {}),
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

  /** The session ended: the reservation still open goes back (after the bills queued before). */
  async close(): Promise<void> {
    this.ending = true;
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
