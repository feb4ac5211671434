/**
 * Google Vertex AI (channel type 41).
 *
 * - Channel key: a service-account JSON (`client_email`, `private_key`, `project_id`, optional
 *   `token_uri`, `private_key_id`). The relay mints an OAuth2 access token by signing a JWT
 *   (RS256, node:crypto) and exchanging it at `token_uri` (default Google's); the token is cached per
 *   channel and key until shortly before it expires (per app, via `app.memo`).
 * - Region: channel `other`, either a plain region (`us-east5`) or a JSON map model → region with a
 *   `default` entry. Default `us-central1`; `global` uses the regionless host.
 * - Gemini models → `publishers/google/models/{model}:generateContent` / `:streamGenerateContent?alt=sse`
 *   (the Gemini adaptor's conversion); models starting with `claude` →
 *   `publishers/anthropic/models/{model}:rawPredict` / `:streamRawPredict` with
 *   `anthropic_version: "vertex-2023-10-16"` (the Claude adaptor's conversion, no `model` in the body).
 * - A channel base_url replaces `https://{region}-aiplatform.googleapis.com` (proxies, tests).
 * - Always through the canonical conversion (no same-format passthrough: one channel serves two formats).
 */
import crypto from 'node:crypto';
import { msg } from '../../i18n';
import type { AppContext } from '../../context';
import type { AdaptorContext, ChannelInfo, ProviderAdaptor, UpstreamRequest } from '../../relay/types';
import { UpstreamError } from '../../relay/errors';
import { readBody, sendUpstream } from '../../relay/sendUpstream';
import { ClaudeStreamTranslator, fromClaudeResponse } from '../../protocols/claude/upstreamAnswer';
import { toClaudeRequest } from '../../protocols/claude/upstreamRequest';
import { isRecord, upstreamErrorMessage } from '../../protocols/shared';
import { countTokensBody } from '../../protocols/gemini/adaptor';
import { fromGeminiResponse, GeminiStreamTranslator } from '../../protocols/gemini/upstreamAnswer';
import { toGeminiRequest } from '../../protocols/gemini/upstreamRequest';
import { typesServedBy } from '../catalogue';
import { own } from '../../lib/own';

export const VERTEX_TOKEN_URL = 'https://oauth2.googleapis.com/token';
export const VERTEX_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';
const DEFAULT_REGION = 'us-central1';

export interface ServiceAccount {
  client_email: string;
  private_key: string;
  project_id: string;
  private_key_id?: string;
  token_uri?: string;
}

export function parseServiceAccount(key: string): ServiceAccount {
  let j: unknown;
  try {
    j = JSON.parse(key);
  } catch {
    j = undefined;
  }
  if (!isRecord(j) || typeof j.client_email !== 'string' || typeof j.private_key !== 'string' || typeof j.project_id !== 'string' || !j.project_id) {
    throw new UpstreamError(401, msg('adaptor.vertex_key'), '', 'invalid_channel_key');
  }
  return {
    client_email: j.client_email,
    private_key: j.private_key,
    project_id: j.project_id,
    ...(typeof j.private_key_id === 'string' ? { private_key_id: j.private_key_id } : {}),
    ...(typeof j.token_uri === 'string' && /^https?:\/\//.test(j.token_uri) ? { token_uri: j.token_uri } : {}),
  };
}

/** Region for a model: `other` = plain region, or JSON `{ "<model>": "<region>", "default": "<region>" }`. */
export function vertexRegion(other: string, model: string): string {
  const raw = (other ?? '').trim();
  let region = DEFAULT_REGION;
  if (raw.startsWith('{')) {
    try {
      const m = JSON.parse(raw) as Record<string, unknown>;
      const v = own(m, model) ?? own(m, 'default');
      if (typeof v === 'string' && v.trim()) region = v.trim();
    } catch {
      /* keep the default */
    }
  } else if (raw) region = raw;
  if (!/^[a-z0-9-]+$/.test(region)) throw new UpstreamError(400, msg('adaptor.vertex_region', { region }), '', 'invalid_channel_config');
  return region;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** The signed JWT assertion (RS256) for the token exchange. */
export function signServiceAccountJwt(sa: ServiceAccount, nowSec = Math.floor(Date.now() / 1000)): string {
  const header = { alg: 'RS256', typ: 'JWT', ...(sa.private_key_id ? { kid: sa.private_key_id } : {}) };
  const claims = { iss: sa.client_email, scope: VERTEX_SCOPE, aud: sa.token_uri ?? VERTEX_TOKEN_URL, iat: nowSec, exp: nowSec + 3600 };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  let sig: Buffer;
  try {
    sig = crypto.sign('RSA-SHA256', Buffer.from(input), sa.private_key);
  } catch {
    throw new UpstreamError(401, msg('adaptor.vertex_private_key'), '', 'invalid_channel_key');
  }
  return `${input}.${b64url(sig)}`;
}

interface CachedToken {
  token: string;
  expiresAt: number;
}

async function mintToken(app: AppContext, sa: ServiceAccount, proxy?: string): Promise<CachedToken> {
  const url = sa.token_uri ?? VERTEX_TOKEN_URL;
  const body = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: signServiceAccountJwt(sa) }).toString();
  const res = await sendUpstream(
    app,
    { url, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body },
    AbortSignal.timeout(30_000),
    proxy,
  );
  const text = (await readBody(res, 1024 * 1024)).toString('utf8');
  let j: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text);
    if (isRecord(parsed)) j = parsed;
  } catch {
    /* handled below */
  }
  if (res.statusCode >= 400 || typeof j.access_token !== 'string' || !j.access_token) {
    const why = typeof j.error_description === 'string' ? j.error_description : typeof j.error === 'string' ? j.error : `HTTP ${res.statusCode}`;
    // 401: retryable on another channel and counted against this channel's health
    throw new UpstreamError(
      res.statusCode >= 400 && res.statusCode !== 400 ? res.statusCode : 401,
      msg('adaptor.vertex_token_failed', { reason: why }),
      text,
      'vertex_token_failed',
    );
  }
  const ttl = Number(j.expires_in) > 0 ? Number(j.expires_in) : 3600;
  // refresh a minute early (or at half-life for very short tokens)
  return { token: j.access_token, expiresAt: Date.now() + Math.max(ttl * 500, ttl * 1000 - 60_000) };
}

