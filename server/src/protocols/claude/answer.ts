/**
 * Canonical response → Claude message (client side): stop reason, usage, the JSON by template.
 */
import type { ChatResponse, FinishReason, ReasoningDetail, Usage } from '../../relay/types';
import { newId } from '../shared';
import { thinkingBlocksOf } from './upstreamRequest';
import { hasExactly, jsonName, jsonNumber } from '../../lib/json';

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

export function messageId(id: string | undefined): string {
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
