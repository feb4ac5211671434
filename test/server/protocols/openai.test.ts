/**
 * OpenAI Chat upstream answers and streams → canonical (pure, no DB): in-band stream errors, and
 * the passthrough observer that must forward them untouched; refusals carried to other clients.
 */
import { DEFAULT_OPTIONS } from '../../../seeds/defaultOptions';
import { openaiAdaptor, toOpenAIChatBody } from '../../../server/src/protocols/openai/adaptor';
import { fileNameFor } from '../../../server/src/protocols/shared';
import { claudeToChat } from '../../../server/src/protocols/claude/request';
import { responsesToChat } from '../../../server/src/protocols/responses/request';
import { UpstreamError } from '../../../server/src/relay/errors';
import { CHANNEL_TYPE } from '../../../server/src/channels/kinds';
import { chatToClaude } from '../../../server/src/protocols/claude/answer';
import { ClaudeStreamWriter } from '../../../server/src/protocols/claude/streamWriter';
import { chatToGemini, GeminiStreamWriter } from '../../../server/src/protocols/gemini/format';
import { chatToResponses } from '../../../server/src/protocols/responses/answer';
import { ResponsesStreamWriter } from '../../../server/src/protocols/responses/streamWriter';
import type { AdaptorContext, ChatChunk, ChatResponse, StreamTranslator } from '../../../server/src/relay/types';

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

  it('OpenRouter (error beside a finish_reason "error" choice) and vLLM (object: "error") shapes too', () => {
    const openrouter = JSON.stringify({
      id: 'gen-1',
      object: 'chat.completion.chunk',
      error: { code: 502, message: 'Provider disconnected' },
      choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }],
    });
    const or = drain(openaiAdaptor.chatStream(ctx), [chunk('a'), openrouter]);
    expect(or.chunks).toHaveLength(1);
    expect((or.error as UpstreamError).status).toBe(502);
    expect((or.error as UpstreamError).message).toBe('Provider disconnected');
    const vllm = drain(openaiAdaptor.chatStream(ctx), [JSON.stringify({ object: 'error', message: 'context too long', type: 'BadRequestError', code: 400 })]);
    expect((vllm.error as UpstreamError).status).toBe(400);
    expect((vllm.error as UpstreamError).message).toBe('context too long');
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

describe('OpenAI refusal → other clients', () => {
  const refusal = "I can't help with that.";
  const answer = openaiAdaptor.chatResponse(
    {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4.1',
      choices: [{ index: 0, message: { role: 'assistant', content: null, refusal }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
    },
    ctx,
  ) as ChatResponse;
  const chunks: ChatChunk[] = [
    {
      id: 'c1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta: { role: 'assistant', content: null, refusal: '' }, finish_reason: null }],
    },
    { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { refusal: "I can't " }, finish_reason: null }] },
    { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { refusal: 'help with that.' }, finish_reason: null }] },
    { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  ];
  const events = (sse: string) =>
    sse
      .split('\n\n')
      .filter((b) => b.includes('data: '))
      .map((b) => JSON.parse(b.slice(b.indexOf('data: ') + 6)) as Record<string, any>);

  it('Claude: the text of the answer, stop_reason refusal (whole and streamed)', () => {
    const claude = chatToClaude(answer, 'claude-x');
    expect(claude.content).toEqual([{ type: 'text', text: refusal }]);
    expect(claude.stop_reason).toBe('refusal');
    const w = new ClaudeStreamWriter('claude-x');
    const evs = events(chunks.map((c) => w.chunk(c)).join('') + w.end(undefined));
    expect(evs.filter((e) => e.type === 'content_block_delta').map((e) => e.delta.text)).toEqual(["I can't ", 'help with that.']);
    expect(evs.find((e) => e.type === 'message_delta')!.delta.stop_reason).toBe('refusal');
  });

  it('Claude: a plain answer still ends with end_turn', () => {
    const w = new ClaudeStreamWriter('claude-x');
    const evs = events(w.chunk({ ...chunks[1]!, choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }] }) + w.end(undefined));
    expect(evs.find((e) => e.type === 'message_delta')!.delta.stop_reason).toBe('end_turn');
  });

  it('Gemini: a text part, finishReason STOP (whole and streamed)', () => {
    const gemini = chatToGemini(answer, 'gemini-x') as { candidates: Array<{ content: { parts: unknown[] }; finishReason: string }> };
    expect(gemini.candidates[0]!.content.parts).toEqual([{ text: refusal }]);
    expect(gemini.candidates[0]!.finishReason).toBe('STOP');
    const w = new GeminiStreamWriter('gemini-x');
    const evs = events(chunks.map((c) => w.chunk(c)).join('') + w.end(undefined));
    const text = evs.map((e) => (e.candidates[0].content.parts as Array<{ text?: string }>).map((p) => p.text ?? '').join('')).join('');
    expect(text).toBe(refusal);
  });

  it('Responses: a refusal content part, and refusal events in the stream', () => {
    const r = chatToResponses(answer, 'gpt-x') as { output: Array<{ type: string; content: unknown[] }> };
    expect(r.output).toHaveLength(1);
    expect(r.output[0]!.content).toEqual([{ type: 'refusal', refusal }]);
    const w = new ResponsesStreamWriter('gpt-x');
    const evs = events(chunks.map((c) => w.chunk(c)).join('') + w.end(undefined));
    const types = evs.map((e) => e.type as string);
    expect(types.filter((t) => t.startsWith('response.refusal'))).toEqual(['response.refusal.delta', 'response.refusal.delta', 'response.refusal.done']);
    expect(types.some((t) => t.startsWith('response.output_text'))).toBe(false);
    expect(evs.find((e) => e.type === 'response.refusal.done')!.refusal).toBe(refusal);
    expect(evs.find((e) => e.type === 'response.content_part.added')!.part).toEqual({ type: 'refusal', refusal: '' });
    const done = evs.find((e) => e.type === 'response.completed')!.response;
    expect(done.output[0].content).toEqual([{ type: 'refusal', refusal }]);
  });

  it('Responses: text then a refusal are two message items, each closed', () => {
    const w = new ResponsesStreamWriter('gpt-x');
    const text: ChatChunk = { ...chunks[1]!, choices: [{ index: 0, delta: { content: 'Well. ' }, finish_reason: null }] };
    const evs = events([text, ...chunks].map((c) => w.chunk(c)).join('') + w.end(undefined));
    const done = evs.filter((e) => e.type === 'response.output_item.done').map((e) => e.item.content[0].type);
    expect(done).toEqual(['output_text', 'refusal']);
  });
});

