import { defaultType, RelayError } from '../errors';
import { msg } from '../../i18n';
import type { ChatChunk, ChatRequest, ChatResponse, InboundFormat, Usage } from '../types';

/** OpenAI error body. */
export function openaiError(status: number, message: string, code: string, type?: string) {
  return { error: { message, type: type ?? defaultType(status), param: null, code } };
}

export interface OpenAIStreamOptions {
  /** The client asked for `stream_options.include_usage`: send the usage chunk. */
  includeUsage?: boolean;
}

/** The client-facing OpenAI Chat Completions format (the canonical one: conversions are identities). */
export const openaiFormat: InboundFormat & {
  streamWriter(requestedModel: string, opts?: OpenAIStreamOptions): { chunk(c: ChatChunk): string; end(usage: Usage | undefined): string };
} = {
  name: 'openai',
  toChat(body: unknown): ChatRequest {
    const b = body as ChatRequest;
    if (!b || typeof b !== 'object' || Array.isArray(b)) throw new RelayError(400, 'body.not_object', 'invalid_request');
    if (typeof b.model !== 'string' || !b.model.trim()) throw new RelayError(400, 'relay.model_missing', 'invalid_request');
    if (!Array.isArray(b.messages) || b.messages.length === 0) throw new RelayError(400, msg('relay.field_empty', { field: 'messages' }), 'invalid_request');
    return b;
  },
  modelOf(body: unknown): string | undefined {
    const m = (body as { model?: unknown })?.model;
    return typeof m === 'string' ? m : undefined;
  },
  openaiFiles(body: unknown): string | undefined {
    const messages = (body as { messages?: unknown })?.messages;
    if (!Array.isArray(messages)) return undefined;
    for (let i = 0; i < messages.length; i++) {
      const content = (messages[i] as { content?: unknown } | null)?.content;
      if (!Array.isArray(content)) continue;
      for (const p of content) {
        const file = (p as { type?: unknown; file?: { file_id?: unknown; file_data?: unknown } } | null)?.file;
        if ((p as { type?: unknown }).type === 'file' && typeof file?.file_id === 'string' && file.file_id && !file.file_data) {
          return `messages[${i}].content (file_id)`;
        }
      }
    }
    return undefined;
  },
  answerJson(res: ChatResponse): string {
    return JSON.stringify(res);
  },
  streamWriter(requestedModel: string, opts: OpenAIStreamOptions = {}) {
    let id = '';
    let created = 0;
    return {
      chunk(c: ChatChunk): string {
        id = c.id || id;
        created = c.created || created;
        if (!c.choices?.length && c.usage) return '';
        const out = c.usage === undefined ? c : { ...c, usage: undefined };
        return `data: ${JSON.stringify(out)}\n\n`;
      },
      end(usage: Usage | undefined): string {
        let s = '';
        if (opts.includeUsage && usage) {
          s += `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: created || Math.floor(Date.now() / 1000), model: requestedModel, choices: [], usage })}\n\n`;
        }
        return `${s}data: [DONE]\n\n`;
      },
    };
  },
  error(status: number, message: string, code: string): unknown {
    return openaiError(status, message, code);
  },
};
