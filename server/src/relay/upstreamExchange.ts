import type { Dispatcher } from 'undici';
import type { AppContext } from '../context';
import type { UpstreamError } from './errors';
import { cancelSurplusConnects, upstreamBodyError, upstreamClientGone, upstreamDispatcher, upstreamRequestError, upstreamTooLarge } from './upstream';
import type { UpstreamRequest } from './types';

/** Receives an upstream body chunk by chunk (streams, speech). */
export interface BodyConsumer {
  /** One chunk; false pauses the upstream until `UpstreamExchange.resume()`. */
  data(chunk: Buffer): boolean;
  end(): void;
  /** The body failed (network, timeout, `abort()`); nothing more follows. */
  error(err: UpstreamError): void;
}

/** Largest body kept before a consumer says how much it accepts (readBody's old default). */
const MAX_BUFFERED = 64 * 1024 * 1024;

type Phase = 'connecting' | 'body' | 'ended' | 'failed';

/**
 * How many exchanges have no connection yet, per dispatcher and origin. Read only when one of them
 * is abandoned, to tell whether the connections being opened to its origin are still wanted by
 * someone (upstream.ts cancels the rest). Counts, not a Set of the exchanges: with every call's
 * exchange added to and removed from one long-lived Set, the GC's work per relayed call rose from
 * ≈ 7 k to ≈ 48 k instructions (callgrind, bench/callgrind.sh).
 */
const waitingForConnection = new WeakMap<Dispatcher, Map<string, number>>();

function countWaiting(d: Dispatcher, origin: string, delta: number): number {
  let byOrigin = waitingForConnection.get(d);
  if (!byOrigin) waitingForConnection.set(d, (byOrigin = new Map()));
  const n = (byOrigin.get(origin) ?? 0) + delta;
  byOrigin.set(origin, n);
  return n;
}

/**
 * One relayed upstream request, driven by undici's `dispatch` handler API instead of
 * `undici.request`. `request` wraps every call in an AsyncResource, parses the response headers
 * into an object twice and pipes the body through a Readable stream (events, buffering, listener
 * bookkeeping): together a good part of a relayed call's CPU, for a body that the relay either
 * reads whole (JSON answers) or forwards chunk by chunk (streams). Here chunks go straight to one
 * consumer or into one array, and a header is looked up in the raw list only when asked for.
 *
 * Chunks that arrive before a consumer is attached (the body often comes in the same read as the
 * headers) are kept and handed over first.
 */
export class UpstreamExchange {
  statusCode = 0;
  private phase: Phase = 'connecting';
  private rawHeaders: Buffer[] | null = null;
  private abortUpstream: ((err: Error) => void) | null = null;
  private resumeUpstream: (() => void) | null = null;
  /** abort() was called: failures after that are "client gone", not the upstream's fault. */
  private abortedByUs = false;
  private paused = false;
  private chunks: Buffer[] = [];
  private size = 0;
  private limit = MAX_BUFFERED;
  private failure: UpstreamError | undefined;
  private consumer: BodyConsumer | undefined;
  private onHeadersReady: ((ex: UpstreamExchange) => void) | undefined;
  private onHeadersFailed: ((err: UpstreamError) => void) | undefined;
  private onCollected: ((body: Buffer) => void) | undefined;
  private onCollectFailed: ((err: UpstreamError) => void) | undefined;
  private dispatcher: Dispatcher | undefined;
  private origin = '';
  /** Counted in waitingForConnection (no connection yet). */
  private waiting = false;

  /** Resolves when the response headers are in (any status); rejects with an UpstreamError. */
  readonly ready: Promise<UpstreamExchange>;

  private constructor() {
    this.ready = new Promise<UpstreamExchange>((resolve, reject) => {
      this.onHeadersReady = resolve;
      this.onHeadersFailed = reject;
    });
  }

  /** Sends the request. `abort()` works at once, also while it is still being connected. */
  static open(app: AppContext, req: UpstreamRequest, proxy?: string, dispatcher?: Dispatcher): UpstreamExchange {
    const ex = new UpstreamExchange();
    const { origin, path } = splitUrl(req.url);
    const opts: Dispatcher.DispatchOptions = { origin, path, method: req.method, headers: req.headers, body: req.body ?? null };
    try {
      const d = (ex.dispatcher = req.dispatcher ?? dispatcher ?? upstreamDispatcher(app, proxy));
      ex.origin = origin;
      countWaiting(d, origin, 1);
      ex.waiting = true;
      d.dispatch(opts, ex as unknown as Dispatcher.DispatchHandler);
    } catch (err) {
      ex.onError(err as Error);
    }
    return ex;
  }

