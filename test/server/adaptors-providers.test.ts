/**
 * End to end over a real gateway with the `openai` SDK: Vertex AI (service-account JWT → OAuth
 * token, Gemini and Claude publishers), Cohere v2 (chat, stream, tools, rerank), Cloudflare Workers
 * AI, Ollama (native model list) and the rerank kinds Jina / Xinference, each against its mock
 * route, billed from the usage the upstream reports.
 */
import crypto from 'node:crypto';
import OpenAI from 'openai';
import { describeEach, DB_TARGETS, makeUser, type TestApp } from '../helpers/app';
import { fakeWallClock } from '../helpers/clock';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { installClaudeMock } from '../mock-upstream/claude';
import { installGeminiMock } from '../mock-upstream/gemini';
import { installVertexMock, type VertexMockState } from '../mock-upstream/vertex';
import { installCohereMock } from '../mock-upstream/cohere';
import { installCloudflareMock, type CloudflareMockState } from '../mock-upstream/cloudflare';
import { installOllamaMock } from '../mock-upstream/ollama';
import { installRerankMocks } from '../mock-upstream/jina';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { channelInfoFrom, fetchUpstreamModels, testChannel } from '../../server/src/channels/operations';
import { invalidateChannels } from '../../server/src/services/invalidate';

const MODELS = [
  'gemini-vx',
  'claude-vx-20250101',
  'command-test',
  'rerank-test',
  'rerank-fault-nousage',
  'cf-test',
  'llama-test',
  'jina-rerank',
  'xinf-rerank',
  'gemini-badkey',
  'cf-noaccount',
];
const PRICING = {
  ModelRatio: JSON.stringify(Object.fromEntries(MODELS.map((m) => [m, 1]))),
  CompletionRatio: JSON.stringify(Object.fromEntries(MODELS.map((m) => [m, 2]))),
  GroupRatio: JSON.stringify({ default: 1 }),
  PreConsumedQuota: '100',
};

const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const CLIENT_EMAIL = 'relay@test-project.iam.gserviceaccount.com';

