/**
 * Gemini `generateContent` answer → canonical (upstream side): usage, finish reason, the response
 * body and the SSE stream translator.
 */
import type { ChatChunk, ChatResponse, FinishReason, ReasoningDetail, SSEEvent, StreamTranslator, ToolCall, Usage } from '../../relay/types';
import { isRecord, newId, streamError } from '../shared';
import { GEMINI_REASONING_FORMAT } from './upstreamRequest';

// ---------------------------------------------------------------------------------------------
// Response

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  totalTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

export function geminiUsageToCanonical(u: GeminiUsageMetadata): Usage {
  const prompt = (Number(u.promptTokenCount) || 0) + (Number(u.toolUsePromptTokenCount) || 0);
  const thoughts = Number(u.thoughtsTokenCount) || 0;
  const completion = (Number(u.candidatesTokenCount) || 0) + thoughts;
  const cached = Number(u.cachedContentTokenCount) || 0;
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (cached) usage.prompt_tokens_details = { cached_tokens: cached };
  if (thoughts) usage.completion_tokens_details = { reasoning_tokens: thoughts };
  return usage;
}

export function geminiFinishToCanonical(reason: unknown): FinishReason {
  switch (reason) {
    case undefined:
    case null:
    case 'FINISH_REASON_UNSPECIFIED':
      return null;
    case 'STOP':
      return 'stop';
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
    case 'LANGUAGE':
      return 'content_filter';
    default:
      return 'stop';
  }
}

interface CandidateParts {
  text: string;
  reasoning: string;
  toolCalls: ToolCall[];
  /** Thought signatures on parts other than function calls, as canonical reasoning details. */
  details: ReasoningDetail[];
}

function readParts(candidate: Record<string, unknown>): CandidateParts {
  const content = isRecord(candidate.content) ? candidate.content : {};
  const parts = Array.isArray(content.parts) ? content.parts : [];
  const out: CandidateParts = { text: '', reasoning: '', toolCalls: [], details: [] };
  for (const p of parts) {
    if (!isRecord(p)) continue;
    const signature = typeof p.thoughtSignature === 'string' && p.thoughtSignature ? p.thoughtSignature : undefined;
    if (isRecord(p.functionCall)) {
      const call: ToolCall = {
        id: typeof p.functionCall.id === 'string' && p.functionCall.id ? p.functionCall.id : newId('call_'),
        type: 'function',
        function: { name: String(p.functionCall.name ?? ''), arguments: JSON.stringify(p.functionCall.args ?? {}) },
      };
      if (signature) call.extra_content = { google: { thought_signature: signature } };
      out.toolCalls.push(call);
      continue;
    }
    if (signature) out.details.push({ type: 'reasoning.encrypted', data: signature, format: GEMINI_REASONING_FORMAT });
    if (typeof p.text === 'string') {
      if (p.thought === true) out.reasoning += p.text;
      else out.text += p.text;
    } else if (isRecord(p.inlineData) && typeof p.inlineData.data === 'string') {
      // image output (image-generation models): markdown data URL, as new-api does
      out.text += `![image](data:${String(p.inlineData.mimeType ?? 'image/png')};base64,${p.inlineData.data})`;
    }
  }
  return out;
}

