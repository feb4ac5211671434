import type { ServerResponse } from 'node:http';
import type { RelayHttp } from './httpContext';
import type { AppContext } from '../context';
import { RelayError, scrubSecrets, UpstreamError } from './errors';
import { checkModelAllowed, TOKEN_STATUS, type Principal } from './auth';
import { adaptorFor, serves } from './adaptors';
import { loadedRouteTable, pickChannel, pickKey, routeTable, tiersFor, type ChannelEntry } from './routing';
import { UpstreamExchange } from './upstreamExchange';
import { BadStreamFrame, jsonShaped, parseBlockChecked, SSEEventTooLarge, SSESplitter } from './sse';
import { contentText, countChatPromptTokens, countInputTokens, countTextTokens, estimateTokens } from './tokenizer';
import { responseText } from './adaptors/openai';
import { onUpstreamFailure } from './health';
import { usageBatcher } from '../ledger/usage';
import { balanceView } from '../ledger/balanceView';
import type {
  AdaptorContext,
  ChatRequest,
  Endpoint,
  InboundFormat,
  ProviderAdaptor,
  StreamObserver,
  StreamTranslator,
  UpstreamRequest,
  Usage,
} from './types';
import { computeQuota, estimateQuota, isPriced, priceFor, type PriceInfo } from '../services/billing';
import type { BalanceAfter, Payer } from '../ledger/balances';
import { Reservation } from '../ledger/reservation';
import { maybeWarnQuota } from '../services/notify';
import { invalidateToken } from '../services/invalidate';
import { checkModelRateLimit } from '../services/modelRateLimit';
import { checkPromptSensitive } from '../services/sensitive';
import { formatOverhead, OVERHEAD_HEADER, recordRelay, type RelayTimer } from '../metrics';
import { LOG_TYPE } from '../repositories/logs';
import { nowSec } from '../lib/time';

/** One client call being relayed. */
export interface RelayCall {
  app: AppContext;
  ctx: RelayHttp;
  endpoint: Endpoint;
  inbound: InboundFormat;
  principal: Principal;
  /** The model the client asked for (billing, logs, routing). */
  model: string;
  stream: boolean;
  /** Parsed JSON body (undefined for multipart). */
  body?: Record<string, unknown>;
  /** The JSON body bytes as received (forwarded untouched when nothing changes). */
  rawJson?: Buffer;
  /** Multipart body (audio), forwarded as is. */
  raw?: { body: Buffer; contentType: string };
  modelFromPath?: string;
  /** OpenAI: the client asked for `stream_options.include_usage`. */
  includeUsage: boolean;
  ip: string;
  timer: RelayTimer;
  /** Canonical request, built lazily when a conversion is needed. */
  chat?: ChatRequest;
}

interface Tokens {
  prompt: number;
  completion: number;
  cached: number;
  calls: number;
  /** Upstream usage object (passed to the client in converted streams). */
  upstream?: Usage;
}

interface Outcome {
  channel: ChannelEntry;
  upstreamModel: string;
  tokens: Tokens;
  frtMs: number;
  /** Sends or ends the client response (after billing). */
  finish(): void;
}

/** Relay answers are for any origin (browser chat UIs call the relay with bearer keys): in every head the relay writes itself. */
const RELAY_CORS = ['access-control-allow-origin', '*'] as const;

const JSON_ENDPOINTS_WITH_USAGE = new Set<Endpoint>(['chat', 'completions', 'embeddings', 'responses', 'rerank']);