describeEach(DB_TARGETS, 'relay: Vertex, Cohere, Cloudflare, Ollama, rerank adaptors', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let vertex: VertexMockState;
  let cf: CloudflareMockState;
  let gw: { url: string; close(): Promise<void> };
  let userId: number;
  let openai: OpenAI;
  let vertexChannel: number;

  // pretty-printed, as Google downloads it (multi-line: must stay one key)
  const serviceAccount = (pem: string) =>
    JSON.stringify(
      {
        type: 'service_account',
        project_id: 'test-project',
        private_key_id: 'kid-1',
        private_key: pem,
        client_email: CLIENT_EMAIL,
        token_uri: vertex.tokenUrl,
      },
      null,
      2,
    );

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    installClaudeMock(mock);
    installGeminiMock(mock);
    vertex = installVertexMock(mock, publicKey, CLIENT_EMAIL);
    installCohereMock(mock);
    cf = installCloudflareMock(mock);
    installOllamaMock(mock);
    installRerankMocks(mock);
    gw = await listen(app.callback);
    await setOptions(app, PRICING);
    const u = await makeUser(app, { quota: 1_000_000 });
    userId = u.id;
    const key = (await seedToken(app, userId)).key;
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    vertexChannel = await seedChannel(app, {
      name: 'vertex-ch',
      type: 41,
      key: serviceAccount(pem),
      base_url: mock.url,
      models: 'gemini-vx,claude-vx-20250101',
      other: JSON.stringify({ 'claude-vx-20250101': 'us-east5', default: 'europe-west4' }),
    });
    const otherKey = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    await seedChannel(app, { name: 'vertex-badkey', type: 41, key: serviceAccount(otherKey), base_url: mock.url, models: 'gemini-badkey', auto_ban: 0 });
    await seedChannel(app, { name: 'cohere-ch', type: 34, key: 'co-upstream', base_url: mock.url, models: 'command-test,rerank-test,rerank-fault-nousage' });
    await seedChannel(app, { name: 'cf-ch', type: 39, key: 'cf-token', base_url: mock.url, models: 'cf-test', other: 'acct123' });
    await seedChannel(app, { name: 'cf-noaccount', type: 39, key: 'cf-token', base_url: mock.url, models: 'cf-noaccount', auto_ban: 0 });
    await seedChannel(app, { name: 'ollama-ch', type: 4, key: 'ollama', base_url: mock.url, models: 'llama-test' });
    await seedChannel(app, { name: 'jina-ch', type: 38, key: 'jina-key', base_url: `${mock.url}/jina`, models: 'jina-rerank' });
    await seedChannel(app, { name: 'xinf-ch', type: 47, key: 'xinf-key', base_url: `${mock.url}/xinf`, models: 'xinf-rerank' });
    openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await mock?.close();
  });
  beforeEach(() => {
    mock.reset();
    vertex.calls.length = 0;
  });

  const quota = async () => Number((await app.knex('users').where({ id: userId }).first()).quota);
  const lastLog = async () => {
    await flushUsage(app);
    return app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc').first();
  };
  /** ratio 1, completion ratio 2 */
  const cost = (prompt: number, completion: number) => prompt + completion * 2;

  // ------------------------------------------------------------------------------------ Vertex AI

  test('Vertex Gemini (non-stream): JWT-minted token, project/region URL, Gemini conversion, billed; token cached', async () => {
    const minted = vertex.minted;
    const before = await quota();
    const res = await openai.chat.completions.create({
      model: 'gemini-vx',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(res.choices[0]!.message.content).toBe('Hello from the mock');
    expect(res.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(vertex.calls).toEqual([{ project: 'test-project', region: 'europe-west4', publisher: 'google', model: 'gemini-vx', action: 'generateContent' }]);
    const up = mock.received(/publishers\/google/)[0]!;
    expect(up.json.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(up.json.contents).toEqual([{ role: 'user', parts: [{ text: 'Hi' }] }]);
    expect(vertex.minted).toBe(minted + 1);
    expect(before - (await quota())).toBe(cost(11, 7));
    const log = await lastLog();
    expect(log.channel_name).toBe('vertex-ch');
    expect(Number(log.quota)).toBe(cost(11, 7));

    // second call: the cached token, no new exchange
    mock.reset();
    await openai.chat.completions.create({ model: 'gemini-vx', messages: [{ role: 'user', content: 'Again' }] });
    expect(vertex.minted).toBe(minted + 1);
    expect(mock.received('/vertex/token')).toHaveLength(0);
  });

  test('Vertex Gemini (stream): streamGenerateContent?alt=sse, chunks and usage back', async () => {
    const before = await quota();
    const stream = await openai.chat.completions.create({
      model: 'gemini-vx',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Stream' }],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('Hello from the mock');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(vertex.calls[0]).toMatchObject({ publisher: 'google', action: 'streamGenerateContent' });
    expect(mock.received(/streamGenerateContent/)[0]!.url).toContain('alt=sse');
    expect(before - (await quota())).toBe(cost(11, 7));
  });

  test('Vertex Claude (non-stream): rawPredict, anthropic_version vertex-2023-10-16, model@version, region from the map', async () => {
    const before = await quota();
    const res = await openai.chat.completions.create({ model: 'claude-vx-20250101', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.choices[0]!.message.content).toBe('Hello from the mock');
    expect(vertex.calls).toEqual([{ project: 'test-project', region: 'us-east5', publisher: 'anthropic', model: 'claude-vx@20250101', action: 'rawPredict' }]);
    const up = mock.received(/publishers\/anthropic/)[0]!;
    expect(up.json).toMatchObject({
      anthropic_version: 'vertex-2023-10-16',
      max_tokens: 50,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    });
    expect(up.json.model).toBeUndefined();
    expect(before - (await quota())).toBe(cost(11, 7));
  });

  test('Vertex Claude (stream): streamRawPredict, Claude events translated, billed', async () => {
    const before = await quota();
    const stream = await openai.chat.completions.create({
      model: 'claude-vx-20250101',
      stream: true,
      max_tokens: 50,
      messages: [{ role: 'user', content: 'Stream' }],
    });
    let text = '';
    let finish: string | null = null;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe('Hello from the mock');
    expect(finish).toBe('stop');
    expect(vertex.calls[0]).toMatchObject({ publisher: 'anthropic', action: 'streamRawPredict' });
    expect(before - (await quota())).toBe(cost(11, 7));
  });

  test('Vertex: expired token is re-minted; channel test goes through the same authorisation', async () => {
    vertex.tokenTtl = 1; // cached for half its life (0.5 s)
    // The token's lifetime is on the wall clock: Date is faked (only it) and moved over the half-life.
    fakeWallClock();
    try {
      const minted = vertex.minted;
      await updateKeyToForceNewCacheEntry();
      await openai.chat.completions.create({ model: 'gemini-vx', messages: [{ role: 'user', content: 'a' }] });
      expect(vertex.minted).toBe(minted + 1);
      jest.advanceTimersByTime(499);
      await openai.chat.completions.create({ model: 'gemini-vx', messages: [{ role: 'user', content: 'b' }] });
      expect(vertex.minted).toBe(minted + 1);
      jest.advanceTimersByTime(1);
      await openai.chat.completions.create({ model: 'gemini-vx', messages: [{ role: 'user', content: 'c' }] });
      expect(vertex.minted).toBe(minted + 2);
    } finally {
      jest.useRealTimers();
      vertex.tokenTtl = 3600;
    }
    const r = await testChannel(app.ctx, vertexChannel, 'gemini-vx');
    expect(r).toMatchObject({ success: true });
  });

  /** A different key text = a different cache entry (the cache is per channel and key). */
  async function updateKeyToForceNewCacheEntry() {
    const row = await app.knex('channels').where({ id: vertexChannel }).first();
    const sa = JSON.parse(row.key);
    sa.private_key_id = `kid-${crypto.randomBytes(3).toString('hex')}`;
    await app
      .knex('channels')
      .where({ id: vertexChannel })
      .update({ key: JSON.stringify(sa) });
    await invalidateChannels(app.ctx);
  }

  test('Vertex: a key the token endpoint rejects → error to the client, nothing charged, no model call', async () => {
    const before = await quota();
    await expect(openai.chat.completions.create({ model: 'gemini-badkey', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({
      status: 401,
    });
    expect(mock.received('/vertex/token')).toHaveLength(1);
    expect(mock.received(/publishers/)).toHaveLength(0);
    expect(await quota()).toBe(before);
  });

  // ------------------------------------------------------------------------------------ Cohere

  test('Cohere chat (non-stream): /v2/chat body, billed_units billed (not tokens)', async () => {
    const before = await quota();
    const res = await openai.chat.completions.create({
      model: 'command-test',
      top_p: 0.5,
      stop: 'END',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(res.choices[0]!.message.content).toBe('Hello from the mock');
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    const up = mock.received('/v2/chat')[0]!;
    expect(up.headers.authorization).toBe('Bearer co-upstream');
    expect(up.json).toMatchObject({
      model: 'command-test',
      stream: false,
      p: 0.5,
      stop_sequences: ['END'],
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(before - (await quota())).toBe(cost(11, 7));
  });

  test('Cohere chat (stream): content-delta events → chunks, usage from message-end', async () => {
    const before = await quota();
    const stream = await openai.chat.completions.create({
      model: 'command-test',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Hi' }],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('Hello from the mock');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(before - (await quota())).toBe(cost(11, 7));
    expect(Boolean((await lastLog()).is_stream)).toBe(true);
  });

  test('Cohere chat: tool calls (non-stream and stream)', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ];
    const res = await openai.chat.completions.create({ model: 'command-test', tools, messages: [{ role: 'user', content: 'weather in Paris?' }] });
    expect(res.choices[0]!.finish_reason).toBe('tool_calls');
    expect(res.choices[0]!.message.tool_calls).toEqual([
      { id: 'call_cohere1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ]);
    expect(mock.received('/v2/chat')[0]!.json.tools[0]).toMatchObject({ type: 'function', function: { name: 'get_weather' } });

    const stream = await openai.chat.completions.create({ model: 'command-test', stream: true, tools, messages: [{ role: 'user', content: 'weather now?' }] });
    let args = '';
    let name = '';
    let finish: string | null = null;
    for await (const c of stream) {
      for (const t of c.choices[0]?.delta?.tool_calls ?? []) {
        name += t.function?.name ?? '';
        args += t.function?.arguments ?? '';
      }
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(name).toBe('get_weather');
    expect(args).toBe('{"city":"Paris"}');
    expect(finish).toBe('tool_calls');
  });

  test('Cohere rerank: Jina-style body → /v2/rerank, Jina-style answer with documents, billed by input tokens', async () => {
    const before = await quota();
    const out = await openai.post<{
      model: string;
      results: Array<{ index: number; relevance_score: number; document?: { text: string } }>;
      usage: { prompt_tokens: number; total_tokens: number };
    }>('/rerank', {
      body: {
        model: 'rerank-test',
        query: 'capital of France',
        documents: ['Paris is the capital', { text: 'Berlin' }, 'Rome'],
        top_n: 2,
        return_documents: true,
      },
    });
    expect(out.results).toEqual([
      { index: 0, relevance_score: 1, document: { text: 'Paris is the capital' } },
      { index: 1, relevance_score: 0.5, document: { text: 'Berlin' } },
    ]);
    expect(out.usage).toEqual({ prompt_tokens: 11, total_tokens: 11 });
    expect(mock.received('/v2/rerank')[0]!.json).toEqual({
      model: 'rerank-test',
      query: 'capital of France',
      documents: ['Paris is the capital', 'Berlin', 'Rome'],
      top_n: 2,
    });
    expect(before - (await quota())).toBe(11);
    const log = await lastLog();
    expect(log.model_name).toBe('rerank-test');
    expect(log.prompt_tokens).toBe(11);
    expect(log.completion_tokens).toBe(0);
  });

  test('Cohere embeddings: OpenAI body → /v2/embed, OpenAI list back, billed by billed_units', async () => {
    mock.options.promptTokens = 6;
    const before = await quota();
    const res = await openai.embeddings.create({ model: 'command-test', input: ['one', 'two'], encoding_format: 'float' });
    expect(res.data).toEqual([
      { object: 'embedding', index: 0, embedding: [0.5, 0.25, -0.125] },
      { object: 'embedding', index: 1, embedding: [1.5, 0.25, -0.125] },
    ]);
    expect(res.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
    expect(mock.received('/v2/embed')[0]!.json).toEqual({
      model: 'command-test',
      texts: ['one', 'two'],
      input_type: 'search_document',
      embedding_types: ['float'],
    });
    expect(before - (await quota())).toBe(6);
    // the SDK's default: base64 asked for, decoded by the SDK back to the same floats
    const dflt = await openai.embeddings.create({ model: 'command-test', input: 'three' });
    expect(dflt.data[0]!.embedding).toEqual([0.5, 0.25, -0.125]);
  });

  test('Cohere rerank without token figures (search units only): billed by the tokenizer count', async () => {
    const before = await quota();
    const out = await openai.post<{ results: unknown[]; usage?: unknown }>('/rerank', {
      body: { model: 'rerank-fault-nousage', query: 'hello world', documents: ['a b c', 'd e f'] },
    });
    expect(out.results).toHaveLength(2);
    expect(out.usage).toBeUndefined();
    const log = await lastLog();
    expect(log.prompt_tokens).toBeGreaterThan(0);
    expect(before - (await quota())).toBe(Number(log.quota));
    expect(Number(log.quota)).toBe(log.prompt_tokens);
  });

  // ------------------------------------------------------------------------------------ Cloudflare

  test('Cloudflare: chat (stream) and embeddings at /client/v4/accounts/{account}/ai/v1, billed', async () => {
    const before = await quota();
    const stream = await openai.chat.completions.create({ model: 'cf-test', stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello from the mock');
    expect(cf.accounts).toContain('acct123');
    const up = mock.received('/client/v4/accounts/acct123/ai/v1/chat/completions')[0]!;
    expect(up.headers.authorization).toBe('Bearer cf-token');
    expect(up.json.stream_options).toEqual({ include_usage: true });
    expect(before - (await quota())).toBe(cost(11, 7));

    const emb = await openai.embeddings.create({ model: 'cf-test', input: ['a', 'b'] });
    expect(emb.data).toHaveLength(2);
    expect(mock.received('/client/v4/accounts/acct123/ai/v1/embeddings')).toHaveLength(1);
  });

  test('Cloudflare without an account id: clear error, nothing sent, nothing charged', async () => {
    const before = await quota();
    await expect(openai.chat.completions.create({ model: 'cf-noaccount', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({ status: 400 });
    expect(mock.requests).toHaveLength(0);
    expect(await quota()).toBe(before);
  });

  // ------------------------------------------------------------------------------------ Ollama

  test('Ollama: chat on /v1/chat/completions, fetch_models from /api/tags', async () => {
    const res = await openai.chat.completions.create({ model: 'llama-test', messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.choices[0]!.message.content).toBe('Hello from the mock');
    expect(mock.received('/v1/chat/completions')).toHaveLength(1);
    const models = await fetchUpstreamModels(app.ctx, channelInfoFrom({ type: 4, base_url: mock.url, key: 'ollama' }));
    expect(models).toEqual(['llama3.2:latest', 'qwen2.5:7b', 'nomic-embed-text:latest']);
    expect(mock.received('/api/tags')).toHaveLength(1);
    expect(mock.received('/v1/models')).toHaveLength(0);
  });

  // ------------------------------------------------------------------------------------ Jina / Xinference rerank

  test('Jina rerank: forwarded untouched, answer untouched, billed by usage.total_tokens', async () => {
    mock.options.promptTokens = 9;
    const before = await quota();
    const body = { model: 'jina-rerank', query: 'q', documents: ['x', 'y', 'z'], top_n: 2, return_documents: true };
    const out = await openai.post<{ results: unknown[]; usage: unknown }>('/rerank', { body });
    expect(out.results).toEqual([
      { index: 0, relevance_score: 1, document: { text: 'x' } },
      { index: 1, relevance_score: 0.5, document: { text: 'y' } },
    ]);
    expect(out.usage).toEqual({ total_tokens: 9 });
    const up = mock.received('/jina/v1/rerank')[0]!;
    expect(up.json).toEqual(body);
    expect(up.headers.authorization).toBe('Bearer jina-key');
    expect(before - (await quota())).toBe(9);
  });

  test('Xinference rerank: usage read from meta.tokens', async () => {
    mock.options.promptTokens = 13;
    const before = await quota();
    const out = await openai.post<{ results: Array<{ index: number }>; meta: unknown }>('/rerank', {
      body: { model: 'xinf-rerank', query: 'q', documents: ['x', 'y'] },
    });
    expect(out.results.map((r) => r.index)).toEqual([0, 1]);
    expect(mock.received('/xinf/v1/rerank')).toHaveLength(1);
    expect(before - (await quota())).toBe(13);
    expect((await lastLog()).prompt_tokens).toBe(13);
  });
});
