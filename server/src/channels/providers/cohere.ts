/**
 * Cohere (channel type 34), API v2, Bearer key.
 *
 * - chat: canonical → `POST {base}/v2/chat` (messages keep OpenAI roles; system/developer → system,
 *   tool results → `tool` messages, assistant tool calls as OpenAI-style `tool_calls`); `top_p` → `p`,
 *   `top_k` → `k`, `stop` → `stop_sequences`. Stream events: `message-start`, `content-delta`,
 *   `tool-plan-delta` (sent as reasoning), `tool-call-start|delta`, `message-end` with
 *   `finish_reason` and usage. Usage: `billed_units` (what Cohere bills), else `tokens`.
 * - rerank: the Jina/Cohere body `{model, query, documents, top_n, return_documents}` →
 *   `POST {base}/v2/rerank` (documents as strings); the answer → `{model, results:[{index,
 *   relevance_score, document?}], usage:{prompt_tokens, total_tokens}}`. Usage from
 *   `meta.billed_units.input_tokens` / `meta.tokens.input_tokens`; absent (search units only) → the
 *   relay's tokenizer count of query + documents.
 * - embeddings: `{model, input, dimensions}` → `POST {base}/v2/embed` (`texts`, `input_type`
 *   search_document unless the client sends one, `embedding_types: ['float']`); the answer → the
 *   OpenAI list, usage from `meta.billed_units.input_tokens`.
 * - models: `GET {base}/v1/models` (`{models:[{name}]}`).
 */
import type {
  ChatChunk,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  FinishReason,
  ProviderAdaptor,
  SSEEvent,
  StreamTranslator,
  ToolCall,
  Usage,
} from '../../relay/types';
import { baseUrlOf } from '../../protocols/openai/adaptor';
import { contentText, isRecord, newId, streamError, upstreamErrorMessage } from '../../protocols/shared';
import { typesServedBy } from '../catalogue';

