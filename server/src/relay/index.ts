import type Koa from 'koa';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RelayHttpContext, type RelayHttp } from './httpContext';
import type { AppContext } from '../context';
import { AppError } from '../lib/errors';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../db/errors';
import { PayloadTooLargeError, readRawBody } from '../lib/rawBody';
import type { CollectErrors } from '../lib/collectStream';
import { resolveUser } from '../services/consoleUser';
import { startTimer } from '../metrics';
import { authenticateKey, checkModelAllowed, loadUser, usableGroups, type Principal } from './auth';
import { RelayError } from './errors';
import { localize, msg, requestLang, t, verbatim, type Message } from '../i18n';
import { extractKey } from './keys';
import { relay, type RelayCall } from './call';
import { routeTable } from '../channels/routeTable';
import { tokenBalance } from '../repositories/tokens';
import { userBalance } from '../repositories/users';
import { openaiFormat } from '../protocols/openai/format';
import { claudeFormat } from '../protocols/claude/format';
import { responsesFormat } from '../protocols/responses/format';
import { inboundRoutes } from '../protocols';
import { isRecord } from '../protocols/shared';
import type { Endpoint, InboundFormat, InboundRoute } from './types';
import { handleTaskRoute, isTaskPath, isVideoPath } from '../tasks';
import { parseMultipart } from './multipart';

const OPENAI_POST: Record<string, Endpoint> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completions',
  '/v1/embeddings': 'embeddings',
  '/v1/moderations': 'moderations',
  '/v1/images/generations': 'images',
  '/v1/audio/speech': 'speech',
  '/v1/audio/transcriptions': 'transcriptions',
  '/v1/audio/translations': 'translations',
  '/v1/responses': 'responses',
  '/v1/images/edits': 'image_edits',
  '/v1/rerank': 'rerank',
};

/** Default model per endpoint when the client names none (OpenAI's defaults). */
const DEFAULT_MODEL: Partial<Record<Endpoint, string>> = {
  moderations: 'omni-moderation-latest',
  images: 'dall-e-2',
  image_edits: 'dall-e-2',
};

const BILLING_PATHS = new Set([
  '/dashboard/billing/subscription',
  '/dashboard/billing/usage',
  '/v1/dashboard/billing/subscription',
  '/v1/dashboard/billing/usage',
]);

const isRelayPath = (p: string) =>
  p.startsWith('/v1/') || p === '/v1' || p.startsWith('/v1beta/') || p.startsWith('/pg/') || (p.startsWith('/dashboard/billing/') && BILLING_PATHS.has(p));

/** The relay: /v1/*, /v1beta/*, /pg/*, inside Koa (the playground needs the console session). */
export function relayMiddleware(app: AppContext): Koa.Middleware {
  return async (ctx, next) => {
    if (!isRelayPath(ctx.path)) return next();
    await handleRelay(app, ctx, ctx.path === '/pg/chat/completions' ? () => handlePlayground(app, ctx) : undefined);
  };
}

/**
 * The relay straight on node:http, without Koa, for every relay path but the playground's.
 * Returns false for a request it does not take (the caller hands it to Koa).
 */
export function relayHttpHandler(app: AppContext): (req: IncomingMessage, res: ServerResponse) => boolean {
  const trustProxy = app.config.trustProxy;
  return (req, res) => {
    const ctx = new RelayHttpContext(req, res, trustProxy);
    const path = ctx.path;
    const relayPath = isRelayPath(path);
    // Asynchronous tasks (Midjourney, Suno) have their own prefixes (server/src/tasks/).
    const taskPath = !relayPath && isTaskPath(path);
    if ((!relayPath && !taskPath) || path.startsWith('/pg/')) return false;
    (taskPath ? handleTasks(app, ctx) : handleRelay(app, ctx))
      .then(() => ctx.finish())
      .catch((err: unknown) => {
        // handleRelay answers its own errors; this is only a failure while doing so.
        app.log.error({ err, path }, 'relay response failed');
        if (!res.headersSent) {
          res.statusCode = 500;
          res.end();
        } else res.destroy();
      });
    return true;
  };
}

