/**
 * `GET /v1/realtime?model=…` (OpenAI's Realtime API) as a WebSocket relay: the client's socket is
 * accepted only once the upstream's is open, then every event goes through unchanged both ways;
 * `response.done` events carry the usage each response is billed from (billing.ts).
 * Refusals before the handshake (key, model, quota, no channel, upstream down) are HTTP answers in
 * OpenAI's error shape; after it they are an `error` event and a close.
 */
import type { IncomingMessage } from 'node:http';
import { localize, msg, pickLanguage, t, type Lang, type Message } from '../../i18n';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer, type RawData } from 'ws';
import type { AppContext } from '../../context';
import { AppError } from '../../lib/errors';
import { authenticateKey, checkModelAllowed, type Principal } from '../auth';
import { RelayError, UpstreamError, upstreamMessage } from '../errors';
import { normaliseKey } from '../keys';
import { clientIp } from '../ip';
import { pickChannel, pickKey, routeTable, tiersFor, type ChannelEntry } from '../../channels/routeTable';
import { priceFor } from '../../services/billing';
import { upstreamModelFor } from '../call/request';
import { baseUrlOf, openaiErrorMessage } from '../../protocols/openai/adaptor';
import { isRecord } from '../../protocols/shared';
import { upstreamRequestError } from '../upstream';
import { RESERVE_TOKENS, RealtimeMeter, deliveredUsage, realtimeUsage, type BillResult } from './billing';
import { SessionTrack, modalitiesOf, scrubErrorEvent, scrubUpstreamText, type ResponseProgress } from './events';

const OPENAI = 1;
const AZURE = 3;
/** The Azure API version used for realtime when the channel names none (the default chat version has no realtime). */
const AZURE_REALTIME_VERSION = '2024-10-01-preview';
const SUBPROTOCOL_KEY = 'openai-insecure-api-key.';
const SUBPROTOCOL_BETA = 'openai-beta.';
const HANDSHAKE_TIMEOUT_MS = 15_000;
/** Largest event accepted from either side (audio appends are base64 chunks). */
const MAX_PAYLOAD = 16 * 1024 * 1024;
/** How long a session whose client left waits for the upstream's usage of the responses it cancelled (REALTIME_CANCEL_WAIT_MS). */
const CANCEL_WAIT_MS = 5_000;

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
    throw new RelayError(502, msg('realtime.connect_failed', { reason: connectFailure(err, ch) }), 'upstream_error', 'upstream_error');
  }
  if (socket.destroyed) {
    upstream.terminate();
    await meter.close();
    return;
  }
  const lang = pickLanguage(req.headers['accept-language']);
  wss.handleUpgrade(req, socket, head, (client) => relaySession(app, { client, upstream, meter, lang, ch, model }));
}

/** The upstream refused the handshake: its status and body. */
class Refused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(String(status));
  }
}

/**
 * Why the upstream's socket did not open, in the HTTP relay's words and scrubbed as it scrubs them:
 * a network failure names its code only (`ECONNREFUSED`, never the address); a refusal the
 * upstream's own message (`openaiErrorMessage`), with keys, the channel's host and internal
 * addresses taken out (`scrubUpstreamText`).
 */
function connectFailure(err: unknown, ch: ChannelEntry): Message {
  const scrub = (text: string) => scrubUpstreamText(text, ch);
  if (err instanceof Refused) {
    const text = openaiErrorMessage(err.status, err.body);
    return upstreamMessage(new UpstreamError(err.status, text.startsWith('upstream error (') ? text : `${err.status} ${text}`, err.body), scrub);
  }
  const e = err instanceof Error ? (err as Error & { code?: string }) : new Error(String(err));
  return upstreamMessage(upstreamRequestError(e), scrub);
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
      res.on('end', () => reject(new Refused(res.statusCode ?? 502, Buffer.concat(chunks).toString('utf8'))));
      res.on('error', () => reject(new Refused(res.statusCode ?? 502, '')));
    });
    ws.on('error', (err) => reject(err));
  });
}

/** Open sessions (their `end`), and sessions whose money is still being settled: app close ends the first and waits for the second. */
const liveSessions = (app: AppContext) =>
  app.memo('realtime:sessions', () => ({ open: new Set<(code: number, reason: string) => void>(), settling: new Set<Promise<void>>() }));

/** One relayed session: its two sockets, its money, the client's language, the channel and the model billed. */
interface SessionParts {
  client: WebSocket;
  upstream: WebSocket;
  meter: RealtimeMeter;
  lang: Lang;
  ch: ChannelEntry;
  model: string;
}