function headers(key: string, stream = false): Record<string, string> {
  return { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' };
}

function cohereContent(content: ChatMessage['content']): string | Array<Record<string, unknown>> {
  if (typeof content === 'string' || content == null) return content ?? '';
  const parts: Array<Record<string, unknown>> = [];
  for (const p of content) {
    if (p.type === 'text' && typeof (p as { text?: unknown }).text === 'string') parts.push({ type: 'text', text: (p as { text: string }).text });
    else if (p.type === 'image_url' && isRecord((p as { image_url?: unknown }).image_url))
      parts.push({ type: 'image_url', image_url: { url: String((p as { image_url: { url?: unknown } }).image_url.url ?? '') } });
  }
  return parts.length === 1 && parts[0]!.type === 'text' ? String(parts[0]!.text) : parts;
}

/** Canonical request → Cohere v2 chat body (pure; exported for tests). */
export function toCohereRequest(req: ChatRequest, model: string, stream: boolean): Record<string, unknown> {
  const messages: Array<Record<string, unknown>> = [];
  for (const m of req.messages ?? []) {
    if (m.role === 'system' || m.role === 'developer') messages.push({ role: 'system', content: contentText(m.content) });
    else if (m.role === 'tool') messages.push({ role: 'tool', tool_call_id: m.tool_call_id ?? '', content: contentText(m.content) });
    else if (m.role === 'assistant') {
      const out: Record<string, unknown> = { role: 'assistant' };
      const text = contentText(m.content);
      if (m.tool_calls?.length) {
        out.tool_calls = m.tool_calls.map((t) => ({
          id: t.id,
          type: 'function',
          function: { name: t.function.name, arguments: t.function.arguments || '{}' },
        }));
        if (text) out.tool_plan = text;
      } else out.content = text;
      messages.push(out);
    } else messages.push({ role: 'user', content: cohereContent(m.content) });
  }
  const body: Record<string, unknown> = { model, messages, stream };
  const max = req.max_tokens ?? req.max_completion_tokens;
  if (max != null) body.max_tokens = max;
  if (req.temperature != null) body.temperature = req.temperature;
  if (req.top_p != null) body.p = req.top_p;
  if (req.top_k != null) body.k = req.top_k;
  if (req.stop != null) body.stop_sequences = Array.isArray(req.stop) ? req.stop : [req.stop];
  for (const k of ['seed', 'frequency_penalty', 'presence_penalty'] as const) if (typeof req[k] === 'number') body[k] = req[k];
  if (req.tools?.length)
    body.tools = req.tools.map((t) => ({
      type: 'function',
      function: {
        name: t.function.name,
        ...(t.function.description ? { description: t.function.description } : {}),
        parameters: t.function.parameters ?? { type: 'object', properties: {} },
      },
    }));
  if (req.tool_choice === 'required') body.tool_choice = 'REQUIRED';
  else if (req.tool_choice === 'none') body.tool_choice = 'NONE';
  const rf = req.response_format;
  if (rf && rf.type === 'json_object') body.response_format = { type: 'json_object' };
  else if (rf && rf.type === 'json_schema' && isRecord(rf.json_schema)) body.response_format = { type: 'json_object', json_schema: rf.json_schema.schema };
  return body;
}

export function cohereUsage(u: unknown): Usage | undefined {
  if (!isRecord(u)) return undefined;
  const pick = (o: unknown) => (isRecord(o) && (typeof o.input_tokens === 'number' || typeof o.output_tokens === 'number') ? o : undefined);
  const src = pick(u.billed_units) ?? pick(u.tokens);
  if (!src) return undefined;
  const prompt = Number(src.input_tokens ?? 0) || 0;
  const completion = Number(src.output_tokens ?? 0) || 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

export function cohereFinish(reason: unknown): FinishReason {
  switch (reason) {
    case 'COMPLETE':
    case 'STOP_SEQUENCE':
      return 'stop';
    case 'MAX_TOKENS':
      return 'length';
    case 'TOOL_CALL':
      return 'tool_calls';
    case 'ERROR':
    case 'ERROR_TOXIC':
      return 'content_filter';
    default:
      return reason ? 'stop' : null;
  }
}

function toolCallsOf(v: unknown): ToolCall[] {
  if (!Array.isArray(v)) return [];
  return v.filter(isRecord).map((t) => {
    const f = isRecord(t.function) ? t.function : {};
    return {
      id: String(t.id ?? newId('call_')),
      type: 'function' as const,
      function: { name: String(f.name ?? ''), arguments: typeof f.arguments === 'string' ? f.arguments : JSON.stringify(f.arguments ?? {}) },
    };
  });
}

export function fromCohereResponse(body: unknown, model: string): ChatResponse {
  const b = isRecord(body) ? body : {};
  const msg = isRecord(b.message) ? b.message : {};
  let text = '';
  if (typeof msg.content === 'string') text = msg.content;
  else if (Array.isArray(msg.content)) for (const c of msg.content) if (isRecord(c) && typeof c.text === 'string') text += c.text;
  const tools = toolCallsOf(msg.tool_calls);
  const message: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: text || (tools.length ? null : '') };
  if (tools.length) message.tool_calls = tools;
  if (typeof msg.tool_plan === 'string' && msg.tool_plan) message.reasoning_content = msg.tool_plan;
  const res: ChatResponse = {
    id: typeof b.id === 'string' ? b.id : newId('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: tools.length ? 'tool_calls' : cohereFinish(b.finish_reason) }],
  };
  const u = cohereUsage(b.usage);
  if (u) res.usage = u;
  return res;
}

/** Cohere v2 stream events → canonical chunks (usage chunk on message-end). */
export class CohereStreamTranslator implements StreamTranslator {
  private id = newId('chatcmpl-');
  private readonly created = Math.floor(Date.now() / 1000);
  private u: Usage | undefined;
  private started = false;
  private pending: Error | undefined;
  private readonly toolIndex = new Map<number, number>();

  constructor(private readonly model: string) {}

  private chunk(delta: ChatChunk['choices'][number]['delta'], finish: FinishReason = null): ChatChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, finish_reason: finish }] };
  }

  push(ev: SSEEvent): ChatChunk[] {
    if (this.pending) throw this.pending;
    let d: Record<string, unknown>;
    try {
      const p = JSON.parse(ev.data);
      if (!isRecord(p)) return [];
      d = p;
    } catch {
      return [];
    }
    const type = typeof d.type === 'string' ? d.type : ev.event;
    const delta = isRecord(d.delta) ? d.delta : {};
    const msg = isRecord(delta.message) ? delta.message : {};
    const out: ChatChunk[] = [];
    if (!this.started && type !== 'message-end') {
      this.started = true;
      if (typeof d.id === 'string') this.id = d.id;
      out.push(this.chunk({ role: 'assistant', content: '' }));
    }
    switch (type) {
      case 'content-start':
      case 'content-delta': {
        const c = isRecord(msg.content) ? msg.content : {};
        if (typeof c.text === 'string' && c.text) out.push(this.chunk({ content: c.text }));
        break;
      }
      case 'tool-plan-delta':
        if (typeof msg.tool_plan === 'string' && msg.tool_plan) out.push(this.chunk({ reasoning_content: msg.tool_plan }));
        break;
      case 'tool-call-start':
      case 'tool-call-delta': {
        const t = isRecord(msg.tool_calls) ? msg.tool_calls : {};
        const f = isRecord(t.function) ? t.function : {};
        const idx = Number(d.index ?? 0);
        if (type === 'tool-call-start') {
          const ti = this.toolIndex.size;
          this.toolIndex.set(idx, ti);
          out.push(
            this.chunk({
              tool_calls: [
                {
                  index: ti,
                  id: String(t.id ?? newId('call_')),
                  type: 'function',
                  function: { name: String(f.name ?? ''), arguments: typeof f.arguments === 'string' ? f.arguments : '' },
                },
              ],
            }),
          );
        } else if (typeof f.arguments === 'string' && f.arguments) {
          out.push(this.chunk({ tool_calls: [{ index: this.toolIndex.get(idx) ?? 0, function: { arguments: f.arguments } }] }));
        }
        break;
      }
      case 'message-end': {
        const u = cohereUsage(delta.usage);
        if (u) this.u = u;
        const finish = this.toolIndex.size ? 'tool_calls' : cohereFinish(delta.finish_reason ?? 'COMPLETE');
        out.push(this.chunk({}, finish));
        if (u) out.push({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: u });
        if (delta.finish_reason === 'ERROR')
          this.pending = streamError(typeof delta.error === 'string' ? delta.error : 'upstream stream error', 'api_error', ev.data);
        break;
      }
      default:
        break;
    }
    return out;
  }
  end(): ChatChunk[] {
    if (this.pending) throw this.pending;
    return [];
  }
  usage(): Usage | undefined {
    return this.u;
  }
}

