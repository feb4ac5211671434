/**
 * iFlytek Spark (channel type 18): the Spark chat WebSocket API.
 *
 * - Key: `APPID|APISecret|APIKey`. Version: from the model name (`SparkDesk-v3.5` → v3.5,
 *   `4.0Ultra` → v4.0), else the channel's `other` (stored at creation), else v1.1. The version
 *   names the path and the `domain` (v1.1 lite, v2.1 generalv2, v3.1 generalv3, v3.5 generalv3.5,
 *   v4.0 4.0Ultra, pro-128k and max-32k under `/chat/…`).
 * - URL: `wss://spark-api.xf-yun.com/{version}/chat` (or the channel's base URL, http(s) read as
 *   ws(s)) with the query `authorization`, `date`, `host`: the signature is HMAC-SHA256 with the
 *   APISecret over `host: …\ndate: …\nGET {path} HTTP/1.1`, wrapped as iFlytek documents it.
 * - One request frame `{header:{app_id, uid}, parameter:{chat:{domain, temperature, max_tokens,
 *   top_k}}, payload:{message:{text:[{role, content}]}}}`; answer frames `{header:{code, message,
 *   sid, status}, payload:{choices:{status, text:[{content, role}]}, usage:{text:{prompt_tokens,
 *   completion_tokens, total_tokens}}}}` until `header.status` 2 (usage on that one). A frame with
 *   a non-zero `header.code` is the error.
 *
 * The relay speaks HTTP to upstreams: the request carries a dispatcher that runs the WebSocket
 * instead and hands the frames over as an HTTP answer would come (SSE `data:` lines for
 * a stream, one merged frame as JSON otherwise; an error frame before any text as an error status).
 */
import crypto from 'node:crypto';
import { msg } from '../../i18n';
import WebSocket from 'ws';
import type { Dispatcher } from 'undici';
import type { ChatChunk, ChatRequest, ChatResponse, ProviderAdaptor, SSEEvent, Usage } from '../../relay/types';
import { contentText, isRecord, JsonEventTranslator, newId, streamError } from '../../protocols/shared';
import { UpstreamError } from '../../relay/errors';
import { typesServedBy } from '../catalogue';

export const XUNFEI_BASE = 'wss://spark-api.xf-yun.com';
const DOMAINS: Record<string, string> = {
  'v1.1': 'lite',
  'v2.1': 'generalv2',
  'v3.1': 'generalv3',
  'v3.5': 'generalv3.5',
  'v4.0': '4.0Ultra',
  'pro-128k': 'pro-128k',
  'max-32k': 'max-32k',
};

export function sparkVersion(model: string, other: string): string {
  const m = /^SparkDesk-(v\d\.\d)$/i.exec(model);
  if (m) return m[1]!.toLowerCase();
  if (/^4\.0ultra$/i.test(model)) return 'v4.0';
  if (/^(pro-128k|max-32k)$/i.test(model)) return model.toLowerCase();
  return other.trim() || 'v1.1';
}

const pathOf = (version: string) => (version === 'pro-128k' || version === 'max-32k' ? `/chat/${version}` : `/${version}/chat`);

function splitKey(key: string): { appId: string; apiSecret: string; apiKey: string } {
  const [appId, apiSecret, apiKey] = key.split('|').map((s) => s.trim());
  if (!appId || !apiSecret || !apiKey) throw new UpstreamError(400, msg('adaptor.xunfei_key'), '', 'invalid_channel_key');
  return { appId, apiSecret, apiKey };
}

/** The signed WebSocket URL (pure given `date`; exported for tests). */
export function sparkSignedUrl(base: string, version: string, apiKey: string, apiSecret: string, date: string): string {
  const u = new URL(base.replace(/^http/i, 'ws').replace(/\/+$/, '') + pathOf(version));
  const origin = `host: ${u.host}\ndate: ${date}\nGET ${u.pathname} HTTP/1.1`;
  const signature = crypto.createHmac('sha256', apiSecret).update(origin).digest('base64');
  const authorization = Buffer.from(`api_key="${apiKey}", algorithm="hmac-sha256", headers="host date request-line", signature="${signature}"`).toString(
    'base64',
  );
  u.search = new URLSearchParams({ authorization, date, host: u.host }).toString();
  return u.toString();
}