/** A cached (per app, channel and key) access token; concurrent callers share one exchange. */
export async function vertexAccessToken(app: AppContext, channel: Pick<ChannelInfo, 'id' | 'key' | 'setting'>): Promise<string> {
  const cache = app.memo('relay:vertexTokens', () => new Map<string, Promise<CachedToken>>());
  const id = `${channel.id}:${crypto.createHash('sha256').update(channel.key).digest('hex').slice(0, 32)}`;
  const hit = cache.get(id);
  if (hit) {
    try {
      const t = await hit;
      if (t.expiresAt > Date.now()) return t.token;
    } catch {
      /* a failed exchange is retried below */
    }
    if (cache.get(id) !== hit) return vertexAccessToken(app, channel);
  }
  const sa = parseServiceAccount(channel.key);
  const proxy = typeof channel.setting?.proxy === 'string' ? channel.setting.proxy : undefined;
  const p = mintToken(app, sa, proxy);
  // one entry per channel: an edited key replaces the old entry
  for (const k of cache.keys()) if (k !== id && k.startsWith(`${channel.id}:`)) cache.delete(k);
  cache.set(id, p);
  try {
    return (await p).token;
  } catch (err) {
    if (cache.get(id) === p) cache.delete(id);
    throw err;
  }
}

export const isVertexClaude = (model: string) => model.startsWith('claude');

/** `claude-3-5-sonnet-20241022` → `claude-3-5-sonnet-v2@20241022`; names with `@` are kept. */
export function vertexClaudeModel(model: string): string {
  if (model.includes('@')) return model;
  if (model === 'claude-3-5-sonnet-20241022') return 'claude-3-5-sonnet-v2@20241022';
  const m = /^(.*)-(\d{8})$/.exec(model);
  return m ? `${m[1]}@${m[2]}` : model;
}

function vertexBase(channel: ChannelInfo, region: string): string {
  if (channel.baseUrl) return channel.baseUrl.replace(/\/+$/, '');
  return region === 'global' ? 'https://aiplatform.googleapis.com' : `https://${region}-aiplatform.googleapis.com`;
}

/** `regionModel`: the name looked up in the region map (the channel's upstream model name). */
export function vertexUrl(channel: ChannelInfo, publisher: 'google' | 'anthropic', model: string, action: string, regionModel = model): string {
  const sa = parseServiceAccount(channel.key);
  const region = vertexRegion(channel.other, regionModel);
  return `${vertexBase(channel, region)}/v1/projects/${encodeURIComponent(sa.project_id)}/locations/${region}/publishers/${publisher}/models/${encodeURIComponent(model).replace(/%40/g, '@')}:${action}`;
}

function vertexRequest(url: string, body: Record<string, unknown>, stream: boolean): UpstreamRequest {
  return {
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(stream ? { accept: 'text/event-stream' } : {}) },
    body: JSON.stringify(body),
  };
}

/** `:countTokens` of a Gemini model on Vertex AI (the token is added by `authorize`); Claude models have none. */
export function vertexCountTokensRequest(body: Record<string, unknown>, ctx: AdaptorContext): UpstreamRequest | undefined {
  if (isVertexClaude(ctx.upstreamModel)) return undefined;
  const url = vertexUrl(ctx.channel, 'google', ctx.upstreamModel, 'countTokens');
  return vertexRequest(url, countTokensBody(body, ctx.upstreamModel, true), false);
}

export const vertexAdaptor: ProviderAdaptor = {
  name: 'vertex',
  channelTypes: typesServedBy('vertex'),
  format: 'gemini',
  chatRequest(req, ctx: AdaptorContext) {
    if (isVertexClaude(ctx.upstreamModel)) {
      const { body, model } = toClaudeRequest(req, ctx);
      const { model: _m, ...rest } = body;
      const native = vertexClaudeModel(model);
      const url = vertexUrl(ctx.channel, 'anthropic', native, ctx.stream ? 'streamRawPredict' : 'rawPredict', ctx.upstreamModel);
      return vertexRequest(url, { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest }, ctx.stream);
    }
    const { body, model } = toGeminiRequest(req, ctx);
    const url = vertexUrl(ctx.channel, 'google', model, ctx.stream ? 'streamGenerateContent?alt=sse' : 'generateContent', ctx.upstreamModel);
    return vertexRequest(url, body, ctx.stream);
  },
  async authorize(req, ctx, app) {
    const token = await vertexAccessToken(app, ctx.channel);
    return { ...req, headers: { ...req.headers, authorization: `Bearer ${token}` } };
  },
  chatResponse(body, ctx) {
    return isVertexClaude(ctx.upstreamModel) ? fromClaudeResponse(body, ctx.upstreamModel) : fromGeminiResponse(body, ctx.upstreamModel);
  },
  chatStream(ctx) {
    return isVertexClaude(ctx.upstreamModel) ? new ClaudeStreamTranslator(ctx.upstreamModel) : new GeminiStreamTranslator(ctx.upstreamModel);
  },
  errorMessage: upstreamErrorMessage,
};
