/**
 * AI Proxy library (channel type 21): question answering over an AI Proxy knowledge library,
 * `POST {base}/api/library/ask` (default https://api.aiproxy.io) with the key as Bearer.
 *
 * - Request: `{model, query, libraryId, stream}`; the query is the last user message (the
 *   library answers one question), the library id is the channel's `other`.
 * - Answer: `{success, answer, documents:[{title, url}]}`, or `{success:false, errCode, message}`
 *   (any status) as the error. Stream: SSE `data:` objects `{content, finish, model, documents}`.
 *   The documents the answer is based on are appended as a reference list (Markdown links).
 * - Usage: not reported by the library; the relay counts the prompt and the answer.
 */
import type { ChatChunk, ChatRequest, ChatResponse, ProviderAdaptor, SSEEvent } from '../../relay/types';
import { contentText, isRecord, JsonEventTranslator, newId, streamError, upstreamErrorMessage } from '../../protocols/shared';
import { UpstreamError } from '../../relay/errors';
import { typesServedBy } from '../catalogue';

export const AIPROXY_BASE = 'https://api.aiproxy.io';

export function toLibraryRequest(req: ChatRequest, model: string, libraryId: string, stream: boolean): Record<string, unknown> {
  const last = [...(req.messages ?? [])].reverse().find((m) => m.role === 'user') ?? req.messages?.[req.messages.length - 1];
  return { model, query: last ? contentText(last.content) : '', libraryId, stream };
}

/** The reference list appended to an answer (empty without documents). */
export function documentList(docs: unknown): string {
  const list = Array.isArray(docs) ? docs.filter(isRecord) : [];
  if (!list.length) return '';
  return `\n\n参考文档：\n${list.map((d, i) => `${i + 1}. [${String(d.title ?? '')}](${String(d.url ?? '')})`).join('\n')}`;
}

function libraryError(b: Record<string, unknown>, raw: string): UpstreamError {
  const code = Number(b.errCode ?? 0);
  const status = code === 401 || code === 403 ? code : code === 429 ? 429 : 400;
  return new UpstreamError(status, `${String(b.message ?? 'AI Proxy library error')}${code ? ` (errCode ${code})` : ''}`, raw, 'aiproxy_library');
}

export function fromLibraryResponse(body: unknown, model: string): ChatResponse {
  const b = isRecord(body) ? body : {};
  if (b.success !== true) throw libraryError(b, JSON.stringify(b));
  const answer = (typeof b.answer === 'string' ? b.answer : '') + documentList(b.documents);
  return {
    id: newId('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
  };
}

export class LibraryStreamTranslator extends JsonEventTranslator {
  push(ev: SSEEvent): ChatChunk[] {
    const d = this.json(ev);
    if (!d) return [];
    if (d.success === false) throw streamError(String(d.message ?? 'AI Proxy library error'), 'api_error', ev.data);
    const out: ChatChunk[] = [];
    if (!this.started) {
      this.started = true;
      out.push(this.chunk({ role: 'assistant', content: '' }));
    }
    if (typeof d.content === 'string' && d.content) out.push(this.chunk({ content: d.content }));
    if (d.finish === true) {
      const refs = documentList(d.documents);
      if (refs) out.push(this.chunk({ content: refs }));
      out.push(this.chunk({}, 'stop'));
    }
    return out;
  }
}

export const aiproxyLibraryAdaptor: ProviderAdaptor = {
  name: 'aiproxyLibrary',
  channelTypes: typesServedBy('aiproxyLibrary'),
  format: 'openai',
  chatRequest(req, ctx) {
    const base = (ctx.channel.baseUrl || AIPROXY_BASE).replace(/\/+$/, '');
    return {
      url: `${base}/api/library/ask`,
      method: 'POST',
      headers: {
        authorization: `Bearer ${ctx.channel.key}`,
        'content-type': 'application/json',
        accept: ctx.stream ? 'text/event-stream' : 'application/json',
      },
      body: JSON.stringify(toLibraryRequest(req, ctx.upstreamModel, ctx.channel.other.trim(), ctx.stream)),
    };
  },
  chatResponse(body, ctx) {
    return fromLibraryResponse(body, ctx.upstreamModel);
  },
  chatStream(ctx) {
    return new LibraryStreamTranslator(ctx.upstreamModel);
  },
  errorMessage: upstreamErrorMessage,
};
