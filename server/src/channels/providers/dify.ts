/**
 * Dify (channel type 37): a Dify app's Service API, `POST {base}/v1/chat-messages` with the app's
 * API key as Bearer.
 *
 * - Request: Dify keeps conversations itself (`conversation_id`); the gateway is stateless, so the
 *   whole OpenAI conversation becomes one `query`: a lone user message as is, otherwise a
 *   transcript (`SYSTEM:` / `USER:` / `ASSISTANT:` lines). Image URLs of the last user message go
 *   as `files` (`remote_url`; inline data URLs are left out: Dify would need an upload first).
 *   `inputs` come from the channel setting `dify_inputs` (an object), `user` from the client's
 *   `user` field (else `gateway`). Blocking for plain calls, streaming for streamed ones.
 * - Answer (blocking): `{event:'message', message_id, answer, metadata:{usage}}`.
 * - Stream (SSE, `data:` lines only): `message` / `agent_message` (answer pieces), `agent_thought`
 *   (sent as reasoning), `message_replace` (moderation replaced the answer), `message_end`
 *   (`metadata.usage`), `error` (`{status, code, message}`); workflow/node/ping events are skipped.
 * - Usage: `metadata.usage` `prompt_tokens` / `completion_tokens` (the relay counts when absent).
 */
import type { ChatChunk, ChatRequest, ChatResponse, ProviderAdaptor, SSEEvent, Usage } from '../../relay/types';
import { baseUrlOf } from '../../protocols/openai/adaptor';
import { contentText, isRecord, JsonEventTranslator, newId, streamError, upstreamErrorMessage } from '../../protocols/shared';
import { typesServedBy } from '../catalogue';

/** The conversation as one Dify query (pure; exported for tests). */
export function difyQuery(req: ChatRequest): string {
  const msgs = (req.messages ?? []).filter((m) => m.role !== 'tool' || contentText(m.content));
  if (msgs.length === 1 && msgs[0]!.role === 'user') return contentText(msgs[0]!.content);
  const label: Record<string, string> = { system: 'SYSTEM', developer: 'SYSTEM', user: 'USER', assistant: 'ASSISTANT', tool: 'TOOL' };
  return msgs.map((m) => `${label[m.role] ?? 'USER'}: ${contentText(m.content)}`).join('\n');
}

function difyFiles(req: ChatRequest): Array<Record<string, unknown>> {
  const last = [...(req.messages ?? [])].reverse().find((m) => m.role === 'user');
  if (!last || !Array.isArray(last.content)) return [];
  const files: Array<Record<string, unknown>> = [];
  for (const p of last.content) {
    const url = p.type === 'image_url' && isRecord(p.image_url) ? String(p.image_url.url ?? '') : '';
    if (/^https?:\/\//i.test(url)) files.push({ type: 'image', transfer_method: 'remote_url', url });
  }
  return files;
}

export function toDifyRequest(req: ChatRequest, stream: boolean, inputs: unknown): Record<string, unknown> {
  const body: Record<string, unknown> = {
    inputs: isRecord(inputs) ? inputs : {},
    query: difyQuery(req),
    response_mode: stream ? 'streaming' : 'blocking',
    conversation_id: '',
    user: typeof req.user === 'string' && req.user ? req.user : 'gateway',
    auto_generate_name: false,
  };
  const files = difyFiles(req);
  if (files.length) body.files = files;
  return body;
}

export function difyUsage(metadata: unknown): Usage | undefined {
  const u = isRecord(metadata) && isRecord(metadata.usage) ? metadata.usage : undefined;
  if (!u) return undefined;
  const prompt = Number(u.prompt_tokens ?? 0) || 0;
  const completion = Number(u.completion_tokens ?? 0) || 0;
  if (!prompt && !completion) return undefined;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: Number(u.total_tokens ?? 0) || prompt + completion };
}

export function fromDifyResponse(body: unknown, model: string): ChatResponse {
  const b = isRecord(body) ? body : {};
  if (b.event === 'error' || (typeof b.code === 'string' && typeof b.message === 'string' && b.answer === undefined)) {
    throw streamError(String(b.message ?? 'Dify error'), 'api_error', JSON.stringify(b));
  }
  const res: ChatResponse = {
    id: typeof b.message_id === 'string' ? `chatcmpl-${b.message_id}` : newId('chatcmpl-'),
    object: 'chat.completion',
    created: typeof b.created_at === 'number' ? b.created_at : Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: typeof b.answer === 'string' ? b.answer : '' }, finish_reason: 'stop' }],
  };
  const u = difyUsage(b.metadata);
  if (u) res.usage = u;
  return res;
}

export class DifyStreamTranslator extends JsonEventTranslator {
  push(ev: SSEEvent): ChatChunk[] {
    const d = this.json(ev);
    if (!d) return [];
    const out: ChatChunk[] = [];
    if (!this.started) {
      this.started = true;
      if (typeof d.message_id === 'string') this.id = `chatcmpl-${d.message_id}`;
      out.push(this.chunk({ role: 'assistant', content: '' }));
    }
    switch (d.event) {
      case 'message':
      case 'agent_message':
        if (typeof d.answer === 'string' && d.answer) out.push(this.chunk({ content: d.answer }));
        break;
      case 'message_replace':
        if (typeof d.answer === 'string' && d.answer) out.push(this.chunk({ content: d.answer }));
        break;
      case 'agent_thought':
        if (typeof d.thought === 'string' && d.thought) out.push(this.chunk({ reasoning_content: d.thought }));
        break;
      case 'message_end': {
        const u = difyUsage(d.metadata);
        if (u) this.u = u;
        out.push(this.chunk({}, 'stop'));
        if (u) out.push(this.usageChunk(u));
        break;
      }
      case 'error':
        throw streamError(String(d.message ?? 'Dify stream error'), 'api_error', ev.data);
      default:
        break;
    }
    return out;
  }
}

export const difyAdaptor: ProviderAdaptor = {
  name: 'dify',
  channelTypes: typesServedBy('dify'),
  format: 'openai',
  chatRequest(req, ctx) {
    return {
      url: `${baseUrlOf(ctx.channel)}/v1/chat-messages`,
      method: 'POST',
      headers: {
        authorization: `Bearer ${ctx.channel.key}`,
        'content-type': 'application/json',
        accept: ctx.stream ? 'text/event-stream' : 'application/json',
      },
      body: JSON.stringify(toDifyRequest(req, ctx.stream, ctx.channel.setting.dify_inputs)),
    };
  },
  chatResponse(body, ctx) {
    return fromDifyResponse(body, ctx.upstreamModel);
  },
  chatStream(ctx) {
    return new DifyStreamTranslator(ctx.upstreamModel);
  },
  errorMessage: upstreamErrorMessage,
};