/** Runs a relay call end to end: checks, reservation, routing with retries, billing, response. */
export async function relay(call: RelayCall): Promise<void> {
  const { app, principal, model, endpoint, inbound } = call;
  const live = liveCalls(app);
  live.n++;
  let channelIdForMetrics = 0;
  let statusForMetrics = 200;
  let quotaForMetrics = 0;
  let tokensForMetrics: Tokens | undefined;
  try {
    checkModelAllowed(principal, model);
    if (call.body && app.options.bool('CheckSensitiveEnabled') && app.options.bool('CheckSensitiveOnPromptEnabled')) {
      checkPromptSensitive(app, promptTexts(call));
    }
    const table = loadedRouteTable(app) ?? (await routeTable(app));
    let tiers = tiersFor(table, principal.group, model);
    if (principal.pinnedChannel !== undefined) {
      // Admin pin: that channel only (enabled), whatever its abilities say.
      const pinned = table.channels.get(principal.pinnedChannel);
      if (!pinned) throw new RelayError(503, `渠道 #${principal.pinnedChannel} 不存在或已禁用`, 'channel_not_available');
      tiers = [{ priority: pinned.priority, channels: [pinned], weights: [1], total: 1 }];
    }
    const servesCall = (c: ChannelEntry) => serves(adaptorFor(c.info.type), endpoint, inbound.name);
    if (!tiers || !tiers.some((t) => t.channels.some(servesCall))) {
      if (!table.knownModels.has(model) && !isPriced(app, model)) {
        throw new RelayError(404, `模型 ${model} 不存在`, 'model_not_found');
      }
      throw new RelayError(503, `当前分组 ${principal.group} 下对于模型 ${model} 无可用渠道`, 'model_not_available');
    }
    // Channels with max_input_tokens: the prompt is counted (tokenizer) only when such a channel is a candidate.
    let promptCount: number | undefined;
    const fits = (c: ChannelEntry) => !c.maxInputTokens || (promptCount ??= promptFallback(call)) <= c.maxInputTokens;
    const accept = (c: ChannelEntry) => servesCall(c) && fits(c);
    if (!tiers.some((t) => t.channels.some(accept))) {
      throw new RelayError(400, `输入 token 数 ${promptCount ?? 0} 超过了可用渠道的上限`, 'context_length_exceeded');
    }
    const acceptUnset = principal.user.setting.accept_unset_model_ratio_model === true;
    const price = priceFor(app, model, principal.group, acceptUnset);
    // Checked only when enabled: most installations never turn it on, and this runs per call.
    const ticket = app.options.bool('ModelRequestRateLimitEnabled') ? await checkModelRateLimit(app, principal.user.id) : undefined;

    // Claude/Gemini bodies are estimated from the canonical request (system prompt, contents,
    // generationConfig.maxOutputTokens live elsewhere in their own shapes).
    const body = (inbound.name !== 'openai' && endpoint === 'chat' ? (safeChat(call) as Record<string, unknown> | undefined) : undefined) ?? call.body ?? {};
    const maxTokens = Number(body.max_tokens ?? body.max_completion_tokens ?? body.max_output_tokens ?? 0) || 0;
    const calls = endpoint === 'images' || endpoint === 'image_edits' ? Math.max(1, Number(body.n ?? 1) || 1) : 1;
    const reserved = estimateQuota(app, price, estimateTokens(body), maxTokens, calls);
    const payer: Payer = { userId: principal.user.id, limitedTokenId: principal.token && !principal.token.unlimited ? principal.token.id : undefined };
    // The call's money: each move also writes its durable reservation row (ledger/reservation.ts).
    const res = new Reservation(app, payer, reserved, { tokenId: principal.token?.id ?? 0, model, group: principal.group, stream: call.stream });
    // The reservation is committed while the first upstream request is already on its way when
    // this process's balance view says it fits (balanceView.ts): the commit then costs the call
    // nothing. It is started right after that request is handed to the HTTP client (`startGate`,
    // called by attemptChannel): undici writes a request on a reused keep-alive connection from a
    // setImmediate, and the group commit also runs from one — queued first, the commit would
    // delay the upstream request by its own duration. `gate` is awaited before anything reaches
    // the client, is billed, retried or refunded; a refusal aborts the upstream request and
    // answers the 403.
    const view = reserved > 0 ? balanceView(app) : undefined;
    let pre: BalanceAfter = {};
    let gate: Promise<BalanceAfter> | undefined;
    let startGate: (() => Promise<BalanceAfter>) | undefined;
    let reservationTaken = true;
    if (view?.tryReserve(payer, reserved)) {
      reservationTaken = false;
      startGate = () => {
        if (gate) return gate;
        gate = res.open().then(
          (after) => {
            view.settleReserve(payer, reserved, after);
            pre = after;
            reservationTaken = true;
            return after;
          },
          (err: unknown) => {
            view.settleReserve(payer, reserved, undefined);
            throw err;
          },
        );
        gate.catch(() => undefined); // awaited below; this only keeps it from counting as unhandled meanwhile
        return gate;
      };
    } else {
      pre = await res.open();
      view?.note(payer, pre);
    }

    let outcome: Outcome | undefined;
    const tried = new Set<number>();
    const used: number[] = [];
    let lastErr: UpstreamError | undefined;
    let lastChannel: ChannelEntry | undefined;
    try {
      const retries = Math.max(0, Math.floor(app.options.num('RetryTimes', 0)));
      for (let attempt = 0; attempt <= retries; attempt++) {
        const ch = pickChannel(tiers, attempt, tried, accept);
        if (!ch) break;
        tried.add(ch.info.id);
        used.push(ch.info.id);
        lastChannel = ch;
        try {
          outcome = await attemptChannel(call, ch, calls, attempt === 0 ? startGate : undefined);
          break;
        } catch (err) {
          startGate?.(); // (a failure before the first request left: the reservation is taken now)
          await gate; // a refusal (nothing to refund) wins over the upstream's own failure
          if (!(err instanceof UpstreamError)) throw err;
          lastErr = err;
          if (err.upstreamCode === 'client_gone') break;
          onUpstreamFailure(app, ch.info.id, ch.autoBan, err);
          app.log.warn({ channel: ch.info.id, status: err.status, msg: scrubKey(err.message, ch) }, 'upstream failed');
          if (!err.retryable || isClientGone(call.ctx)) break;
        }
      }
      startGate?.();
      await gate; // settled before anything is billed, retried or refunded
    } catch (err) {
      startGate?.();
      if (!reservationTaken && gate) await gate.then(() => undefined, () => undefined);
      if (reservationTaken) {
        const after = await res.refund();
        view?.note(payer, after);
      }
      throw err;
    }
    if (!outcome) {
      const after = await res.refund();
      view?.note(payer, after);
      channelIdForMetrics = lastChannel?.info.id ?? 0;
      if (!lastErr) throw new RelayError(503, `当前分组 ${principal.group} 下对于模型 ${model} 无可用渠道`, 'model_not_available');
      const status = mapStatus(lastChannel, lastErr.status || 502);
      throw new RelayError(status, scrubKey(lastErr.message, lastChannel), lastErr.upstreamCode || 'upstream_error', 'upstream_error');
    }
    channelIdForMetrics = outcome.channel.info.id;
    tokensForMetrics = outcome.tokens;
    // The balance is settled before the answer is (ended) — it is exact when the client has it;
    // the rest of the bookkeeping (usage counters, the log row, the quota warning) comes after.
    const settled = await settleCall(call, price, payer, res, outcome);
    quotaForMetrics = settled.taken;
    if (ticket) void ticket.success().catch(() => undefined);
    outcome.finish();
    statusForMetrics = call.ctx.res.headersSent ? call.ctx.res.statusCode : call.ctx.status;
    recordUsage(call, price, payer, reserved, pre, outcome, used, settled, res);
  } catch (err) {
    statusForMetrics = err instanceof RelayError || (err as { status?: number }).status ? Number((err as { status: number }).status) : 500;
    throw err;
  } finally {
    if (--live.n === 0 && live.idle) live.idle();
    recordRelay(app, {
      channelId: channelIdForMetrics,
      model,
      status: statusForMetrics,
      upstreamMs: call.timer.upstreamMs(),
      overheadMs: call.timer.overheadMs(),
      quota: quotaForMetrics,
      promptTokens: tokensForMetrics?.prompt,
      completionTokens: tokensForMetrics?.completion,
    });
  }
}

