import net from 'node:net';
import { msg } from '../i18n';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import type { AppConfig } from '../config';
import type { AppContext } from '../context';
import { UpstreamError } from './errors';

/**
 * One keep-alive agent per app (undici pools connections per origin inside it, no cap: the clients'
 * concurrency decides). Replaced by a fresh one when the server goes idle (releaseIdleUpstreams).
 */
export function upstreamAgent(app: AppContext): Agent {
  const holder = agentHolder(app);
  return (holder.agent ??= newAgent(app));
}

function agentHolder(app: AppContext): { agent: Agent | undefined } {
  return app.memo('relay:agent', () => {
    const holder: { agent: Agent | undefined } = { agent: undefined };
    app.onClose(async () => {
      const a = holder.agent;
      holder.agent = undefined;
      if (a) await a.close().catch(() => a.destroy());
    });
    return holder;
  });
}

/**
 * Every phase of an upstream call has its own bound, all enforced by undici or by the connector
 * (no timer per call): connecting (TCP + TLS, per hop), the proxy's answer to CONNECT, the response
 * headers, and the silence between two body chunks.
 */
function newAgent(app: AppContext, proxy?: string): Agent {
  const b = upstreamBounds(app.config);
  const connector = trackedConnector(b, proxy);
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    headersTimeout: b.headers,
    bodyTimeout: b.idle,
    connect: connector.connect,
  });
  connectTrackers.set(agent, connector);
  return agent;
}

/**
 * The phases' bounds. Headers and body silence default to UPSTREAM_TIMEOUT_MS: a non-streamed
 * completion sends its headers only once it is generated, and reasoning models may think for
 * minutes between stream chunks. Connecting and a proxy's CONNECT answer take milliseconds when
 * all is well, hence 10 s.
 */
export function upstreamBounds(c: AppConfig): { connect: number; proxy: number; headers: number; idle: number } {
  const t = c.upstreamTimeoutMs;
  return {
    connect: c.upstreamConnectTimeoutMs ?? Math.min(t, 10_000),
    proxy: c.upstreamProxyTimeoutMs ?? Math.min(t, 10_000),
    headers: c.upstreamHeadersTimeoutMs ?? t,
    idle: c.upstreamIdleTimeoutMs ?? t,
  };
}

/**
 * Called when the server has gone idle after a burst (lib/idleGc.ts): undici keeps a client object
 * per connection it ever opened to an origin, even after the connection closed, so after 2 000
 * concurrent streams the pool holds 2 000 of them (≈ 7 MB of heap, measured) for good. The next call gets a
 * fresh agent; the old one is closed once whatever it still carries has finished.
 */
export async function releaseIdleUpstreams(app: AppContext): Promise<void> {
  const holder = agentHolder(app);
  const old = holder.agent;
  holder.agent = undefined;
  if (old) await old.close().catch(() => old.destroy());
}

/**
 * A keep-alive agent per proxy URL (channel setting `proxy`: http(s)://user:pass@host:port). Our
 * own tunnel connector rather than undici's ProxyAgent: that one sends CONNECT through a client of
 * its own with undici's default 300 s headers timeout and no way to cancel it, so a proxy that
 * accepts and never answers held a call for five minutes whatever the caller did.
 */
function proxyAgent(app: AppContext, proxy: string): Dispatcher {
  const agents = app.memo('relay:proxyAgents', () => {
    const m = new Map<string, Agent>();
    app.onClose(async () => {
      for (const a of m.values()) await a.close().catch(() => a.destroy());
      m.clear();
    });
    return m;
  });
  let a = agents.get(proxy);
  if (!a) {
    a = newAgent(app, proxy);
    agents.set(proxy, a);
  }
  return a;
}

/** The agent for a channel: its `proxy` setting (http(s) URL) when set, else the shared keep-alive agent. */
export function upstreamDispatcher(app: AppContext, proxy?: string): Dispatcher {
  return proxy && /^https?:\/\//.test(proxy) ? proxyAgent(app, proxy) : upstreamAgent(app);
}

