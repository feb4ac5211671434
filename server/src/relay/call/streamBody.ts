import type { ServerResponse } from 'node:http';
import { msg, requestLang, t, type Lang } from '../../i18n';
import { UpstreamError, upstreamMessage } from '../errors';
import type { ChannelEntry } from '../../channels/routeTable';
import type { BodyConsumer, UpstreamExchange } from '../upstreamExchange';
import { BadStreamFrame, jsonShaped, parseBlockChecked, SSEEventTooLarge, SSESplitter } from '../sse';
import { responseText } from '../../protocols/openai/adaptor';
import type { AdaptorContext, InboundFormat, ProviderAdaptor, StreamObserver, StreamTranslator } from '../types';
import { formatOverhead, OVERHEAD_HEADER } from '../../metrics';
import { RELAY_CORS, UNCONVERTED_HEADER, type RelayCall, ignore, scrubKey, unconvertedNote } from './relayCall';
import { tokensFrom, type Answer, type Tokens } from './outcome';
import { endsWithBlankLine, isUsageOnlyChunk, passesAsBytes } from './sseBytes';

type StreamWriter = ReturnType<InboundFormat['streamWriter']>;

function observerFromTranslator(t: StreamTranslator): StreamObserver {
  let text = '';
  return {
    push(ev) {
      for (const c of t.push(ev)) text += responseText(c);
    },
    usage: () => t.usage(),
    text: () => text,
  };
}

/**
 * The event that ends a client's stream cut by the upstream, in the client's format. An error the
 * upstream reported in the stream (an `error` event: overloaded, rate limited…) keeps its status,
 * message and kind, so clients that retry on "overloaded" still see it; an unreadable stream says
 * so; a broken connection is a 502.
 */
export function streamCutTail(f: InboundFormat, cut: Error, writer?: StreamWriter, scrub: (m: string) => string = (m) => m, lang: Lang = 'en'): string {
  let status = 502;
  let m = t(lang, 'upstream.interrupted');
  let code = 'upstream_stream_interrupted';
  if (cut instanceof BadStreamFrame || cut instanceof SSEEventTooLarge) {
    m = t(lang, cut.msg);
    code = cut.code;
  } else if (cut instanceof UpstreamError && cut.status >= 400) {
    status = cut.status;
    m = cut.msg ? t(lang, upstreamMessage(cut, scrub)) : scrub(cut.message);
    code = cut.upstreamCode || 'upstream_error';
  }
  // A converted stream's writer may end what it started (Responses: `response.failed` of the same response).
  return writer?.fail?.(status, m, code) ?? (f.streamError ? f.streamError(status, m, code) : `data: ${JSON.stringify(f.error(status, m, code))}\n\n`);
}

async function writeOut(res: ServerResponse, text: string): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return false;
  if (res.write(text)) return true;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
  return !res.destroyed;
}

/** What reads a stream's events: an observer of a pass-through, or a translator and the client's writer. */
export interface StreamParts {
  passthrough: boolean;
  observer?: StreamObserver;
  translator?: StreamTranslator;
  writer?: StreamWriter;
}

/**
 * A stream's parts, made while the upstream works on the request (a converted stream's writer
 * prepares its first frame then), so that less is left to do when its first bytes come.
 */
export function streamParts(call: RelayCall, adaptor: ProviderAdaptor, actx: AdaptorContext, passthrough: boolean): StreamParts {
  if (passthrough) return { passthrough, observer: adaptor.observer?.(actx) ?? observerFromTranslator(adaptor.chatStream(actx)) };
  return {
    passthrough,
    translator: adaptor.chatStream(actx),
    writer: call.inbound.streamWriter(call.model, { includeUsage: call.includeUsage, clientBody: call.body }),
  };
}

/**
 * Relays one upstream stream to the client as it comes: event by event (or, on the OpenAI
 * pass-through, chunk by chunk as received), converted when the formats differ, with the client's
 * backpressure pausing the upstream. `run()` returns once the upstream ended, failed or the client
 * left; it throws UpstreamError only while nothing has reached the client (the call may then move
 * to another channel). Then it is the call's answer: its tokens are what was delivered, and
 * `finish()` writes the stream's end (`[DONE]`, the converted tail, or an error event) once billed.
 */