/** Canonical request → the Spark request frame (pure; exported for tests). */
export function toSparkRequest(req: ChatRequest, appId: string, domain: string): Record<string, unknown> {
  const text = (req.messages ?? []).map((m) => ({
    role: m.role === 'developer' ? 'system' : m.role === 'tool' ? 'user' : m.role,
    content: contentText(m.content),
  }));
  const chat: Record<string, unknown> = { domain };
  if (req.temperature != null) chat.temperature = Math.min(1, Math.max(0.01, req.temperature));
  const max = req.max_tokens ?? req.max_completion_tokens;
  if (max != null) chat.max_tokens = max;
  if (req.top_k != null) chat.top_k = Math.min(6, Math.max(1, Math.round(req.top_k)));
  const header: Record<string, unknown> = { app_id: appId };
  if (typeof req.user === 'string' && req.user) header.uid = req.user.slice(0, 32);
  return { header, parameter: { chat }, payload: { message: { text } } };
}

function sparkUsage(payload: unknown): Usage | undefined {
  const u = isRecord(payload) && isRecord(payload.usage) && isRecord(payload.usage.text) ? payload.usage.text : undefined;
  if (!u) return undefined;
  const prompt = Number(u.prompt_tokens ?? 0) || 0;
  const completion = Number(u.completion_tokens ?? 0) || 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: Number(u.total_tokens ?? 0) || prompt + completion };
}

function frameText(payload: unknown): string {
  const choices = isRecord(payload) && isRecord(payload.choices) ? payload.choices : {};
  const text = Array.isArray(choices.text) ? choices.text : [];
  return text.map((t) => (isRecord(t) && typeof t.content === 'string' ? t.content : '')).join('');
}

/** HTTP status for a Spark error code (auth 401, limits 429, input/content 400, else 500). */
export function sparkStatus(code: number): number {
  if (code === 11200) return 401;
  if (code >= 11201 && code <= 11203) return 429;
  if (code === 10013 || code === 10014 || code === 10019 || code === 10907 || (code >= 10160 && code <= 10163)) return 400;
  return 500;
}