/** What the relay reads of a client event: whether it asks for a response, and whether it lets the session speak (undefined: no check). */
function clientIntent(data: RawData, isBinary: boolean, sessionAudio: boolean): { create: boolean; audio?: boolean } {
  if (isBinary) return { create: false };
  const text = data.toString();
  // Only these two events are parsed (audio appends are the bulk of the traffic). Their type is in
  // the text as written unless the client escaped it (`\u…`): then the event is parsed whatever it is.
  if (!text.includes('"session.update"') && !text.includes('"response.create"') && !text.includes('\\u')) return { create: false };
  let ev: unknown;
  try {
    ev = JSON.parse(text);
  } catch {
    return { create: false };
  }
  if (!isRecord(ev)) return { create: false };
  if (ev.type === 'session.update') return { create: false, audio: modalitiesOf(ev.session)?.includes('audio') ? true : undefined };
  if (ev.type === 'response.create') return { create: true, audio: modalitiesOf(ev.response)?.includes('audio') ?? sessionAudio };
  return { create: false };
}

/** A close reason within the protocol's 123 bytes. */
function closeReason(text: string): string {
  let s = text.slice(0, 120);
  while (Buffer.byteLength(s) > 120) s = s.slice(0, -1);
  return s;
}

/**
 * Relays one session both ways, following the upstream's events as they pass (SessionTrack):
 * - each `response.done` is billed from its usage (from what the client got of it when it has none);
 * - the reservation held covers what the session can produce: a client event that would let it
 *   speak (a `session.update` turning audio on, a `response.create` asking for audio) waits until
 *   the audio-sized reservation is held — the client's events behind it wait in order — and ends
 *   the session with an `error` event when it cannot be taken;
 * - when the client leaves with responses in flight, they are cancelled upstream (`response.cancel`)
 *   and billed from their `response.done`'s usage, or, when none comes within the cancel wait, from
 *   what the client got of them;
 * - upstream `error` events and close reasons reach the client scrubbed (`scrubUpstreamText`).
 */
