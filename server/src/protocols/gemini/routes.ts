/**
 * The Gemini API endpoints besides generateContent that Gemini clients (Gemini CLI, @google/genai)
 * call: the model list, countTokens, embedContent and batchEmbedContents. Keys as on the other
 * Gemini routes (`x-goog-api-key`, `?key=`, Bearer); errors in Gemini's shape.
 *
 * - `GET /v1beta/models` (+ `/{model}`): the key's models in Gemini's list shape, paged with
 *   `pageSize` / `pageToken`.
 * - `POST …/models/{model}:countTokens`: forwarded to a Gemini or Vertex AI channel of the model
 *   (the model's own count); without one, or when that channel fails, counted locally with the
 *   relay's tokenizer. Never billed, no log row.
 * - `POST …/models/{model}:embedContent` / `:batchEmbedContents`: a relay call on the
 *   `embeddings` endpoint, billed like embeddings: forwarded to Gemini channels, converted to
 *   OpenAI's `/v1/embeddings` on OpenAI-format channels (`geminiEmbeddings`).
 */
import type { AppContext } from '../../context';
import { verbatim } from '../../i18n';
import type { RelayHttp } from '../../relay/httpContext';
import { authenticateKey, checkModelAllowed, type Principal } from '../../relay/auth';
import { extractKey } from '../../relay/keys';
import { RelayError, UpstreamError, scrubSecrets } from '../../relay/errors';
import { loadedRouteTable, pickChannel, pickKey, routeTable, tiersFor, type ChannelEntry, type RouteTable, type Tier } from '../../channels/routeTable';
import { adaptorFor } from '../../channels/providers';
import { geminiCountTokensRequest } from './adaptor';
import { isVertexClaude, vertexCountTokensRequest } from '../../channels/providers/vertex';
import { isRecord } from '../shared';
import { readBody, sendUpstream } from '../../relay/sendUpstream';
import { countPromptWithTools } from '../../relay/tokenizer';
import { isPriced } from '../../services/billing';
import { startTimer } from '../../metrics';
import { relay } from '../../relay/call';
import { upstreamModelFor } from '../../relay/call/request';
import type { AdaptorContext, ChatRequest, InboundKit, InboundRoute, UpstreamRequest } from '../../relay/types';
import { embedRequests, geminiFormat, geminiToChat } from './format';

const decode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

async function principalOf(app: AppContext, ctx: RelayHttp, kit: InboundKit): Promise<Principal> {
  return authenticateKey(app, extractKey(ctx, 'gemini'), kit.ip);
}

async function tableOf(app: AppContext): Promise<RouteTable> {
  return loadedRouteTable(app) ?? (await routeTable(app));
}

// ---------------------------------------------------------------------------------------------
// Model list

const MODELS_PATH = /^\/v1beta\/models(?:\/([^/:]+))?$/;

/** Context sizes when no channel of the model sets max_input_tokens (the families' published limits). */
function limitsOf(model: string): { input: number; output: number } {
  if (/gemini/i.test(model)) return { input: 1_048_576, output: 65_536 };
  if (/claude/i.test(model)) return { input: 200_000, output: 64_000 };
  if (/embed/i.test(model)) return { input: 8_192, output: 1 };
  return { input: 128_000, output: 16_384 };
}

function modelEntry(model: string, tiers: Tier[] | undefined): Record<string, unknown> {
  const limits = limitsOf(model);
  let input = 0;
  for (const t of tiers ?? []) for (const c of t.channels) if (c.maxInputTokens && (!input || c.maxInputTokens < input)) input = c.maxInputTokens;
  const embedding = /embed/i.test(model);
  return {
    name: `models/${model}`,
    baseModelId: model,
    version: '001',
    displayName: model,
    description: '',
    inputTokenLimit: input || limits.input,
    outputTokenLimit: limits.output,
    supportedGenerationMethods: embedding ? ['embedContent', 'batchEmbedContents', 'countTokens'] : ['generateContent', 'countTokens'],
  };
}

/** `pageToken` is the offset, base64url-encoded (opaque to clients, as Google's is). */
const pageOffset = (token: unknown): number => {
  if (typeof token !== 'string' || !token) return 0;
  const n = Number(Buffer.from(token, 'base64url').toString('utf8'));
  if (!Number.isInteger(n) || n < 0) throw new RelayError(400, verbatim('Invalid page token.'), 'invalid_request');
  return n;
};

