/**
 * Upstreams that speak OpenAI's Responses API (format `responses`): OpenAI-protocol channels whose
 * `setting.upstream_protocol` is `responses` (their upstream has no Chat Completions, such as
 * Azure deployments of Codex models), and the passthrough of Responses clients to every channel
 * that speaks Responses (`POST {prefix}/responses`; Azure `{endpoint}/openai/v1/responses`).
 *
 * Canonical request → Responses request, Response object → canonical response, Responses event
 * stream → canonical chunks (text, reasoning summaries, function calls in parallel, usage). The
 * gateway keeps no state, so converted requests are `store: false` and carry the whole history;
 * reasoning the upstream encrypted comes back to it through the canonical `reasoning_details`.
 */
import type {
  AdaptorContext,
  ChatChunk,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ContentPart,
  FinishReason,
  ProviderAdaptor,
  ReasoningDetail,
  SSEEvent,
  StreamTranslator,
  ToolCall,
  ToolDef,
  UpstreamRequest,
  Usage,
} from '../../relay/types';
import { UpstreamError } from '../../relay/errors';
import { OpenAIObserver, normaliseUsage, openaiAdaptor, openaiErrorMessage, openaiHeaders, openaiUrl } from '../openai/adaptor';
import { contentText, fileNameFor, isRecord, parseDataUrl, toolResultObject, withOpenAIBeta } from '../shared';
import { PACKED_REASONING_PREFIX, responsesUsageToChat, unpackReasoning } from './shared';

/** The Responses API refuses `max_output_tokens` below 16. */
const MIN_OUTPUT_TOKENS = 16;

// ---------------------------------------------------------------------------------------------
// Request

function inputContent(content: ChatMessage['content']): string | Array<Record<string, unknown>> {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  const parts: Array<Record<string, unknown>> = [];
  for (const p of content as Array<ContentPart & Record<string, unknown>>) {
    if (p.type === 'text') parts.push({ type: 'input_text', text: String(p.text ?? '') });
    else if (p.type === 'image_url' && isRecord(p.image_url) && typeof p.image_url.url === 'string') {
      parts.push({ type: 'input_image', image_url: p.image_url.url, detail: typeof p.image_url.detail === 'string' ? p.image_url.detail : 'auto' });
    } else if (p.type === 'file' && isRecord(p.file)) {
      const f = p.file;
      if (typeof f.file_data === 'string')
        parts.push({
          type: 'input_file',
          file_data: f.file_data,
          filename: typeof f.filename === 'string' && f.filename ? f.filename : fileNameFor(parseDataUrl(f.file_data)?.mimeType ?? 'application/pdf'),
        });
      else if (typeof f.file_id === 'string') parts.push({ type: 'input_file', file_id: f.file_id });
    }
    // Audio parts: Responses messages take text, images and files only.
  }
  return parts;
}

/** OpenAI's encrypted reasoning of an assistant turn, back as reasoning items (by item id). */
function reasoningItems(details: ReasoningDetail[] | undefined): Array<Record<string, unknown>> {
  const byId = new Map<string, { summary: string[]; enc?: string }>();
  for (const d of details ?? []) {
    if (d.format !== 'openai-responses-v1' || d.type === 'reasoning.text' || !d.id) continue;
    const e = byId.get(d.id) ?? { summary: [] };
    byId.set(d.id, e);
    if (d.type === 'reasoning.encrypted') e.enc = d.data;
    else if (d.type === 'reasoning.summary') e.summary.push(d.summary);
  }
  const out: Array<Record<string, unknown>> = [];
  // Without its encrypted content an item names stored state, which `store: false` does not have.
  for (const [id, e] of byId) {
    if (e.enc) out.push({ type: 'reasoning', id, summary: e.summary.map((text) => ({ type: 'summary_text', text })), encrypted_content: e.enc });
  }
  return out;
}

