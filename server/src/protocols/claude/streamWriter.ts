/**
 * Canonical chunks → Claude's SSE event sequence (message_start … message_stop), client side.
 */
import type { ChatChunk, ReasoningDetail, Usage } from '../../relay/types';
import { newId } from '../shared';
import { CLAUDE_REASONING_FORMAT } from './upstreamRequest';
import { finishToClaudeStop, canonicalToClaudeUsage, messageId } from './answer';

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
