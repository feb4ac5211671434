import type {
  AdaptorContext,
  ChannelInfo,
  ChatChunk,
  ChatMessage,
  ChatRequest,
  ContentPart,
  ChatResponse,
  Endpoint,
  ProviderAdaptor,
  SSEEvent,
  StreamObserver,
  StreamTranslator,
  ToolCall,
  UpstreamRequest,
  Usage,
} from '../../relay/types';
import { parseBlock, SSESplitter } from '../../relay/sse';
import { UpstreamError } from '../../relay/errors';
import { contentText, fileNameFor, isRecord, parseDataUrl, toolResultObject, withOpenAIBeta } from '../shared';
import { memoByString } from '../../lib/memo';
import { own } from '../../lib/own';
import { CHANNEL_TYPE } from '../../channels/kinds';
import { CHANNEL_TYPES, typesServedBy } from '../../channels/catalogue';

/**
 * Default base URL and API prefix per channel type, from the catalogue; plain objects indexed by
 * type so that the per-call lookup stays one property read.
 */
export const DEFAULT_BASE_URL: Readonly<Record<number, string>> = Object.fromEntries(CHANNEL_TYPES.filter((e) => e.baseUrl).map((e) => [e.id, e.baseUrl!]));
const API_PREFIX: Readonly<Record<number, string>> = Object.fromEntries(
  CHANNEL_TYPES.filter((e) => e.apiPrefix !== undefined).map((e) => [e.id, e.apiPrefix!]),
);
/** OpenRouter asks callers to identify themselves (ranking headers). */
const OPENROUTER = CHANNEL_TYPE.OpenRouter;

export const ENDPOINT_PATH: Record<Endpoint, string> = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  moderations: '/moderations',
  images: '/images/generations',
  speech: '/audio/speech',
  transcriptions: '/audio/transcriptions',
  translations: '/audio/translations',
  responses: '/responses',
  image_edits: '/images/edits',
  rerank: '/rerank',
};

const trimSlashes = memoByString((url) => url.replace(/\/+$/, ''));

export function baseUrlOf(channel: Pick<ChannelInfo, 'type' | 'baseUrl'>): string {
  return trimSlashes(channel.baseUrl || DEFAULT_BASE_URL[channel.type] || '');
}

/** `{base}/v1{path}`; a custom channel (8) whose base_url contains `{model}` is a full URL. */
export function openaiUrl(channel: ChannelInfo, endpoint: Endpoint, model: string): string {
  const base = baseUrlOf(channel);
  if (base.includes('{model}')) return base.replaceAll('{model}', encodeURIComponent(model));
  const prefix = API_PREFIX[channel.type] ?? '/v1';
  return `${base}${prefix}${ENDPOINT_PATH[endpoint]}`;
}

export function openaiHeaders(channel: ChannelInfo, contentType = 'application/json'): Record<string, string> {
  const h: Record<string, string> = { authorization: `Bearer ${channel.key}` };
  if (contentType) h['content-type'] = contentType;
  if (channel.organization) h['openai-organization'] = channel.organization;
  if (channel.type === OPENROUTER) {
    h['http-referer'] = 'https://github.com/QuantumNous/new-api';
    h['x-title'] = 'AI Gateway';
  }
  return h;
}

/** Normalises an OpenAI-style usage object (also accepts input_tokens/output_tokens). */
export function normaliseUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const o = u as Record<string, unknown>;
  let prompt = Number(o.prompt_tokens ?? o.input_tokens ?? 0) || 0;
  const completion = Number(o.completion_tokens ?? o.output_tokens ?? 0) || 0;
  // Rerank/embedding style usage carries only total_tokens: all of it is input.
  if (!prompt && !completion && Number(o.total_tokens) > 0) prompt = Number(o.total_tokens);
  const details = (o.prompt_tokens_details ?? o.input_tokens_details) as Usage['prompt_tokens_details'] | undefined;
  const usage: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: Number(o.total_tokens ?? prompt + completion) || prompt + completion,
  };
  if (details && typeof details === 'object') usage.prompt_tokens_details = details;
  else if (typeof o.prompt_cache_hit_tokens === 'number') usage.prompt_tokens_details = { cached_tokens: o.prompt_cache_hit_tokens };
  if (o.completion_tokens_details && typeof o.completion_tokens_details === 'object')
    usage.completion_tokens_details = o.completion_tokens_details as Usage['completion_tokens_details'];
  return usage;
}

