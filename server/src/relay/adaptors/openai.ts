import type {
  AdaptorContext,
  ChannelInfo,
  ChatChunk,
  ChatRequest,
  ChatResponse,
  Endpoint,
  ProviderAdaptor,
  SSEEvent,
  StreamObserver,
  StreamTranslator,
  UpstreamRequest,
  Usage,
} from '../types';
import { parseBlock, SSESplitter } from '../sse';
import { CHANNEL_TYPE, CHANNEL_TYPES, typesServedBy } from '../../channels/catalogue';

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

export function baseUrlOf(channel: Pick<ChannelInfo, 'type' | 'baseUrl'>): string {
  return (channel.baseUrl || DEFAULT_BASE_URL[channel.type] || '').replace(/\/+$/, '');
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

class OpenAITranslator implements StreamTranslator {
  private u: Usage | undefined;
  push(ev: SSEEvent): ChatChunk[] {
    if (ev.data === '[DONE]') return [];
    let obj: ChatChunk;
    try {
      obj = JSON.parse(ev.data) as ChatChunk;
    } catch {
      return [];
    }
    const u = normaliseUsage(obj.usage);
    if (u) this.u = u;
    if (!Array.isArray(obj.choices)) return [];
    return [obj];
  }
  end(): ChatChunk[] {
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
  return text ? `上游错误（${status}）：${text}` : `上游错误（${status}）`;
}

function jsonBodyFor(body: Record<string, unknown>): string {
  return JSON.stringify(body);
}

/** OpenAI and every OpenAI-compatible kind (the fallback for types without their own adaptor). */
export const openaiAdaptor: ProviderAdaptor = {
  name: 'openai',
  channelTypes: typesServedBy('openai'),
  format: 'openai',
  endpoints: ['chat', 'completions', 'embeddings', 'moderations', 'images', 'speech', 'transcriptions', 'translations', 'responses', 'image_edits', 'rerank'],

  chatRequest(req: ChatRequest, ctx: AdaptorContext): UpstreamRequest {
    const body: ChatRequest = { ...req, model: ctx.upstreamModel };
    if (ctx.stream && ctx.channel.setting.disable_stream_options !== true) body.stream_options = { ...(req.stream_options ?? {}), include_usage: true };
    return { url: openaiUrl(ctx.channel, 'chat', ctx.upstreamModel), method: 'POST', headers: openaiHeaders(ctx.channel), body: JSON.stringify(body) };
  },
  chatResponse(body: unknown): ChatResponse {
    const r = body as ChatResponse;
    const u = normaliseUsage(r.usage);
    return u ? { ...r, usage: u } : r;
  },
  chatStream(): StreamTranslator {
    return new OpenAITranslator();
  },
  errorMessage: openaiErrorMessage,

  rawRequest(body, ctx, raw) {
    const url = openaiUrl(ctx.channel, ctx.endpoint, ctx.upstreamModel);
    if (raw) return { url, method: 'POST', headers: openaiHeaders(ctx.channel, raw.contentType), body: raw.body };
    return { url, method: 'POST', headers: openaiHeaders(ctx.channel), body: jsonBodyFor(body ?? {}) };
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