/** Jina/Cohere-style rerank body → Cohere v2 rerank body (pure; exported for tests). */
export function toCohereRerank(body: Record<string, unknown>): Record<string, unknown> {
  const docs = Array.isArray(body.documents) ? body.documents : [];
  const out: Record<string, unknown> = {
    model: body.model,
    query: String(body.query ?? ''),
    documents: docs.map((d) => (typeof d === 'string' ? d : isRecord(d) && typeof d.text === 'string' ? d.text : JSON.stringify(d))),
  };
  if (typeof body.top_n === 'number') out.top_n = body.top_n;
  if (typeof body.max_tokens_per_doc === 'number') out.max_tokens_per_doc = body.max_tokens_per_doc;
  return out;
}

/** Cohere rerank answer → Jina-style answer + usage. */
export function fromCohereRerank(res: unknown, request: Record<string, unknown>): { body: Record<string, unknown>; usage?: Usage } {
  const r = isRecord(res) ? res : {};
  const docs = toCohereRerank(request).documents as string[];
  const withDocs = request.return_documents === true;
  const results = (Array.isArray(r.results) ? r.results : []).filter(isRecord).map((x) => {
    const index = Number(x.index ?? 0);
    const item: Record<string, unknown> = { index, relevance_score: Number(x.relevance_score ?? 0) };
    if (withDocs && docs[index] !== undefined) item.document = { text: docs[index] };
    return item;
  });
  const meta = isRecord(r.meta) ? r.meta : {};
  const src = [meta.billed_units, meta.tokens].find((o) => isRecord(o) && typeof o.input_tokens === 'number') as { input_tokens: number } | undefined;
  const usage: Usage | undefined = src ? { prompt_tokens: src.input_tokens, completion_tokens: 0, total_tokens: src.input_tokens } : undefined;
  const body: Record<string, unknown> = { ...(typeof r.id === 'string' ? { id: r.id } : {}), model: request.model, results };
  if (usage) body.usage = { prompt_tokens: usage.prompt_tokens, total_tokens: usage.total_tokens };
  return { body, usage };
}

