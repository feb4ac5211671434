/**
 * Claude Messages answer → canonical (upstream side): usage, stop reason, the response body and
 * the SSE stream translator.
 */
import type { ChatChunk, ChatResponse, FinishReason, ReasoningDetail, SSEEvent, StreamTranslator, ToolCall, Usage } from '../../relay/types';
import { UpstreamError } from '../../relay/errors';
import { isRecord, newId, streamError } from '../shared';
import { CLAUDE_REASONING_FORMAT } from './upstreamRequest';

// ---------------------------------------------------------------------------------------------
// Response

export interface ClaudeUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number | null } | null;
}

/** Claude usage → canonical (prompt includes both cache parts; see file header). */
export function claudeUsageToCanonical(u: ClaudeUsage): Usage {
  const input = Number(u.input_tokens ?? 0) || 0;
  const read = Number(u.cache_read_input_tokens ?? 0) || 0;
  const created = Number(u.cache_creation_input_tokens ?? 0) || 0;
  const output = Number(u.output_tokens ?? 0) || 0;
  const thinking = Number(u.output_tokens_details?.thinking_tokens ?? 0) || 0;
  const prompt = input + read + created;
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output };
  if (read || created) usage.prompt_tokens_details = { cached_tokens: read, cache_creation_tokens: created };
  if (thinking) usage.completion_tokens_details = { reasoning_tokens: thinking };
  return usage;
}

export function claudeStopToFinish(reason: unknown): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return reason == null ? null : 'stop';
  }
}

/** Claude Messages response body → canonical. Thinking keeps its signature (and redacted thinking its data) as reasoning_details. */
export function fromClaudeResponse(body: unknown, fallbackModel: string): ChatResponse {
  const b = isRecord(body) ? body : {};
  const blocks = Array.isArray(b.content) ? (b.content as Array<Record<string, unknown>>) : [];
  let text = '';
  let reasoning = '';
  const details: ReasoningDetail[] = [];
  const toolCalls: ToolCall[] = [];
  for (const blk of blocks) {
    if (!isRecord(blk)) continue;
    if (blk.type === 'text' && typeof blk.text === 'string') text += blk.text;
    else if (blk.type === 'thinking' && typeof blk.thinking === 'string') {
      reasoning += blk.thinking;
      if (typeof blk.signature === 'string' && blk.signature) {
        details.push({ type: 'reasoning.text', text: blk.thinking, signature: blk.signature, format: CLAUDE_REASONING_FORMAT });
      }
    } else if (blk.type === 'redacted_thinking' && typeof blk.data === 'string' && blk.data) {
      details.push({ type: 'reasoning.encrypted', data: blk.data, format: CLAUDE_REASONING_FORMAT });
    } else if (blk.type === 'tool_use' || blk.type === 'server_tool_use') {
      toolCalls.push({
        id: typeof blk.id === 'string' ? blk.id : newId('toolu_'),
        type: 'function',
        function: { name: String(blk.name ?? ''), arguments: JSON.stringify(blk.input ?? {}) },
      });
    }
  }
  const message: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: text || (toolCalls.length ? null : '') };
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (reasoning) message.reasoning_content = reasoning;
  if (details.length) message.reasoning_details = details;
  return {
    id: typeof b.id === 'string' ? b.id : newId('msg_'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof b.model === 'string' ? b.model : fallbackModel,
    choices: [{ index: 0, message, finish_reason: claudeStopToFinish(b.stop_reason) ?? 'stop' }],
    usage: claudeUsageToCanonical(isRecord(b.usage) ? (b.usage as ClaudeUsage) : {}),
  };
}

/**
 * Claude SSE events → canonical chunks. Emits a role chunk on message_start, content / reasoning
 * / tool-call deltas, a finish chunk on message_delta and, on message_stop, a usage chunk
 * (`choices: []`, like OpenAI's `include_usage` chunk).
 */
export class ClaudeStreamTranslator implements StreamTranslator {
  private id = newId('msg_');
  private model: string;
  private readonly created = Math.floor(Date.now() / 1000);
  private raw: ClaudeUsage = {};
  private seenUsage = false;
  private readonly toolIndexByBlock = new Map<number, number>();
  /** Tool blocks whose arguments are still empty: a call without input gets `{}` when its block stops (`""` is not JSON). */
  private readonly toolsWithoutArgs = new Set<number>();
  /** Open thinking blocks by index: their text so far and signature, given back as one reasoning detail when the block stops. */
  private readonly thinkingByBlock = new Map<number, { text: string; signature: string }>();
  private nextTool = 0;
  private usageSent = false;

  constructor(model: string) {
    this.model = model;
  }

