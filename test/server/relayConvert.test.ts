/**
 * The conversion path (client format ≠ upstream format) and same-format passthrough of a
 * non-OpenAI format, with a toy client format and a toy provider, as Claude/Gemini plug in.
 */
import { describeEach, DB_TARGETS, makeUser, type TestApp } from '../helpers/app';
import { verbatim } from '../../server/src/i18n';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { inboundRoutes } from '../../server/src/protocols';
import { registerAdaptor } from '../../server/src/channels/providers';
import { RelayError } from '../../server/src/relay/errors';
import type { ChatChunk, ChatRequest, ChatResponse, InboundFormat, ProviderAdaptor, Usage } from '../../server/src/relay/types';

/** Toy client format: {model, text, stream} → {answer, tokens}; stream events `data: {"piece": …}`. */
const toy: InboundFormat = {
  name: 'toy' as 'claude',
  toChat(body: unknown): ChatRequest {
    const b = body as { model?: string; text?: string; stream?: boolean };
    if (!b.text) throw new RelayError(400, verbatim('text required'), 'invalid_request');
    return { model: String(b.model ?? ''), messages: [{ role: 'user', content: b.text }], stream: !!b.stream };
  },
  answerJson(res: ChatResponse) {
    return JSON.stringify({ answer: res.choices[0]?.message.content, tokens: res.usage?.total_tokens });
  },
  streamWriter() {
    return {
      chunk: (c: ChatChunk) => (c.choices[0]?.delta?.content ? `data: ${JSON.stringify({ piece: c.choices[0].delta.content })}\n\n` : ''),
      end: (u: Usage | undefined) => `data: ${JSON.stringify({ done: true, usage: u })}\n\n`,
    };
  },
  error: (status: number, message: string) => ({ toyError: message, status }),
};

/** Toy provider speaking the toy format natively at POST /toy/generate (passthrough only). */
const toyAdaptor: ProviderAdaptor = {
  name: 'toy',
  channelTypes: [990],
  format: 'toy' as 'claude',
  chatRequest: () => {
    throw new Error('not used');
  },
  chatResponse: (b) => b as ChatResponse,
  chatStream: () => ({ push: () => [], end: () => [], usage: () => undefined }),
  errorMessage: (_s, body) => body,
  rawRequest(body, ctx) {
    return { url: `${ctx.channel.baseUrl}/toy/generate`, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  },
  usageFromBody: (b) => ({ prompt_tokens: (b as { in: number }).in, completion_tokens: (b as { out: number }).out, total_tokens: 0 }),
};

inboundRoutes.push({ method: 'POST', match: (p) => (p === '/v1/toy' ? {} : null), format: toy, keyStyle: 'claude' });
registerAdaptor(toyAdaptor);

describeEach(DB_TARGETS, 'relay: format conversion', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let gw: { url: string; close(): Promise<void> };
  let key: string;
  let userId: number;

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    mock.route('POST', /^\/toy\/generate$/, (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ answer: `echo ${req.json.text}`, in: 20, out: 5 }));
    });
    gw = await listen(app.callback);
    await setOptions(app, {
      ModelRatio: JSON.stringify({ 'conv-model': 1, 'toy-model': 1 }),
      CompletionRatio: '{}',
      GroupRatio: '{"default":1}',
      PreConsumedQuota: '0',
    });
    const u = await makeUser(app, { quota: 100_000 });
    userId = u.id;
    key = (await seedToken(app, userId)).key;
    await seedChannel(app, { base_url: mock.url, models: 'conv-model' });
    await seedChannel(app, { type: 990, base_url: mock.url, models: 'toy-model' });
  });
  afterAll(async () => {
    await gw?.close();
    await mock?.close();
  });
  const quota = async () => Number((await app.knex('users').where({ id: userId }).first()).quota);

  test('toy client → OpenAI upstream, non-stream: converted both ways, billed by upstream usage', async () => {
    const before = await quota();
    const res = await app.http().post('/v1/toy').set('x-api-key', key).send({ model: 'conv-model', text: 'hi' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ answer: 'Hello from the mock', tokens: 18 });
    expect(mock.received('/v1/chat/completions')[0]!.json).toMatchObject({ model: 'conv-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(before - (await quota())).toBe(18);
  });

  test('toy client → OpenAI upstream, stream: translated chunks, usage at the end', async () => {
    const res = await fetch(`${gw.url}/v1/toy`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'conv-model', text: 'hi', stream: true }),
    });
    const text = await res.text();
    const events = text
      .split('\n\n')
      .filter(Boolean)
      .map((e) => JSON.parse(e.replace(/^data: /, '')));
    expect(
      events
        .filter((e) => e.piece)
        .map((e) => e.piece)
        .join(''),
    ).toBe('Hello from the mock');
    expect(events.at(-1)).toMatchObject({ done: true, usage: { prompt_tokens: 11, completion_tokens: 7 } });
    expect(mock.received('/v1/chat/completions').at(-1)!.json.stream_options).toEqual({ include_usage: true });
  });

  test('toy client → toy upstream: same-format passthrough; errors in the toy format', async () => {
    const before = await quota();
    const res = await app.http().post('/v1/toy').set('x-api-key', key).send({ model: 'toy-model', text: 'abc' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ answer: 'echo abc', in: 20, out: 5 });
    expect(before - (await quota())).toBe(25);
    await flushUsage(app);
    const bad = await app.http().post('/v1/toy').set('x-api-key', 'sk-wrong').send({ model: 'toy-model', text: 'abc' });
    expect(bad.status).toBe(401);
    expect(bad.body.toyError).toBeTruthy();
    const invalid = await app.http().post('/v1/toy').set('x-api-key', key).send({ model: 'toy-model' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.toyError).toBe('text required');
  });
});