/** GenerateContentResponse → canonical response. */
export function fromGeminiResponse(body: unknown, fallbackModel: string): ChatResponse {
  const b = isRecord(body) ? body : {};
  const candidates = Array.isArray(b.candidates) ? (b.candidates.filter(isRecord) as Record<string, unknown>[]) : [];
  const choices: ChatResponse['choices'] = candidates.map((c, i) => {
    const { text, reasoning, toolCalls, details } = readParts(c);
    const message: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: text || (toolCalls.length ? null : '') };
    if (toolCalls.length) message.tool_calls = toolCalls;
    if (reasoning) message.reasoning_content = reasoning;
    if (details.length) message.reasoning_details = details;
    let finish = geminiFinishToCanonical(c.finishReason) ?? 'stop';
    if (toolCalls.length && finish === 'stop') finish = 'tool_calls';
    return { index: typeof c.index === 'number' ? c.index : i, message, finish_reason: finish };
  });
  if (!choices.length) {
    // prompt blocked (promptFeedback.blockReason): an empty, filtered answer
    choices.push({ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' });
  }
  return {
    id: typeof b.responseId === 'string' && b.responseId ? `chatcmpl-${b.responseId}` : newId('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof b.modelVersion === 'string' && b.modelVersion ? b.modelVersion : fallbackModel,
    choices,
    usage: geminiUsageToCanonical(isRecord(b.usageMetadata) ? (b.usageMetadata as GeminiUsageMetadata) : {}),
  };
}

/**
 * Gemini SSE (`data: <GenerateContentResponse>` per event) → canonical chunks. Emits a role chunk
 * first, deltas per part, a finish chunk when a candidate reports finishReason, and the usage
 * chunk (`choices: []`) at end().
 */
export class GeminiStreamTranslator implements StreamTranslator {
  private readonly id = newId('chatcmpl-');
  private model: string;
  private readonly created = Math.floor(Date.now() / 1000);
  private started = false;
  private lastUsage: GeminiUsageMetadata | undefined;
  private readonly toolCount = new Map<number, number>();
  private readonly hadTools = new Set<number>();
  private ended = false;

  constructor(model: string) {
    this.model = model;
  }

  private chunk(index: number, delta: ChatChunk['choices'][number]['delta'], finish: FinishReason = null): ChatChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index, delta, finish_reason: finish }] };
  }

  private pending: Error | undefined;

  push(event: SSEEvent): ChatChunk[] {
    if (this.pending) throw this.pending;
    if (!event.data || event.data === '[DONE]') return [];
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      return [];
    }
    if (!isRecord(data)) return [];
    if (isRecord(data.error)) {
      // thrown on the next push()/end(), so earlier chunks of the same read still reach the client
      this.pending = streamError(
        typeof data.error.message === 'string' ? data.error.message : 'upstream stream error',
        String(data.error.status ?? 'api_error'),
        event.data,
      );
      return [];
    }
    if (typeof data.modelVersion === 'string' && data.modelVersion) this.model = data.modelVersion;
    if (isRecord(data.usageMetadata)) this.lastUsage = data.usageMetadata as GeminiUsageMetadata;
    const out: ChatChunk[] = [];
    if (!this.started) {
      this.started = true;
      out.push(this.chunk(0, { role: 'assistant', content: '' }));
    }
    const candidates = Array.isArray(data.candidates) ? data.candidates.filter(isRecord) : [];
    candidates.forEach((c, i) => {
      const index = typeof c.index === 'number' ? c.index : i;
      const { text, reasoning, toolCalls, details } = readParts(c);
      if (reasoning) out.push(this.chunk(index, { reasoning_content: reasoning }));
      if (text) out.push(this.chunk(index, { content: text }));
      if (details.length) out.push(this.chunk(index, { reasoning_details: details }));
      if (toolCalls.length) {
        const base = this.toolCount.get(index) ?? 0;
        this.toolCount.set(index, base + toolCalls.length);
        this.hadTools.add(index);
        out.push(
          this.chunk(index, {
            tool_calls: toolCalls.map((tc, k) => ({
              index: base + k,
              id: tc.id,
              type: 'function' as const,
              function: tc.function,
              ...(tc.extra_content ? { extra_content: tc.extra_content } : {}),
            })),
          }),
        );
      }
      let finish = geminiFinishToCanonical(c.finishReason);
      if (finish === 'stop' && this.hadTools.has(index)) finish = 'tool_calls';
      if (finish) out.push(this.chunk(index, {}, finish));
    });
    if (!candidates.length && isRecord(data.promptFeedback) && data.promptFeedback.blockReason) {
      out.push(this.chunk(0, {}, 'content_filter'));
    }
    return out;
  }

  end(): ChatChunk[] {
    if (this.pending) throw this.pending;
    if (this.ended || !this.lastUsage) return [];
    this.ended = true;
    return [
      { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: geminiUsageToCanonical(this.lastUsage) },
    ];
  }

  usage(): Usage | undefined {
    return this.lastUsage ? geminiUsageToCanonical(this.lastUsage) : undefined;
  }
}