export class StreamRelay implements Answer, BodyConsumer {
  tokens: Tokens = { prompt: 0, completion: 0, cached: 0, calls: 0 };
  /** Time to the first byte written to the client (ms, 0 = none yet). */
  frtMs = 0;

  private readonly res: ServerResponse;
  private readonly passthrough: boolean;
  private readonly splitter: { push(chunk: Buffer): string[]; end(): string[] };
  /** Same format on both sides: events are forwarded, an observer reads the usage. */
  private readonly observer: StreamObserver | undefined;
  /** Different formats: events are translated and written in the client's format. */
  private readonly translator: StreamTranslator | undefined;
  private readonly writer: StreamWriter | undefined;
  private readonly openaiPassthrough: boolean;
  private readonly dropUsageOnly: boolean;
  /** OpenAI pass-through: whole chunks forwarded as received go to this observer as raw blocks. */
  private readonly rawObserver: StreamObserver | undefined;
  /** Every byte so far ended a block: the splitter and its decoder hold nothing. */
  private wholeSoFar = true;
  /** Converted text (for the tokenizer when no usage comes) and how many client chunks were made. */
  private convText = '';
  private converted = 0;
  /** The pass-through's `[DONE]`, held back until the call is billed. */
  private doneBlock = '';
  /** The upstream failed after the client got something: the stream ends with an error event. */
  private cut: Error | undefined = undefined;
  private clientGone = false;
  /** Keep-alive comments while the upstream is silent: the period (0 = off), the last write, the timer. */
  private readonly pingEvery: number;
  private lastWrite = 0;
  private ping: NodeJS.Timeout | undefined = undefined;
  /** The upstream body being pumped to the client (`pump`). */
  private pumping = false;
  private resolvePump: (() => void) | undefined = undefined;
  private rejectPump: ((err: unknown) => void) | undefined = undefined;
  private readonly onDrain = () => this.up.resume();
  private readonly onClientClose = () => {
    if (this.res.writableFinished) return;
    this.clientGone = true;
    this.up.abort();
    this.pumped();
  };

  constructor(
    private readonly call: RelayCall,
    readonly channel: ChannelEntry,
    adaptor: ProviderAdaptor,
    actx: AdaptorContext,
    private readonly up: UpstreamExchange,
    ctype: string,
    parts: StreamParts,
  ) {
    this.res = call.ctx.res;
    const maxEvent = call.app.config.maxSseEventBytes;
    this.splitter = adaptor.streamSplitter?.(ctype, maxEvent) ?? new SSESplitter(maxEvent);
    this.passthrough = parts.passthrough;
    this.openaiPassthrough = this.passthrough && call.inbound.name === 'openai';
    this.dropUsageOnly = this.openaiPassthrough && !call.includeUsage;
    this.observer = parts.observer;
    this.translator = parts.translator;
    this.writer = parts.writer;
    // OpenAI pass-through: a chunk made of whole blocks without a usage object, `[DONE]` or CRs
    // (passesAsBytes) is written to the client as the bytes it came in, skipping decode, split and
    // re-encode, which with thousands of streams is a good part of the CPU.
    this.rawObserver = this.openaiPassthrough && this.observer?.pushRaw ? this.observer : undefined;
    const o = call.app.options;
    this.pingEvery = o.bool('general_setting.ping_interval_enabled') ? Math.max(1, o.num('general_setting.ping_interval_seconds', 60)) * 1000 : 0;
    this.upstreamModel = actx.upstreamModel;
  }

  readonly upstreamModel: string;