async function listModels(app: AppContext, ctx: RelayHttp, m: { modelFromPath?: string }, kit: InboundKit): Promise<void> {
  const principal = await principalOf(app, ctx, kit);
  const table = await tableOf(app);
  const limits = principal.token?.modelLimits;
  const models = Array.from(table.modelsByGroup.get(principal.group) ?? [])
    .filter((id) => !limits || limits.has(id))
    .sort();
  if (m.modelFromPath !== undefined) {
    const id = m.modelFromPath;
    if (!models.includes(id))
      throw new RelayError(404, verbatim(`models/${id} is not found for API version v1beta, or is not supported for this key.`), 'model_not_found');
    ctx.body = modelEntry(id, tiersFor(table, principal.group, id));
    return;
  }
  const size = Math.min(1000, Math.max(1, Math.floor(Number(ctx.query.pageSize)) || 50));
  const from = pageOffset(ctx.query.pageToken);
  const page = models.slice(from, from + size).map((id) => modelEntry(id, tiersFor(table, principal.group, id)));
  const next = from + size < models.length ? Buffer.from(String(from + size)).toString('base64url') : undefined;
  ctx.body = { models: page, ...(next ? { nextPageToken: next } : {}) };
}

export const geminiModelsRoute: InboundRoute = {
  method: 'GET',
  match(path) {
    const m = MODELS_PATH.exec(path);
    if (!m) return null;
    return m[1] !== undefined ? { modelFromPath: decode(m[1]) } : {};
  },
  format: geminiFormat,
  keyStyle: 'gemini',
  handle: listModels,
};

// ---------------------------------------------------------------------------------------------
// countTokens and embeddings

const ACTION_PATH = /^\/(?:v1beta|v1)\/models\/([^/:]+):(countTokens|embedContent|batchEmbedContents)$/;

function matchAction(path: string, actions: readonly string[]): { modelFromPath: string; action: string } | null {
  const m = ACTION_PATH.exec(path);
  if (!m || !actions.includes(m[2]!)) return null;
  return { modelFromPath: decode(m[1]!), action: m[2]! };
}

const COUNT_TIMEOUT_MS = 30_000;

/** A channel that counts the model's tokens itself: a Gemini channel, or a Gemini model on Vertex AI. */
function countsTokens(ch: ChannelEntry, model: string): boolean {
  const a = adaptorFor(ch.info.type).name;
  return a === 'gemini' || (a === 'vertex' && !isVertexClaude(upstreamModelFor(ch, model)));
}

/** The token count of one Gemini channel; undefined when it could not give one (network, key, 5xx …). */
async function upstreamCount(app: AppContext, ch: ChannelEntry, model: string, body: Record<string, unknown>): Promise<unknown> {
  const adaptor = adaptorFor(ch.info.type);
  const actx: AdaptorContext = {
    channel: ch.keys.length > 1 ? { ...ch.info, key: pickKey(ch) } : ch.info,
    upstreamModel: upstreamModelFor(ch, model),
    requestedModel: model,
    stream: false,
    endpoint: 'chat',
    option: (k) => app.options.get(k),
  };
  try {
    let req: UpstreamRequest | undefined = adaptor.name === 'vertex' ? vertexCountTokensRequest(body, actx) : geminiCountTokensRequest(body, actx);
    if (!req) return undefined;
    if (adaptor.authorize) req = await adaptor.authorize(req, actx, app);
    const proxy = typeof ch.info.setting.proxy === 'string' ? ch.info.setting.proxy : undefined;
    // a count is quick: a channel that takes long is skipped for the local count
    const res = await sendUpstream(app, req, AbortSignal.timeout(Math.min(app.config.upstreamTimeoutMs, COUNT_TIMEOUT_MS)), proxy);
    const text = (await readBody(res, 1024 * 1024)).toString('utf8');
    if (res.statusCode === 400) {
      // the client's request is at fault: its error, not a guess
      throw new RelayError(400, verbatim(scrubSecrets(adaptor.errorMessage(400, text), ch.keys)), 'invalid_request');
    }
    if (res.statusCode >= 300) return undefined;
    const json: unknown = JSON.parse(text);
    return isRecord(json) && typeof json.totalTokens === 'number' ? json : undefined;
  } catch (err) {
    if (err instanceof RelayError) throw err;
    if (!(err instanceof UpstreamError) && !(err instanceof SyntaxError)) app.log.warn({ err, channel: ch.info.id }, 'countTokens upstream failed');
    return undefined;
  }
}