/** Text of a chat/completions chunk or response (content, reasoning, tool arguments, legacy text). */
function choiceText(obj: { choices?: Array<Record<string, unknown>>; type?: unknown; delta?: unknown; output?: unknown }): string {
  let s = '';
  // Responses API: stream deltas and the final output items.
  if (typeof obj.type === 'string' && obj.type.endsWith('.delta') && typeof obj.delta === 'string') return obj.delta;
  if (Array.isArray(obj.output)) {
    for (const item of obj.output as Array<{ content?: Array<{ text?: unknown }>; arguments?: unknown }>) {
      for (const c of item.content ?? []) if (typeof c.text === 'string') s += c.text;
      if (typeof item.arguments === 'string') s += item.arguments;
    }
    return s;
  }
  for (const c of obj.choices ?? []) {
    const d = (c.delta ?? c.message) as Record<string, unknown> | undefined;
    if (d) {
      if (typeof d.content === 'string') s += d.content;
      if (typeof d.reasoning_content === 'string') s += d.reasoning_content;
      if (typeof d.reasoning === 'string') s += d.reasoning;
      if (Array.isArray(d.tool_calls))
        for (const t of d.tool_calls as Array<{ function?: { name?: string; arguments?: string } }>)
          s += `${t.function?.name ?? ''}${t.function?.arguments ?? ''}`;
    }
    if (typeof c.text === 'string') s += c.text;
  }
  return s;
}

export function responseText(body: unknown): string {
  return body && typeof body === 'object' ? choiceText(body as { choices?: Array<Record<string, unknown>> }) : '';
}

/**
 * The passthrough observer: only events mentioning usage are parsed on the fly; the rest are kept
 * as strings and parsed at the end only if no usage ever arrived (tokenizer fallback).
 */
export class OpenAIObserver implements StreamObserver {
  private u: Usage | undefined;
  /** Until usage arrives: event data, or raw whole blocks (pushRaw), in stream order. */
  private readonly datas: Array<string | Uint8Array> = [];
  private textCache: string | undefined;

  push(ev: SSEEvent): void {
    const d = ev.data;
    if (d === '[DONE]') return;
    if (d.includes('"usage":{') || d.includes('"usage": {')) {
      try {
        const obj = JSON.parse(d) as { usage?: unknown; response?: { usage?: unknown } };
        const u = normaliseUsage(obj.usage ?? obj.response?.usage);
        if (u) this.u = u;
      } catch {
        /* not JSON */
      }
    }
    if (!this.u) this.datas.push(d);
    this.textCache = undefined;
  }
  pushRaw(blocks: Uint8Array): void {
    // Kept by reference: upstream body chunks are views of the socket read they came in, which
    // nothing writes to again (a copy per frame cost more than the frame's whole forwarding).
    if (!this.u) this.datas.push(blocks);
    this.textCache = undefined;
  }
  usage(): Usage | undefined {
    return this.u;
  }
  text(): string {
    if (this.textCache !== undefined) return this.textCache;
    let s = '';
    const add = (d: string) => {
      try {
        s += choiceText(JSON.parse(d) as { choices?: Array<Record<string, unknown>> });
      } catch {
        /* skip */
      }
    };
    for (const d of this.datas) {
      if (typeof d === 'string') add(d);
      else {
        // Raw blocks are whole (they end with a blank line), so one splitter per piece sees them all.
        for (const block of new SSESplitter().push(d)) {
          const ev = parseBlock(block);
          if (ev && ev.data !== '[DONE]') add(ev.data);
        }
      }
    }
    this.textCache = s;
    return s;
  }
}

/** OpenAI error `type` / `code` of an in-band stream error → the status a client should see. */
function openaiStreamStatus(e: Record<string, unknown>): number {
  const n = Number(e.status ?? e.code);
  if (Number.isInteger(n) && n >= 400 && n <= 599) return n;
  const kind = `${String(e.type ?? '')} ${String(e.code ?? '')}`;
  if (/rate_limit|insufficient_quota/.test(kind)) return 429;
  if (/overloaded|unavailable/i.test(kind)) return 503;
  return 500;
}

/** An in-band `{"error": …}` event (OpenAI and compatible servers send one mid-stream) → UpstreamError. */
function openaiStreamError(error: unknown, body: string): UpstreamError {
  const e = isRecord(error) ? error : {};
  const message = typeof error === 'string' && error ? error : typeof e.message === 'string' && e.message ? e.message : 'upstream stream error';
  const kind = typeof e.type === 'string' && e.type ? e.type : typeof e.code === 'string' && e.code ? e.code : 'api_error';
  return new UpstreamError(openaiStreamStatus(e), message, body, kind);
}