function toInput(messages: ChatMessage[]): Array<Record<string, unknown>> {
  const input: Array<Record<string, unknown>> = [];
  for (const m of messages) {
    switch (m.role) {
      case 'system':
      case 'developer':
        input.push({ role: m.role, content: contentText(m.content) });
        break;
      case 'user':
        input.push({ role: 'user', content: inputContent(m.content) });
        break;
      case 'assistant': {
        input.push(...reasoningItems(m.reasoning_details));
        const text = contentText(m.content);
        if (text) input.push({ role: 'assistant', content: text });
        for (const tc of m.tool_calls ?? [])
          input.push({ type: 'function_call', call_id: tc.id, name: tc.function.name, arguments: tc.function.arguments || '{}' });
        break;
      }
      case 'tool':
        input.push({
          type: 'function_call_output',
          call_id: m.tool_call_id ?? '',
          output: m.is_error ? JSON.stringify(toolResultObject(contentText(m.content), true)) : contentText(m.content),
        });
        break;
      default:
        break;
    }
  }
  return input;
}

/** Reasoning effort for a thinking budget when only a budget was given (Claude/Gemini clients). */
function effortForBudget(budget: number): string | undefined {
  if (!(budget > 0)) return undefined;
  return budget <= 4096 ? 'low' : budget <= 16384 ? 'medium' : 'high';
}

/**
 * Canonical request → Responses body. Chat-only fields with no Responses counterpart (`stop`, `n`,
 * `seed`, penalties, `logit_bias`, `top_k`, audio parts) are left out.
 */
export function toResponsesRequest(req: ChatRequest, model: string, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { model, input: toInput(req.messages ?? []), store: false };
  if (stream) body.stream = true;
  const max = req.max_completion_tokens ?? req.max_tokens;
  if (typeof max === 'number' && max > 0) body.max_output_tokens = Math.max(MIN_OUTPUT_TOKENS, Math.floor(max));
  if (typeof req.temperature === 'number') body.temperature = req.temperature;
  if (typeof req.top_p === 'number') body.top_p = req.top_p;
  // Function tools only, as for the other converted targets (a chat client's other tool kinds have no function to declare).
  const functions = req.tools?.filter((t) => t?.function?.name);
  if (functions?.length) {
    body.tools = functions.map((t) => {
      const fn = t.function as ToolDef['function'] & { strict?: boolean };
      return {
        type: 'function',
        name: fn.name,
        ...(fn.description ? { description: fn.description } : {}),
        parameters: fn.parameters ?? { type: 'object', properties: {} },
        // Responses makes function tools strict unless told otherwise; Chat does not.
        strict: fn.strict === true,
      };
    });
  }
  const tc = req.tool_choice;
  if (tc === 'auto' || tc === 'none' || tc === 'required') body.tool_choice = tc;
  else if (isRecord(tc) && tc.type === 'function') body.tool_choice = { type: 'function', name: tc.function.name };
  if (typeof req.parallel_tool_calls === 'boolean') body.parallel_tool_calls = req.parallel_tool_calls;
  const effort = req.reasoning_effort ?? (typeof req.thinking_budget === 'number' ? effortForBudget(req.thinking_budget) : undefined);
  if (effort || req.reasoning_summary) {
    body.reasoning = { ...(effort ? { effort } : {}), ...(req.reasoning_summary ? { summary: req.reasoning_summary } : {}) };
  }
  // Encrypted reasoning is what lets a stateless caller hand it back; only reasoning models accept the include.
  const carriesReasoning = req.messages?.some((m) => m.reasoning_details?.some((d) => d.format === 'openai-responses-v1' && d.type === 'reasoning.encrypted'));
  if (effort || req.reasoning_summary || carriesReasoning) body.include = ['reasoning.encrypted_content'];
  const rf = req.response_format;
  if (rf?.type === 'json_schema' && isRecord(rf.json_schema)) {
    const js = rf.json_schema;
    body.text = {
      format: {
        type: 'json_schema',
        name: typeof js.name === 'string' ? js.name : 'response',
        schema: isRecord(js.schema) ? js.schema : {},
        ...(typeof js.strict === 'boolean' ? { strict: js.strict } : {}),
        ...(typeof js.description === 'string' ? { description: js.description } : {}),
      },
    };
  } else if (rf?.type === 'json_object') body.text = { format: { type: 'json_object' } };
  if (typeof req.verbosity === 'string') body.text = { ...((body.text as object) ?? {}), verbosity: req.verbosity };
  if (typeof req.user === 'string') body.user = req.user;
  for (const k of ['service_tier', 'prompt_cache_key', 'safety_identifier'] as const) if (typeof req[k] === 'string') body[k] = req[k];
  return body;
}

