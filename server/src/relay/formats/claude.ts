/**
 * Claude Messages API as a client-facing format (`POST /v1/messages`).
 *
 * Claude request → canonical request, canonical response → Claude message, canonical chunks →
 * the Claude SSE event sequence (message_start, content_block_start/delta/stop, message_delta,
 * message_stop) that the official `@anthropic-ai/sdk` stream parser accepts. Usage is the inverse
 * of the Claude adaptor's: `input_tokens = prompt_tokens − cached − cache_creation`, so a Claude →
 * Claude round trip returns the upstream figures unchanged.
 */
import { RelayError } from '../errors';
import type {
  ChatChunk,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ContentPart,
  FinishReason,
  InboundFormat,
  InboundRoute,
  ToolCall,
  ToolDef,
  Usage,
} from '../types';
import { isRecord, newId, setHints } from '../adaptors/shared';

const badRequest = (message: string) => new RelayError(400, message, 'invalid_request');

// ---------------------------------------------------------------------------------------------
// Request

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function blockList(content: unknown, what: string): Array<Record<string, unknown>> {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw badRequest(`${what}: content must be a string or an array of content blocks`);
  return content.map((b, i) => {
    if (!isRecord(b) || typeof b.type !== 'string') throw badRequest(`${what}.content.${i}: invalid content block`);
    return b;
  });
}

function sourceToUrl(src: unknown): string | undefined {
  if (!isRecord(src)) return undefined;
  if (src.type === 'base64' && typeof src.data === 'string') return `data:${str(src.media_type) ?? 'image/png'};base64,${src.data}`;
  if (src.type === 'url' && typeof src.url === 'string') return src.url;
  return undefined;
}

function toolResultText(content: unknown): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .filter(isRecord)
      .map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : ''))
      .join('');
  }
  return JSON.stringify(content);
}

/** Claude Messages request body → canonical request. Throws BadRequestError on malformed input. */
export function claudeToChat(body: unknown): ChatRequest {
  if (!isRecord(body)) throw badRequest('request body must be a JSON object');
  const model = body.model;
  if (typeof model !== 'string' || !model.trim()) throw badRequest('model: field required');
  if (!Array.isArray(body.messages)) throw badRequest('messages: field required');
  if (body.max_tokens != null && (typeof body.max_tokens !== 'number' || !Number.isFinite(body.max_tokens) || body.max_tokens < 1)) {
    throw badRequest('max_tokens: must be a positive integer');
  }
  const messages: ChatMessage[] = [];
  if (body.system != null) {
    const text =
      typeof body.system === 'string'
        ? body.system
        : blockList(body.system, 'system')
            .map((b) => str(b.text) ?? '')
            .filter(Boolean)
            .join('\n');
    if (text) messages.push({ role: 'system', content: text });
  }
  body.messages.forEach((raw, i) => {
    if (!isRecord(raw)) throw badRequest(`messages.${i}: must be an object`);
    const role = raw.role;
    if (role !== 'user' && role !== 'assistant') throw badRequest(`messages.${i}.role: must be "user" or "assistant"`);
    const blocks = blockList(raw.content, `messages.${i}`);
    if (role === 'assistant') {
      let text = '';
      let reasoning = '';
      const toolCalls: ToolCall[] = [];
      for (const b of blocks) {
        if (b.type === 'text') text += str(b.text) ?? '';
        else if (b.type === 'thinking') reasoning += str(b.thinking) ?? '';
        else if (b.type === 'tool_use' || b.type === 'server_tool_use') {
          toolCalls.push({
            id: str(b.id) ?? newId('toolu_'),
            type: 'function',
            function: { name: str(b.name) ?? '', arguments: JSON.stringify(b.input ?? {}) },
          });
        }
      }
      const msg: ChatMessage = { role: 'assistant', content: text || (toolCalls.length ? null : '') };
      if (toolCalls.length) msg.tool_calls = toolCalls;
      if (reasoning) msg.reasoning_content = reasoning;
      messages.push(msg);
      return;
    }
    // user: tool results become tool messages (first), the rest one user message
    const parts: ContentPart[] = [];
    for (const b of blocks) {
      if (b.type === 'tool_result') {
        const text = toolResultText(b.content);
        messages.push({ role: 'tool', tool_call_id: str(b.tool_use_id) ?? '', content: b.is_error === true && !text ? 'error' : text });
        // OpenAI tool messages carry text only: images of a tool result follow in the user message
        if (Array.isArray(b.content)) {
          for (const img of b.content) {
            const url = isRecord(img) && img.type === 'image' ? sourceToUrl(img.source) : undefined;
            if (url) parts.push({ type: 'image_url', image_url: { url } });
          }
        }
      } else if (b.type === 'text') {
        parts.push({ type: 'text', text: str(b.text) ?? '' });
      } else if (b.type === 'image') {
        const url = sourceToUrl(b.source);
        if (!url) throw badRequest(`messages.${i}: image source must be base64 or url`);
        parts.push({ type: 'image_url', image_url: { url } });
      } else if (b.type === 'document') {
        const url = sourceToUrl(b.source);
        if (url?.startsWith('data:')) parts.push({ type: 'file', file: { file_data: url } });
        else if (isRecord(b.source) && b.source.type === 'text' && typeof b.source.data === 'string') parts.push({ type: 'text', text: b.source.data });
        else if (url) parts.push({ type: 'text', text: `[document: ${url}]` }); // no URL documents in the OpenAI format
      }
    }
    if (parts.length) {
      const onlyText = parts.every((p) => p.type === 'text');
      messages.push({ role: 'user', content: onlyText ? parts.map((p) => (p as { text: string }).text).join('') : parts });
    }
  });

  const req: ChatRequest = { model, messages };
  if (typeof body.max_tokens === 'number') req.max_tokens = Math.floor(body.max_tokens);
  if (typeof body.temperature === 'number') req.temperature = body.temperature;
  if (typeof body.top_p === 'number') req.top_p = body.top_p;
  if (typeof body.top_k === 'number') req.top_k = body.top_k;
  if (body.stream === true) req.stream = true;
  if (Array.isArray(body.stop_sequences)) {
    const stops = body.stop_sequences.filter((s): s is string => typeof s === 'string');
    if (stops.length) req.stop = stops;
  }
  // metadata.user_id is not mapped to `user`: Claude Code sends long ids some upstreams reject
  if (Array.isArray(body.tools)) {
    const tools: ToolDef[] = [];
    for (const t of body.tools) {
      if (!isRecord(t) || typeof t.name !== 'string') continue;
      if (t.type && t.type !== 'custom' && !t.input_schema) continue; // server tools (web_search, bash…) have no OpenAI equivalent
      tools.push({
        type: 'function',
        function: {
          name: t.name,
          ...(typeof t.description === 'string' ? { description: t.description } : {}),
          parameters: isRecord(t.input_schema) ? t.input_schema : { type: 'object', properties: {} },
        },
      });
    }
    if (tools.length) req.tools = tools;
  }
  if (isRecord(body.tool_choice)) {
    const tc = body.tool_choice;
    if (tc.type === 'auto') req.tool_choice = 'auto';
    else if (tc.type === 'any') req.tool_choice = 'required';
    else if (tc.type === 'none') req.tool_choice = 'none';
    else if (tc.type === 'tool' && typeof tc.name === 'string') req.tool_choice = { type: 'function', function: { name: tc.name } };
    if (tc.disable_parallel_tool_use === true) req.parallel_tool_calls = false;
  }
  if (isRecord(body.thinking) && typeof body.thinking.type === 'string') {
    // Kept as a native hint only: OpenAI-compatible upstreams reject reasoning_effort on most models.
    const budget = typeof body.thinking.budget_tokens === 'number' ? body.thinking.budget_tokens : undefined;
    setHints(req, { claudeThinking: { type: body.thinking.type, ...(budget !== undefined ? { budget_tokens: budget } : {}) } });
  }
  return req;
}

