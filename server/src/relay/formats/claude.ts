/**
 * Claude Messages API as a client-facing format (`POST /v1/messages`).
 *
 * Claude request → canonical request, canonical response → Claude message, canonical chunks →
 * the Claude SSE event sequence (message_start, content_block_start/delta/stop, message_delta,
 * message_stop) that the official `@anthropic-ai/sdk` stream parser accepts. Usage is the inverse
 * of the Claude adaptor's: `input_tokens = prompt_tokens − cached − cache_creation`, so a Claude →
 * Claude round trip returns the upstream figures unchanged. Thinking signatures travel as
 * `reasoning_details` in both directions; what only Anthropic can honour is dropped on conversion
 * (docs/formats.md, "Client formats → Claude").
 */
import { RelayError } from '../errors';
import { verbatim } from '../../i18n';
import type {
  ChatChunk,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ContentPart,
  FinishReason,
  InboundFormat,
  InboundRoute,
  ReasoningDetail,
  ToolCall,
  ToolDef,
  Usage,
} from '../types';
import { fileNameFor, isRecord, newId, parseDataUrl, setHints, type NativeHints } from '../adaptors/shared';
import { CLAUDE_REASONING_FORMAT, thinkingBlocksOf } from '../adaptors/claude';
import { hasExactly, jsonName, jsonNumber } from '../../lib/json';
import { own } from '../../lib/own';

/** The request's shape is wrong: protocol-level wording (field paths), English like the protocols' own errors. */
const badRequest = (message: string) => new RelayError(400, verbatim(message), 'invalid_request');

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

/** Claude `output_config.effort` → canonical `reasoning_effort` (`max` has no equivalent above `xhigh`). */
const EFFORT_TO_CANONICAL: Record<string, string> = { low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'xhigh' };

/** Text of a `system` value or a system turn's content (string or text blocks, joined with `\n`). */
function systemText(content: unknown, what: string): string {
  if (typeof content === 'string') return content;
  return blockList(content, what)
    .map((b) => str(b.text) ?? '')
    .filter(Boolean)
    .join('\n');
}

/** Assistant turn → one canonical message; thinking blocks keep their signatures as reasoning_details. */
function assistantMessage(blocks: Array<Record<string, unknown>>): ChatMessage {
  let text = '';
  let reasoning = '';
  const details: ReasoningDetail[] = [];
  const toolCalls: ToolCall[] = [];
  for (const b of blocks) {
    if (b.type === 'text') text += str(b.text) ?? '';
    else if (b.type === 'thinking') {
      const t = str(b.thinking) ?? '';
      reasoning += t;
      // an empty signature marks thinking the gateway converted from another family: no Claude accepts it back
      const sig = str(b.signature);
      if (sig) details.push({ type: 'reasoning.text', text: t, signature: sig, format: CLAUDE_REASONING_FORMAT });
    } else if (b.type === 'redacted_thinking') {
      const data = str(b.data);
      if (data) details.push({ type: 'reasoning.encrypted', data, format: CLAUDE_REASONING_FORMAT });
    } else if (b.type === 'tool_use') {
      toolCalls.push({
        id: str(b.id) ?? newId('toolu_'),
        type: 'function',
        function: { name: str(b.name) ?? '', arguments: JSON.stringify(b.input ?? {}) },
      });
    }
    // server_tool_use and its results ran on Anthropic's side: other protocols have no place for them
  }
  const msg: ChatMessage = { role: 'assistant', content: text || (toolCalls.length ? null : '') };
  if (toolCalls.length) msg.tool_calls = toolCalls;
  if (reasoning) msg.reasoning_content = reasoning;
  if (details.length) msg.reasoning_details = details;
  return msg;
}