describe('file parts towards OpenAI always have a filename', () => {
  const pdf = 'data:application/pdf;base64,JVBERi0=';

  it('fileNameFor: the title (with an extension from the media type), else document.<ext>', () => {
    expect(fileNameFor('application/pdf', 'Report')).toBe('Report.pdf');
    expect(fileNameFor('application/pdf', 'q3.pdf')).toBe('q3.pdf');
    expect(fileNameFor('application/pdf')).toBe('document.pdf');
    expect(fileNameFor('text/plain', '  ')).toBe('document.txt');
    expect(fileNameFor('application/vnd.openxmlformats-officedocument.wordprocessingml.document')).toBe('document.docx');
    expect(fileNameFor('application/x-something-long')).toBe('document.bin');
  });

  it('a Claude base64 document takes its title, or a name from its media type', () => {
    const req = claudeToChat({
      model: 'm',
      max_tokens: 10,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', title: 'Report', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
          ],
        },
      ],
    });
    const parts = req.messages[0]!.content as Array<{ type: string; file?: { filename?: string; file_data?: string } }>;
    expect(parts.map((p) => p.file?.filename)).toEqual(['Report.pdf', 'document.pdf']);
    expect(parts[0]!.file!.file_data).toBe(pdf);
  });

  it('a Responses input_file without a filename gets one', () => {
    const req = responsesToChat({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_data: pdf }] }] });
    const part = (req.messages[0]!.content as Array<{ file?: { filename?: string } }>)[0]!;
    expect(part.file!.filename).toBe('document.pdf');
  });

  it('the OpenAI body names any nameless file_data part (and keeps a given name)', () => {
    const body = toOpenAIChatBody(
      {
        model: 'm',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'file', file: { file_data: pdf } },
              { type: 'file', file: { file_data: pdf, filename: 'mine.pdf' } },
              { type: 'file', file: { file_id: 'file-1' } },
            ] as never,
          },
        ],
      },
      ctx,
    );
    const parts = (body.messages as Array<{ content: Array<{ file: Record<string, unknown> }> }>)[0]!.content;
    expect(parts.map((p) => p.file)).toEqual([{ file_data: pdf, filename: 'document.pdf' }, { file_data: pdf, filename: 'mine.pdf' }, { file_id: 'file-1' }]);
  });
});

describe('OpenAI passthrough request', () => {
  it("forwards the client's OpenAI-Beta header, and only on the passthrough", () => {
    const withBeta: AdaptorContext = { ...ctx, clientHeader: (n) => (n === 'openai-beta' ? 'assistants=v2' : '') };
    expect(openaiAdaptor.rawRequest!({ model: 'gpt-4.1', messages: [] }, withBeta).headers['openai-beta']).toBe('assistants=v2');
    expect(openaiAdaptor.rawRequest!({ model: 'gpt-4.1', messages: [] }, ctx).headers['openai-beta']).toBeUndefined();
    const converted = openaiAdaptor.chatRequest({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }] }, withBeta);
    expect(converted.headers['openai-beta']).toBeUndefined();
  });
});
