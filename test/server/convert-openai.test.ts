/**
 * OpenAI Chat upstream answers and streams → canonical (pure, no DB): in-band stream errors, and
 * the passthrough observer that must forward them untouched.
 */
import { DEFAULT_OPTIONS } from '../../seeds/defaultOptions';
import { openaiAdaptor } from '../../server/src/relay/adaptors/openai';
import { UpstreamError } from '../../server/src/relay/errors';
import { CHANNEL_TYPE } from '../../server/src/channels/catalogue';
import type { AdaptorContext, ChatChunk, StreamTranslator } from '../../server/src/relay/types';

const ctx: AdaptorContext = {
  channel: { id: 1, type: CHANNEL_TYPE.OpenAI, name: 'c', key: 'sk-up', baseUrl: 'https://api.example', organization: '', other: '', setting: {} },
  upstreamModel: 'gpt-4.1',
  requestedModel: 'gpt-4.1',
  stream: true,
  endpoint: 'chat',
  option: (k: string) => DEFAULT_OPTIONS[k] ?? '',
};

const chunk = (content: string) =>
  JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta: { content }, finish_reason: null }] });

function drain(t: StreamTranslator, datas: string[]): { chunks: ChatChunk[]; error: unknown } {
  const chunks: ChatChunk[] = [];
  try {
    for (const data of datas) chunks.push(...t.push({ data }));
    chunks.push(...t.end());
  } catch (err) {
    return { chunks, error: err };
  }
  return { chunks, error: undefined };
}

describe('OpenAI stream: an in-band error event', () => {
  const serverError = JSON.stringify({ error: { message: 'The server had an error', type: 'server_error', param: null, code: null } });

  it('becomes an UpstreamError after the chunks before it', () => {
    const { chunks, error } = drain(openaiAdaptor.chatStream(ctx), [chunk('Bon'), chunk('jour'), serverError]);
    expect(chunks.map((c) => c.choices[0]!.delta.content)).toEqual(['Bon', 'jour']);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).status).toBe(500);
    expect((error as UpstreamError).message).toBe('The server had an error');
  });

  it('is thrown on the next event when more follow', () => {
    const { chunks, error } = drain(openaiAdaptor.chatStream(ctx), [serverError, chunk('late'), '[DONE]']);
    expect(chunks).toEqual([]);
    expect(error).toBeInstanceOf(UpstreamError);
  });

  it('keeps a rate limit a 429 and a numeric code its status; a string error is its message', () => {
    const rate = drain(openaiAdaptor.chatStream(ctx), [JSON.stringify({ error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } })]);
    expect((rate.error as UpstreamError).status).toBe(429);
    const coded = drain(openaiAdaptor.chatStream(ctx), [JSON.stringify({ error: { message: 'busy', code: 503 } })]);
    expect((coded.error as UpstreamError).status).toBe(503);
    const plain = drain(openaiAdaptor.chatStream(ctx), [JSON.stringify({ error: 'boom' })]);
    expect((plain.error as UpstreamError).message).toBe('boom');
  });

  it('a chunk with choices and an error-free body is not an error', () => {
    const { error } = drain(openaiAdaptor.chatStream(ctx), [
      chunk('a'),
      JSON.stringify({ id: 'c1', choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }),
    ]);
    expect(error).toBeUndefined();
  });

  it('the passthrough observer takes it without throwing (it is forwarded verbatim)', () => {
    const o = openaiAdaptor.observer!(ctx);
    expect(() => {
      o.push({ data: chunk('Bonjour') });
      o.push({ data: serverError });
      o.push({ data: '[DONE]' });
    }).not.toThrow();
    expect(o.text()).toBe('Bonjour');
  });
});