// ---------------------------------------------------------------------------------------------
// Response

function finishOf(status: unknown, incomplete: unknown, calledTools: boolean): FinishReason {
  if (status === 'incomplete') return isRecord(incomplete) && incomplete.reason === 'content_filter' ? 'content_filter' : 'length';
  return calledTools ? 'tool_calls' : 'stop';
}

function reasoningText(item: Record<string, unknown>): { text: string; summaries: string[] } {
  const texts = (v: unknown) => (Array.isArray(v) ? v.map((s) => (isRecord(s) && typeof s.text === 'string' ? s.text : '')).filter(Boolean) : []);
  const summaries = texts(item.summary);
  return { text: (summaries.length ? summaries : texts(item.content)).join('\n\n'), summaries };
}

/** A reasoning item's data for the next turn: its summaries and encrypted content, by item id. */
function reasoningDetailsOf(item: Record<string, unknown>, summaries: string[]): ReasoningDetail[] {
  const id = typeof item.id === 'string' ? item.id : undefined;
  const enc = typeof item.encrypted_content === 'string' ? item.encrypted_content : undefined;
  if (!enc) return [];
  const base = { ...(id ? { id } : {}), format: 'openai-responses-v1' as const };
  return [...summaries.map((summary) => ({ type: 'reasoning.summary' as const, summary, ...base })), { type: 'reasoning.encrypted', data: enc, ...base }];
}

function failure(r: Record<string, unknown>, body: string): UpstreamError {
  const e = isRecord(r.error) ? r.error : {};
  const code = typeof e.code === 'string' ? e.code : 'response_failed';
  const status = code === 'rate_limit_exceeded' ? 429 : code === 'server_error' ? 500 : 502;
  return new UpstreamError(status, typeof e.message === 'string' && e.message ? e.message : 'upstream response failed', body, code);
}

/** Response object → canonical response. */
export function fromResponsesBody(body: unknown, fallbackModel: string): ChatResponse {
  const r = isRecord(body) ? body : {};
  if (r.status === 'failed') throw failure(r, JSON.stringify(body).slice(0, 1000));
  let content = '';
  let refusal = '';
  let reasoning = '';
  const details: ReasoningDetail[] = [];
  const calls: ToolCall[] = [];
  for (const item of Array.isArray(r.output) ? r.output : []) {
    if (!isRecord(item)) continue;
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const p of item.content) {
        if (!isRecord(p)) continue;
        if (p.type === 'output_text' && typeof p.text === 'string') content += p.text;
        else if (p.type === 'refusal' && typeof p.refusal === 'string') refusal += p.refusal;
      }
    } else if (item.type === 'function_call') {
      calls.push({
        id: String(item.call_id ?? item.id ?? ''),
        type: 'function',
        function: { name: String(item.name ?? ''), arguments: String(item.arguments ?? '') },
      });
    } else if (item.type === 'reasoning') {
      const { text, summaries } = reasoningText(item);
      if (text) reasoning = reasoning ? `${reasoning}\n\n${text}` : text;
      details.push(...reasoningDetailsOf(item, summaries));
    }
  }
  // a refusal is Chat's `refusal` (content null when it is all there is), as an OpenAI Chat upstream says it
  const message: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: content || (calls.length || refusal ? null : '') };
  if (refusal) message.refusal = refusal;
  if (calls.length) message.tool_calls = calls;
  if (reasoning) message.reasoning_content = reasoning;
  if (details.length) message.reasoning_details = details;
  const out: ChatResponse = {
    id: typeof r.id === 'string' ? r.id : '',
    object: 'chat.completion',
    created: typeof r.created_at === 'number' ? r.created_at : Math.floor(Date.now() / 1000),
    model: typeof r.model === 'string' ? r.model : fallbackModel,
    choices: [{ index: 0, message, finish_reason: finishOf(r.status, r.incomplete_details, calls.length > 0) }],
  };
  const usage = responsesUsageToChat(r.usage);
  if (usage) out.usage = usage;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Stream

