/**
 * `GET /v1/realtime?model=…` (OpenAI's Realtime API) as a WebSocket relay: the client's socket is
 * accepted only once the upstream's is open, then every event goes through unchanged both ways;
 * `response.done` events carry the usage each response is billed from (billing.ts).
 * Refusals before the handshake (key, model, quota, no channel, upstream down) are HTTP answers in
 * OpenAI's error shape; after it they are an `error` event and a close.
 */
import type { IncomingMessage } from 'node:http';
import { localize, msg, pickLanguage, t, type Lang } from '../../i18n';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer, type RawData } from 'ws';
import type { AppContext } from '../../context';
import { AppError } from '../../lib/errors';
import { authenticateKey, checkModelAllowed, type Principal } from '../auth';
import { RelayError } from '../errors';
import { normaliseKey } from '../keys';
import { clientIp } from '../ip';
import { pickChannel, pickKey, routeTable, tiersFor, type ChannelEntry } from '../routing';
import { priceFor } from '../../services/billing';
import { upstreamModelFor } from '../call/request';
import { baseUrlOf } from '../adaptors/openai';
import { RealtimeMeter, realtimeUsage } from './billing';

const OPENAI = 1;
const AZURE = 3;
/** The Azure API version used for realtime when the channel names none (the default chat version has no realtime). */
const AZURE_REALTIME_VERSION = '2024-10-01-preview';
const SUBPROTOCOL_KEY = 'openai-insecure-api-key.';
const SUBPROTOCOL_BETA = 'openai-beta.';
const HANDSHAKE_TIMEOUT_MS = 15_000;
/** Largest event accepted from either side (audio appends are base64 chunks). */
const MAX_PAYLOAD = 16 * 1024 * 1024;

/** The key a client sent: `Authorization: Bearer`, `api-key`, or the browser subprotocol `openai-insecure-api-key.<key>`. */
export function realtimeKey(req: IncomingMessage): string {
  const authz = req.headers.authorization;
  if (authz) return normaliseKey(authz.replace(/^bearer\s+/i, ''));
  const apiKey = req.headers['api-key'];
  if (typeof apiKey === 'string' && apiKey) return normaliseKey(apiKey);
  for (const p of subprotocols(req)) if (p.startsWith(SUBPROTOCOL_KEY)) return normaliseKey(p.slice(SUBPROTOCOL_KEY.length));
  return '';
}

function subprotocols(req: IncomingMessage): string[] {
  const raw = req.headers['sec-websocket-protocol'];
  return typeof raw === 'string'
    ? raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
}

/** The upstream's WebSocket URL and headers for one channel. */
export function upstreamTarget(ch: ChannelEntry, key: string, model: string, beta: string): { url: string; headers: Record<string, string> } {
  const info = ch.info;
  const base = baseUrlOf(info).replace(/^http/i, 'ws');
  if (info.type === AZURE) {
    // The channel's own version when set (it must have the realtime endpoint), else one that has it.
    const v = info.other.trim() || AZURE_REALTIME_VERSION;
    return {
      url: `${base}/openai/realtime?api-version=${encodeURIComponent(v)}&deployment=${encodeURIComponent(model)}`,
      headers: { 'api-key': key },
    };
  }
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (beta) headers['openai-beta'] = beta;
  if (info.organization) headers['openai-organization'] = info.organization;
  return { url: `${base}/v1/realtime?model=${encodeURIComponent(model)}`, headers };
}