/** Relay calls in progress (a shutdown waits for them to settle or refund before closing the database). */
interface LiveCalls {
  n: number;
  idle: (() => void) | undefined;
}

function liveCalls(app: AppContext): LiveCalls {
  return app.memo('relay:live', (): LiveCalls => ({ n: 0, idle: undefined }));
}

/** Resolves true once no relay call is in progress, false if some still are after `timeoutMs`. */
export function relayCallsDone(app: AppContext, timeoutMs: number): Promise<boolean> {
  const live = liveCalls(app);
  if (!live.n) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      live.idle = undefined;
      resolve(false);
    }, timeoutMs);
    live.idle = () => {
      clearTimeout(t);
      live.idle = undefined;
      resolve(true);
    };
  });
}

/** A number as JSON.stringify writes it (NaN/Infinity → null). */
const jsonNum = (n: number) => (Number.isFinite(n) ? n : null);

/** The consume log's text for one price: the `content` line and the head of the `other` JSON. */
function priceLogText(price: PriceInfo): { content: string; otherHead: string } {
  const head = {
    model_ratio: price.modelRatio,
    completion_ratio: price.completionRatio,
    cache_ratio: price.cacheRatio,
    group_ratio: price.groupRatio,
    model_price: price.usePrice ? price.modelPrice : -1,
  };
  return {
    content: price.usePrice
      ? `模型价格 ${price.modelPrice}，分组倍率 ${price.groupRatio}`
      : `模型倍率 ${price.modelRatio}，补全倍率 ${price.completionRatio}，分组倍率 ${price.groupRatio}`,
    otherHead: `${JSON.stringify(head).slice(0, -1)},`,
  };
}

/** Upstream messages go to clients: never echo the channel's keys (the one used is one of them), or anything shaped like a secret. */
function scrubKey(message: string, ch: ChannelEntry | undefined): string {
  return scrubSecrets(message, ch?.keys ?? []);
}

function mapStatus(ch: ChannelEntry | undefined, status: number): number {
  const m = ch?.statusCodeMapping?.[String(status)];
  const n = m === undefined ? NaN : Number(m);
  return Number.isInteger(n) && n >= 100 && n <= 599 ? n : status;
}

function isClientGone(ctx: RelayHttp): boolean {
  return ctx.res.destroyed && !ctx.res.writableFinished;
}

function promptTexts(call: RelayCall): string[] {
  const out: string[] = [];
  if (call.inbound.name !== 'openai' && call.endpoint === 'chat') {
    // Claude `system` and Gemini `contents`/`systemInstruction` are all in the canonical messages.
    for (const m of safeChat(call)?.messages ?? []) out.push(contentText(m?.content));
    return out;
  }
  const body = call.body ?? {};
  if (Array.isArray(body.messages)) for (const m of body.messages as Array<{ content?: unknown }>) out.push(contentText(m?.content));
  for (const k of ['prompt', 'input']) {
    const v = body[k];
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) for (const x of v) if (typeof x === 'string') out.push(x);
  }
  return out;
}

/** Channel setting `system_prompt`: added when the request has no system/developer message. */
function systemPromptOf(ch: ChannelEntry): string | undefined {
  const p = ch.info.setting.system_prompt;
  return typeof p === 'string' && p.trim() ? p : undefined;
}

function upstreamModelFor(ch: ChannelEntry, model: string): string {
  const m = ch.modelMapping?.[model];
  return typeof m === 'string' && m.trim() ? m.trim() : model;
}