class OpenAITranslator implements StreamTranslator {
  private u: Usage | undefined;
  private pending: UpstreamError | undefined;
  push(ev: SSEEvent): ChatChunk[] {
    if (this.pending) throw this.pending;
    if (ev.data === '[DONE]') return [];
    let obj: ChatChunk;
    try {
      obj = JSON.parse(ev.data) as ChatChunk;
    } catch {
      return [];
    }
    if (!isRecord(obj)) return [];
    const raw = obj as unknown as Record<string, unknown>;
    // OpenAI, SGLang: `{error}`; OpenRouter: `{error, choices: [{finish_reason: "error"}]}`; vLLM: `{object: "error", message}`
    const error = raw.error ?? (raw.object === 'error' ? raw : undefined);
    if (isRecord(error) || (typeof error === 'string' && error)) {
      // thrown on the next push()/end(), so the chunks converted before it still reach the client
      this.pending = openaiStreamError(error, ev.data);
      return [];
    }
    const u = normaliseUsage(obj.usage);
    if (u) this.u = u;
    if (!Array.isArray(obj.choices)) return [];
    for (const c of obj.choices) if (c?.delta) liftReasoning(c.delta as unknown as Record<string, unknown>);
    return [obj];
  }
  end(): ChatChunk[] {
    if (this.pending) throw this.pending;
    return [];
  }
  usage(): Usage | undefined {
    return this.u;
  }
}

export function openaiErrorMessage(status: number, body: string): string {
  try {
    const j = JSON.parse(body) as { error?: { message?: string } | string; message?: string; msg?: string };
    if (typeof j.error === 'string') return j.error;
    if (j.error?.message) return j.error.message;
    if (j.message) return j.message;
    if (j.msg) return j.msg;
  } catch {
    /* not JSON */
  }
  const text = body.trim().slice(0, 300);
  // The upstream's own words, in whatever language it speaks (not translated): see docs/i18n.md.
  return text ? `upstream error (${status}): ${text}` : `upstream error (${status})`;
}

function jsonBodyFor(body: Record<string, unknown>): string {
  return JSON.stringify(body);
}

// ---------------------------------------------------------------------------------------------
// Canonical → Chat Completions body (conversions only: an OpenAI client's body goes upstream as
// sent, unknown fields included, through rawRequest)

/** The request fields OpenAI's Chat Completions API defines; a converted request carries no other. */
const CHAT_FIELDS = new Set([
  'model',
  'messages',
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'metadata',
  'modalities',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'prompt_cache_retention',
  'reasoning_effort',
  'response_format',
  'safety_identifier',
  'seed',
  'service_tier',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
  'verbosity',
  'web_search_options',
]);

/** Message fields per role (OpenAI refuses others, e.g. a `name` on a tool message or `reasoning_content`). */
const MESSAGE_FIELDS: Record<string, ReadonlySet<string>> = {
  system: new Set(['role', 'content', 'name']),
  developer: new Set(['role', 'content', 'name']),
  user: new Set(['role', 'content', 'name']),
  assistant: new Set(['role', 'content', 'name', 'tool_calls', 'refusal', 'audio', 'function_call']),
  tool: new Set(['role', 'content', 'tool_call_id']),
  function: new Set(['role', 'content', 'name']),
};

/**
 * OpenAI reasoning models (o-series, gpt-5 but its `-chat` variants): they take
 * `max_completion_tokens` only and refuse sampling parameters other than the defaults.
 */
const OPENAI_REASONING = /^(?:openai\/)?(?:o\d+(?:-|$)|gpt-5(?![.\d]*-chat))/i;
const REASONING_REFUSES = ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'logit_bias', 'stop'] as const;
/** Models known to accept `reasoning_effort` (OpenAI reasoning models but o1-mini/o1-preview, gpt-oss, Gemini 2.5+ and Grok through their OpenAI-compatible APIs). */
const TAKES_EFFORT = /^(?:[\w.-]+\/)?(?:o\d+|gpt-5|gpt-oss|gemini-(?:2\.5|[3-9])|grok-3-mini|grok-4)/i;

export const takesReasoningEffort = memoByString((model) => TAKES_EFFORT.test(model) && !/^(?:openai\/)?o1-(?:mini|preview)/i.test(model));
const isOpenAIReasoning = memoByString((model) => OPENAI_REASONING.test(model));

