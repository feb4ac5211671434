import { Agent, ProxyAgent, request, type Dispatcher } from 'undici';
import type { AppContext } from '../context';
import { UpstreamError } from './errors';
import { collectStream, type CollectErrors } from '../lib/collectStream';
import type { UpstreamRequest } from './types';

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

function newAgent(app: AppContext): Agent {
  const t = app.config.upstreamTimeoutMs;
  return new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    headersTimeout: t,
    bodyTimeout: t,
    connect: { timeout: Math.min(t, 30_000) },
  });
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

/** A keep-alive proxy agent per proxy URL (channel setting `proxy`: http(s)://user:pass@host:port). */
function proxyAgent(app: AppContext, proxy: string): Dispatcher {
  const agents = app.memo('relay:proxyAgents', () => {
    const m = new Map<string, ProxyAgent>();
    app.onClose(async () => {
      for (const a of m.values()) await a.close().catch(() => a.destroy());
    });
    return m;
  });
  let a = agents.get(proxy);
  if (!a) {
    const t = app.config.upstreamTimeoutMs;
    a = new ProxyAgent({ uri: proxy, keepAliveTimeout: 30_000, headersTimeout: t, bodyTimeout: t });
    agents.set(proxy, a);
  }
  return a;
}

/** The agent for a channel: its `proxy` setting (http(s) URL) when set, else the shared keep-alive agent. */
export function upstreamDispatcher(app: AppContext, proxy?: string): Dispatcher {
  return proxy && /^https?:\/\//.test(proxy) ? proxyAgent(app, proxy) : upstreamAgent(app);
}

export type UpstreamResponse = Dispatcher.ResponseData;

/** Sends one upstream request; network failures and timeouts become UpstreamError(0). */
export async function sendUpstream(app: AppContext, req: UpstreamRequest, signal?: AbortSignal, proxy?: string): Promise<UpstreamResponse> {
  try {
    return await request(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      dispatcher: upstreamDispatcher(app, proxy),
      signal,
    });
  } catch (err) {
    if (signal?.aborted) throw upstreamClientGone();
    throw upstreamRequestError(err as Error);
  }
}

/** Reads a whole upstream body (bounded); stream failures become an UpstreamError. */
export function readBody(res: UpstreamResponse, limit = 64 * 1024 * 1024): Promise<Buffer> {
  return collectStream(res.body, limit, UPSTREAM_BODY_ERRORS, 'destroy');
}

const UPSTREAM_BODY_ERRORS: CollectErrors = { tooLarge: () => upstreamTooLarge(), failed: (err) => upstreamBodyError(err) };

/** The relay's words for upstream failures (UpstreamError: status 0 = network, retried elsewhere). */
export const upstreamTooLarge = () => new UpstreamError(502, '上游响应过大');
export const upstreamClientGone = () => new UpstreamError(0, '客户端已断开连接', '', 'client_gone');

/** No answer: refused, unreachable, or no headers in time. */
export function upstreamRequestError(e: Error & { code?: string }): UpstreamError {
  const msg = e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_CONNECT_TIMEOUT' ? '上游响应超时' : `上游请求失败：${e.code ?? e.message}`;
  return new UpstreamError(0, msg, '', e.code ?? 'upstream_unreachable');
}

/** The answer's body broke off or stalled. */
export function upstreamBodyError(e: Error & { code?: string }): UpstreamError {
  return new UpstreamError(0, e.code === 'UND_ERR_BODY_TIMEOUT' ? '上游响应超时' : `读取上游响应失败：${e.code ?? e.message}`);
}