interface ToolState {
  index: number;
  /** Arguments already sent as deltas. */
  sent: boolean;
}

/** Responses events → canonical chunks. */
export class ResponsesStreamTranslator implements StreamTranslator {
  private id = '';
  private created = Math.floor(Date.now() / 1000);
  private u: Usage | undefined;
  private roleSent = false;
  private readonly tools = new Map<number, ToolState>();
  /** Summary parts seen per reasoning item (a new part starts with a blank line). */
  private readonly summaryParts = new Map<string, number>();

  constructor(private model: string) {}

  private chunk(delta: ChatChunk['choices'][number]['delta'], finish: FinishReason = null): ChatChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, finish_reason: finish }] };
  }

  private role(out: ChatChunk[]): void {
    if (this.roleSent) return;
    this.roleSent = true;
    out.push(this.chunk({ role: 'assistant', content: '' }));
  }

  push(ev: SSEEvent): ChatChunk[] {
    if (ev.data === '[DONE]') return [];
    let e: Record<string, unknown>;
    try {
      const v: unknown = JSON.parse(ev.data);
      if (!isRecord(v)) return [];
      e = v;
    } catch {
      return [];
    }
    const type = typeof e.type === 'string' ? e.type : (ev.event ?? '');
    const out: ChatChunk[] = [];
    const resp = isRecord(e.response) ? e.response : undefined;
    if (resp) {
      if (typeof resp.id === 'string') this.id = resp.id;
      if (typeof resp.created_at === 'number') this.created = resp.created_at;
      if (typeof resp.model === 'string' && resp.model) this.model = resp.model;
    }
    switch (type) {
      case 'response.created':
      case 'response.in_progress':
        this.role(out);
        break;
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (typeof e.delta === 'string' && e.delta) {
          this.role(out);
          out.push(this.chunk(type === 'response.refusal.delta' ? { refusal: e.delta } : { content: e.delta }));
        }
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta': {
        if (typeof e.delta !== 'string' || !e.delta) break;
        this.role(out);
        let delta = e.delta;
        if (type === 'response.reasoning_summary_text.delta') {
          const key = `${String(e.item_id ?? '')}:${String(e.summary_index ?? 0)}`;
          if (!this.summaryParts.has(key)) {
            if (this.summaryParts.size) delta = `\n\n${delta}`;
            this.summaryParts.set(key, 1);
          }
        }
        out.push(this.chunk({ reasoning_content: delta }));
        break;
      }
      case 'response.output_item.added': {
        const item = isRecord(e.item) ? e.item : undefined;
        if (item?.type === 'function_call') {
          this.role(out);
          out.push(...this.toolStart(Number(e.output_index), item));
        }
        break;
      }
      case 'response.function_call_arguments.delta': {
        const t = this.tools.get(Number(e.output_index));
        if (t && typeof e.delta === 'string' && e.delta) {
          t.sent = true;
          out.push(this.chunk({ tool_calls: [{ index: t.index, function: { arguments: e.delta } }] }));
        }
        break;
      }
      case 'response.output_item.done': {
        const item = isRecord(e.item) ? e.item : undefined;
        if (item?.type === 'function_call') {
          const at = Number(e.output_index);
          if (!this.tools.has(at)) {
            this.role(out);
            out.push(...this.toolStart(at, item));
          }
          const t = this.tools.get(at)!;
          // Arguments that came only whole (no deltas): sent now.
          if (!t.sent && typeof item.arguments === 'string' && item.arguments) {
            t.sent = true;
            out.push(this.chunk({ tool_calls: [{ index: t.index, function: { arguments: item.arguments } }] }));
          }
        } else if (item?.type === 'reasoning') {
          const details = reasoningDetailsOf(item, reasoningText(item).summaries);
          if (details.length) out.push(this.chunk({ reasoning_details: details }));
        }
        break;
      }
      case 'response.completed':
      case 'response.incomplete': {
        if (resp) this.u = responsesUsageToChat(resp.usage) ?? this.u;
        this.role(out);
        out.push(
          this.chunk(
            {},
            finishOf(resp?.status ?? (type === 'response.incomplete' ? 'incomplete' : 'completed'), resp?.incomplete_details, this.tools.size > 0),
          ),
        );
        if (this.u) out.push({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: this.u });
        break;
      }
      case 'response.failed':
        throw failure(resp ?? {}, ev.data);
      case 'error':
        throw failure({ error: e }, ev.data);
      default:
        break;
    }
    return out;
  }

  private toolStart(outputIndex: number, item: Record<string, unknown>): ChatChunk[] {
    const t: ToolState = { index: this.tools.size, sent: false };
    this.tools.set(outputIndex, t);
    const args = typeof item.arguments === 'string' ? item.arguments : '';
    if (args) t.sent = true;
    return [
      this.chunk({
        tool_calls: [
          { index: t.index, id: String(item.call_id ?? item.id ?? ''), type: 'function', function: { name: String(item.name ?? ''), arguments: args } },
        ],
      }),
    ];
  }

  end(): ChatChunk[] {
    return [];
  }

  usage(): Usage | undefined {
    return this.u;
  }
}