  private chunk(delta: ChatChunk['choices'][number]['delta'], finish: FinishReason = null): ChatChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, finish_reason: finish }] };
  }

  private mergeUsage(u: unknown) {
    if (!isRecord(u)) return;
    this.seenUsage = true;
    for (const k of ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const) {
      if (typeof u[k] === 'number') this.raw[k] = u[k] as number;
    }
    if (isRecord(u.output_tokens_details) && typeof u.output_tokens_details.thinking_tokens === 'number') {
      this.raw.output_tokens_details = { thinking_tokens: u.output_tokens_details.thinking_tokens };
    }
  }

  private pending: UpstreamError | undefined;

  push(event: SSEEvent): ChatChunk[] {
    if (this.pending) throw this.pending;
    if (!event.data || event.data === '[DONE]') return [];
    let data: Record<string, unknown>;
    try {
      const parsed = JSON.parse(event.data);
      if (!isRecord(parsed)) return [];
      data = parsed;
    } catch {
      return [];
    }
    const type = typeof data.type === 'string' ? data.type : event.event;
    switch (type) {
      case 'message_start': {
        const msg = isRecord(data.message) ? data.message : {};
        if (typeof msg.id === 'string') this.id = msg.id;
        if (typeof msg.model === 'string') this.model = msg.model;
        this.mergeUsage(msg.usage);
        return [this.chunk({ role: 'assistant', content: '' })];
      }
      case 'content_block_start': {
        const idx = Number(data.index ?? 0);
        const blk = isRecord(data.content_block) ? data.content_block : {};
        if (blk.type === 'tool_use' || blk.type === 'server_tool_use') {
          const ti = this.nextTool++;
          this.toolIndexByBlock.set(idx, ti);
          const input = isRecord(blk.input) && Object.keys(blk.input).length ? JSON.stringify(blk.input) : '';
          if (!input) this.toolsWithoutArgs.add(idx);
          return [
            this.chunk({
              tool_calls: [
                { index: ti, id: String(blk.id ?? newId('toolu_')), type: 'function', function: { name: String(blk.name ?? ''), arguments: input } },
              ],
            }),
          ];
        }
        if (blk.type === 'text' && typeof blk.text === 'string' && blk.text) return [this.chunk({ content: blk.text })];
        if (blk.type === 'thinking') {
          const t = typeof blk.thinking === 'string' ? blk.thinking : '';
          this.thinkingByBlock.set(idx, { text: t, signature: typeof blk.signature === 'string' ? blk.signature : '' });
          return t ? [this.chunk({ reasoning_content: t })] : [];
        }
        if (blk.type === 'redacted_thinking' && typeof blk.data === 'string' && blk.data) {
          return [this.chunk({ reasoning_details: [{ type: 'reasoning.encrypted', data: blk.data, format: CLAUDE_REASONING_FORMAT }] })];
        }
        return [];
      }
      case 'content_block_delta': {
        const idx = Number(data.index ?? 0);
        const d = isRecord(data.delta) ? data.delta : {};
        if (d.type === 'text_delta' && typeof d.text === 'string') return [this.chunk({ content: d.text })];
        if (d.type === 'thinking_delta' && typeof d.thinking === 'string') {
          const th = this.thinkingByBlock.get(idx);
          if (th) th.text += d.thinking;
          return [this.chunk({ reasoning_content: d.thinking })];
        }
        if (d.type === 'signature_delta' && typeof d.signature === 'string') {
          const th = this.thinkingByBlock.get(idx);
          if (th) th.signature = d.signature;
          return [];
        }
        if (d.type === 'input_json_delta' && typeof d.partial_json === 'string') {
          const ti = this.toolIndexByBlock.get(idx);
          if (ti === undefined || d.partial_json === '') return [];
          this.toolsWithoutArgs.delete(idx);
          return [this.chunk({ tool_calls: [{ index: ti, function: { arguments: d.partial_json } }] })];
        }
        return [];
      }
      case 'message_delta': {
        this.mergeUsage(data.usage);
        const d = isRecord(data.delta) ? data.delta : {};
        const out = this.emptyArgs([...this.toolsWithoutArgs]);
        if (d.stop_reason != null) out.push(this.chunk({}, claudeStopToFinish(d.stop_reason)));
        return out;
      }
      case 'message_stop':
        return this.usageChunk();
      case 'error': {
        // thrown on the next push()/end(), so the chunks converted before it still reach the client
        const e = isRecord(data.error) ? data.error : {};
        this.pending = streamError(
          typeof e.message === 'string' ? e.message : 'upstream stream error',
          typeof e.type === 'string' ? e.type : 'api_error',
          event.data,
        );
        return [];
      }
      case 'content_block_stop': {
        const idx = Number(data.index ?? 0);
        if (this.toolsWithoutArgs.has(idx)) return this.emptyArgs([idx]);
        const th = this.thinkingByBlock.get(idx);
        if (!th) return [];
        this.thinkingByBlock.delete(idx);
        // the whole block (text already streamed as reasoning_content) with the signature Claude wants back
        if (!th.signature) return [];
        return [this.chunk({ reasoning_details: [{ type: 'reasoning.text', text: th.text, signature: th.signature, format: CLAUDE_REASONING_FORMAT }] })];
      }
      default:
        return []; // ping, unknown
    }
  }

  /** `{}` as the arguments of the tool blocks given, which streamed none. */
  private emptyArgs(blocks: number[]): ChatChunk[] {
    const out: ChatChunk[] = [];
    for (const idx of blocks) {
      this.toolsWithoutArgs.delete(idx);
      const ti = this.toolIndexByBlock.get(idx);
      if (ti !== undefined) out.push(this.chunk({ tool_calls: [{ index: ti, function: { arguments: '{}' } }] }));
    }
    return out;
  }

  private usageChunk(): ChatChunk[] {
    if (this.usageSent || !this.seenUsage) return [];
    this.usageSent = true;
    return [{ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: claudeUsageToCanonical(this.raw) }];
  }

  end(): ChatChunk[] {
    if (this.pending) throw this.pending;
    return this.usageChunk();
  }

  usage(): Usage | undefined {
    return this.seenUsage ? claudeUsageToCanonical(this.raw) : undefined;
  }
}