/** An HTTP answer on a socket that was asking to upgrade (nothing was sent on it yet). */
function refuse(socket: Duplex, status: number, message: string, code: string, type = 'invalid_request_error'): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error: { message, type, param: null, code } });
  socket.end(
    `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : status === 404 ? 'Not Found' : status === 400 ? 'Bad Request' : status === 503 ? 'Service Unavailable' : 'Bad Gateway'}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The `error` event a session gets before the gateway closes it. */
function errorEvent(message: string, code: string, type = 'invalid_request_error'): string {
  return JSON.stringify({ type: 'error', event_id: `event_gw_${Date.now().toString(36)}`, error: { type, code, message, param: null, event_id: null } });
}

/**
 * The server's `upgrade` listener: takes `/v1/realtime`, refuses any other upgrade with a 404.
 * Registered by index.ts (and tests) with `server.on('upgrade', …)`.
 */
export function realtimeUpgradeHandler(app: AppContext): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_PAYLOAD,
    // A browser offers `realtime` plus its key and beta entries: the answer names `realtime` only (never the key).
    handleProtocols: (protocols) => (protocols.has('realtime') ? 'realtime' : false),
  });
  // Closing the app ends every session and waits (a bounded time) for each to settle its money:
  // the last responses billed, the rest of the reservation refunded, before the database closes.
  app.onClose(async () => {
    const live = liveSessions(app);
    for (const end of live.open) end(1001, 'server shutting down');
    for (const c of wss.clients) c.terminate();
    wss.close();
    const settling = [...live.settling];
    if (settling.length) await Promise.race([Promise.allSettled(settling), new Promise((r) => setTimeout(r, 5_000).unref())]);
  });
  return (req, socket, head) => {
    const path = (req.url ?? '').split('?')[0];
    const lang = pickLanguage(req.headers['accept-language']);
    if (path !== '/v1/realtime') return refuse(socket, 404, t(lang, 'relay.invalid_url', { method: 'GET', path: path ?? '' }), 'not_found');
    socket.on('error', () => socket.destroy());
    openSession(app, wss, req, socket, head).catch((err: unknown) => {
      if (err instanceof AppError) {
        const type = err instanceof RelayError ? err.type : 'invalid_request_error';
        return refuse(socket, err.status, localize(err, lang), err.code, type);
      }
      app.log.error({ err }, 'realtime session failed');
      refuse(socket, 500, t(lang, 'common.internal_error'), 'internal_error', 'server_error');
    });
  };
}

async function openSession(app: AppContext, wss: WebSocketServer, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://gateway');
  const ip = clientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], app.config.trustProxy);
  const auth = authenticateKey(app, realtimeKey(req), ip);
  const principal: Principal = auth instanceof Promise ? await auth : auth;
  const model = (url.searchParams.get('model') ?? '').trim() || (url.searchParams.get('deployment') ?? '').trim();
  if (!model) throw new RelayError(400, 'relay.model_missing', 'invalid_request');
  checkModelAllowed(principal, model);
  const table = await routeTable(app);
  let tiers = tiersFor(table, principal.group, model) ?? [];
  if (principal.pinnedChannel !== undefined) {
    const pinned = table.channels.get(principal.pinnedChannel);
    if (!pinned) throw new RelayError(503, msg('relay.pinned_unavailable', { id: principal.pinnedChannel }), 'channel_not_available');
    tiers = [{ priority: pinned.priority, channels: [pinned], weights: [1], total: 1 }];
  }
  const realtimeCapable = (c: ChannelEntry) => c.info.type === OPENAI || c.info.type === AZURE;
  const ch = pickChannel(tiers, 0, new Set(), realtimeCapable);
  if (!ch) {
    const any = tiers.some((t) => t.channels.length > 0);
    throw any
      ? new RelayError(400, msg('realtime.no_channel_kind', { model }), 'endpoint_not_supported')
      : new RelayError(503, msg('relay.no_channel', { group: principal.group, model }), 'model_not_available');
  }
  const price = priceFor(app, model, principal.group, principal.user.setting.accept_unset_model_ratio_model === true);
  const upstreamModel = upstreamModelFor(ch, model);
  const key = ch.keys.length > 1 ? pickKey(ch) : ch.info.key;
  const meter = new RealtimeMeter(app, principal, model, price, ch.info, ip, upstreamModel);
  await meter.open(); // 403 before the handshake when the reservation does not fit

  const betaHeader = typeof req.headers['openai-beta'] === 'string' ? req.headers['openai-beta'] : '';
  const betaProto = subprotocols(req).find((p) => p.startsWith(SUBPROTOCOL_BETA));
  const beta = betaHeader || (betaProto ? betaProto.slice(SUBPROTOCOL_BETA.length).replace(/-v(\d+)$/, '=v$1') : '') || 'realtime=v1';
  const target = upstreamTarget(ch, key, upstreamModel, beta);
  let upstream: WebSocket;
  try {
    upstream = await connectUpstream(target.url, target.headers);
  } catch (err) {
    await meter.close();
    const text = err instanceof Error ? err.message : String(err);
    throw new RelayError(502, msg('realtime.connect_failed', { reason: text.replaceAll(key, '***') }), 'upstream_error', 'upstream_error');
  }
  if (socket.destroyed) {
    upstream.terminate();
    await meter.close();
    return;
  }
  wss.handleUpgrade(req, socket, head, (client) => relaySession(app, client, upstream, meter, pickLanguage(req.headers['accept-language'])));
}

/** Opens the upstream socket; rejects with its refusal (status and body) or network error. */
function connectUpstream(url: string, headers: Record<string, string>): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, handshakeTimeout: HANDSHAKE_TIMEOUT_MS, maxPayload: MAX_PAYLOAD, perMessageDeflate: false });
    ws.once('open', () => {
      // Events the upstream sends at once (session.created) wait until the client's socket is up.
      ws.pause();
      ws.removeAllListeners('error');
      ws.removeAllListeners('unexpected-response');
      resolve(ws);
    });
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.length < 64 && chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let message = text.slice(0, 300);
        try {
          const j = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
          message = (typeof j.error === 'object' ? j.error?.message : j.error) || j.message || message;
        } catch {
          /* text */
        }
        reject(new Error(`${res.statusCode}${message ? ` ${message}` : ''}`));
      });
      res.on('error', () => reject(new Error(String(res.statusCode))));
    });
    ws.on('error', (err) => reject(err));
  });
}

/** Open sessions (their `end`), and sessions whose money is still being settled: app close ends the first and waits for the second. */
const liveSessions = (app: AppContext) =>
  app.memo('realtime:sessions', () => ({ open: new Set<(code: number, reason: string) => void>(), settling: new Set<Promise<void>>() }));

function relaySession(app: AppContext, client: WebSocket, upstream: WebSocket, meter: RealtimeMeter, lang: Lang): void {
  let ended = false;
  const end = (code: number, reason: string) => {
    if (ended) return;
    ended = true;
    for (const ws of [client, upstream]) {
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close(code, reason);
    }
    // A peer that does not answer the close in time is cut.
    setTimeout(() => {
      client.terminate();
      upstream.terminate();
    }, 5_000).unref();
    const live = liveSessions(app);
    live.open.delete(end);
    const settled: Promise<void> = meter
      .close()
      .catch((err: unknown) => app.log.warn({ err }, 'realtime session settle failed'))
      .finally(() => live.settling.delete(settled));
    live.settling.add(settled);
  };
  liveSessions(app).open.add(end);
  const outOfQuota = () => {
    if (ended) return;
    if (client.readyState === WebSocket.OPEN) client.send(errorEvent(t(lang, 'realtime.out_of_quota'), 'insufficient_quota', 'insufficient_quota'));
    end(1008, 'insufficient quota');
  };

  client.on('message', (data: RawData, isBinary: boolean) => {
    if (!ended && upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
  });
  upstream.on('message', (data: RawData, isBinary: boolean) => {
    if (ended) return;
    if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
    if (isBinary) return;
    const text = data.toString();
    // Only the events that carry usage are parsed.
    if (!text.includes('"response.done"')) return;
    let ev: { type?: string; response?: { id?: string; usage?: unknown } };
    try {
      ev = JSON.parse(text);
    } catch {
      return;
    }
    if (ev.type !== 'response.done') return;
    const usage = realtimeUsage(ev.response?.usage);
    if (!usage) return;
    meter.bill(usage, String(ev.response?.id ?? '')).then(
      (ok) => {
        if (!ok) outOfQuota();
      },
      (err: unknown) => {
        app.log.error({ err }, 'realtime billing failed');
        outOfQuota();
      },
    );
  });
  upstream.resume();
  client.on('close', (code) => end(code === 1005 || code === 1006 ? 1000 : validCode(code), ''));
  upstream.on('close', (code, reason) => end(code === 1005 || code === 1006 ? 1011 : validCode(code), reason.toString().slice(0, 120)));
  client.on('error', () => end(1011, ''));
  upstream.on('error', () => {
    if (client.readyState === WebSocket.OPEN) client.send(errorEvent(t(lang, 'realtime.upstream_error'), 'upstream_error', 'server_error'));
    end(1011, 'upstream error');
  });
}

/** A close code that may be sent (1005/1006/1015 are reserved for "none"/"abnormal"). */
function validCode(code: number): number {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999) ? code : 1000;
}