/** A countTokens body as a canonical request (400 when it is not a valid Gemini request). */
function countRequest(body: Record<string, unknown>, model: string): ChatRequest {
  const g = isRecord(body.generateContentRequest) ? body.generateContentRequest : body;
  return geminiToChat({ contents: g.contents, systemInstruction: g.systemInstruction, tools: g.tools }, model);
}

/** The relay's own count: the request as the canonical chat prompt, plus the tool declarations. */
export function localTokenCount(body: Record<string, unknown>, model: string, chat = countRequest(body, model)): number {
  return countPromptWithTools(chat.messages, chat.tools, model);
}

async function countTokens(app: AppContext, ctx: RelayHttp, m: { modelFromPath?: string }, kit: InboundKit): Promise<void> {
  const principal = await principalOf(app, ctx, kit);
  const { body } = await kit.readJson();
  const model = m.modelFromPath ?? '';
  checkModelAllowed(principal, model);
  const chat = countRequest(body, model); // a bad body is a 400 before any upstream is asked
  const table = await tableOf(app);
  let tiers = tiersFor(table, principal.group, model) ?? [];
  if (principal.pinnedChannel !== undefined) {
    const pinned = table.channels.get(principal.pinnedChannel);
    tiers = pinned ? [{ priority: pinned.priority, channels: [pinned], weights: [1], total: 1 }] : [];
  }
  if (!tiers.length && !table.knownModels.has(model) && !isPriced(app, model)) {
    throw new RelayError(404, verbatim(`models/${model} is not found for API version v1beta, or is not supported for countTokens.`), 'model_not_found');
  }
  const tried = new Set<number>();
  for (let attempt = 0; attempt < 3; attempt++) {
    const ch = pickChannel(tiers, attempt, tried, (c) => countsTokens(c, model));
    if (!ch) break;
    tried.add(ch.info.id);
    const counted = await upstreamCount(app, ch, model, body);
    if (counted) {
      ctx.body = counted;
      return;
    }
  }
  ctx.body = { totalTokens: localTokenCount(body, model, chat) };
}

export const geminiCountTokensRoute: InboundRoute = {
  method: 'POST',
  match: (path) => matchAction(path, ['countTokens']),
  format: geminiFormat,
  keyStyle: 'gemini',
  handle: countTokens,
};

async function embed(app: AppContext, ctx: RelayHttp, m: { modelFromPath?: string }, kit: InboundKit): Promise<void> {
  const timer = startTimer();
  const principal = await principalOf(app, ctx, kit);
  const { body, raw } = await kit.readJson();
  const model = (m.modelFromPath ?? '').trim();
  if (!model) throw new RelayError(400, verbatim('model is required in the path'), 'invalid_request');
  embedRequests(body); // 400 for a body without content
  checkModelAllowed(principal, model);
  await relay({
    app,
    ctx,
    endpoint: 'embeddings',
    inbound: geminiFormat,
    principal,
    model,
    stream: false,
    body,
    rawJson: raw,
    modelFromPath: model,
    includeUsage: false,
    ip: kit.ip,
    timer,
  });
}

export const geminiEmbedRoute: InboundRoute = {
  method: 'POST',
  match: (path) => matchAction(path, ['embedContent', 'batchEmbedContents']),
  format: geminiFormat,
  keyStyle: 'gemini',
  handle: embed,
};

// ---------------------------------------------------------------------------------------------
// Anything else under /v1beta: Gemini's 404 rather than the OpenAI one

async function notFound(_app: AppContext, ctx: RelayHttp): Promise<void> {
  throw new RelayError(
    404,
    verbatim(
      `Invalid URL (${ctx.method} ${ctx.path}): the gateway serves generateContent, streamGenerateContent, countTokens, embedContent, batchEmbedContents and the model list.`,
    ),
    'not_found',
  );
}

const unknownGemini = (method: 'GET' | 'POST'): InboundRoute => ({
  method,
  match: (path) => (path.startsWith('/v1beta/') || path === '/v1beta' ? {} : null),
  format: geminiFormat,
  keyStyle: 'gemini',
  handle: notFound,
});

/** After the chat route; the catch-alls last. */
export const geminiRoutes: InboundRoute[] = [geminiModelsRoute, geminiCountTokensRoute, geminiEmbedRoute, unknownGemini('GET'), unknownGemini('POST')];