// ---------------------------------------------------------------------------------------------
// The adaptors

/** Reasoning the gateway packed for a client never reaches a real Responses upstream (it could not decrypt it). */
function withoutPackedReasoning(body: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(body.input)) return body;
  const input = body.input.filter(
    (it) => !(isRecord(it) && it.type === 'reasoning' && typeof it.encrypted_content === 'string' && unpackReasoning(it.encrypted_content) !== undefined),
  );
  return input.length === body.input.length ? body : { ...body, input };
}

/** A Responses-API adaptor for one URL shape (OpenAI's here; Azure's in channels/providers/azure.ts). */
export function makeResponsesAdaptor(
  name: string,
  url: (ctx: AdaptorContext) => string,
  headers: (ctx: AdaptorContext) => Record<string, string>,
  upstreamModel: (ctx: AdaptorContext) => string,
): ProviderAdaptor {
  return {
    name,
    // Chosen per channel (its setting, or a Responses client on a channel that speaks Responses), never by type alone.
    channelTypes: [],
    format: 'responses',
    endpoints: ['responses'],
    chatRequest(req, ctx): UpstreamRequest {
      return { url: url(ctx), method: 'POST', headers: headers(ctx), body: JSON.stringify(toResponsesRequest(req, upstreamModel(ctx), ctx.stream)) };
    },
    chatResponse(body, ctx) {
      return fromResponsesBody(body, ctx.upstreamModel);
    },
    chatStream(ctx) {
      return new ResponsesStreamTranslator(ctx.upstreamModel);
    },
    errorMessage: openaiErrorMessage,
    rawRequest(body, ctx, raw) {
      const model = upstreamModel(ctx);
      const b = body ?? {};
      // The client's bytes go as they are unless something in them must change.
      if (raw && b.model === model && !raw.body.includes(PACKED_REASONING_PREFIX))
        return { url: url(ctx), method: 'POST', headers: withOpenAIBeta(headers(ctx), ctx), body: raw.body };
      const out = withoutPackedReasoning(b.model === model || !('model' in b) ? b : { ...b, model });
      return { url: url(ctx), method: 'POST', headers: withOpenAIBeta(headers(ctx), ctx), body: JSON.stringify(out) };
    },
    usageFromBody(body) {
      return isRecord(body) ? (responsesUsageToChat(body.usage) ?? normaliseUsage(body.usage)) : undefined;
    },
    observer() {
      return new OpenAIObserver();
    },
    modelsRequest: openaiAdaptor.modelsRequest,
    parseModels: openaiAdaptor.parseModels,
  };
}

/** OpenAI and OpenAI-compatible upstreams: `{base}{prefix}/responses`, Bearer key. */
export const responsesAdaptor = makeResponsesAdaptor(
  'responses',
  (ctx) => openaiUrl(ctx.channel, 'responses', ctx.upstreamModel),
  (ctx) => openaiHeaders(ctx.channel),
  (ctx) => ctx.upstreamModel,
);
