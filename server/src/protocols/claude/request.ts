/**
 * Claude Messages request → canonical request (client side).
 */
import { RelayError } from '../../relay/errors';
import { verbatim } from '../../i18n';
import type { ChatMessage, ChatRequest, ContentPart, ReasoningDetail, ToolCall, ToolDef } from '../../relay/types';
import { fileNameFor, isRecord, newId, parseDataUrl, setHints, type NativeHints } from '../shared';
import { CLAUDE_REASONING_FORMAT } from './upstreamRequest';
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