/** A thinking budget in tokens → OpenAI effort (0, "off", → low: reasoning models cannot switch it off). */
export function budgetToEffort(budget: number): string | undefined {
  if (!Number.isFinite(budget) || budget < 0) return undefined; // -1: dynamic, the model decides
  if (budget <= 2048) return 'low';
  if (budget <= 12288) return 'medium';
  return 'high';
}

/** What a base URL's host says about the upstream (computed once per base URL). */
const hostFacts = memoByString((base) => {
  const host = base.replace(/^https?:\/\//, '');
  return {
    google: /(^|\.)googleapis\.com(?::\d+)?(\/|$)/.test(host),
    deepseekOrMoonshot: /(^|\.)(deepseek\.com|moonshot\.(cn|ai))(?::\d+)?(\/|$)/.test(host),
  };
});
const hostFactsOf = (ctx: AdaptorContext) => hostFacts(baseUrlOf(ctx.channel));
/** Google's OpenAI-compatible endpoint takes back Gemini's thought signatures on tool calls. */
const isGoogleCompat = (ctx: AdaptorContext) => hostFactsOf(ctx).google;
/**
 * DeepSeek and Moonshot (Kimi) thinking models want an assistant turn's `reasoning_content` back
 * while a tool loop goes on (they refuse the next request without it); OpenAI's API defines no
 * such field.
 */
const takesReasoningContent = (ctx: AdaptorContext) =>
  ctx.channel.type === CHANNEL_TYPE.DeepSeek || ctx.channel.type === CHANNEL_TYPE.Moonshot || hostFactsOf(ctx).deepseekOrMoonshot;

function pick(src: Record<string, unknown>, keep: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(src)) if (keep.has(k) && src[k] !== undefined) out[k] = src[k];
  return out;
}

/** A content part reduced to its type and the member that type names (`text`, `image_url`, …). */
function chatPart(p: ContentPart): ContentPart {
  const part = p as Record<string, unknown>;
  const file = part.file;
  // OpenAI refuses inline file data without a file name
  if (p.type === 'file' && isRecord(file) && typeof file.file_data === 'string' && !file.filename)
    return { type: 'file', file: { ...file, filename: fileNameFor(parseDataUrl(file.file_data)?.mimeType ?? 'application/pdf') } } as ContentPart;
  return { type: p.type, ...(p.type in part ? { [p.type]: part[p.type] } : {}) } as ContentPart;
}

interface Extensions {
  /** `extra_content` on tool calls (Gemini thought signatures). */
  signatures: boolean;
  /** `reasoning_details` on assistant messages (OpenRouter). */
  reasoningDetails: boolean;
  /** `reasoning_content` on assistant messages (DeepSeek, Moonshot). */
  reasoningContent: boolean;
}

function chatMessage(m: ChatMessage, ext: Extensions): Record<string, unknown> {
  const src = m as unknown as Record<string, unknown>;
  const out = pick(src, own(MESSAGE_FIELDS, m.role) ?? MESSAGE_FIELDS.user!);
  if (Array.isArray(m.content)) out.content = m.content.map(chatPart);
  if (Array.isArray(m.tool_calls) && 'tool_calls' in out) {
    out.tool_calls = m.tool_calls.map((tc: ToolCall) => ({
      id: tc.id,
      type: tc.type ?? 'function',
      function: { name: tc.function?.name ?? '', arguments: tc.function?.arguments ?? '' },
      ...(ext.signatures && tc.extra_content ? { extra_content: tc.extra_content } : {}),
    }));
  }
  if (m.role === 'tool' && m.is_error) out.content = JSON.stringify(toolResultObject(contentText(m.content), true));
  if (m.role === 'assistant') {
    if (ext.reasoningDetails && m.reasoning_details?.length) out.reasoning_details = m.reasoning_details;
    if (ext.reasoningContent && m.reasoning_content) out.reasoning_content = m.reasoning_content;
  }
  return out;
}

/**
 * The canonical request as a Chat Completions body: only the fields OpenAI defines (canonical-only
 * ones such as `top_k`, `thinking_budget`, `reasoning_summary` are dropped; a thinking budget
 * becomes `reasoning_effort` on models that take it), messages with their role's fields only, and
 * the reasoning models' rules (max_completion_tokens, no sampling parameters). The channel's
 * param_override is applied last, so an operator can still send a field of their own.
 */