/** Builds the upstream request for one channel. */
function buildRequest(call: RelayCall, adaptor: ProviderAdaptor, ch: ChannelEntry, actx: AdaptorContext): { req: UpstreamRequest; passthrough: boolean } {
  if (call.endpoint !== 'chat' && adaptor.endpointRequest && adaptor.convertedEndpoints?.includes(call.endpoint)) {
    const b: Record<string, unknown> = { ...(call.body ?? {}), model: actx.upstreamModel };
    if (ch.paramOverride) Object.assign(b, ch.paramOverride);
    return { req: adaptor.endpointRequest(b, actx), passthrough: false };
  }
  const passthrough = adaptor.format === call.inbound.name && !!adaptor.rawRequest;
  if (passthrough) {
    if (call.raw) return { req: adaptor.rawRequest!(undefined, actx, call.raw), passthrough };
    const body = call.body ?? {};
    const mapped = actx.upstreamModel !== call.model;
    // Pass-through mode (global option or channel setting): the body goes upstream untouched.
    const passBody = call.app.options.bool('global.pass_through_request_enabled') || ch.info.setting.pass_through_body_enabled === true;
    const sysPrompt = call.endpoint === 'chat' && call.inbound.name === 'openai' ? systemPromptOf(ch) : undefined;
    if (passBody && call.rawJson && !mapped) {
      return { req: adaptor.rawRequest!(body, actx, { body: call.rawJson, contentType: 'application/json' }), passthrough };
    }
    // Upstream usage is asked for unless the client did already (then its bytes can go as they are).
    const wantsUsageOpt =
      call.stream &&
      !call.includeUsage &&
      call.inbound.name === 'openai' &&
      (call.endpoint === 'chat' || call.endpoint === 'completions') &&
      ch.info.setting.disable_stream_options !== true;
    if (!mapped && !ch.paramOverride && !wantsUsageOpt && !sysPrompt && call.rawJson) {
      return { req: adaptor.rawRequest!(body, actx, { body: call.rawJson, contentType: 'application/json' }), passthrough };
    }
    const b: Record<string, unknown> = { ...body };
    if (mapped && (call.inbound.name === 'openai' || 'model' in b)) b.model = actx.upstreamModel;
    if (ch.paramOverride) Object.assign(b, ch.paramOverride);
    if (wantsUsageOpt) b.stream_options = { ...((b.stream_options as object) ?? {}), include_usage: true };
    if (sysPrompt && Array.isArray(b.messages) && !(b.messages as Array<{ role?: string }>).some((m) => m?.role === 'system' || m?.role === 'developer')) {
      b.messages = [{ role: 'system', content: sysPrompt }, ...(b.messages as unknown[])];
    }
    return { req: adaptor.rawRequest!(b, actx), passthrough };
  }
  const chat = (call.chat ??= call.inbound.toChat(call.body, call.modelFromPath));
  const c: ChatRequest = { ...chat, model: actx.upstreamModel, stream: call.stream };
  const sys = systemPromptOf(ch);
  if (sys && !c.messages.some((m) => m.role === 'system' || m.role === 'developer')) c.messages = [{ role: 'system', content: sys }, ...c.messages];
  if (ch.paramOverride) Object.assign(c, ch.paramOverride);
  return { req: adaptor.chatRequest(c, actx), passthrough };
}

/** Tries one channel. Throws UpstreamError only while nothing has been sent to the client. */
async function attemptChannel(
  call: RelayCall,
  ch: ChannelEntry,
  calls: number,
  /** Starts the reservation (relay) once the request has been handed to the HTTP client; its answer is awaited before the upstream's is used. */
  startGate?: () => Promise<unknown>,
): Promise<Outcome> {
  const { app, ctx } = call;
  const adaptor = adaptorFor(ch.info.type);
  const upstreamModel = upstreamModelFor(ch, call.model);
  const channel = ch.keys.length > 1 ? { ...ch.info, key: pickKey(ch) } : ch.info;
  const actx: AdaptorContext = {
    channel,
    upstreamModel,
    requestedModel: call.model,
    stream: call.stream,
    endpoint: call.endpoint,
    option: (k) => app.options.get(k),
  };
  const built = buildRequest(call, adaptor, ch, actx);
  const passthrough = built.passthrough;
  const req = adaptor.authorize ? await adaptor.authorize(built.req, actx, app) : built.req;

  call.timer.upstreamStart();
  const up = UpstreamExchange.open(app, req, typeof channel.setting.proxy === 'string' ? channel.setting.proxy : undefined);
  const gate = startGate?.();
  // A client that hangs up stops the upstream request (and, later, its billing at what was delivered).
  const onClose = () => {
    if (!ctx.res.writableFinished) up.abort();
  };
  ctx.res.once('close', onClose);
  try {
    await up.ready;
    if (gate) {
      // Nothing of this answer is used before the reservation is known to be taken.
      try {
        await gate;
      } catch (err) {
        up.abort();
        throw err;
      }
    }
    if (up.statusCode >= 400) {
      let text = '';
      try {
        text = (await up.collect(1024 * 1024)).toString('utf8');
      } catch {
        /* keep the status */
      }
      throw new UpstreamError(up.statusCode, scrubKey(adaptor.errorMessage(up.statusCode, text), ch), text);
    }
    const ctype = up.header('content-type');
    if (call.stream && (ctype.includes('text/event-stream') || (adaptor.streamSplitter && adaptor.streamSplitter(ctype)))) {
      return await streamOutcome(call, ch, adaptor, actx, up, ctype, passthrough);
    }
    if (call.endpoint === 'speech') {
      call.timer.upstreamEnd();
      const prompt = countTextTokens(String(call.body?.input ?? ''), call.model);
      return {
        channel: ch,
        upstreamModel,
        tokens: { prompt, completion: 0, cached: 0, calls },
        frtMs: Math.round(call.timer.totalMs()),
        finish() {
          const out = ctx.res;
          ctx.respond = false;
          out.statusCode = 200;
          out.setHeader('content-type', ctype || 'audio/mpeg');
          out.setHeader(OVERHEAD_HEADER, formatOverhead(call.timer.overheadMs()));
          out.setHeader(RELAY_CORS[0], RELAY_CORS[1]);
          pipeToResponse(up, out);
        },
      };
    }
    return await bufferedOutcome(call, ch, adaptor, actx, up, passthrough, calls, ctype);
  } catch (err) {
    call.timer.upstreamEnd();
    throw err;
  } finally {
    ctx.res.off('close', onClose);
  }
}