// ---- connections being opened: bounded, and cancellable when nobody waits for them any more ----

type ConnectFn = buildConnector.connector;
type ConnectOpts = buildConnector.Options;
type ConnectCallback = buildConnector.Callback;

/** A connection being opened (TCP, TLS, proxy tunnel) for `key` (`protocol//host[:port]`). */
interface Attempt {
  key: string;
  cancel(err: Error): void;
}

export interface ConnectTracker {
  connect: ConnectFn;
  /** Connections being opened, per origin key. */
  pending: Map<string, Set<Attempt>>;
}

const connectTrackers = new WeakMap<Dispatcher, ConnectTracker>();

/** `protocol//host[:port]` as the connector sees an origin (undici passes URL fields). */
export function originKey(protocol: string, host: string): string {
  return `${protocol}//${host}`;
}

/**
 * Cancels connections being opened to `origin` through `dispatcher` beyond `stillWaiting` (the
 * calls that still wait for one). Called only when a call is abandoned before it got a connection
 * (client gone), so that a hung connect or proxy handshake does not outlive everyone who wanted it.
 */
export function cancelSurplusConnects(dispatcher: Dispatcher, origin: string, stillWaiting: number): void {
  const t = connectTrackers.get(dispatcher);
  if (!t) return;
  let key: string;
  try {
    const u = new URL(origin);
    key = originKey(u.protocol, u.host);
  } catch {
    return;
  }
  const set = t.pending.get(key);
  if (!set) return;
  let surplus = set.size - stillWaiting;
  for (const a of set) {
    if (surplus-- <= 0) break;
    a.cancel(connectError('UND_ERR_ABORTED', 'connection attempt cancelled: no call waits for it'));
  }
}

function connectError(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}

function trackedConnector(b: ReturnType<typeof upstreamBounds>, proxy?: string): ConnectTracker {
  const direct = buildConnector({ timeout: b.connect });
  const pending = new Map<string, Set<Attempt>>();
  const track = (key: string, cancel: (err: Error) => void): Attempt => {
    const a: Attempt = { key, cancel };
    let set = pending.get(key);
    if (!set) pending.set(key, (set = new Set()));
    set.add(a);
    return a;
  };
  const untrack = (a: Attempt) => {
    const set = pending.get(a.key);
    if (!set) return;
    set.delete(a);
    if (!set.size) pending.delete(a.key);
  };
  const tunnel = proxy ? proxyTunnel(proxy, b.connect, b.proxy) : undefined;
  const connect: ConnectFn = (opts: ConnectOpts, callback: ConnectCallback) => {
    let done = false;
    let cancel: (err: Error) => void = () => undefined;
    const a = track(originKey(opts.protocol, opts.host ?? opts.hostname), (err) => cancel(err));
    const cb: ConnectCallback = (...args) => {
      if (done) return;
      done = true;
      untrack(a);
      callback(...args);
    };
    if (tunnel) cancel = tunnel(opts, cb);
    else {
      // undici's connector reports a socket destroyed with an error through the callback.
      const socket = direct(opts, cb) as unknown as net.Socket;
      cancel = (err) => socket.destroy(err);
    }
  };
  return { connect, pending };
}

/**
 * Opens a connection to the target through an HTTP(S) proxy: connect to the proxy (bounded like
 * any connect), send CONNECT, wait at most `handshakeMs` for its answer, then TLS to the target
 * over the tunnel when the target is https. Returns a function that stops it at any point.
 */
