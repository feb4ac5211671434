/**
 * Baidu ERNIE (channel type 15), the Qianfan "wenxinworkshop" API with an OAuth access token.
 *
 * - Key: `APIKey|SecretKey`. The token comes from `POST {base}/oauth/2.0/token?grant_type=
 *   client_credentials&client_id=…&client_secret=…` (`{access_token, expires_in}`, 30 days) and is
 *   kept per key pair until a day before it expires; an answer saying the token is invalid or
 *   expired (error_code 110/111) drops it, so the next call mints a new one.
 * - Chat: `POST {base}/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/{endpoint}?access_token=…`; the
 *   endpoint is Baidu's name for the model (ERNIE-4.0-8K → completions_pro, ERNIE-3.5-8K →
 *   completions, other models: their name in lower case, as Baidu publishes them). Body:
 *   `messages` (user/assistant alternating, starting with user: same-role neighbours merged),
 *   `system`, `temperature`, `top_p`, `penalty_score` (from frequency_penalty), `stop`,
 *   `max_output_tokens`, `user_id`, `stream`.
 * - Answer: `{id, result, is_truncated, finish_reason?, usage}`; errors come with HTTP 200 as
 *   `{error_code, error_msg}` and become upstream errors. Stream: SSE `data:` objects with `result`
 *   pieces, `is_end` and `usage` on the last one.
 * - Embeddings: `POST {base}/rpc/2.0/ai_custom/v1/wenxinworkshop/embeddings/{endpoint}?access_token=…`
 *   (Embedding-V1 → embedding-v1, bge-large-zh → bge_large_zh, …) with `{input: [texts], user_id}`;
 *   the answer `{data:[{object:'embedding', embedding, index}], usage:{prompt_tokens, total_tokens}}`
 *   is OpenAI's list already (vectors base64-encoded when the client asks, as the openai SDK does).
 */
import crypto from 'node:crypto';
import { msg } from '../../i18n';
import type { AppContext } from '../../context';
import type { ChatChunk, ChatMessage, ChatRequest, ChatResponse, ProviderAdaptor, SSEEvent, Usage, UpstreamRequest, AdaptorContext } from '../../relay/types';
import { contentText, isRecord, JsonEventTranslator, newId, streamError, upstreamErrorMessage } from '../../protocols/shared';
import { UpstreamError } from '../../relay/errors';
import { sendUpstream, readBody } from '../../relay/sendUpstream';
import { typesServedBy } from '../catalogue';
import { own } from '../../lib/own';

export const BAIDU_BASE = 'https://aip.baidubce.com';
/** Baidu's endpoint names of the models whose endpoint is not their lower-cased name. */
const ENDPOINTS: Record<string, string> = {
  'ERNIE-4.0-8K': 'completions_pro',
  'ERNIE-Bot-4': 'completions_pro',
  'ERNIE-3.5-8K': 'completions',
  'ERNIE-Bot': 'completions',
  'ERNIE-Bot-8K': 'ernie_bot_8k',
  'ERNIE-Bot-turbo': 'eb-instant',
  'ERNIE-Speed-128K': 'ernie-speed-128k',
  'ERNIE-Speed-8K': 'ernie_speed',
  'ERNIE-Lite-8K': 'ernie-lite-8k',
  'ERNIE-Tiny-8K': 'ernie-tiny-8k',
  'ERNIE-4.0-Turbo-8K': 'ernie-4.0-turbo-8k',
};

export function baiduEndpoint(model: string): string {
  return own(ENDPOINTS, model) ?? model.toLowerCase();
}

/** Baidu's endpoint names of the embedding models whose endpoint is not their lower-cased name. */
const EMBEDDING_ENDPOINTS: Record<string, string> = {
  'Embedding-V1': 'embedding-v1',
  'bge-large-zh': 'bge_large_zh',
  'bge-large-en': 'bge_large_en',
  'tao-8k': 'tao_8k',
};

export function baiduEmbeddingEndpoint(model: string): string {
  return own(EMBEDDING_ENDPOINTS, model) ?? model.toLowerCase();
}