export function fromSparkResponse(body: unknown, model: string): ChatResponse {
  const b = isRecord(body) ? body : {};
  const header = isRecord(b.header) ? b.header : {};
  const code = Number(header.code ?? 0);
  if (code !== 0) throw new UpstreamError(sparkStatus(code), `${String(header.message ?? 'Spark error')} (code ${code})`, JSON.stringify(b), `spark_${code}`);
  const res: ChatResponse = {
    id: typeof header.sid === 'string' ? header.sid : newId('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: frameText(b.payload) }, finish_reason: 'stop' }],
  };
  const u = sparkUsage(b.payload);
  if (u) res.usage = u;
  return res;
}

export class SparkStreamTranslator extends JsonEventTranslator {
  push(ev: SSEEvent): ChatChunk[] {
    const d = this.json(ev);
    if (!d) return [];
    const header = isRecord(d.header) ? d.header : {};
    const code = Number(header.code ?? 0);
    if (code !== 0) throw streamError(`${String(header.message ?? 'Spark error')} (code ${code})`, 'api_error', ev.data);
    const out: ChatChunk[] = [];
    if (!this.started) {
      this.started = true;
      if (typeof header.sid === 'string') this.id = header.sid;
      out.push(this.chunk({ role: 'assistant', content: '' }));
    }
    const text = frameText(d.payload);
    if (text) out.push(this.chunk({ content: text }));
    const u = sparkUsage(d.payload);
    if (u) this.u = u;
    if (Number(header.status) === 2) {
      out.push(this.chunk({}, 'stop'));
      if (this.u) out.push(this.usageChunk(this.u));
    }
    return out;
  }
}

/** The callbacks of the relay's exchange (undici's dispatch handler, callback form). */
interface ExchangeHandler {
  onConnect(abort: (err: Error) => void): void;
  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(trailers: unknown): void;
  onError(err: Error): void;
}

const HANDSHAKE_TIMEOUT_MS = 30_000;
const headersOf = (type: string) => [Buffer.from('content-type'), Buffer.from(type)];

/**
 * Runs one Spark exchange over a WebSocket for the relay's HTTP exchange (see the module note).
 * Only `dispatch` is used by the exchange; the rest of undici's Dispatcher is not needed.
 */
function dispatchSpark(opts: Dispatcher.DispatchOptions, handler: ExchangeHandler): boolean {
  const url = `${String(opts.origin ?? '')}${opts.path}`;
  const headers = (opts.headers ?? {}) as Record<string, string>;
  const stream = String(headers.accept ?? '').includes('text/event-stream');
  const body = typeof opts.body === 'string' ? opts.body : Buffer.isBuffer(opts.body) ? opts.body.toString('utf8') : '';
  let done = false;
  let headersSent = false;
  const finish = (err?: Error) => {
    if (done) return;
    done = true;
    if (err) handler.onError(err);
    else handler.onComplete(null);
    if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.terminate();
  };
  const answer = (status: number, type: string, data: string) => {
    if (!headersSent) {
      headersSent = true;
      handler.onHeaders(status, headersOf(type), () => undefined);
    }
    if (data) handler.onData(Buffer.from(data));
  };
  let ws: WebSocket;
  try {
    ws = new WebSocket(url, { handshakeTimeout: HANDSHAKE_TIMEOUT_MS, perMessageDeflate: false });
  } catch (err) {
    handler.onError(err as Error);
    return true;
  }
  handler.onConnect((err) => finish(err));
  let text = '';
  let last: Record<string, unknown> | undefined;
  ws.on('open', () => ws.send(body));
  ws.on('unexpected-response', (_req, res) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.length < 64 && chunks.push(c));
    res.on('end', () => {
      answer(res.statusCode ?? 502, String(res.headers['content-type'] ?? 'application/json'), Buffer.concat(chunks).toString('utf8'));
      finish();
    });
    res.on('error', (err) => finish(err));
  });
  ws.on('message', (data) => {
    if (done) return;
    const raw = data.toString();
    let frame: Record<string, unknown>;
    try {
      const p = JSON.parse(raw);
      frame = isRecord(p) ? p : {};
    } catch {
      return finish(new Error('iFlytek sent a frame that is not JSON'));
    }
    const header = isRecord(frame.header) ? frame.header : {};
    const code = Number(header.code ?? 0);
    if (code !== 0 && !headersSent) {
      answer(sparkStatus(code), 'application/json', raw);
      return finish();
    }
    const last2 = Number(header.status) === 2;
    if (stream) {
      answer(200, 'text/event-stream', `data: ${raw}\n\n`);
      if (last2 || code !== 0) finish();
      return;
    }
    text += frameText(frame.payload);
    last = frame;
    if (last2) {
      const merged = {
        ...last,
        payload: { ...(isRecord(last.payload) ? last.payload : {}), choices: { status: 2, text: [{ role: 'assistant', index: 0, content: text }] } },
      };
      answer(200, 'application/json', JSON.stringify(merged));
      finish();
    }
  });
  ws.on('error', (err) => finish(err));
  ws.on('close', () => finish(new Error('iFlytek closed the connection before the answer ended')));
  return true;
}

const sparkDispatcher = { dispatch: dispatchSpark } as unknown as Dispatcher;

/** Spark's error bodies: a JSON frame `{header:{code, message}}` or the handshake's `{message}`. */
export function sparkErrorMessage(status: number, body: string): string {
  try {
    const j = JSON.parse(body);
    if (isRecord(j) && isRecord(j.header) && j.header.message) return `${String(j.header.message)} (code ${String(j.header.code)})`;
    if (isRecord(j) && typeof j.message === 'string') return j.message;
  } catch {
    /* text */
  }
  return body.trim() ? body.trim().slice(0, 500) : `upstream returned status ${status}`;
}

export const xunfeiAdaptor: ProviderAdaptor = {
  name: 'xunfei',
  channelTypes: typesServedBy('xunfei'),
  format: 'openai',
  chatRequest(req, ctx) {
    const { appId, apiSecret, apiKey } = splitKey(ctx.channel.key);
    const version = sparkVersion(ctx.upstreamModel, ctx.channel.other);
    const domain = DOMAINS[version] ?? version;
    const url = sparkSignedUrl(ctx.channel.baseUrl || XUNFEI_BASE, version, apiKey, apiSecret, new Date().toUTCString());
    return {
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ctx.stream ? 'text/event-stream' : 'application/json' },
      body: JSON.stringify(toSparkRequest(req, appId, domain)),
      dispatcher: sparkDispatcher,
    };
  },
  chatResponse(body, ctx) {
    return fromSparkResponse(body, ctx.upstreamModel);
  },
  chatStream(ctx) {
    return new SparkStreamTranslator(ctx.upstreamModel);
  },
  errorMessage: sparkErrorMessage,
};