function proxyTunnel(proxy: string, connectMs: number, handshakeMs: number) {
  const url = new URL(proxy);
  const toProxy = buildConnector({ timeout: connectMs });
  const overTunnel = buildConnector({ timeout: connectMs });
  const auth =
    url.username || url.password
      ? `Proxy-Authorization: Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}\r\n`
      : '';
  const proxyOpts: ConnectOpts = { protocol: url.protocol, hostname: url.hostname.replace(/^\[|\]$/g, ''), host: url.host, port: url.port };
  return (opts: ConnectOpts, cb: ConnectCallback): ((err: Error) => void) => {
    let finished = false;
    let sock: net.Socket | undefined;
    let timer: NodeJS.Timeout | undefined;
    const fail = (err: Error) => {
      if (finished) return;
      finished = true;
      if (timer) clearTimeout(timer);
      sock?.destroy();
      cb(err, null);
    };
    const succeed = (s: net.Socket) => {
      if (finished) return s.destroy();
      finished = true;
      cb(null, s);
    };
    sock = toProxy(proxyOpts, (err, s) => {
      if (finished) return;
      if (err) return fail(err);
      const ps = s as net.Socket;
      const host = opts.hostname.includes(':') ? `[${opts.hostname}]` : opts.hostname;
      const target = `${host}:${opts.port || (opts.protocol === 'https:' ? 443 : 80)}`;
      timer = setTimeout(() => fail(connectError('UND_ERR_PROXY_TIMEOUT', `proxy did not answer CONNECT within ${handshakeMs} ms`)), handshakeMs);
      let head: Buffer = Buffer.alloc(0);
      const onError = (e: Error) => fail(e);
      const onClose = () => fail(connectError('UND_ERR_PROXY', 'proxy closed the connection during CONNECT'));
      const onData = (chunk: Buffer) => {
        head = head.length ? Buffer.concat([head, chunk]) : chunk;
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) {
          if (head.length > 16 * 1024) fail(connectError('UND_ERR_PROXY', 'proxy answer to CONNECT too large'));
          return;
        }
        clearTimeout(timer);
        ps.off('data', onData);
        ps.off('error', onError);
        ps.off('close', onClose);
        ps.pause();
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head.toString('latin1', 0, Math.min(end, 64)))?.[1] ?? 0);
        if (status !== 200) return fail(connectError('UND_ERR_PROXY', `proxy answered CONNECT with ${status || 'no HTTP status'}`));
        if (end + 4 < head.length) ps.unshift(head.subarray(end + 4));
        if (opts.protocol !== 'https:') return succeed(ps);
        sock = overTunnel({ ...opts, httpSocket: ps }, (e, t) => (e ? fail(e) : succeed(t as net.Socket))) as unknown as net.Socket;
      };
      ps.on('data', onData);
      ps.on('error', onError);
      ps.on('close', onClose);
      ps.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
    }) as unknown as net.Socket;
    return fail;
  };
}
/** The relay's words for upstream failures (UpstreamError: status 0 = network, retried elsewhere). */
export const upstreamTooLarge = () => new UpstreamError(502, msg('upstream.too_large'), '', 'upstream_too_large');
export const upstreamClientGone = () => new UpstreamError(0, msg('upstream.client_gone'), '', 'client_gone');
export const upstreamTimedOut = (code = 'upstream_timeout') => new UpstreamError(0, msg('upstream.timeout'), '', code);

const TIMEOUT_CODES = new Set(['upstream_timeout', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_PROXY_TIMEOUT']);

/** No answer: refused, unreachable, or no headers in time. */
export function upstreamRequestError(e: Error & { code?: string }): UpstreamError {
  if (e.code && TIMEOUT_CODES.has(e.code)) return upstreamTimedOut(e.code);
  return new UpstreamError(0, msg('upstream.request_failed', { reason: e.code ?? e.message }), '', e.code ?? 'upstream_unreachable');
}

/** The answer's body broke off or stalled. */
export function upstreamBodyError(e: Error & { code?: string }): UpstreamError {
  if (e.code && TIMEOUT_CODES.has(e.code)) return upstreamTimedOut(e.code);
  return new UpstreamError(0, msg('upstream.read_failed', { reason: e.code ?? e.message }));
}
