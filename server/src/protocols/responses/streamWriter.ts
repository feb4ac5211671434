/**
 * Canonical chunks → the Responses event sequence (response.created … response.completed), as the
 * official `openai` SDK's stream accumulator expects it (client side).
 */
import type { ChatChunk, FinishReason, ReasoningDetail, Usage } from '../../relay/types';
import { newId } from '../shared';
import { jsonName } from '../../lib/json';
import { type ResponsesUsage, chatUsageToResponses } from './shared';
import { customToolNames } from './request';
import {
  type Item,
  responseId,
  messageItem,
  contentPart,
  reasoningItem,
  toolItem,
  ending,
  type EchoJson,
  echoJson,
  responseJson,
  responseHead,
  responseTail,
} from './answer';

// ---------------------------------------------------------------------------------------------
// Stream

function sse(type: string, seq: number, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data, sequence_number: seq })}\n\n`;
}

/** sse(type, seq, {response}) for a response already written as JSON. */
function sseResponse(type: string, seq: number, responseJson: string): string {
  return `event: ${type}\ndata: {"type":${jsonName(type)},"response":${responseJson},"sequence_number":${seq}}\n\n`;
}

/**
 * sse(type, seq, {…the item's fields, delta[, logprobs: []]}) by template, for the events that
 * carry one streamed token each (text, refusal, reasoning summary, function arguments); `head` is
 * the item's part of it, written once per item by deltaHead.
 */
function deltaEvent(type: string, seq: number, head: string, delta: string, logprobs = false): string {
  return `event: ${type}\ndata: {"type":${jsonName(type)},${head}${JSON.stringify(delta)}${logprobs ? ',"logprobs":[]' : ''},"sequence_number":${seq}}\n\n`;
}

/** `"item_id":…,"output_index":…,` then `extra` (the fields between it and `delta`), then `"delta":`. */
function deltaHead(id: string, index: number, extra = ''): string {
  return `"item_id":${JSON.stringify(id)},"output_index":${index},${extra}"delta":`;
}

interface OpenText {
  index: number;
  id: string;
  text: string;
  /** Its delta events' head (deltaHead). */
  head: string;
}
interface OpenMessage extends OpenText {
  /** Its one content part is a `refusal` (OpenAI Chat `refusal`), not `output_text`. */
  refusal: boolean;
}
interface OpenReasoning extends OpenText {
  details: ReasoningDetail[];
  /** The summary part was announced (reasoning text came, not only details). */
  part: boolean;
}
interface OpenTool {
  index: number;
  id: string;
  callId: string;
  name: string;
  args: string;
  custom: boolean;
  /** Its argument delta events' head (deltaHead). */
  head: string;
}

/**
 * Canonical chunks → Responses events, one instance per response. Items follow the order content
 * comes in: reasoning, message text and tool calls each open an output item, and a change of kind
 * closes the reasoning/message item before it; tool call items stay open (their arguments may still
 * come, interleaved for parallel calls) until the end. Thought signatures of tool calls go in one
 * reasoning item after the calls.
 */
export class ResponsesStreamWriter {
  private seq = 0;
  private started = false;
  private finished = false;
  private id = newId('resp_');
  private created = Math.floor(Date.now() / 1000);
  private readonly output: Item[] = [];
  private text: OpenMessage | undefined;
  private reasoning: OpenReasoning | undefined;
  private readonly tools = new Map<number, OpenTool>();
  private readonly signatures: Record<string, string> = {};
  private finish: FinishReason = null;
  private usage: Usage | undefined;
  private readonly custom: Set<string>;
  private readonly echo: EchoJson;
  /**
   * The opening snapshot's tail (status in_progress, no output yet; responseTail): written when
   * the writer is made, which is while the upstream works on the request, so the client's first
   * frame costs little more than its head once the upstream answers.
   */
  private readonly openingTail: string;

  constructor(
    private readonly model: string,
    private readonly body?: Record<string, unknown>,
  ) {
    this.custom = customToolNames(body);
    this.echo = echoJson(body);
    this.openingTail = responseTail({ model, status: 'in_progress', output: [] }, this.echo);
  }

  private ev(type: string, data: Record<string, unknown>): string {
    return sse(type, this.seq++, data);
  }

  /** The response as it stands, as JSON (the request's echo written once per stream). */
  private snapshot(status: string, extra: { usage?: ResponsesUsage | null; incomplete?: { reason: string } | null; error?: unknown } = {}): string {
    return responseJson({ id: this.id, created: this.created, model: this.model, status, output: this.output, ...extra }, this.body, this.echo);
  }

  private responseEvent(type: string, response: string): string {
    return sseResponse(type, this.seq++, response);
  }

  private start(c?: ChatChunk): string {
    if (this.started) return '';
    this.started = true;
    if (c?.id) this.id = responseId(c.id);
    if (c?.created) this.created = c.created;
    // = this.snapshot('in_progress'): the output is still empty.
    const r = responseHead(this.id, this.created) + this.openingTail;
    return this.responseEvent('response.created', r) + this.responseEvent('response.in_progress', r);
  }

  private addItem(item: Item): { index: number; out: string } {
    const index = this.output.length;
    this.output.push(item);
    return { index, out: this.ev('response.output_item.added', { output_index: index, item }) };
  }

  private closeText(): string {
    const t = this.text;
    if (!t) return '';
    this.text = undefined;
    const base = { item_id: t.id, output_index: t.index, content_index: 0 };
    const item = messageItem(t.id, t.text, 'completed', t.refusal);
    this.output[t.index] = item;
    return (
      (t.refusal
        ? this.ev('response.refusal.done', { ...base, refusal: t.text })
        : this.ev('response.output_text.done', { ...base, text: t.text, logprobs: [] })) +
      this.ev('response.content_part.done', { ...base, part: contentPart(t.text, t.refusal) }) +
      this.ev('response.output_item.done', { output_index: t.index, item })
    );
  }

  private closeReasoning(): string {
    const r = this.reasoning;
    if (!r) return '';
    this.reasoning = undefined;
    let out = '';
    if (r.part) {
      const base = { item_id: r.id, output_index: r.index, summary_index: 0 };
      out += this.ev('response.reasoning_summary_text.done', { ...base, text: r.text });
      out += this.ev('response.reasoning_summary_part.done', { ...base, part: { type: 'summary_text', text: r.text } });
    }
    const item = reasoningItem(r.id, r.text, r.details);
    this.output[r.index] = item;
    return out + this.ev('response.output_item.done', { output_index: r.index, item });
  }

  private closeTool(t: OpenTool): string {
    const item = toolItem(t.id, t.callId, t.name, t.args, t.custom, 'completed');
    this.output[t.index] = item;
    let out = '';
    if (t.custom) {
      const input = item.input as string;
      if (input) out += this.ev('response.custom_tool_call_input.delta', { item_id: t.id, output_index: t.index, delta: input });
      out += this.ev('response.custom_tool_call_input.done', { item_id: t.id, output_index: t.index, input });
    } else {
      out += this.ev('response.function_call_arguments.done', { item_id: t.id, output_index: t.index, name: t.name, arguments: t.args });
    }
    return out + this.ev('response.output_item.done', { output_index: t.index, item });
  }

  private openReasoning(): string {
    if (this.reasoning) return '';
    let out = this.closeText();
    const id = newId('rs_');
    const added = this.addItem({ id, type: 'reasoning', summary: [] });
    this.reasoning = { index: added.index, id, text: '', details: [], part: false, head: deltaHead(id, added.index, '"summary_index":0,') };
    out += added.out;
    return out;
  }

  /** Text or refusal text: a message item with one part of that kind (a change of kind starts another). */
  private messageDelta(delta: string, refusal: boolean): string {
    let out = this.closeReasoning();
    if (this.text && this.text.refusal !== refusal) out += this.closeText();
    if (!this.text) {
      const id = newId('msg_');
      const added = this.addItem({ id, type: 'message', status: 'in_progress', role: 'assistant', content: [] });
      this.text = { index: added.index, id, text: '', refusal, head: deltaHead(id, added.index, '"content_index":0,') };
      out += added.out;
      out += this.ev('response.content_part.added', { item_id: id, output_index: added.index, content_index: 0, part: contentPart('', refusal) });
    }
    const t = this.text;
    t.text += delta;
    return (
      out +
      (refusal ? deltaEvent('response.refusal.delta', this.seq++, t.head, delta) : deltaEvent('response.output_text.delta', this.seq++, t.head, delta, true))
    );
  }

  chunk(c: ChatChunk): string {
    let out = this.start(c);
    if (c.usage) this.usage = c.usage;
    const choice = c.choices?.find((ch) => ch.index === 0) ?? c.choices?.[0];
    if (!choice) return out;
    const d = choice.delta ?? {};
    if (d.reasoning_content) {
      out += this.openReasoning();
      const r = this.reasoning!;
      if (!r.part) {
        r.part = true;
        out += this.ev('response.reasoning_summary_part.added', {
          item_id: r.id,
          output_index: r.index,
          summary_index: 0,
          part: { type: 'summary_text', text: '' },
        });
      }
      r.text += d.reasoning_content;
      out += deltaEvent('response.reasoning_summary_text.delta', this.seq++, r.head, d.reasoning_content);
    }
    if (d.reasoning_details?.length) {
      out += this.openReasoning();
      this.reasoning!.details.push(...d.reasoning_details);
    }
    if (typeof d.content === 'string' && d.content) out += this.messageDelta(d.content, false);
    if (typeof d.refusal === 'string' && d.refusal) out += this.messageDelta(d.refusal, true);
    for (const tc of d.tool_calls ?? []) {
      let t = this.tools.get(tc.index);
      if (!t) {
        out += this.closeReasoning() + this.closeText();
        const name = tc.function?.name ?? '';
        const custom = this.custom.has(name);
        const id = newId(custom ? 'ctc_' : 'fc_');
        const index = this.output.length;
        t = { index, id, callId: tc.id || newId('call_'), name, args: '', custom, head: deltaHead(id, index) };
        this.tools.set(tc.index, t);
        const item = custom
          ? { id, type: 'custom_tool_call', status: 'in_progress', call_id: t.callId, name, input: '' }
          : { id, type: 'function_call', status: 'in_progress', call_id: t.callId, name, arguments: '' };
        out += this.addItem(item).out;
      } else if (tc.function?.name && !t.name) t.name = tc.function.name;
      const sig = tc.extra_content?.google?.thought_signature;
      if (sig) this.signatures[t.callId] = sig;
      const args = tc.function?.arguments;
      if (args) {
        t.args += args;
        // A custom tool's raw input is known only once its JSON wrapper is complete (at the end).
        if (!t.custom) out += deltaEvent('response.function_call_arguments.delta', this.seq++, t.head, args);
      }
    }
    if (choice.finish_reason) this.finish = choice.finish_reason;
    return out;
  }

  end(usage: Usage | undefined): string {
    if (this.finished) return '';
    this.finished = true;
    let out = this.start();
    out += this.closeReasoning() + this.closeText();
    for (const t of this.tools.values()) out += this.closeTool(t);
    if (Object.keys(this.signatures).length) {
      const id = newId('rs_');
      const added = this.addItem({ id, type: 'reasoning', summary: [] });
      const item = reasoningItem(id, '', [], this.signatures);
      this.output[added.index] = item;
      out += added.out + this.ev('response.output_item.done', { output_index: added.index, item });
    }
    const { status, incomplete_details } = ending(this.finish ?? 'stop');
    const r = this.snapshot(status, { usage: chatUsageToResponses(usage ?? this.usage), incomplete: incomplete_details });
    return out + this.responseEvent(status === 'incomplete' ? 'response.incomplete' : 'response.completed', r);
  }

  /** Ends a stream that broke: `response.failed` for this response, with what it had so far. */
  fail(message: string, code: string): string {
    if (this.finished) return '';
    this.finished = true;
    const out = this.start();
    // Items still open are shown as far as they came.
    if (this.text) this.output[this.text.index] = messageItem(this.text.id, this.text.text, 'incomplete', this.text.refusal);
    if (this.reasoning) this.output[this.reasoning.index] = reasoningItem(this.reasoning.id, this.reasoning.text, this.reasoning.details);
    for (const t of this.tools.values()) this.output[t.index] = toolItem(t.id, t.callId, t.name, t.args, t.custom, 'incomplete');
    const r = this.snapshot('failed', { usage: this.usage ? chatUsageToResponses(this.usage) : null, error: { code, message } });
    return out + this.responseEvent('response.failed', r);
  }
}