/** Audio answers: the upstream body to the client as it comes, with backpressure; either side failing ends both. */
function pipeToResponse(up: UpstreamExchange, out: ServerResponse): void {
  const onDrain = () => up.resume();
  const onClose = () => {
    if (!out.writableFinished) up.abort();
  };
  const stop = () => {
    out.off('drain', onDrain);
    out.off('close', onClose);
  };
  out.on('drain', onDrain);
  out.on('close', onClose);
  out.on('error', () => undefined);
  up.pipe({
    data: (chunk) => out.write(chunk),
    end: () => {
      stop();
      out.end();
    },
    error: () => {
      stop();
      out.destroy();
    },
  });
}

function promptFallback(call: RelayCall): number {
  const b = call.body ?? {};
  switch (call.endpoint) {
    case 'chat': {
      const messages = call.chat?.messages ?? (call.inbound.name === 'openai' ? b.messages : safeChat(call)?.messages);
      return countChatPromptTokens(messages, call.model);
    }
    case 'completions':
      return countInputTokens(b.prompt, call.model);
    case 'embeddings':
    case 'moderations':
    case 'responses':
      return countInputTokens(b.input, call.model);
    case 'rerank':
      return countInputTokens([b.query, ...(Array.isArray(b.documents) ? b.documents : [])], call.model);
    default:
      return 0;
  }
}

function safeChat(call: RelayCall): ChatRequest | undefined {
  try {
    return (call.chat ??= call.inbound.toChat(call.body, call.modelFromPath));
  } catch {
    return undefined;
  }
}

function tokensFrom(u: Usage | undefined, call: RelayCall, completionText: string | (() => string), calls: number, delivered = true): Tokens {
  if (u && (u.prompt_tokens > 0 || u.completion_tokens > 0)) {
    return { prompt: u.prompt_tokens, completion: u.completion_tokens, cached: u.prompt_tokens_details?.cached_tokens ?? 0, calls, upstream: u };
  }
  if (!delivered) return { prompt: 0, completion: 0, cached: 0, calls: 0 };
  const text = typeof completionText === 'function' ? completionText() : completionText;
  return { prompt: promptFallback(call), completion: countTextTokens(text, call.model), cached: 0, calls };
}

async function bufferedOutcome(
  call: RelayCall,
  ch: ChannelEntry,
  adaptor: ProviderAdaptor,
  actx: AdaptorContext,
  up: UpstreamExchange,
  passthrough: boolean,
  calls: number,
  ctype: string,
): Promise<Outcome> {
  const { ctx } = call;
  const buf = await up.collect();
  call.timer.upstreamEnd();
  const textual = call.endpoint === 'transcriptions' || call.endpoint === 'translations';
  let json: unknown;
  if (!textual || ctype.includes('json')) {
    try {
      json = JSON.parse(buf.toString('utf8'));
    } catch {
      if (!textual) throw new UpstreamError(502, '上游返回了无效的 JSON 响应', buf.toString('utf8').slice(0, 1000), 'bad_response_body');
    }
  }
  if (json !== undefined && (json === null || typeof json !== 'object')) {
    throw new UpstreamError(502, '上游返回了无效的 JSON 响应', buf.toString('utf8').slice(0, 1000), 'bad_response_body');
  }
  let tokens: Tokens;
  let out: Buffer | string = buf;
  let outType = ctype || 'application/json';
  if (passthrough) {
    if (textual) {
      const text = json && typeof (json as { text?: unknown }).text === 'string' ? String((json as { text: string }).text) : buf.toString('utf8');
      const u = json ? adaptor.usageFromBody?.(json, actx) : undefined;
      tokens = u && (u.prompt_tokens || u.completion_tokens) ? tokensFrom(u, call, '', calls) : { prompt: 0, completion: countTextTokens(text, call.model), cached: 0, calls };
    } else {
      const u = adaptor.usageFromBody?.(json, actx);
      tokens = JSON_ENDPOINTS_WITH_USAGE.has(call.endpoint) || u ? tokensFrom(u, call, () => responseText(json), calls) : { prompt: promptFallback(call), completion: 0, cached: 0, calls };
    }
  } else if (call.endpoint !== 'chat' && adaptor.endpointResponse) {
    const conv = adaptor.endpointResponse(json, actx, call.body ?? {});
    tokens = tokensFrom(conv.usage, call, '', calls);
    out = JSON.stringify(conv.body);
    outType = 'application/json';
  } else {
    const chatRes = adaptor.chatResponse(json, actx);
    tokens = tokensFrom(chatRes.usage, call, () => responseText(chatRes), calls);
    out = JSON.stringify(call.inbound.fromChat(chatRes, call.model));
    outType = 'application/json';
  }
  return {
    channel: ch,
    upstreamModel: actx.upstreamModel,
    tokens,
    frtMs: Math.round(call.timer.totalMs()),
    finish() {
      // Written straight to the socket: Koa's body setter (type sniffing, mime lookup, length)
      // costs measurably per call and adds nothing here. Headers set earlier (CORS) are kept.
      const res = ctx.res;
      if (res.destroyed || res.writableEnded) return;
      ctx.respond = false;
      const body = typeof out === 'string' ? Buffer.from(out) : out;
      // The whole head in one call (no header set before on the Koa-free path): Node then formats
      // it straight from this list instead of going through setHeader per field.
      res.writeHead(200, [
        'content-type',
        outType === 'application/json' ? 'application/json; charset=utf-8' : outType,
        'content-length',
        String(body.length),
        OVERHEAD_HEADER,
        formatOverhead(call.timer.overheadMs()),
        ...RELAY_CORS,
      ]);
      res.end(body);
    },
  };
}