/** OpenAI embeddings body → Baidu's (pure; exported for tests). */
export function toBaiduEmbedding(body: Record<string, unknown>): Record<string, unknown> {
  const input = body.input;
  const texts = (Array.isArray(input) ? input : [input]).map((t) => (typeof t === 'string' ? t : JSON.stringify(t)));
  const out: Record<string, unknown> = { input: texts };
  if (typeof body.user === 'string' && body.user) out.user_id = body.user;
  return out;
}

const base64Vector = (v: unknown): string => Buffer.from(new Float32Array(Array.isArray(v) ? v.map(Number) : []).buffer).toString('base64');

/** Baidu's embeddings answer → OpenAI's list and usage; an error body → UpstreamError. */
export function fromBaiduEmbedding(body: unknown, model: string, encodingFormat?: unknown): { body: Record<string, unknown>; usage?: Usage } {
  const b = isRecord(body) ? body : {};
  if (b.error_code !== undefined && b.error_code !== 0) throw baiduError(b);
  const data = (Array.isArray(b.data) ? b.data : []).filter(isRecord).map((d, i) => ({
    object: 'embedding',
    index: typeof d.index === 'number' ? d.index : i,
    embedding: encodingFormat === 'base64' ? base64Vector(d.embedding) : Array.isArray(d.embedding) ? d.embedding : [],
  }));
  const u = baiduUsage(b.usage);
  const usage = u ? { prompt_tokens: u.prompt_tokens, completion_tokens: 0, total_tokens: u.total_tokens } : undefined;
  return { body: { object: 'list', model, data, usage: { prompt_tokens: usage?.prompt_tokens ?? 0, total_tokens: usage?.total_tokens ?? 0 } }, usage };
}

const baseOf = (baseUrl: string) => (baseUrl || BAIDU_BASE).replace(/\/+$/, '');

function splitKey(key: string): { ak: string; sk: string } {
  const i = key.indexOf('|');
  if (i <= 0 || i === key.length - 1) throw new UpstreamError(400, msg('adaptor.baidu_key'), '', 'invalid_channel_key');
  return { ak: key.slice(0, i).trim(), sk: key.slice(i + 1).trim() };
}

/** Canonical request → ERNIE chat body (pure; exported for tests). */
export function toBaiduRequest(req: ChatRequest, stream: boolean): Record<string, unknown> {
  const system: string[] = [];
  const messages: Array<{ role: 'user' | 'assistant'; content: string }> = [];
  const add = (role: 'user' | 'assistant', content: string) => {
    const last = messages[messages.length - 1];
    if (last && last.role === role) last.content += `\n${content}`;
    else messages.push({ role, content });
  };
  for (const m of req.messages ?? ([] as ChatMessage[])) {
    const text = contentText(m.content);
    if (m.role === 'system' || m.role === 'developer') system.push(text);
    else if (m.role === 'assistant') {
      if (messages.length) add('assistant', text); // the conversation must start with the user
    } else add('user', text);
  }
  const body: Record<string, unknown> = { messages, stream };
  if (system.length) body.system = system.join('\n');
  if (req.temperature != null) body.temperature = Math.min(1, Math.max(0.01, req.temperature));
  if (req.top_p != null) body.top_p = req.top_p;
  if (typeof req.frequency_penalty === 'number') body.penalty_score = Math.min(2, Math.max(1, 1 + req.frequency_penalty));
  if (req.stop != null) body.stop = Array.isArray(req.stop) ? req.stop : [req.stop];
  const max = req.max_tokens ?? req.max_completion_tokens;
  if (max != null) body.max_output_tokens = Math.max(2, max);
  if (typeof req.user === 'string' && req.user) body.user_id = req.user;
  return body;
}

function baiduUsage(u: unknown): Usage | undefined {
  if (!isRecord(u)) return undefined;
  const prompt = Number(u.prompt_tokens ?? 0) || 0;
  const completion = Number(u.completion_tokens ?? 0) || 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: Number(u.total_tokens ?? 0) || prompt + completion };
}