/** A user-side content block that is not a tool result → canonical parts (none for blocks with no equivalent). */
function userParts(b: Record<string, unknown>, where: string): ContentPart[] {
  switch (b.type) {
    case 'text':
      return [{ type: 'text', text: str(b.text) ?? '' }];
    case 'image': {
      const url = sourceToUrl(b.source);
      if (!url) throw badRequest(`${where}: image source must be base64 or url`);
      return [{ type: 'image_url', image_url: { url } }];
    }
    case 'document': {
      const src = isRecord(b.source) ? b.source : {};
      const url = sourceToUrl(src);
      if (url?.startsWith('data:')) {
        const filename = fileNameFor(parseDataUrl(url)?.mimeType ?? 'application/pdf', typeof b.title === 'string' ? b.title : undefined);
        return [{ type: 'file', file: { filename, file_data: url } }];
      }
      if (src.type === 'text' && typeof src.data === 'string') return [{ type: 'text', text: src.data }];
      if (src.type === 'content') return [{ type: 'text', text: toolResultText(src.content) }];
      if (url) return [{ type: 'text', text: `[document: ${url}]` }]; // no URL documents in the OpenAI format
      return [];
    }
    case 'search_result': {
      const body = toolResultText(b.content);
      return [{ type: 'text', text: [str(b.title), str(b.source), body].filter(Boolean).join('\n') }];
    }
    default:
      return []; // tool_reference, container_upload …: Anthropic-side features
  }
}

/**
 * Thinking config and effort → canonical fields (what other protocols can honour) plus native hints
 * (what a Claude target gets back exactly). enabled → `thinking_budget`; disabled → budget 0;
 * adaptive / between_tools → no budget (the target's own dynamic thinking); `output_config.effort`
 * → `reasoning_effort`. Thinking that is shown asks for reasoning back (`reasoning_summary`).
 */
function mapThinking(body: Record<string, unknown>, req: ChatRequest): void {
  const hints: NativeHints = {};
  const th = isRecord(body.thinking) && typeof body.thinking.type === 'string' ? body.thinking : undefined;
  if (th) {
    const type = th.type as string;
    const budget = typeof th.budget_tokens === 'number' && Number.isFinite(th.budget_tokens) ? Math.floor(th.budget_tokens) : undefined;
    const display = str(th.display);
    hints.claudeThinking = { type, ...(budget !== undefined ? { budget_tokens: budget } : {}), ...(display ? { display } : {}) };
    if (type === 'disabled') req.thinking_budget = 0;
    else {
      if (type === 'enabled' && budget !== undefined && budget > 0) req.thinking_budget = budget;
      if (display !== 'omitted') req.reasoning_summary = 'auto';
    }
  }
  const effort = isRecord(body.output_config) ? str(body.output_config.effort) : undefined;
  if (effort) {
    hints.claudeEffort = effort;
    const canonical = own(EFFORT_TO_CANONICAL, effort);
    if (canonical) req.reasoning_effort = canonical;
  }
  if (hints.claudeThinking || hints.claudeEffort) setHints(req, hints);
}

/**
 * Claude Messages request body → canonical request. Throws BadRequestError on malformed input.
 * `role: "system"` turns inside `messages` (mid-conversation system messages, which Claude Code
 * sends) become canonical system messages in place. Anthropic-only features are dropped here:
 * `cache_control`, `context_management`, `container`, `mcp_servers`, `service_tier`, server tools
 * (web_search …) and Anthropic-defined client tools without an `input_schema` (bash, text editor,
 * computer use), `metadata.user_id` (long ids some upstreams reject).
 */