export function toOpenAIChatBody(req: ChatRequest, ctx: AdaptorContext): Record<string, unknown> {
  const model = ctx.upstreamModel;
  const body = pick(req as Record<string, unknown>, CHAT_FIELDS);
  body.model = model;
  const ext: Extensions = { signatures: isGoogleCompat(ctx), reasoningDetails: ctx.channel.type === OPENROUTER, reasoningContent: takesReasoningContent(ctx) };
  body.messages = (req.messages ?? []).map((m) => chatMessage(m, ext));
  if (typeof body.reasoning_effort !== 'string' && typeof req.thinking_budget === 'number') {
    const effort = budgetToEffort(req.thinking_budget);
    if (effort) body.reasoning_effort = effort;
  }
  if (body.reasoning_effort !== undefined && !takesReasoningEffort(model)) delete body.reasoning_effort;
  if (isOpenAIReasoning(model)) {
    if (body.max_tokens !== undefined && body.max_completion_tokens === undefined) body.max_completion_tokens = body.max_tokens;
    delete body.max_tokens;
    for (const k of REASONING_REFUSES) if (!(k === 'temperature' || k === 'top_p') || body[k] !== 1) delete body[k];
  }
  if (ctx.paramOverride) Object.assign(body, ctx.paramOverride);
  return body;
}

/** `reasoning` (OpenRouter, vLLM, Ollama) → the canonical `reasoning_content`. */
function liftReasoning(m: Record<string, unknown>): void {
  if (typeof m.reasoning === 'string' && m.reasoning && m.reasoning_content === undefined) m.reasoning_content = m.reasoning;
}

/** OpenAI and every OpenAI-compatible kind (the fallback for types without their own adaptor). */
export const openaiAdaptor: ProviderAdaptor = {
  name: 'openai',
  channelTypes: typesServedBy('openai'),
  format: 'openai',
  responsesSide: 'openai',
  endpoints: ['chat', 'completions', 'embeddings', 'moderations', 'images', 'speech', 'transcriptions', 'translations', 'image_edits', 'rerank'],

  chatRequest(req: ChatRequest, ctx: AdaptorContext): UpstreamRequest {
    const body = toOpenAIChatBody(req, ctx);
    if (ctx.stream && ctx.channel.setting.disable_stream_options !== true) body.stream_options = { ...(req.stream_options ?? {}), include_usage: true };
    return { url: openaiUrl(ctx.channel, 'chat', ctx.upstreamModel), method: 'POST', headers: openaiHeaders(ctx.channel), body: JSON.stringify(body) };
  },
  chatResponse(body: unknown): ChatResponse {
    const r = body as ChatResponse;
    const u = normaliseUsage(r.usage);
    if (Array.isArray(r?.choices)) for (const c of r.choices) if (c?.message) liftReasoning(c.message as unknown as Record<string, unknown>);
    // The body is this call's own parse (as liftReasoning above, changed in place rather than copied).
    if (u) r.usage = u;
    return r;
  },
  chatStream(): StreamTranslator {
    return new OpenAITranslator();
  },
  errorMessage: openaiErrorMessage,

  rawRequest(body, ctx, raw) {
    const url = openaiUrl(ctx.channel, ctx.endpoint, ctx.upstreamModel);
    if (raw) return { url, method: 'POST', headers: withOpenAIBeta(openaiHeaders(ctx.channel, raw.contentType), ctx), body: raw.body };
    return { url, method: 'POST', headers: withOpenAIBeta(openaiHeaders(ctx.channel), ctx), body: jsonBodyFor(body ?? {}) };
  },
  usageFromBody(body: unknown): Usage | undefined {
    return body && typeof body === 'object' ? normaliseUsage((body as { usage?: unknown }).usage) : undefined;
  },
  observer(): StreamObserver {
    return new OpenAIObserver();
  },
  modelsRequest(channel: ChannelInfo): UpstreamRequest {
    const base = baseUrlOf(channel);
    const prefix = API_PREFIX[channel.type] ?? '/v1';
    return { url: `${base}${prefix}/models`, method: 'GET', headers: openaiHeaders(channel, '') };
  },
  parseModels(body: unknown): string[] {
    const data = (body as { data?: Array<{ id?: string }>; models?: Array<{ name?: string; model?: string }> }) ?? {};
    if (Array.isArray(data.data)) return data.data.map((m) => String(m.id ?? '')).filter(Boolean);
    if (Array.isArray(data.models)) return data.models.map((m) => String(m.model ?? m.name ?? '')).filter(Boolean);
    return [];
  },
};