function finishOf(b: Record<string, unknown>): ChatResponse['choices'][number]['finish_reason'] {
  if (b.finish_reason === 'length' || b.is_truncated === true) return 'length';
  if (b.finish_reason === 'content_filter') return 'content_filter';
  return 'stop';
}

/**
 * ERNIE `{error_code, error_msg}` → UpstreamError. An invalid or expired access token (110/111)
 * heals by itself — the token is minted again on the next call — so it is a 503 (the channel's
 * breaker counts it like any passing fault), not an auth failure that would open it at once.
 */
function baiduError(b: Record<string, unknown>): UpstreamError {
  const code = Number(b.error_code);
  const status = code === 110 || code === 111 ? 503 : code === 18 || code === 4 || code === 17 || code === 19 ? 429 : code === 336003 ? 400 : 500;
  return new UpstreamError(status, `${String(b.error_msg ?? 'Baidu error')} (error_code ${code})`, JSON.stringify(b), `baidu_${code}`);
}

export function fromBaiduResponse(body: unknown, model: string): ChatResponse {
  const b = isRecord(body) ? body : {};
  if (b.error_code !== undefined && b.error_code !== 0) throw baiduError(b);
  const res: ChatResponse = {
    id: typeof b.id === 'string' ? b.id : newId('chatcmpl-'),
    object: 'chat.completion',
    created: typeof b.created === 'number' ? b.created : Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: typeof b.result === 'string' ? b.result : '' }, finish_reason: finishOf(b) }],
  };
  const u = baiduUsage(b.usage);
  if (u) res.usage = u;
  return res;
}

export class BaiduStreamTranslator extends JsonEventTranslator {
  push(ev: SSEEvent): ChatChunk[] {
    const d = this.json(ev);
    if (!d) return [];
    if (d.error_code !== undefined && d.error_code !== 0) {
      const e = baiduError(d);
      throw streamError(e.message, 'api_error', ev.data);
    }
    const out: ChatChunk[] = [];
    if (!this.started) {
      this.started = true;
      if (typeof d.id === 'string') this.id = d.id;
      if (typeof d.created === 'number') this.created = d.created;
      out.push(this.chunk({ role: 'assistant', content: '' }));
    }
    if (typeof d.result === 'string' && d.result) out.push(this.chunk({ content: d.result }));
    const u = baiduUsage(d.usage);
    if (u) this.u = u;
    if (d.is_end === true) {
      out.push(this.chunk({}, finishOf(d)));
      if (u) out.push(this.usageChunk(u));
    }
    return out;
  }
}

interface CachedToken {
  token: string;
  expiresAt: number;
}
const tokens = (app: AppContext) => app.memo('relay:baidu:tokens', () => new Map<string, CachedToken | Promise<CachedToken>>());
const cacheKey = (base: string, ak: string, sk: string) => crypto.createHash('sha256').update(`${base}\n${ak}\n${sk}`).digest('hex');