/** `/mj…` and `/suno/…`: the task routes, with the relay's CORS and body limit. */
async function handleTasks(app: AppContext, ctx: RelayHttp): Promise<void> {
  if (ctx.method === 'OPTIONS') return routeRelay(app, ctx);
  try {
    await handleTaskRoute(app, ctx, { readBody: () => readRelayBody(ctx, app.config.relayBodyLimit), ip: clientIp(ctx) });
  } finally {
    if (ctx.respond !== false && !ctx.res.headersSent) ctx.set('Access-Control-Allow-Origin', '*');
  }
}

async function handleRelay(app: AppContext, ctx: RelayHttp, playground?: () => Promise<void>): Promise<void> {
  try {
    await routeRelay(app, ctx, playground);
  } finally {
    // Browser clients (web chat UIs) call the relay directly: any origin; keys are bearer tokens.
    // Answers the relay writes itself (completions, streams) carry the header in their head
    // (RELAY_CORS); the rest (errors, lists, preflight) get it here, before they are written.
    if (ctx.respond !== false && !ctx.res.headersSent) ctx.set('Access-Control-Allow-Origin', '*');
  }
}

async function routeRelay(app: AppContext, ctx: RelayHttp, playground?: () => Promise<void>): Promise<void> {
  const path = ctx.path;
  if (ctx.method === 'OPTIONS') {
    ctx.set('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
    ctx.set('Access-Control-Allow-Headers', ctx.get('Access-Control-Request-Headers') || '*');
    ctx.set('Access-Control-Max-Age', '86400');
    ctx.status = 204;
    return;
  }
  let format: InboundFormat = openaiFormat;
  try {
    for (const route of inboundRoutes) {
      if (route.method !== ctx.method) continue;
      const m = route.match(path);
      if (!m) continue;
      format = route.format;
      if (route.handle) await route.handle(app, ctx, m, { readJson: () => readJson(app, ctx), ip: clientIp(ctx) });
      else await handleInbound(app, ctx, route, m);
      return;
    }
    if (ctx.method === 'POST' && OPENAI_POST[path]) return await handleOpenAI(app, ctx, OPENAI_POST[path]);
    if (ctx.method === 'POST' && playground) return await playground();
    if (ctx.method === 'GET' && (path === '/v1/models' || path.startsWith('/v1/models/'))) {
      if (isClaudeModelsCall(ctx)) format = claudeFormat;
      return await handleModels(app, ctx);
    }
    if (ctx.method === 'GET' && BILLING_PATHS.has(path)) return await handleBilling(app, ctx, path.endsWith('/usage'));
    if (isVideoPath(path)) return await handleTaskRoute(app, ctx, { readBody: () => readRelayBody(ctx, app.config.relayBodyLimit), ip: clientIp(ctx) });
    // The realtime API is a WebSocket (relay/realtime, on the server's `upgrade` event).
    if (path === '/v1/realtime') throw new RelayError(426, 'relay.realtime_is_websocket', 'upgrade_required');
    throw new RelayError(404, msg('relay.invalid_url', { method: ctx.method, path }), 'not_found');
  } catch (err) {
    respondError(app, ctx, format, err);
  }
}

function respondError(app: AppContext, ctx: RelayHttp, format: InboundFormat, caught: unknown): void {
  let err = caught;
  if (!(err instanceof AppError) && isDatabaseUnavailable(err)) {
    app.log.warn({ err, path: ctx.path }, 'database unavailable');
    err = new DatabaseUnavailableError(err);
  }
  let status = 500;
  const lang = requestLang(ctx);
  let message = t(lang, 'common.internal_error');
  let code = 'internal_error';
  if (err instanceof AppError) {
    status = err.status;
    message = localize(err, lang);
    code = err.code;
    if ((status === 429 || status === 503) && 'retryAfterSeconds' in err)
      ctx.set('Retry-After', String((err as { retryAfterSeconds: number }).retryAfterSeconds));
  } else {
    app.log.error({ err, path: ctx.path }, 'unhandled relay error');
  }
  if (ctx.res.headersSent) {
    if (!ctx.res.writableEnded && !ctx.res.destroyed) ctx.res.end();
    return;
  }
  ctx.respond = true;
  ctx.status = status;
  const body = format.error(status, message, code) as { error?: { type?: string } };
  if (err instanceof RelayError && body?.error && typeof body.error === 'object' && format.name === 'openai') body.error.type = err.type;
  ctx.body = body;
}

/** Request-body failures on the relay: 413 past the limit, 400 for a broken upload. */
const relayBodyErrors = (limit: number): CollectErrors => ({
  tooLarge: () => new PayloadTooLargeError(limit),
  failed: (err) => new RelayError(400, msg('body.read_failed', { reason: err.message }), 'invalid_request'),
  closed: () => new RelayError(400, 'body.incomplete', 'invalid_request'),
});

function readRelayBody(ctx: RelayHttp, limit: number): Promise<Buffer> {
  return readRawBody(ctx, limit, relayBodyErrors(limit));
}

async function readJson(app: AppContext, ctx: RelayHttp): Promise<{ body: Record<string, unknown>; raw: Buffer }> {
  const raw = await readRelayBody(ctx, app.config.relayBodyLimit);
  if (!raw.length) throw new RelayError(400, 'body.empty', 'invalid_request');
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new RelayError(400, 'body.bad_json', 'invalid_request');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new RelayError(400, 'body.not_object', 'invalid_request');
  return { body: body as Record<string, unknown>, raw };
}

function clientIp(ctx: RelayHttp): string {
  return ctx.ip || ctx.req.socket.remoteAddress || '';
}

async function handleOpenAI(app: AppContext, ctx: RelayHttp, endpoint: Endpoint): Promise<void> {
  const timer = startTimer();
  const ip = clientIp(ctx);
  const auth = authenticateKey(app, extractKey(ctx, 'openai'), ip);
  const principal = auth instanceof Promise ? await auth : auth; // cached key: no await
  const call = await buildOpenAICall(app, ctx, endpoint, principal, ip, timer);
  await relay(call);
}

async function buildOpenAICall(
  app: AppContext,
  ctx: RelayHttp,
  endpoint: Endpoint,
  principal: Principal,
  ip: string,
  timer: ReturnType<typeof startTimer>,
): Promise<RelayCall> {
  if (endpoint === 'transcriptions' || endpoint === 'translations' || endpoint === 'image_edits') {
    const ctype = ctx.get('content-type');
    if (!ctype.toLowerCase().startsWith('multipart/form-data')) throw new RelayError(400, 'relay.multipart_required', 'invalid_request');
    // Parsed once; the upstream gets the body as parsed, with the model and n billed here (relay/multipart.ts).
    const form = await parseMultipart(await readRelayBody(ctx, app.config.relayBodyLimit), ctype, endpoint === 'image_edits' ? ['model', 'n'] : ['model']);
    const model = form.field('model');
    if (!model) throw new RelayError(400, 'relay.model_missing', 'invalid_request');
    form.set('model', model);
    let n: number | undefined;
    if (endpoint === 'image_edits') {
      const given = form.field('n');
      n = given === undefined ? 1 : Number(given);
      if (!Number.isSafeInteger(n) || n < 1) throw new RelayError(400, msg('relay.field_malformed', { field: 'n' }), 'invalid_request');
      if (given !== undefined) form.set('n', String(n));
    }
    return {
      app,
      ctx,
      endpoint,
      inbound: openaiFormat,
      principal,
      model,
      stream: false,
      body: n ? { n } : undefined,
      raw: form.encode(),
      includeUsage: false,
      ip,
      timer,
    };
  }
  const { body, raw } = await readJson(app, ctx);
  let model = typeof body.model === 'string' ? body.model.trim() : '';
  if (!model && DEFAULT_MODEL[endpoint]) model = DEFAULT_MODEL[endpoint]!;
  if (!model) throw new RelayError(400, 'relay.model_missing', 'invalid_request');
  validate(endpoint, body);
  const normalised = dropZeroLimits(body);
  const stream = (endpoint === 'chat' || endpoint === 'completions' || endpoint === 'responses') && body.stream === true;
  const so = body.stream_options as { include_usage?: unknown } | undefined;
  return {
    app,
    ctx,
    endpoint,
    // /v1/responses speaks its own protocol: passed through to channels that speak it, else converted.
    inbound: endpoint === 'responses' ? responsesFormat : openaiFormat,
    principal,
    model,
    stream,
    body,
    rawJson: !normalised && typeof body.model === 'string' && body.model === model ? raw : undefined,
    includeUsage: stream && so?.include_usage === true,
    ip,
    timer,
  };
}

/** `max_tokens: 0` means "not set" (the playground sends it): drop it rather than forward it. Returns true when changed. */
function dropZeroLimits(body: Record<string, unknown>): boolean {
  let changed = false;
  for (const k of ['max_tokens', 'max_completion_tokens', 'max_output_tokens']) {
    if (body[k] === 0) {
      delete body[k];
      changed = true;
    }
  }
  return changed;
}

function validate(endpoint: Endpoint, body: Record<string, unknown>): void {
  const need = (ok: boolean, message: Message) => {
    if (!ok) throw new RelayError(400, message, 'invalid_request');
  };
  switch (endpoint) {
    case 'chat': {
      need(Array.isArray(body.messages) && body.messages.length > 0, msg('relay.field_empty', { field: 'messages' }));
      const field = malformedChatField(body);
      if (field) throw new RelayError(400, msg('relay.field_malformed', { field }), 'invalid_request');
      break;
    }
    case 'completions':
      need(body.prompt !== undefined && body.prompt !== null, msg('relay.field_empty', { field: 'prompt' }));
      break;
    case 'embeddings':
    case 'moderations':
      need(body.input !== undefined && body.input !== null && body.input !== '', msg('relay.field_empty', { field: 'input' }));
      break;
    case 'images':
      need(typeof body.prompt === 'string' && body.prompt.length > 0, msg('relay.field_empty', { field: 'prompt' }));
      break;
    case 'speech':
      need(typeof body.input === 'string' && body.input.length > 0, msg('relay.field_empty', { field: 'input' }));
      break;
    case 'responses':
      // A stored prompt or an earlier response may stand in for the input (passed through only).
      need(
        (body.input !== undefined && body.input !== null && body.input !== '') || !!body.previous_response_id || !!body.prompt || !!body.conversation,
        msg('relay.field_empty', { field: 'input' }),
      );
      break;
    case 'rerank':
      need(typeof body.query === 'string' && Array.isArray(body.documents), msg('relay.query_documents_empty'));
      break;
    default:
      break;
  }
  // The gateway streams only for `true`; a lax upstream that streams for any truthy value would
  // otherwise answer a stream to a call read as a whole answer.
  need(absent(body.stream) || typeof body.stream === 'boolean', msg('relay.field_malformed', { field: 'stream' }));
  for (const k of ['max_tokens', 'max_completion_tokens', 'n']) {
    if (body[k] !== undefined && body[k] !== null)
      need(typeof body[k] === 'number' && Number.isFinite(body[k]) && (body[k] as number) >= 0, msg('relay.field_non_negative', { field: k }));
  }
}

const absent = (v: unknown) => v === undefined || v === null;
/** An assistant message's tool call as OpenAI takes it: a function with a name, its arguments a JSON text. */
const isToolCall = (t: unknown) =>
  isRecord(t) && isRecord(t.function) && typeof t.function.name === 'string' && (absent(t.function.arguments) || typeof t.function.arguments === 'string');

/**
 * The first field of a Chat Completions request whose type OpenAI's API refuses and the
 * conversions rely on (a message and its role, content, tool calls with their arguments and tool
 * call id; a function tool's name), or undefined. A body that passes reaches an OpenAI upstream
 * unchanged; one that does not would be refused there too, and must not reach a conversion, which
 * reads these fields as their types.
 */
function malformedChatField(body: Record<string, unknown>): string | undefined {
  const messages = body.messages as unknown[];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isRecord(m) || typeof m.role !== 'string') return `messages[${i}]`;
    const c = m.content;
    if (!absent(c) && typeof c !== 'string' && !(Array.isArray(c) && c.every(isRecord))) return `messages[${i}].content`;
    const calls = m.tool_calls;
    if (!absent(calls) && !(Array.isArray(calls) && calls.every(isToolCall))) {
      return `messages[${i}].tool_calls`;
    }
    if (!absent(m.tool_call_id) && typeof m.tool_call_id !== 'string') return `messages[${i}].tool_call_id`;
  }
  const tools = body.tools;
  if (absent(tools)) return undefined;
  if (!Array.isArray(tools)) return 'tools';
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i];
    if (!isRecord(t)) return `tools[${i}]`;
    if ((t.type === undefined || t.type === 'function') && !(isRecord(t.function) && typeof t.function.name === 'string')) return `tools[${i}].function`;
  }
  return undefined;
}