  /** Relays the whole stream; throws UpstreamError only before the client got anything. */
  async run(): Promise<void> {
    const { call, res, up } = this;
    res.on('error', ignore); // a client that vanished mid-write is handled below, never a crash
    if (this.pingEvery) {
      this.lastWrite = Date.now();
      this.armPing(this.pingEvery);
    }
    try {
      await this.pump();
      if (!this.clientGone) await this.flushEnd();
    } catch (err) {
      this.writePartial();
      if (up.aborted || res.destroyed) this.clientGone = true;
      else if (!res.headersSent) {
        // Nothing reached the client yet: let the caller retry on another channel.
        call.timer.upstreamEnd();
        up.abort();
        if (err instanceof UpstreamError) throw err;
        if (err instanceof BadStreamFrame || err instanceof SSEEventTooLarge) throw new UpstreamError(502, err.msg, '', err.code);
        throw new UpstreamError(0, msg('upstream.interrupted_reason', { reason: (err as Error).message }));
      } else this.cut = err as Error;
    } finally {
      if (this.ping) clearTimeout(this.ping);
      call.timer.upstreamEnd();
      if (this.clientGone || this.cut) up.abort();
    }
    if (res.destroyed && !res.writableFinished) this.clientGone = true;

    const usage = this.observer ? this.observer.usage() : this.translator!.usage();
    const deliveredAny = (!this.cut && !this.clientGone) || this.frtMs > 0;
    this.tokens = tokensFrom(usage, call, () => this.deliveredText(), 1, deliveredAny);
    if (this.cut) call.app.log.warn({ channel: this.channel.info.id, err: this.cut.message }, 'upstream stream ended abnormally');
  }

  /** Ends the client's stream, once billed. */
  finish(): void {
    const { res } = this;
    if (this.clientGone || res.destroyed) return;
    this.ensureHead();
    let tail = '';
    if (this.cut) {
      tail += streamCutTail(this.call.inbound, this.cut, this.writer, (m) => scrubKey(m, this.channel), requestLang(this.call.ctx));
    } else if (this.passthrough) {
      tail += this.doneBlock;
    } else {
      const t = this.tokens;
      tail += this.writer!.end(t.upstream ?? { prompt_tokens: t.prompt, completion_tokens: t.completion, total_tokens: t.prompt + t.completion });
    }
    res.end(tail);
  }

  private deliveredText(): string {
    return this.observer ? this.observer.text() : this.convText;
  }

  /** Headers go out with the first bytes, so an error before any output can still be retried. */
  private ensureHead(): void {
    const { res } = this;
    if (res.headersSent) return;
    this.call.ctx.respond = false;
    const head: Record<string, string> = {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      [OVERHEAD_HEADER]: formatOverhead(this.call.timer.overheadMs()),
      [RELAY_CORS[0]]: RELAY_CORS[1],
    };
    const note = this.passthrough ? undefined : unconvertedNote(this.call);
    if (note) head[UNCONVERTED_HEADER] = note;
    res.writeHead(200, head);
  }

  private firstByte(): void {
    if (!this.frtMs) this.frtMs = Math.max(1, Math.round(this.call.timer.totalMs()));
  }

  /**
   * The timer is re-armed for exactly `every` ms after the last write, so a silence of `every`
   * always yields a ping (a fixed-period check could miss it by one tick).
   */
  private armPing(delay: number): void {
    this.ping = setTimeout(() => this.pingTick(), delay);
    this.ping.unref();
  }

  private pingTick(): void {
    const { res } = this;
    if (res.destroyed || res.writableEnded) return;
    const idle = Date.now() - this.lastWrite;
    if (idle >= this.pingEvery) {
      this.ensureHead();
      res.write(': PING\n\n');
      this.lastWrite = Date.now();
      this.armPing(this.pingEvery);
    } else this.armPing(this.pingEvery - idle);
  }

  /**
   * What the current chunk's earlier blocks made when a later one failed: the client gets it
   * before the error tail, whichever way the upstream's bytes were cut into chunks.
   */
  private partial = '';

  /** Upstream events → the client's bytes (throws BadStreamFrame on an unreadable stream; see `partial`). */
  private handleBlocks(blocks: string[]): string {
    let out = '';
    try {
      for (const block of blocks) out = this.handleBlock(block, out);
    } catch (err) {
      this.partial = out;
      throw err;
    }
    return out;
  }