/** OpenAI embeddings body → Cohere v2 embed body (pure; exported for tests). */
export function toCohereEmbed(body: Record<string, unknown>): Record<string, unknown> {
  const input = body.input;
  const texts = (Array.isArray(input) ? input : [input]).map((t) => (typeof t === 'string' ? t : JSON.stringify(t)));
  const out: Record<string, unknown> = {
    model: body.model,
    texts,
    input_type: typeof body.input_type === 'string' ? body.input_type : 'search_document',
    embedding_types: ['float'],
  };
  if (typeof body.dimensions === 'number') out.output_dimension = body.dimensions;
  return out;
}

/** Float vector → OpenAI's base64 form (little-endian float32). */
function base64Vector(v: unknown): string {
  const nums = Array.isArray(v) ? v.map(Number) : [];
  return Buffer.from(new Float32Array(nums).buffer).toString('base64');
}

/**
 * Cohere embed answer → OpenAI embeddings list + usage (billed_units.input_tokens). With
 * `encoding_format: 'base64'` (the openai SDK's default) the vectors are sent base64-encoded.
 */
export function fromCohereEmbed(res: unknown, model: unknown, encodingFormat?: unknown): { body: Record<string, unknown>; usage?: Usage } {
  const r = isRecord(res) ? res : {};
  const e = r.embeddings;
  const vectors: unknown[] = Array.isArray(e) ? e : isRecord(e) && Array.isArray(e.float) ? e.float : [];
  const meta = isRecord(r.meta) ? r.meta : {};
  const src = [meta.billed_units, meta.tokens].find((o) => isRecord(o) && typeof o.input_tokens === 'number') as { input_tokens: number } | undefined;
  const usage: Usage | undefined = src ? { prompt_tokens: src.input_tokens, completion_tokens: 0, total_tokens: src.input_tokens } : undefined;
  const body: Record<string, unknown> = {
    object: 'list',
    model,
    data: vectors.map((v, index) => ({ object: 'embedding', index, embedding: encodingFormat === 'base64' ? base64Vector(v) : v })),
  };
  body.usage = { prompt_tokens: usage?.prompt_tokens ?? 0, total_tokens: usage?.total_tokens ?? 0 };
  return { body, usage };
}

export const cohereAdaptor: ProviderAdaptor = {
  name: 'cohere',
  channelTypes: typesServedBy('cohere'),
  format: 'openai',
  convertedEndpoints: ['rerank', 'embeddings'],
  chatRequest(req, ctx) {
    return {
      url: `${baseUrlOf(ctx.channel)}/v2/chat`,
      method: 'POST',
      headers: headers(ctx.channel.key, ctx.stream),
      body: JSON.stringify(toCohereRequest(req, ctx.upstreamModel, ctx.stream)),
    };
  },
  chatResponse(body, ctx) {
    return fromCohereResponse(body, ctx.upstreamModel);
  },
  chatStream(ctx) {
    return new CohereStreamTranslator(ctx.upstreamModel);
  },
  endpointRequest(body, ctx) {
    if (ctx.endpoint === 'embeddings') {
      return { url: `${baseUrlOf(ctx.channel)}/v2/embed`, method: 'POST', headers: headers(ctx.channel.key), body: JSON.stringify(toCohereEmbed(body)) };
    }
    return { url: `${baseUrlOf(ctx.channel)}/v2/rerank`, method: 'POST', headers: headers(ctx.channel.key), body: JSON.stringify(toCohereRerank(body)) };
  },
  endpointResponse(body, ctx, request) {
    if (ctx.endpoint === 'embeddings') return fromCohereEmbed(body, ctx.requestedModel, request.encoding_format);
    return fromCohereRerank(body, { ...request, model: ctx.requestedModel });
  },
  errorMessage: upstreamErrorMessage,
  modelsRequest(channel) {
    return { url: `${baseUrlOf(channel)}/v1/models?page_size=1000`, method: 'GET', headers: { authorization: `Bearer ${channel.key}` } };
  },
  parseModels(body) {
    const models = isRecord(body) && Array.isArray(body.models) ? body.models : [];
    return models.map((m) => (isRecord(m) ? String(m.name ?? '') : '')).filter(Boolean);
  },
};