/** Playground: session login (+ New-Api-User), billed to the user, no API key. */
async function handlePlayground(app: AppContext, ctx: Koa.Context): Promise<void> {
  const timer = startTimer();
  const ip = clientIp(ctx);
  const row = await resolveUser(app, ctx);
  if (!row) throw new RelayError(401, 'auth.not_logged_in', 'unauthorized');
  const user = await loadUser(app, row.id);
  if (!user) throw new RelayError(401, 'auth.not_logged_in', 'unauthorized');
  const { body, raw } = await readJson(app, ctx);
  let group = user.group;
  if (typeof body.group === 'string' && body.group.trim()) {
    group = body.group.trim();
    if (!usableGroups(app, user.group).has(group)) throw new RelayError(403, msg('relay.group_forbidden', { group }), 'group_not_allowed');
  }
  const hadGroup = 'group' in body;
  delete body.group;
  const principal: Principal = { user, group, tokenName: 'playground' };
  const model = typeof body.model === 'string' ? body.model.trim() : '';
  if (!model) throw new RelayError(400, 'relay.model_missing', 'invalid_request');
  validate('chat', body);
  const normalised = dropZeroLimits(body);
  const stream = body.stream === true;
  const so = body.stream_options as { include_usage?: unknown } | undefined;
  await relay({
    app,
    ctx,
    endpoint: 'chat',
    inbound: openaiFormat,
    principal,
    model,
    stream,
    body,
    rawJson: hadGroup || normalised || body.model !== model ? undefined : raw,
    includeUsage: stream && so?.include_usage === true,
    ip,
    timer,
  });
}