  /** One upstream event → `out` plus what the client gets of it. */
  private handleBlock(block: string, out: string): string {
    const ev = parseBlockChecked(block);
    // Not SSE, or data that cannot be JSON: the stream is unreadable (ends with an error).
    if (ev === false || (ev && !jsonShaped(ev.data))) throw new BadStreamFrame();
    if (!ev) return this.passthrough ? out + block : out;
    if (this.passthrough) {
      if (this.openaiPassthrough && ev.data === '[DONE]') {
        this.doneBlock = block;
        return out;
      }
      this.observer!.push(ev);
      if (this.dropUsageOnly && isUsageOnlyChunk(ev.data)) return out;
      return out + block;
    }
    for (const c of this.translator!.push(ev)) {
      this.converted++;
      this.convText += responseText(c);
      out += this.writer!.chunk(c);
    }
    return out;
  }

  /**
   * The upstream body comes chunk by chunk from the exchange (`data`, `end`, `error` below: no
   * stream objects, no promise per chunk; at thousands of concurrent streams that is a good part
   * of the CPU). Resolves when the body ended or the client left; rejects when it failed.
   */
  private pump(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pumping = true;
      this.resolvePump = resolve;
      this.rejectPump = reject;
      this.res.on('close', this.onClientClose);
      this.up.pipe(this);
    });
  }

  private pumped(err?: unknown): void {
    if (!this.pumping) return;
    this.pumping = false;
    this.res.off('close', this.onClientClose);
    this.res.off('drain', this.onDrain);
    if (err !== undefined) this.rejectPump!(err);
    else this.resolvePump!();
  }

  /** Sends `partial` (see there) to a client still listening. */
  private writePartial(): void {
    const p = this.partial;
    if (!p) return;
    this.partial = '';
    if (this.res.destroyed || this.res.writableEnded) return;
    this.firstByte();
    this.ensureHead();
    this.res.write(p);
  }

  /** One upstream chunk; false pauses the upstream until the client's socket drains. */
  data(chunk: Buffer): boolean {
    if (!this.pumping) return true;
    const { res } = this;
    let out: string | Buffer;
    if (this.rawObserver && this.wholeSoFar && passesAsBytes(chunk)) {
      // Whole blocks that need no change: forwarded as received, watched later only if needed.
      this.rawObserver.pushRaw!(chunk);
      out = chunk;
    } else {
      try {
        out = this.handleBlocks(this.splitter.push(chunk));
      } catch (err) {
        this.writePartial();
        this.pumped(err); // run() retries, or cuts the stream, and stops the upstream
        return true;
      }
      this.wholeSoFar = endsWithBlankLine(chunk);
    }
    if (!out.length) return true;
    this.firstByte();
    this.ensureHead();
    if (this.pingEvery) this.lastWrite = Date.now();
    if (res.destroyed || res.writableEnded) {
      this.clientGone = true;
      this.up.abort();
      this.pumped();
      return true;
    }
    if (res.write(out)) return true;
    res.once('drain', this.onDrain);
    return false;
  }

  end(): void {
    this.pumped();
  }

  error(err: UpstreamError): void {
    this.pumped(err);
  }

  /** After the upstream's last byte: what the splitter and the translator still hold. */
  private async flushEnd(): Promise<void> {
    const { res } = this;
    let out = this.handleBlocks(this.splitter.end());
    if (this.translator) {
      for (const c of this.translator.end()) {
        this.convText += responseText(c);
        out += this.writer!.chunk(c);
      }
    }
    // A converted stream none of whose events the translator understood (JSON-shaped garbage such
    // as `{garbage}`) delivered nothing: unreadable, so refunded or retried, not billed.
    if (this.translator && !this.converted && !res.headersSent) throw new BadStreamFrame();
    if (out) {
      this.firstByte();
      this.ensureHead();
      if (!(await writeOut(res, out))) this.clientGone = true;
    }
  }
}