/** The access token of a key pair: cached until a day before it expires; one mint at a time per pair. */
export async function baiduAccessToken(app: AppContext, baseUrl: string, key: string, proxy?: string): Promise<string> {
  const { ak, sk } = splitKey(key);
  const base = baseOf(baseUrl);
  const map = tokens(app);
  const k = cacheKey(base, ak, sk);
  if (staleTokens.delete(k)) map.delete(k);
  const hit = map.get(k);
  if (hit) {
    const t = await hit;
    if (t.expiresAt > Date.now()) return t.token;
    if (map.get(k) === hit) map.delete(k);
  }
  const minting = (async (): Promise<CachedToken> => {
    const url = `${base}/oauth/2.0/token?grant_type=client_credentials&client_id=${encodeURIComponent(ak)}&client_secret=${encodeURIComponent(sk)}`;
    const res = await sendUpstream(
      app,
      { url, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' } },
      AbortSignal.timeout(30_000),
      proxy,
    );
    const text = (await readBody(res, 1024 * 1024)).toString('utf8');
    let j: Record<string, unknown> = {};
    try {
      const p = JSON.parse(text);
      if (isRecord(p)) j = p;
    } catch {
      /* below */
    }
    if (res.statusCode >= 400 || typeof j.access_token !== 'string') {
      const why = typeof j.error_description === 'string' ? j.error_description : typeof j.error === 'string' ? j.error : `status ${res.statusCode}`;
      throw new UpstreamError(res.statusCode >= 400 && res.statusCode < 500 ? 401 : 502, msg('adaptor.baidu_token_failed', { reason: why }), '', 'baidu_token');
    }
    const ttl = Number(j.expires_in ?? 0) || 86400;
    return { token: j.access_token, expiresAt: Date.now() + Math.max(60, ttl - 86400) * 1000 };
  })();
  map.set(k, minting);
  try {
    const t = await minting;
    map.set(k, t);
    return t.token;
  } catch (err) {
    if (map.get(k) === minting) map.delete(k);
    throw err;
  }
}

/**
 * Key pairs whose token Baidu called invalid or expired (error_code 110/111), seen where the app
 * is not at hand (the answer's conversion): the next authorize mints a new token for them.
 */
const staleTokens = new Set<string>();

function markStale(channel: { baseUrl: string; key: string }): void {
  try {
    const { ak, sk } = splitKey(channel.key);
    if (staleTokens.size > 10_000) staleTokens.clear();
    staleTokens.add(cacheKey(baseOf(channel.baseUrl), ak, sk));
  } catch {
    /* malformed key: nothing cached */
  }
}

/** Marks the token stale when `err` says it is no longer valid; returns `err`. */
function noteTokenError<E>(err: E, channel: { baseUrl: string; key: string }): E {
  if (err instanceof UpstreamError && (err.upstreamCode === 'baidu_110' || err.upstreamCode === 'baidu_111')) markStale(channel);
  return err;
}

const TOKEN_PLACEHOLDER = '{access_token}';

export const baiduAdaptor: ProviderAdaptor = {
  name: 'baidu',
  channelTypes: typesServedBy('baidu'),
  format: 'openai',
  convertedEndpoints: ['embeddings'],
  chatRequest(req, ctx) {
    const base = baseOf(ctx.channel.baseUrl);
    return {
      url: `${base}/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/${encodeURIComponent(baiduEndpoint(ctx.upstreamModel))}?access_token=${TOKEN_PLACEHOLDER}`,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ctx.stream ? 'text/event-stream' : 'application/json' },
      body: JSON.stringify(toBaiduRequest(req, ctx.stream)),
    };
  },
  async authorize(req: UpstreamRequest, ctx: AdaptorContext, app: AppContext): Promise<UpstreamRequest> {
    const proxy = typeof ctx.channel.setting.proxy === 'string' ? ctx.channel.setting.proxy : undefined;
    const token = await baiduAccessToken(app, ctx.channel.baseUrl, ctx.channel.key, proxy);
    return { ...req, url: req.url.replace(TOKEN_PLACEHOLDER, encodeURIComponent(token)) };
  },
  chatResponse(body, ctx) {
    try {
      return fromBaiduResponse(body, ctx.upstreamModel);
    } catch (err) {
      throw noteTokenError(err, ctx.channel);
    }
  },
  chatStream(ctx) {
    return new BaiduStreamTranslator(ctx.upstreamModel);
  },
  endpointRequest(body, ctx) {
    const base = baseOf(ctx.channel.baseUrl);
    return {
      url: `${base}/rpc/2.0/ai_custom/v1/wenxinworkshop/embeddings/${encodeURIComponent(baiduEmbeddingEndpoint(ctx.upstreamModel))}?access_token=${TOKEN_PLACEHOLDER}`,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(toBaiduEmbedding(body)),
    };
  },
  endpointResponse(body, ctx, request) {
    try {
      return fromBaiduEmbedding(body, ctx.requestedModel, request.encoding_format);
    } catch (err) {
      throw noteTokenError(err, ctx.channel);
    }
  },
  errorMessage: upstreamErrorMessage,
};
