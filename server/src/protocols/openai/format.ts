import { defaultType, RelayError } from '../../relay/errors';
import { msg } from '../../i18n';
import { hasExactly, jsonName, jsonNumber } from '../../lib/json';
import type { ChatChunk, ChatRequest, ChatResponse, InboundFormat, Usage } from '../../relay/types';

/** OpenAI error body. */
export function openaiError(status: number, message: string, code: string, type?: string) {
  return { error: { message, type: type ?? defaultType(status), param: null, code } };
}

export interface OpenAIStreamOptions {
  /** The client asked for `stream_options.include_usage`: send the usage chunk. */
  includeUsage?: boolean;
}

const CHUNK_KEYS = ['id', 'object', 'created', 'model', 'choices'] as const;
const CHOICE_KEYS = ['index', 'delta', 'finish_reason'] as const;
const CONTENT_KEYS = ['content'] as const;

/**
 * The text of a chunk that is one text token and nothing else (`{id, object, created, model,
 * choices: [{index: 0, delta: {content}, finish_reason: null}]}`, keys in that order, as the
 * translators make them), else undefined. Such a chunk, most of a converted stream, is written by
 * template: the same text JSON.stringify gives, without its walk over every key.
 */
function textDelta(c: ChatChunk): string | undefined {
  if (
    !hasExactly(c, CHUNK_KEYS) ||
    c.object !== 'chat.completion.chunk' ||
    typeof c.id !== 'string' ||
    typeof c.created !== 'number' ||
    typeof c.model !== 'string'
  )
    return undefined;
  if (!Array.isArray(c.choices) || c.choices.length !== 1) return undefined;
  const ch = c.choices[0]!;
  if (!hasExactly(ch, CHOICE_KEYS) || ch.index !== 0 || ch.finish_reason !== null || !ch.delta || !hasExactly(ch.delta, CONTENT_KEYS)) return undefined;
  const text = ch.delta.content;
  return typeof text === 'string' ? text : undefined;
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
    /** The last chunk id and its JSON (a converted stream keeps one id). */
    let idOf = '';
    let idJson = '""';
    return {
      chunk(c: ChatChunk): string {
        id = c.id || id;
        created = c.created || created;
        if (!c.choices?.length && c.usage) return '';
        const text = textDelta(c);
        if (text !== undefined) {
          if (c.id !== idOf) idJson = JSON.stringify((idOf = c.id));
          return `data: {"id":${idJson},"object":"chat.completion.chunk","created":${jsonNumber(c.created)},"model":${jsonName(c.model)},"choices":[{"index":0,"delta":{"content":${JSON.stringify(text)}},"finish_reason":null}]}\n\n`;
        }
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
