import type { ChannelEntry } from '../../channels/routeTable';
import { RelayError } from '../errors';
import { countTextTokens } from '../tokenizer';
import type { Usage } from '../types';
import type { RelayObservation, RelayTimer } from '../../metrics';
import { promptFallback, type RelayCall } from './relayCall';

/** What one call is billed for. */
export interface Tokens {
  prompt: number;
  completion: number;
  cached: number;
  calls: number;
  /** Upstream usage object (passed to the client in converted streams). */
  upstream?: Usage;
}

/** The upstream usage when it reports any, else the tokenizer on the prompt and the delivered text (nothing delivered: nothing). */
export function tokensFrom(u: Usage | undefined, call: RelayCall, completionText: string | (() => string), calls: number, delivered = true): Tokens {
  if (u && (u.prompt_tokens > 0 || u.completion_tokens > 0)) {
    return { prompt: u.prompt_tokens, completion: u.completion_tokens, cached: u.prompt_tokens_details?.cached_tokens ?? 0, calls, upstream: u };
  }
  if (!delivered) return { prompt: 0, completion: 0, cached: 0, calls: 0 };
  const text = typeof completionText === 'function' ? completionText() : completionText;
  return { prompt: promptFallback(call), completion: countTextTokens(text, call.model), cached: 0, calls };
}

/**
 * A channel's answer, read and ready for the client: what it costs, and `finish()`, which sends
 * or ends the client response once the call is billed.
 */
export interface Answer {
  readonly channel: ChannelEntry;
  readonly upstreamModel: string;
  readonly tokens: Tokens;
  /** Time from the request's arrival to the first byte for the client (ms). */
  readonly frtMs: number;
  finish(): void;
}

/**
 * How one relay call ended: filled in as the call goes, then read by the metrics (it is the
 * metrics' observation itself: no copy per call) and by the log row.
 */
export class RelayOutcome implements RelayObservation {
  /** Channel that answered, or the last one tried (0: none). */
  channelId = 0;
  /** HTTP status the client got. */
  status = 200;
  upstreamMs = 0;
  overheadMs = 0;
  /** Quota charged at settlement. */
  quota = 0;
  promptTokens = 0;
  completionTokens = 0;
  cachedTokens = 0;
  /** The model sent upstream (after the channel's model mapping). */
  upstreamModel: string;
  frtMs = 0;
  /** Index of the key of a multi-key channel that answered (-1: a single-key channel). */
  keyIndex = -1;
  /** Channels tried, in order. */
  readonly channels: number[] = [];
  /** The error the call failed with, if it did. */
  error: unknown = undefined;

  constructor(readonly model: string) {
    this.upstreamModel = model;
  }

  answered(a: Answer): void {
    this.channelId = a.channel.info.id;
    this.upstreamModel = a.upstreamModel;
    this.promptTokens = a.tokens.prompt;
    this.completionTokens = a.tokens.completion;
    this.cachedTokens = a.tokens.cached;
    this.frtMs = a.frtMs;
  }

  failed(err: unknown): void {
    this.error = err;
    this.status = err instanceof RelayError || (err as { status?: number }).status ? Number((err as { status: number }).status) : 500;
  }

  /** The call's time split, read when it ends. */
  timed(timer: RelayTimer): void {
    this.upstreamMs = timer.upstreamMs();
    this.overheadMs = timer.overheadMs();
  }
}