/** Claude clients list models with `x-api-key` and/or `anthropic-version` and expect Anthropic's shape. */
function isClaudeModelsCall(ctx: RelayHttp): boolean {
  return !!ctx.get('x-api-key') || !!ctx.get('anthropic-version');
}

/** One query parameter as a string ('' when absent; the first of repeated ones). */
function queryParam(ctx: RelayHttp, name: string): string {
  const v = ctx.query[name];
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

async function handleModels(app: AppContext, ctx: RelayHttp): Promise<void> {
  const claude = isClaudeModelsCall(ctx);
  const principal = await authenticateKey(app, extractKey(ctx, claude ? 'claude' : 'openai'), clientIp(ctx));
  const table = await routeTable(app);
  const models = Array.from(table.modelsByGroup.get(principal.group) ?? []).filter((m) => !principal.token?.modelLimits || principal.token.modelLimits.has(m));
  models.sort();
  const created = Math.floor(app.startTime);
  const createdAt = new Date(created * 1000).toISOString();
  // Anthropic's ModelInfo: the gateway knows no release date, limits or capabilities, so those are null.
  const item = (id: string) =>
    claude
      ? {
          type: 'model',
          id,
          display_name: id,
          created_at: createdAt,
          capabilities: null,
          deprecated_at: null,
          lifecycle: 'active',
          line: null,
          max_input_tokens: null,
          max_tokens: null,
          retires_at: null,
        }
      : { id, object: 'model', created, owned_by: 'custom', permission: [], root: id, parent: null };
  if (ctx.path.startsWith('/v1/models/')) {
    const id = decodeURIComponent(ctx.path.slice('/v1/models/'.length));
    if (!models.includes(id)) throw new RelayError(404, msg('relay.model_not_found', { model: id }), 'model_not_found');
    ctx.body = item(id);
    return;
  }
  if (!claude) {
    ctx.body = { object: 'list', data: models.map(item) };
    return;
  }
  ctx.body = claudeModelPage(models, queryParam(ctx, 'limit'), queryParam(ctx, 'after_id'), queryParam(ctx, 'before_id'), item);
}

/**
 * One page of Anthropic's cursor pagination: `limit` (1–1000, default 20), `after_id` (the page
 * after that id) or `before_id` (the page before it); `first_id`/`last_id` are the page's ends and
 * `has_more` says whether more lie in the direction asked. An unknown cursor is a 400, as upstream.
 */
function claudeModelPage<T>(models: string[], limitRaw: string, afterId: string, beforeId: string, item: (id: string) => T) {
  let limit = 20;
  if (limitRaw) {
    const n = Number(limitRaw);
    if (!Number.isInteger(n) || n < 1 || n > 1000) throw new RelayError(400, verbatim('limit: must be an integer between 1 and 1000'), 'invalid_request');
    limit = n;
  }
  if (afterId && beforeId) throw new RelayError(400, verbatim('after_id and before_id cannot both be set'), 'invalid_request');
  const cursor = afterId || beforeId;
  const at = cursor ? models.indexOf(cursor) : -1;
  if (cursor && at < 0) throw new RelayError(400, verbatim(`${afterId ? 'after_id' : 'before_id'}: unknown model ${cursor}`), 'invalid_request');
  let from: number;
  let to: number;
  let hasMore: boolean;
  if (beforeId) {
    to = at;
    from = Math.max(0, to - limit);
    hasMore = from > 0;
  } else {
    from = afterId ? at + 1 : 0;
    to = Math.min(models.length, from + limit);
    hasMore = to < models.length;
  }
  const page = models.slice(from, to);
  return { data: page.map(item), has_more: hasMore, first_id: page[0] ?? null, last_id: page.at(-1) ?? null };
}

/**
 * OpenAI's legacy dashboard billing endpoints, for clients that show a key's balance (NextChat…).
 * With DisplayTokenStatEnabled a limited token reports its own figures, otherwise the user's.
 */
async function handleBilling(app: AppContext, ctx: RelayHttp, usage: boolean): Promise<void> {
  const principal = await authenticateKey(app, extractKey(ctx, 'openai'), clientIp(ctx));
  const unit = app.options.quotaPerUnit;
  let used: number;
  let total: number;
  let accessUntil = 0;
  if (app.options.bool('DisplayTokenStatEnabled') && principal.token && !principal.token.unlimited) {
    const row = await tokenBalance(app.knex, principal.token.id);
    used = Number(row?.used_quota ?? 0);
    total = Number(row?.remain_quota ?? 0) + used;
    accessUntil = Math.max(0, Number(row?.expired_time ?? 0));
  } else {
    const row = await userBalance(app.knex, principal.user.id);
    used = Number(row?.used_quota ?? 0);
    total = Number(row?.quota ?? 0) + used;
  }
  if (usage) {
    ctx.body = { object: 'list', total_usage: (used / unit) * 100 };
    return;
  }
  const limit = total / unit;
  ctx.body = {
    object: 'billing_subscription',
    has_payment_method: true,
    soft_limit_usd: limit,
    hard_limit_usd: limit,
    system_hard_limit_usd: limit,
    access_until: accessUntil,
  };
}

/** Claude/Gemini (and any other registered) client formats. */
async function handleInbound(app: AppContext, ctx: RelayHttp, route: InboundRoute, m: { modelFromPath?: string; stream?: boolean }): Promise<void> {
  const timer = startTimer();
  const ip = clientIp(ctx);
  const auth = authenticateKey(app, extractKey(ctx, route.keyStyle), ip);
  const principal = auth instanceof Promise ? await auth : auth; // cached key: no await
  const { body, raw } = await readJson(app, ctx);
  const format = route.format;
  const chat = format.toChat(body, m.modelFromPath); // validates the body; reused when converting
  const model = (format.modelOf?.(body, m.modelFromPath) ?? chat.model ?? '').trim();
  if (!model) throw new RelayError(400, 'relay.model_missing', 'invalid_request');
  checkModelAllowed(principal, model);
  const stream = m.stream ?? body.stream === true;
  await relay({
    app,
    ctx,
    endpoint: 'chat',
    inbound: format,
    principal,
    model,
    stream,
    body,
    rawJson: raw,
    modelFromPath: m.modelFromPath,
    includeUsage: false,
    ip,
    timer,
    chat,
  });
}