// ---------------------------------------------------------------------------------------------
// Response

export function finishToClaudeStop(reason: FinishReason | undefined): string | null {
  switch (reason) {
    case 'stop':
      return 'end_turn';
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return reason == null ? null : 'end_turn';
  }
}

export function canonicalToClaudeUsage(u: Usage | undefined): {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
} {
  const cached = u?.prompt_tokens_details?.cached_tokens ?? 0;
  const creation = u?.prompt_tokens_details?.cache_creation_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (u?.prompt_tokens ?? 0) - cached - creation),
    output_tokens: u?.completion_tokens ?? 0,
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: creation,
  };
}

function parseInput(args: string): unknown {
  if (!args) return {};
  try {
    return JSON.parse(args);
  } catch {
    return {};
  }
}

function messageId(id: string | undefined): string {
  if (id && id.startsWith('msg_')) return id;
  return id ? `msg_${id.replace(/^chatcmpl-/, '')}` : newId('msg_');
}

/** Canonical response → Claude message. */
export function chatToClaude(res: ChatResponse, model: string): Record<string, unknown> {
  const choice = res.choices?.[0];
  const msg = choice?.message;
  const content: Array<Record<string, unknown>> = [];
  if (msg?.reasoning_content) content.push({ type: 'thinking', thinking: msg.reasoning_content, signature: '' });
  if (typeof msg?.content === 'string' && msg.content) content.push({ type: 'text', text: msg.content });
  for (const tc of msg?.tool_calls ?? []) {
    content.push({ type: 'tool_use', id: tc.id || newId('toolu_'), name: tc.function.name, input: parseInput(tc.function.arguments) });
  }
  let stop = finishToClaudeStop(choice?.finish_reason ?? 'stop');
  if (msg?.tool_calls?.length && stop === 'end_turn') stop = 'tool_use';
  return {
    id: messageId(res.id),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: canonicalToClaudeUsage(res.usage),
  };
}

// ---------------------------------------------------------------------------------------------
// Stream