function observerFromTranslator(t: StreamTranslator): StreamObserver {
  let text = '';
  return {
    push(ev) {
      for (const c of t.push(ev)) text += responseText(c);
    },
    usage: () => t.usage(),
    text: () => text,
  };
}

const LF = 0x0a;
const CR = 0x0d;
const endsWithBlankLine = (b: Buffer) => b.length >= 2 && b[b.length - 1] === LF && b[b.length - 2] === LF;

const USAGE_KEY = Buffer.from('"usage":');
const DONE_KEY = Buffer.from('[DONE]');

/** `needle` sits in `b` at `at` (bytes). */
function bytesAt(b: Buffer, at: number, needle: Buffer): boolean {
  if (at + needle.length > b.length) return false;
  for (let j = 0; j < needle.length; j++) if (b[at + j] !== needle[j]) return false;
  return true;
}

/**
 * Whole SSE blocks that the pass-through forwards unchanged (see streamOutcome): the chunk ends a
 * block, has no CR, no `[DONE]` (held back until billed) and no usage object (`"usage":null`,
 * which every chunk carries when usage is asked for, passes). One pass over the bytes: three
 * Buffer searches cost a native call each, more than reading a frame's few hundred bytes here.
 */
function passesAsBytes(chunk: Buffer): boolean {
  const n = chunk.length;
  if (n < 2 || chunk[n - 1] !== LF || chunk[n - 2] !== LF) return false;
  // Each line must open like SSE (`data: {`, `data: [`, `event:`, `id:`, `retry:`, `:`, blank) and
  // a data line end like JSON: anything else (garbage, a truncated object) takes the checked path.
  let lineStart = true;
  let inData = false;
  for (let i = 0; i < n; i++) {
    const c = chunk[i];
    if (lineStart) {
      lineStart = false;
      if (c === 0x64 /* d */) {
        let j = i + 5;
        if (chunk[i + 4] !== 0x3a /* : */ || chunk[i + 1] !== 0x61) return false;
        if (chunk[j] === 0x20) j++;
        if (chunk[j] !== 0x7b /* { */ && chunk[j] !== 0x5b /* [ */) return false;
        inData = true;
      } else if (c !== 0x65 /* e */ && c !== 0x3a /* : */ && c !== LF && c !== 0x69 /* i */ && c !== 0x72 /* r */) return false;
    }
    if (c === LF) {
      if (inData) {
        const p = chunk[i - 1];
        if (p !== 0x7d /* } */ && p !== 0x5d /* ] */) return false;
        inData = false;
      }
      lineStart = true;
      continue;
    }
    if (c === CR) return false;
    if (c === 0x5b /* [ */ && bytesAt(chunk, i, DONE_KEY)) return false;
    if (c === 0x22 /* " */ && chunk[i + 1] === 0x75 /* u */ && bytesAt(chunk, i, USAGE_KEY)) {
      i += USAGE_KEY.length;
      while (chunk[i] === 0x20) i++;
      if (chunk[i] !== 0x6e /* n(ull) */) return false;
    }
  }
  return true;
}

function isUsageOnlyChunk(data: string): boolean {
  // Chunks carry `"usage":null` when usage is requested: only a real usage object is worth parsing.
  if (!data.includes('"usage":{') && !data.includes('"usage": {')) return false;
  try {
    const o = JSON.parse(data) as { choices?: unknown[]; usage?: unknown };
    return !!o.usage && Array.isArray(o.choices) && o.choices.length === 0;
  } catch {
    return false;
  }
}

async function writeOut(res: ServerResponse, text: string): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return false;
  if (res.write(text)) return true;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
  return !res.destroyed;
}