export function claudeToChat(body: unknown): ChatRequest {
  if (!isRecord(body)) throw badRequest('request body must be a JSON object');
  const model = body.model;
  if (typeof model !== 'string' || !model.trim()) throw badRequest('model: field required');
  if (!Array.isArray(body.messages)) throw badRequest('messages: field required');
  if (body.stream != null && typeof body.stream !== 'boolean') throw badRequest('stream: must be a boolean');
  if (body.max_tokens != null && (typeof body.max_tokens !== 'number' || !Number.isFinite(body.max_tokens) || body.max_tokens < 1)) {
    throw badRequest('max_tokens: must be a positive integer');
  }
  const messages: ChatMessage[] = [];
  if (body.system != null) {
    const text = systemText(body.system, 'system');
    if (text) messages.push({ role: 'system', content: text });
  }
  body.messages.forEach((raw, i) => {
    if (!isRecord(raw)) throw badRequest(`messages.${i}: must be an object`);
    const role = raw.role;
    if (role === 'system') {
      const text = systemText(raw.content, `messages.${i}`);
      if (text) messages.push({ role: 'system', content: text });
      return;
    }
    if (role !== 'user' && role !== 'assistant') throw badRequest(`messages.${i}.role: must be "user", "assistant" or "system"`);
    const blocks = blockList(raw.content, `messages.${i}`);
    if (role === 'assistant') {
      messages.push(assistantMessage(blocks));
      return;
    }
    // user: tool results become tool messages (first), the rest one user message
    const parts: ContentPart[] = [];
    for (const b of blocks) {
      if (b.type === 'tool_result') {
        const text = toolResultText(b.content);
        const failed = b.is_error === true;
        const msg: ChatMessage = { role: 'tool', tool_call_id: str(b.tool_use_id) ?? '', content: failed && !text ? 'error' : text };
        if (failed) msg.is_error = true;
        messages.push(msg);
        // OpenAI tool messages carry text only: images of a tool result follow in the user message
        if (Array.isArray(b.content)) {
          for (const img of b.content) {
            const url = isRecord(img) && img.type === 'image' ? sourceToUrl(img.source) : undefined;
            if (url) parts.push({ type: 'image_url', image_url: { url } });
          }
        }
      } else parts.push(...userParts(b, `messages.${i}`));
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
  if (Array.isArray(body.tools)) {
    const tools: ToolDef[] = [];
    for (const t of body.tools) {
      if (!isRecord(t) || typeof t.name !== 'string') continue;
      if (t.type && t.type !== 'custom' && !t.input_schema) {
        (req.unconverted ??= []).push(String(t.type)); // server tools and Anthropic-defined tools
        continue;
      }
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
    else if (tc.type === 'tool' && typeof tc.name === 'string') {
      // forcing a dropped (server) tool cannot be honoured: the model chooses instead
      if (req.tools?.some((t) => t.function.name === tc.name)) req.tool_choice = { type: 'function', function: { name: tc.name } };
      else if (req.tools) req.tool_choice = 'auto';
    }
    if (tc.disable_parallel_tool_use === true && req.tools) req.parallel_tool_calls = false;
  }
  if (!req.tools) delete req.tool_choice;
  // `output_format` is the same setting's name in the structured-outputs beta, still sent by some clients
  const format =
    isRecord(body.output_config) && isRecord(body.output_config.format)
      ? body.output_config.format
      : isRecord(body.output_format)
        ? body.output_format
        : undefined;
  if (format?.type === 'json_schema' && isRecord(format.schema)) {
    req.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } };
  }
  mapThinking(body, req);
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

export interface ClaudeUsageOut {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  output_tokens_details?: { thinking_tokens: number };
}

export function canonicalToClaudeUsage(u: Usage | undefined): ClaudeUsageOut {
  const cached = u?.prompt_tokens_details?.cached_tokens ?? 0;
  const creation = u?.prompt_tokens_details?.cache_creation_tokens ?? 0;
  const out: ClaudeUsageOut = {
    input_tokens: Math.max(0, (u?.prompt_tokens ?? 0) - cached - creation),
    output_tokens: u?.completion_tokens ?? 0,
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: creation,
  };
  const reasoning = u?.completion_tokens_details?.reasoning_tokens;
  if (reasoning) out.output_tokens_details = { thinking_tokens: reasoning };
  return out;
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
  return id ? `msg_${id.startsWith('chatcmpl-') ? id.slice('chatcmpl-'.length) : id}` : newId('msg_');
}

/**
 * Reasoning of an answer → Claude thinking blocks: Claude's own signed thinking and redacted
 * thinking as they came; reasoning from another family (no Claude signature) as one thinking block
 * with an empty signature, which shows it to the client and is dropped when it comes back.
 */
function thinkingBlocks(reasoning: string | undefined, details: ReasoningDetail[] | undefined): Array<Record<string, unknown>> {
  const own = thinkingBlocksOf(details);
  if (own.length) return own;
  return reasoning ? [{ type: 'thinking', thinking: reasoning, signature: '' }] : [];
}

/** Canonical response → Claude message. */
export function chatToClaude(res: ChatResponse, model: string): Record<string, unknown> {
  const choice = res.choices?.[0];
  const msg = choice?.message;
  const content: Array<Record<string, unknown>> = thinkingBlocks(msg?.reasoning_content, msg?.reasoning_details);
  if (typeof msg?.content === 'string' && msg.content) content.push({ type: 'text', text: msg.content });
  // An OpenAI refusal is the answer's text; Claude says it with its own stop reason.
  const refusal = typeof msg?.refusal === 'string' && msg.refusal ? msg.refusal : '';
  if (refusal) content.push({ type: 'text', text: refusal });
  for (const tc of msg?.tool_calls ?? []) {
    content.push({ type: 'tool_use', id: tc.id || newId('toolu_'), name: tc.function.name, input: parseInput(tc.function.arguments) });
  }
  let stop = finishToClaudeStop(choice?.finish_reason ?? 'stop');
  if (msg?.tool_calls?.length && stop === 'end_turn') stop = 'tool_use';
  else if (refusal && stop === 'end_turn') stop = 'refusal';
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

const MESSAGE_KEYS = ['id', 'type', 'role', 'model', 'content', 'stop_reason', 'stop_sequence', 'usage'] as const;
const TEXT_KEYS = ['type', 'text'] as const;
const USAGE_KEYS = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const;

function blockJson(b: Record<string, unknown>): string {
  return b.type === 'text' && typeof b.text === 'string' && hasExactly(b, TEXT_KEYS) ? `{"type":"text","text":${JSON.stringify(b.text)}}` : JSON.stringify(b);
}

function usageJson(u: ClaudeUsageOut): string {
  const plain =
    hasExactly(u, USAGE_KEYS) &&
    typeof u.input_tokens === 'number' &&
    typeof u.output_tokens === 'number' &&
    typeof u.cache_read_input_tokens === 'number' &&
    typeof u.cache_creation_input_tokens === 'number';
  if (!plain) return JSON.stringify(u);
  return (
    `{"input_tokens":${jsonNumber(u.input_tokens)},"output_tokens":${jsonNumber(u.output_tokens)},` +
    `"cache_read_input_tokens":${jsonNumber(u.cache_read_input_tokens)},"cache_creation_input_tokens":${jsonNumber(u.cache_creation_input_tokens)}}`
  );
}

/** `JSON.stringify(chatToClaude(res, model))`, by template (lib/json.ts says why). */
export function chatToClaudeJson(res: ChatResponse, model: string): string {
  const m = chatToClaude(res, model);
  const content = m.content as Array<Record<string, unknown>>;
  if (!hasExactly(m, MESSAGE_KEYS) || typeof m.id !== 'string' || typeof m.stop_reason !== 'string' || m.stop_sequence !== null) return JSON.stringify(m);
  let blocks = '';
  for (let i = 0; i < content.length; i++) blocks += (i ? ',' : '') + blockJson(content[i]!);
  return (
    `{"id":${JSON.stringify(m.id)},"type":"message","role":"assistant","model":${JSON.stringify(model)},"content":[${blocks}],` +
    `"stop_reason":${jsonName(m.stop_reason)},"stop_sequence":null,"usage":${usageJson(m.usage as ClaudeUsageOut)}}`
  );
}

// ---------------------------------------------------------------------------------------------
// Stream

function sse(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

type BlockKind = 'text' | 'thinking' | 'redacted_thinking' | 'tool_use';
/** The string field each kind of content_block_delta carries. */
const DELTA_FIELD = { text_delta: 'text', thinking_delta: 'thinking', signature_delta: 'signature', input_json_delta: 'partial_json' } as const;
type DeltaKind = keyof typeof DELTA_FIELD;

/** A tool call held back while another one streams (see ClaudeStreamWriter). */
interface HeldCall {
  id: string;
  name: string;
  args: string;
}

/**
 * Canonical chunks → Claude SSE events. One instance per response. One content block is open at a
 * time: a change of kind closes it. A thinking block ends with its `signature_delta` when a Claude
 * `reasoning.text` detail arrives (the detail carries the block's whole text, already streamed as
 * `reasoning_content`; it is written out only when no thinking block is open); a Claude
 * `reasoning.encrypted` detail is a `redacted_thinking` block. Tool calls are `tool_use` blocks
 * with `input_json_delta`s: the first streams as it comes; a call that starts while another one is
 * streaming is held, its arguments collected, and written whole once the streaming one is done
 * (at the finish, or when text or thinking follows). Clients read a tool's input when its block
 * stops, so a block is never written to after its stop, even when an upstream interleaves the
 * arguments of parallel calls.
 */
export class ClaudeStreamWriter {
  private started = false;
  private id = newId('msg_');
  private blockIndex = -1;
  private open: { kind: BlockKind; tool?: number; signed?: boolean } | undefined;
  /** Calls held while another streams, by canonical tool-call index (in arrival order). */
  private readonly held = new Map<number, HeldCall>();
  /** Canonical indexes of calls whose block was written. */
  private readonly written = new Set<number>();
  private stop: string | null = null;
  private usage: Usage | undefined;
  private finished = false;
  /** An OpenAI refusal was streamed (as text): the stop reason says so. */
  private refused = false;

  constructor(private readonly model: string) {}

  private start(id?: string): string {
    if (this.started) return '';
    this.started = true;
    if (id) this.id = messageId(id);
    // sse('message_start', {message: {id, type, role, model, content: [], stop_reason: null, …, usage: zeros}}), by template.
    return (
      `event: message_start\ndata: {"type":"message_start","message":{"id":${JSON.stringify(this.id)},"type":"message","role":"assistant",` +
      `"model":${JSON.stringify(this.model)},"content":[],"stop_reason":null,"stop_sequence":null,` +
      `"usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}\n\n`
    );
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

  /**
   * sse('content_block_delta', {index, delta: {type: kind, [field]: value}}) by template: the event
   * of every streamed token (text, thinking, tool arguments).
   */
  private delta(kind: DeltaKind, value: string): string {
    return `event: content_block_delta\ndata: {"type":"content_block_delta","index":${this.blockIndex},"delta":{"type":"${kind}","${DELTA_FIELD[kind]}":${JSON.stringify(value)}}}\n\n`;
  }

  /** A thinking block that can still take text (not yet signed). */
  private thinkingOpen(): boolean {
    return this.open?.kind === 'thinking' && !this.open.signed;
  }

  private openTool(index: number, id: string | undefined, name: string | undefined): string {
    this.written.add(index);
    return this.openBlock('tool_use', { type: 'tool_use', id: id || newId('toolu_'), name: name ?? '', input: {} }, index);
  }

  /** Ends the streaming call and writes the held ones, each whole. */
  private releaseHeld(): string {
    if (!this.held.size) return '';
    let out = '';
    for (const [index, call] of this.held) {
      out += this.openTool(index, call.id, call.name);
      if (call.args) out += this.delta('input_json_delta', call.args);
    }
    this.held.clear();
    return out + this.close();
  }

  private reasoningDetail(d: ReasoningDetail): string {
    if (d.format !== CLAUDE_REASONING_FORMAT) return ''; // another family's signature means nothing to Claude
    if (d.type === 'reasoning.text' && d.signature) {
      let out = '';
      if (!this.thinkingOpen()) {
        out += this.releaseHeld() + this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
        if (d.text) out += this.delta('thinking_delta', d.text);
      }
      out += this.delta('signature_delta', d.signature);
      this.open!.signed = true;
      return out;
    }
    if (d.type === 'reasoning.encrypted' && d.data)
      return this.releaseHeld() + this.openBlock('redacted_thinking', { type: 'redacted_thinking', data: d.data });
    return '';
  }

  private toolDelta(tc: NonNullable<ChatChunk['choices'][number]['delta']['tool_calls']>[number]): string {
    const args = tc.function?.arguments ?? '';
    if (this.open?.kind === 'tool_use' && this.open.tool === tc.index) return args ? this.delta('input_json_delta', args) : '';
    const held = this.held.get(tc.index);
    if (held) {
      held.args += args;
      if (tc.id) held.id = tc.id;
      if (tc.function?.name) held.name = tc.function.name;
      return '';
    }
    // a call already written and stopped cannot take more: only an upstream repeating itself does this
    if (this.written.has(tc.index)) return '';
    if (this.open?.kind === 'tool_use') {
      this.held.set(tc.index, { id: tc.id ?? '', name: tc.function?.name ?? '', args });
      return '';
    }
    let out = this.openTool(tc.index, tc.id, tc.function?.name);
    if (args) out += this.delta('input_json_delta', args);
    return out;
  }

  chunk(c: ChatChunk): string {
    let out = this.start(c.id);
    if (c.usage) this.usage = c.usage;
    const choice = c.choices?.find((ch) => ch.index === 0) ?? c.choices?.[0];
    if (!choice) return out;
    const d = choice.delta ?? {};
    if (d.reasoning_content) {
      if (!this.thinkingOpen()) out += this.releaseHeld() + this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
      out += this.delta('thinking_delta', d.reasoning_content);
    }
    for (const detail of d.reasoning_details ?? []) out += this.reasoningDetail(detail);
    if (typeof d.content === 'string' && d.content) {
      if (this.open?.kind !== 'text') out += this.releaseHeld() + this.openBlock('text', { type: 'text', text: '' });
      out += this.delta('text_delta', d.content);
    }
    if (typeof d.refusal === 'string' && d.refusal) {
      this.refused = true;
      if (this.open?.kind !== 'text') out += this.releaseHeld() + this.openBlock('text', { type: 'text', text: '' });
      out += this.delta('text_delta', d.refusal);
    }
    for (const tc of d.tool_calls ?? []) out += this.toolDelta(tc);
    if (choice.finish_reason) {
      this.stop = finishToClaudeStop(choice.finish_reason);
      out += this.releaseHeld();
    }
    return out;
  }

  end(usage: Usage | undefined): string {
    if (this.finished) return '';
    this.finished = true;
    let out = this.start();
    out += this.releaseHeld();
    out += this.close();
    const u = canonicalToClaudeUsage(usage ?? this.usage);
    let stop = this.stop ?? 'end_turn';
    if (stop === 'end_turn' && this.written.size) stop = 'tool_use';
    else if (stop === 'end_turn' && this.refused) stop = 'refusal';
    out += sse('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: u });
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
  answerJson: (res, requestedModel) => chatToClaudeJson(res, requestedModel),
  streamWriter(requestedModel) {
    const w = new ClaudeStreamWriter(requestedModel);
    return { chunk: (c) => w.chunk(c), end: (u) => w.end(u) };
  },
  error: (status, message) => claudeError(status, message),
};

/**
 * `POST /v1/messages` (key in `x-api-key` or `Authorization: Bearer`). The path is matched without
 * its query: `?beta=true`, which the SDK adds to beta calls, is accepted and not forwarded (the
 * betas themselves travel in the `anthropic-beta` header).
 */
export const claudeRoute: InboundRoute = {
  method: 'POST',
  match: (path) => (path === '/v1/messages' || path === '/v1/messages/' ? {} : null),
  format: claudeFormat,
  keyStyle: 'claude',
};