function sse(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

type BlockKind = 'text' | 'thinking' | 'tool_use';

/** Canonical chunks → Claude SSE events. One instance per response. */
export class ClaudeStreamWriter {
  private started = false;
  private id = newId('msg_');
  private blockIndex = -1;
  private open: { kind: BlockKind; tool?: number } | undefined;
  private stop: string | null = null;
  private usage: Usage | undefined;
  private finished = false;

  constructor(private readonly model: string) {}

  private start(id?: string): string {
    if (this.started) return '';
    this.started = true;
    if (id) this.id = messageId(id);
    return sse('message_start', {
      message: {
        id: this.id,
        type: 'message',
        role: 'assistant',
        model: this.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      },
    });
  }

  private close(): string {
    if (!this.open) return '';
    this.open = undefined;
    return sse('content_block_stop', { index: this.blockIndex });
  }

  private openBlock(kind: BlockKind, block: Record<string, unknown>, tool?: number): string {
    let out = this.close();
    this.blockIndex += 1;
    this.open = { kind, tool };
    out += sse('content_block_start', { index: this.blockIndex, content_block: block });
    return out;
  }

  chunk(c: ChatChunk): string {
    let out = this.start(c.id);
    if (c.usage) this.usage = c.usage;
    const choice = c.choices?.find((ch) => ch.index === 0) ?? c.choices?.[0];
    if (!choice) return out;
    const d = choice.delta ?? {};
    if (d.reasoning_content) {
      if (this.open?.kind !== 'thinking') out += this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
      out += sse('content_block_delta', { index: this.blockIndex, delta: { type: 'thinking_delta', thinking: d.reasoning_content } });
    }
    if (typeof d.content === 'string' && d.content) {
      if (this.open?.kind !== 'text') out += this.openBlock('text', { type: 'text', text: '' });
      out += sse('content_block_delta', { index: this.blockIndex, delta: { type: 'text_delta', text: d.content } });
    }
    for (const tc of d.tool_calls ?? []) {
      const isNew = this.open?.kind !== 'tool_use' || this.open.tool !== tc.index;
      if (isNew) {
        if (!tc.id && !tc.function?.name && this.open?.kind === 'tool_use') {
          // continuation of a call whose block is no longer open: append to the open call
        } else {
          out += this.openBlock('tool_use', { type: 'tool_use', id: tc.id || newId('toolu_'), name: tc.function?.name ?? '', input: {} }, tc.index);
        }
      }
      const args = tc.function?.arguments;
      if (args) out += sse('content_block_delta', { index: this.blockIndex, delta: { type: 'input_json_delta', partial_json: args } });
    }
    if (choice.finish_reason) this.stop = finishToClaudeStop(choice.finish_reason);
    return out;
  }

  end(usage: Usage | undefined): string {
    if (this.finished) return '';
    this.finished = true;
    let out = this.start();
    out += this.close();
    const u = canonicalToClaudeUsage(usage ?? this.usage);
    out += sse('message_delta', {
      delta: { stop_reason: this.stop ?? 'end_turn', stop_sequence: null },
      usage: {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_input_tokens: u.cache_read_input_tokens,
        cache_creation_input_tokens: u.cache_creation_input_tokens,
      },
    });
    out += sse('message_stop', {});
    return out;
  }
}

const CLAUDE_ERROR_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'overloaded_error',
  529: 'overloaded_error',
  504: 'timeout_error',
};

export function claudeError(status: number, message: string): { type: 'error'; error: { type: string; message: string } } {
  return { type: 'error', error: { type: CLAUDE_ERROR_TYPE[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'), message } };
}

/** Claude error as one SSE event (for errors after the stream started). */
export function claudeErrorEvent(status: number, message: string): string {
  return `event: error\ndata: ${JSON.stringify(claudeError(status, message))}\n\n`;
}

/**
 * `streamError` is an extension of InboundFormat: the SSE text of an error after the stream has
 * started. Claude clients only read `event: error` (a `data:`-only event is skipped by the SDK).
 */
export const claudeFormat: InboundFormat & { streamError(status: number, message: string, code: string): string } = {
  name: 'claude',
  streamError: (status, message) => claudeErrorEvent(status, message),
  toChat: (body) => claudeToChat(body),
  modelOf: (body) => (isRecord(body) && typeof body.model === 'string' && body.model.trim() ? body.model : undefined),
  fromChat: (res, requestedModel) => chatToClaude(res, requestedModel),
  streamWriter(requestedModel) {
    const w = new ClaudeStreamWriter(requestedModel);
    return { chunk: (c) => w.chunk(c), end: (u) => w.end(u) };
  },
  error: (status, message) => claudeError(status, message),
};

/** `POST /v1/messages` (key in `x-api-key` or `Authorization: Bearer`). */
export const claudeRoute: InboundRoute = {
  method: 'POST',
  match: (path) => (path === '/v1/messages' || path === '/v1/messages/' ? {} : null),
  format: claudeFormat,
  keyStyle: 'claude',
};