async function streamOutcome(
  call: RelayCall,
  ch: ChannelEntry,
  adaptor: ProviderAdaptor,
  actx: AdaptorContext,
  up: UpstreamExchange,
  ctype: string,
  passthrough: boolean,
): Promise<Outcome> {
  const { ctx } = call;
  const res = ctx.res;
  res.on('error', () => undefined); // a client that vanished mid-write is handled below, never a crash
  // Headers go out with the first bytes, so an error before any output can still be retried.
  const ensureHead = () => {
    if (res.headersSent) return;
    ctx.respond = false;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      [OVERHEAD_HEADER]: formatOverhead(call.timer.overheadMs()),
      [RELAY_CORS[0]]: RELAY_CORS[1],
    });
  };
  const maxEvent = call.app.config.maxSseEventBytes;
  const splitter = adaptor.streamSplitter?.(ctype, maxEvent) ?? new SSESplitter(maxEvent);
  const openaiPassthrough = passthrough && call.inbound.name === 'openai';
  const dropUsageOnly = openaiPassthrough && !call.includeUsage;
  const observer: StreamObserver | undefined = passthrough ? (adaptor.observer?.(actx) ?? observerFromTranslator(adaptor.chatStream(actx))) : undefined;
  const translator = passthrough ? undefined : adaptor.chatStream(actx);
  const inbound = call.inbound as InboundFormat & { streamWriter(m: string, o?: { includeUsage?: boolean }): ReturnType<InboundFormat['streamWriter']> };
  const writer = passthrough ? undefined : inbound.streamWriter(call.model, { includeUsage: call.includeUsage });
  let convText = '';
  // Conversion: how many client chunks the upstream's events made (0 at the end: nothing was readable).
  let converted = 0;
  let doneBlock = '';
  let frt = 0;
  let cut: Error | undefined;
  let clientGone = false;

  const handleBlocks = (blocks: string[]): string => {
    let out = '';
    for (const block of blocks) {
      const ev = parseBlockChecked(block);
      // Not SSE, or data that cannot be JSON: the stream is unreadable (ends with an error below).
      if (ev === false || (ev && !jsonShaped(ev.data))) throw new BadStreamFrame();
      if (!ev) {
        if (passthrough) out += block;
        continue;
      }
      if (passthrough) {
        if (openaiPassthrough && ev.data === '[DONE]') {
          doneBlock = block;
          continue;
        }
        observer!.push(ev);
        if (dropUsageOnly && isUsageOnlyChunk(ev.data)) continue;
        out += block;
      } else {
        for (const c of translator!.push(ev)) {
          converted++;
          convText += responseText(c);
          out += writer!.chunk(c);
        }
      }
    }
    return out;
  };

  // Optional keep-alive comments while the upstream is silent (general_setting.ping_interval_*).
  // The timer is re-armed for exactly `every` ms after the last write, so a silence of `every`
  // always yields a ping (a fixed-period check could miss it by one tick).
  let lastWrite = Date.now();
  let ping: NodeJS.Timeout | undefined;
  const o = call.app.options;
  const pings = o.bool('general_setting.ping_interval_enabled');
  if (pings) {
    const every = Math.max(1, o.num('general_setting.ping_interval_seconds', 60)) * 1000;
    const arm = (delay: number) => {
      ping = setTimeout(() => {
        if (res.destroyed || res.writableEnded) return;
        const idle = Date.now() - lastWrite;
        if (idle >= every) {
          ensureHead();
          res.write(': PING\n\n');
          lastWrite = Date.now();
          arm(every);
        } else arm(every - idle);
      }, delay);
      ping.unref();
    };
    arm(every);
  }
  // OpenAI pass-through: a chunk made of whole blocks without a usage object, `[DONE]` or CRs
  // (passesAsBytes) is written to the client as the bytes it came in, skipping decode, split and
  // re-encode (≈ 6 µs per frame; thousands of streams make that a good part of the CPU). Only while
  // every earlier byte ended a block (`wholeSoFar`): then the splitter and its decoder hold nothing.
  const rawObserver = openaiPassthrough && observer?.pushRaw ? observer : undefined;
  let wholeSoFar = true;
  // The upstream body comes chunk by chunk from the exchange (no stream objects, no promise per
  // chunk: at thousands of concurrent streams that is a good part of the CPU). Backpressure: a full
  // client socket pauses the upstream until it drains.
  const pump = () =>
    new Promise<void>((resolve, reject) => {
      let settled = false;
      const done = (err?: unknown) => {
        if (settled) return;
        settled = true;
        res.off('close', onClientClose);
        res.off('drain', onDrain);
        if (err !== undefined) reject(err);
        else resolve();
      };
      const onDrain = () => up.resume();
      const onClientClose = () => {
        if (res.writableFinished) return;
        clientGone = true;
        up.abort();
        done();
      };
      res.on('close', onClientClose);
      up.pipe({
        data(chunk) {
          if (settled) return true;
          let out: string | Buffer;
          if (rawObserver && wholeSoFar && passesAsBytes(chunk)) {
            // Whole blocks that need no change: forwarded as received, watched later only if needed.
            rawObserver.pushRaw!(chunk);
            out = chunk;
          } else {
            try {
              out = handleBlocks(splitter.push(chunk));
            } catch (err) {
              done(err); // the catch below retries, or cuts the stream, and stops the upstream
              return true;
            }
            wholeSoFar = endsWithBlankLine(chunk);
          }
          if (!out.length) return true;
          if (!frt) frt = Math.max(1, Math.round(call.timer.totalMs()));
          ensureHead();
          if (pings) lastWrite = Date.now();
          if (res.destroyed || res.writableEnded) {
            clientGone = true;
            up.abort();
            done();
            return true;
          }
          if (res.write(out)) return true;
          res.once('drain', onDrain);
          return false;
        },
        end: () => done(),
        error: (err) => done(err),
      });
    });
  try {
    await pump();
    if (!clientGone) {
      let out = handleBlocks(splitter.end());
      if (translator) for (const c of translator.end()) {
        convText += responseText(c);
        out += writer!.chunk(c);
      }
      // A converted stream none of whose events the translator understood (JSON-shaped garbage such
      // as `{garbage}`) delivered nothing: unreadable, so refunded or retried, not billed.
      if (translator && !converted && !res.headersSent) throw new BadStreamFrame();
      if (out) {
        if (!frt) frt = Math.max(1, Math.round(call.timer.totalMs()));
        ensureHead();
        if (!(await writeOut(res, out))) clientGone = true;
      }
    }
  } catch (err) {
    if (up.aborted || res.destroyed) clientGone = true;
    else if (!res.headersSent) {
      // Nothing reached the client yet: let the caller retry on another channel.
      call.timer.upstreamEnd();
      up.abort();
      if (err instanceof UpstreamError) throw err;
      if (err instanceof BadStreamFrame || err instanceof SSEEventTooLarge) throw new UpstreamError(502, err.message, '', err.code);
      throw new UpstreamError(0, `上游连接中断：${(err as Error).message}`);
    } else cut = err as Error;
  } finally {
    if (ping) clearTimeout(ping);
    call.timer.upstreamEnd();
    if (clientGone || cut) up.abort();
  }
  if (res.destroyed && !res.writableFinished) clientGone = true;

  const usage = observer ? observer.usage() : translator!.usage();
  const text = () => (observer ? observer.text() : convText);
  const complete = !cut && !clientGone;
  const deliveredAny = complete || frt > 0;
  const tokens = tokensFrom(usage, call, text, 1, deliveredAny);
  if (cut) call.app.log.warn({ channel: ch.info.id, err: cut.message }, 'upstream stream ended abnormally');
  return {
    channel: ch,
    upstreamModel: actx.upstreamModel,
    tokens,
    frtMs: frt,
    finish() {
      if (clientGone || res.destroyed) return;
      ensureHead();
      let tail = '';
      if (cut) {
        const f = call.inbound;
        const unreadable = cut instanceof BadStreamFrame || cut instanceof SSEEventTooLarge ? cut : undefined;
        const m = unreadable ? unreadable.message : '上游连接中断';
        const code = unreadable ? unreadable.code : 'upstream_stream_interrupted';
        tail += f.streamError ? f.streamError(502, m, code) : `data: ${JSON.stringify(f.error(502, m, code))}\n\n`;
      } else if (passthrough) {
        tail += doneBlock;
      } else {
        tail += writer!.end(tokens.upstream ?? { prompt_tokens: tokens.prompt, completion_tokens: tokens.completion, total_tokens: tokens.prompt + tokens.completion });
      }
      res.end(tail);
    },
  };
}