function relaySession(app: AppContext, s: SessionParts): void {
  const { client, upstream, meter, lang, ch, model } = s;
  const track = new SessionTrack();
  let ended = false;
  /** The client left: no event goes to it any more, and the responses in flight are being cancelled. */
  let clientGone = false;
  let cancelWait: NodeJS.Timeout | undefined;
  /** `response.create` events sent upstream that no `response.created` answered yet. */
  let creating = 0;
  /** Client events held while a bigger reservation is taken. */
  let held: Array<{ data: RawData; isBinary: boolean }> | undefined;
  const billFailed = (err: unknown) => app.log.error({ err }, 'realtime billing failed');

  /** Bills what the client got of a response no usage came for (nothing delivered: nothing billed). */
  const billDelivered = (p: ResponseProgress): Promise<BillResult> => {
    const u = deliveredUsage(p.text.join(''), p.audioBytes, p.bytesPerSecond, model);
    return u.textOut + u.audioOut > 0 ? meter.bill(u, p.id, { clientGone, estimated: true }) : Promise.resolve('ok');
  };

  const end = (code: number, reason: string) => {
    if (ended) return;
    ended = true;
    if (cancelWait) clearTimeout(cancelWait);
    held = undefined;
    // Responses still in flight (no usage came): billed for what the client got, before the close refunds the rest.
    for (const p of track.active.values()) billDelivered(p).catch(billFailed);
    track.active.clear();
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

  const outOfQuota = (why: Exclude<BillResult, 'ok'>, audio: boolean) => {
    if (ended || clientGone) return;
    if (client.readyState === WebSocket.OPEN) {
      const text =
        why === 'exhausted'
          ? t(lang, 'realtime.out_of_quota')
          : t(lang, 'realtime.response_not_covered', { quota: meter.reserveFor(audio), tokens: RESERVE_TOKENS });
      client.send(errorEvent(text, 'insufficient_quota', 'insufficient_quota'));
    }
    end(1008, 'insufficient quota');
  };
  const onBill = (p: Promise<BillResult>) =>
    p.then(
      (r) => r === 'ok' || outOfQuota(r, track.audio),
      (err: unknown) => {
        billFailed(err);
        outOfQuota('exhausted', track.audio);
      },
    );
  /** Takes the reservation a response that may speak (`audio`) or not needs; false (after ending the session) when it cannot. */
  const cover = (audio: boolean): Promise<boolean> =>
    meter.cover(audio).then(
      (ok) => {
        if (!ok) outOfQuota('uncovered', audio);
        return ok && !ended && !clientGone;
      },
      (err: unknown) => {
        billFailed(err);
        outOfQuota('uncovered', audio);
        return false;
      },
    );

  const toUpstream = (data: RawData, isBinary: boolean, create: boolean) => {
    if (ended || clientGone || upstream.readyState !== WebSocket.OPEN) return;
    upstream.send(data, { binary: isBinary });
    if (create) creating++;
  };
  const fromClient = (data: RawData, isBinary: boolean) => {
    if (held) {
      held.push({ data, isBinary });
      return;
    }
    const intent = clientIntent(data, isBinary, track.audio);
    if (intent.audio === undefined || meter.covers(intent.audio)) return toUpstream(data, isBinary, intent.create);
    held = [];
    void cover(intent.audio).then((ok) => {
      if (!ok) return;
      toUpstream(data, isBinary, intent.create);
      const rest = held ?? [];
      held = undefined;
      replay(rest);
    });
  };
  /** Sends the events held behind a reservation; one that needs a bigger reservation again holds the rest anew. */
  const replay = (events: Array<{ data: RawData; isBinary: boolean }>) => {
    for (let i = 0; i < events.length; i++) {
      if (held) {
        held.push(...events.slice(i));
        return;
      }
      fromClient(events[i]!.data, events[i]!.isBinary);
    }
  };
  client.on('message', fromClient);

  const cancel = (id: string) => {
    if (upstream.readyState === WebSocket.OPEN) upstream.send(JSON.stringify(id ? { type: 'response.cancel', response_id: id } : { type: 'response.cancel' }));
  };
  /** The client left: responses in flight are cancelled and their usage awaited (bounded) before the session ends. */
  const leave = (code: number) => {
    if (ended || clientGone) return;
    clientGone = true;
    held = undefined;
    if (!track.active.size && !creating) return end(code, '');
    meter.stopReserving();
    for (const id of track.active.keys()) cancel(id);
    cancelWait = setTimeout(() => end(code, ''), app.config.realtimeCancelWaitMs ?? CANCEL_WAIT_MS);
    cancelWait.unref();
  };
  client.on('close', (code) => leave(code === 1005 || code === 1006 ? 1000 : validCode(code)));
  client.on('error', () => leave(1011));

  upstream.on('message', (data: RawData, isBinary: boolean) => {
    if (ended) return;
    const relay = !clientGone && client.readyState === WebSocket.OPEN;
    if (isBinary) {
      if (relay) client.send(data, { binary: true });
      return;
    }
    let ev: unknown;
    try {
      ev = JSON.parse(data.toString());
    } catch {
      ev = undefined;
    }
    if (!isRecord(ev)) {
      if (relay) client.send(data, { binary: false });
      return;
    }
    if (relay) client.send(ev.type === 'error' ? scrubErrorEvent(ev, ch) : data, { binary: false });
    const progress = track.follow(ev, relay);
    if (ev.type === 'session.created' || ev.type === 'session.updated') {
      meter.setAudio(track.audio);
      // The upstream speaks while the reservation held is sized for text: the audio-sized one is taken.
      if (track.audio && !meter.covers(true)) void cover(true);
    } else if (ev.type === 'response.created') {
      if (creating > 0) creating--;
      const r = ev.response;
      if (clientGone) cancel(isRecord(r) && typeof r.id === 'string' ? r.id : '');
    } else if (ev.type === 'response.done') {
      const r = isRecord(ev.response) ? ev.response : {};
      const id = typeof r.id === 'string' ? r.id : '';
      const usage = realtimeUsage(r.usage);
      if (usage) onBill(meter.bill(usage, id, { clientGone }));
      else if (progress) onBill(billDelivered(progress));
      if (clientGone && !track.active.size && !creating) end(1000, '');
    }
  });
  upstream.resume();
  upstream.on('close', (code, reason) => end(code === 1005 || code === 1006 ? 1011 : validCode(code), closeReason(scrubUpstreamText(reason.toString(), ch))));
  upstream.on('error', () => {
    if (!clientGone && client.readyState === WebSocket.OPEN) client.send(errorEvent(t(lang, 'realtime.upstream_error'), 'upstream_error', 'server_error'));
    end(1011, 'upstream error');
  });
}

/** A close code that may be sent (1005/1006/1015 are reserved for "none"/"abnormal"). */
function validCode(code: number): number {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999) ? code : 1000;
}