  /** A response header (lower-case name), '' when absent. */
  header(name: string): string {
    const raw = this.rawHeaders;
    if (!raw) return '';
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const k = raw[i]!;
      if (k.length === name.length && k.toString('latin1').toLowerCase() === name) return raw[i + 1]!.toString('utf8');
    }
    return '';
  }

  /** The whole body (at most `limit` bytes: beyond that the request is aborted and this rejects). */
  collect(limit = MAX_BUFFERED): Promise<Buffer> {
    if (this.failure) return Promise.reject(this.failure);
    this.limit = limit;
    if (this.size > limit) return Promise.reject(this.fail(upstreamTooLarge(), true));
    if (this.phase === 'ended') return Promise.resolve(this.joined());
    return new Promise<Buffer>((resolve, reject) => {
      this.onCollected = resolve;
      this.onCollectFailed = reject;
    });
  }

  /** Hands the body to `consumer`: first what has arrived already, then each chunk as it comes. */
  pipe(consumer: BodyConsumer): void {
    const kept = this.chunks;
    this.chunks = [];
    this.size = 0;
    for (const c of kept) if (!consumer.data(c)) this.paused = true;
    if (this.failure) return consumer.error(this.failure);
    if (this.phase === 'ended') return consumer.end();
    this.consumer = consumer;
  }

  /** Continues a body paused by a consumer's `false`. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.resumeUpstream?.();
  }

  /**
   * Stops the upstream request (client gone, or the body is not wanted; `reason`: what the waiting
   * side is told, default "client gone"). Idempotent. Before undici has a connection for it there
   * is nothing to abort yet (onConnect sees the flag): the exchange fails at once, and a connection
   * still being opened for it (a hung connect or proxy handshake) is cancelled unless another call
   * waits for it.
   */
  abort(reason?: UpstreamError): void {
    if (this.phase === 'ended' || this.phase === 'failed' || this.abortedByUs) return;
    this.abortedByUs = true;
    const abortUpstream = this.abortUpstream;
    if (abortUpstream) {
      if (reason) this.fail(reason, false);
      abortUpstream(new Error('aborted by the gateway'));
      return;
    }
    this.fail(reason ?? upstreamClientGone(), false);
    const d = this.dispatcher;
    if (!d) return;
    // fail() took this exchange out of the count: what is left still waits.
    cancelSurplusConnects(d, this.origin, countWaiting(d, this.origin, 0));
  }

  get aborted(): boolean {
    return this.abortedByUs;
  }

  /** No longer waiting for a connection (it has one, or it failed). */
  private connected(): void {
    if (!this.waiting) return;
    this.waiting = false;
    countWaiting(this.dispatcher!, this.origin, -1);
  }

  // ---- undici dispatch handler (the callback form: no wrapper objects in between) ----

  onConnect(abort: (err: Error) => void): void {
    this.connected();
    this.abortUpstream = abort;
    if (this.abortedByUs) abort(new Error('aborted by the gateway'));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true; // 1xx: the real answer follows
    this.statusCode = statusCode;
    this.rawHeaders = rawHeaders;
    this.resumeUpstream = resume;
    this.phase = 'body';
    const ready = this.onHeadersReady;
    this.onHeadersReady = this.onHeadersFailed = undefined;
    ready?.(this);
    return true;
  }

  onData(chunk: Buffer): boolean {
    const consumer = this.consumer;
    if (consumer) {
      if (consumer.data(chunk)) return !this.paused;
      this.paused = true;
      return false;
    }
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.fail(upstreamTooLarge(), true);
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.phase === 'failed') return;
    this.phase = 'ended';
    const consumer = this.consumer;
    if (consumer) {
      this.consumer = undefined;
      consumer.end();
      return;
    }
    const done = this.onCollected;
    if (done) {
      this.onCollected = this.onCollectFailed = undefined;
      done(this.joined());
    }
  }

  onError(err: Error & { code?: string }): void {
    if (this.phase === 'ended' || this.phase === 'failed') return;
    const beforeHeaders = this.phase === 'connecting';
    this.fail(this.abortedByUs ? upstreamClientGone() : beforeHeaders ? upstreamRequestError(err) : upstreamBodyError(err), false);
  }

  private joined(): Buffer {
    const c = this.chunks;
    this.chunks = [];
    return c.length === 1 ? c[0]! : Buffer.concat(c, this.size);
  }

  /** Ends the exchange with `err`, told to whoever waits; `abortUpstream` also stops the request. */
  private fail(err: UpstreamError, abortUpstream: boolean): UpstreamError {
    if (this.phase === 'failed') return this.failure!;
    this.connected();
    this.phase = 'failed';
    this.failure = err;
    this.chunks = [];
    if (abortUpstream) this.abortUpstream?.(err);
    const headersFailed = this.onHeadersFailed;
    const collectFailed = this.onCollectFailed;
    const consumer = this.consumer;
    this.onHeadersReady = this.onHeadersFailed = this.onCollected = this.onCollectFailed = undefined;
    this.consumer = undefined;
    headersFailed?.(err);
    collectFailed?.(err);
    consumer?.error(err);
    return err;
  }
}

/** `scheme://host[:port]` and the rest (path and query) of an absolute URL. */
export function splitUrl(url: string): { origin: string; path: string } {
  const scheme = url.indexOf('://');
  const slash = scheme < 0 ? -1 : url.indexOf('/', scheme + 3);
  const q = url.indexOf('?', scheme + 3);
  const cut = slash < 0 ? q : q < 0 ? slash : Math.min(slash, q);
  if (cut < 0) return { origin: url, path: '/' };
  const path = url.slice(cut);
  return { origin: url.slice(0, cut), path: path.startsWith('/') ? path : `/${path}` };
}