/** Moves the reservation to the call's real cost. */
async function settleCall(call: RelayCall, price: PriceInfo, payer: Payer, res: Reservation, o: Outcome): Promise<BalanceAfter & { taken: number }> {
  const { app } = call;
  const actual = o.tokens.calls === 0 ? 0 : computeQuota(app, price, { promptTokens: o.tokens.prompt, completionTokens: o.tokens.completion, cachedTokens: o.tokens.cached, calls: o.tokens.calls });
  const s = await res.settle(actual, o.channel.info.id, o.tokens.prompt, o.tokens.completion);
  balanceView(app)?.note(payer, s);
  return s;
}

/** After the answer: usage counters and the consume log row (batched), the quota warning, an exhausted token. */
function recordUsage(call: RelayCall, price: PriceInfo, payer: Payer, reserved: number, pre: BalanceAfter, o: Outcome, used: number[], s: BalanceAfter & { taken: number }, res: Reservation): void {
  const { app, principal } = call;
  const taken = s.taken;
  const batcher = usageBatcher(app);
  // The settled reservation row is deleted by the flush that writes this call's log row and counters.
  const resId = res.handOver();
  if (resId !== undefined) batcher.closeReservation(resId);
  if (taken > 0 || o.tokens.calls > 0) batcher.addUsage(principal.user.id, principal.token?.id, o.channel.info.id, taken);
  if (app.options.bool('LogConsumeEnabled')) {
    const text = (price.logText ??= priceLogText(price));
    const mapped = o.upstreamModel !== call.model;
    // The `other` JSON: the price's part is built once per price (PriceInfo is cached until the
    // options change); the rest are integers, booleans and JSON-quoted strings.
    const other =
      `${text.otherHead}"frt":${jsonNum(o.frtMs)},"is_model_mapped":${mapped},"cache_tokens":${jsonNum(o.tokens.cached)},` +
      `"group":${JSON.stringify(principal.group)},"admin_info":{"use_channel":[${used.join(',')}]}` +
      `${mapped ? `,"upstream_model_name":${JSON.stringify(o.upstreamModel)}` : ''}}`;
    // A complete row (no defaults to merge in): this runs once per relayed call.
    batcher.addRow({
      user_id: principal.user.id,
      created_at: nowSec(),
      type: LOG_TYPE.consume,
      username: principal.user.username,
      token_name: principal.tokenName,
      token_id: principal.token?.id ?? 0,
      model_name: call.model,
      quota: taken,
      prompt_tokens: o.tokens.prompt,
      completion_tokens: o.tokens.completion,
      use_time: Math.floor(call.timer.totalMs() / 1000),
      is_stream: call.stream,
      channel_id: o.channel.info.id,
      channel_name: o.channel.info.name,
      group: principal.group,
      ip: call.ip,
      content: text.content,
      other,
    });
  }
  const after = s.userQuota ?? (pre.userQuota !== undefined ? pre.userQuota + reserved - taken : undefined);
  if (after !== undefined) maybeWarnQuota(app, principal.user, after + taken, after);
  const tokenRemain = s.tokenRemain ?? pre.tokenRemain;
  if (payer.limitedTokenId && tokenRemain !== undefined && tokenRemain <= 0 && principal.token) {
    const token = principal.token;
    void app
      .knex('tokens')
      .where({ id: token.id, status: TOKEN_STATUS.enabled })
      .andWhere('remain_quota', '<=', 0)
      .update({ status: TOKEN_STATUS.exhausted })
      .then((n: number) => (n ? invalidateToken(app, token.key) : undefined))
      .catch(() => undefined);
  }
}

