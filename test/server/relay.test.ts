import OpenAI from 'openai';
import { describeEach, DB_TARGETS, makeUser, type TestApp } from '../helpers/app';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { flushUsage, listen, seedChannel, seedToken, setOptions, setUser } from '../mock-upstream/seed';
import { upstreamAgent } from '../../server/src/relay/upstream';

const PRICING = {
  ModelRatio: JSON.stringify({
    'test-model': 2,
    'test-cheap': 0.5,
    'other-model': 1,
    'text-embedding-3-small': 0.01,
    'omni-moderation-latest': 0.1,
    'tts-1': 7.5,
    'whisper-1': 15,
  }),
  CompletionRatio: JSON.stringify({ 'test-model': 3 }),
  CacheRatio: JSON.stringify({ 'test-model': 0.5 }),
  ModelPrice: JSON.stringify({ 'dall-e-3': 0.04, 'fixed-model': 0.002 }),
  GroupRatio: JSON.stringify({ default: 1, vip: 1.5, svip: 2 }),
  UserUsableGroups: JSON.stringify({ default: '默认分组', vip: 'vip分组' }),
  PreConsumedQuota: '500',
};

describeEach(DB_TARGETS, 'relay: OpenAI-compatible core', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let gw: { url: string; close(): Promise<void> };
  let userId: number;
  let key: string;
  let tokenId: number;
  let client: OpenAI;

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    gw = await listen(app.callback);
    await setOptions(app, PRICING);
    const u = await makeUser(app, { quota: 1_000_000 });
    userId = u.id;
    const t = await seedToken(app, userId);
    key = t.key;
    tokenId = t.id;
    await seedChannel(app, {
      base_url: mock.url,
      models: 'test-model,test-cheap,text-embedding-3-small,omni-moderation-latest,dall-e-3,tts-1,whisper-1,fixed-model',
      name: 'main',
    });
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await mock?.close();
  });
  beforeEach(() => mock.reset());

  const quotaOf = async (id: number) => Number((await app.knex('users').where({ id }).first()).quota);
  /** The text and usage an SDK stream delivered. */
  const readStream = async (stream: AsyncIterable<OpenAI.ChatCompletionChunk>) => {
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      if (c.usage) usage = c.usage;
    }
    return { text, usage };
  };

  test('non-stream chat: forwards the body, answers upstream JSON, bills exactly by the formula', async () => {
    const before = await quotaOf(userId);
    const res = await client.chat.completions.create({ model: 'test-model', messages: [{ role: 'user', content: 'hi there' }] });
    expect(res.choices[0]!.message.content).toBe('Hello from the mock');
    expect(res.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    const fwd = mock.received('/v1/chat/completions')[0]!;
    expect(fwd.json).toEqual({ model: 'test-model', messages: [{ role: 'user', content: 'hi there' }] });
    expect(fwd.headers.authorization).toBe('Bearer sk-upstream-key');
    // 1 × 2 × (11 + 7 × 3) = 64
    expect(before - (await quotaOf(userId))).toBe(64);
    await flushUsage(app);
    const log = await app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc').first();
    expect(Number(log.quota)).toBe(64);
    expect(log.model_name).toBe('test-model');
    expect(log.prompt_tokens).toBe(11);
    expect(log.completion_tokens).toBe(7);
    expect(log.token_name).toBe('test-token');
    expect(log.channel_name).toBe('main');
    expect(log.group).toBe('default');
    expect(Boolean(log.is_stream)).toBe(false);
    const other = JSON.parse(log.other);
    expect(other).toMatchObject({
      model_ratio: 2,
      completion_ratio: 3,
      group_ratio: 1,
      cache_ratio: 0.5,
      model_price: -1,
      is_model_mapped: false,
      cache_tokens: 0,
    });
    expect(other.admin_info.use_channel).toHaveLength(1);
    const tok = await app.knex('tokens').where({ id: tokenId }).first();
    expect(Number(tok.used_quota)).toBeGreaterThanOrEqual(64);
  });

  test('a price change applies to the very next call (prices and their log text are kept only until the options change)', async () => {
    const lastLog = async () => {
      await flushUsage(app);
      return app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc').first();
    };
    const call = () => client.chat.completions.create({ model: 'test-cheap', messages: [{ role: 'user', content: 'hi there' }] });
    const ratios = JSON.parse(PRICING.ModelRatio) as Record<string, number>;
    try {
      await call();
      const first = await lastLog();
      expect(JSON.parse(first.other).model_ratio).toBe(ratios['test-cheap']);
      await setOptions(app, { ModelRatio: JSON.stringify({ ...ratios, 'test-cheap': 0.25 }) });
      const before = await quotaOf(userId);
      await call();
      const second = await lastLog();
      // 1 × 0.25 × (11 + 7 × completion ratio)
      expect(JSON.parse(second.other).model_ratio).toBe(0.25);
      expect(second.content).toContain('模型倍率 0.25');
      expect(Number(second.quota)).toBe(before - (await quotaOf(userId)));
      expect(Number(second.quota)).not.toBe(Number(first.quota));
    } finally {
      await setOptions(app, { ModelRatio: PRICING.ModelRatio });
    }
  });

  test('cache tokens are billed at the cache ratio', async () => {
    mock.options.cachedTokens = 8; // prompt 11 of which 8 cached
    const before = await quotaOf(userId);
    await client.chat.completions.create({ model: 'test-model', messages: [{ role: 'user', content: 'cached' }] });
    // 2 × ((11-8) + 8×0.5 + 7×3) = 2 × 28 = 56
    expect(before - (await quotaOf(userId))).toBe(56);
    await flushUsage(app);
    const log = await app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc').first();
    expect(Number(log.quota)).toBe(56);
    expect(JSON.parse(log.other).cache_tokens).toBe(8);
  });

  test('stream with include_usage: chunks pass through, usage chunk delivered, billed from it', async () => {
    const before = await quotaOf(userId);
    const stream = await client.chat.completions.create({
      model: 'test-model',
      messages: [{ role: 'user', content: 'stream' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { text, usage } = await readStream(stream);
    expect(text).toBe('Hello from the mock');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(mock.received('/v1/chat/completions')[0]!.json.stream_options).toEqual({ include_usage: true });
    expect(before - (await quotaOf(userId))).toBe(64);
    await flushUsage(app);
    const log = await app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc').first();
    expect(Boolean(log.is_stream)).toBe(true);
    expect(Number(log.quota)).toBe(64);
  });

  test('stream without include_usage: upstream is asked for usage, client gets no usage chunk', async () => {
    const before = await quotaOf(userId);
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test-model', messages: [{ role: 'user', content: 'x' }], stream: true }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const raw = await res.text();
    expect(raw).toContain('"content":"Hello"');
    expect(raw).not.toContain('"prompt_tokens"');
    expect(raw.trim().endsWith('data: [DONE]')).toBe(true);
    expect(mock.received('/v1/chat/completions')[0]!.json.stream_options).toEqual({ include_usage: true });
    expect(before - (await quotaOf(userId))).toBe(64);
  });

  test('a stream whose blocks arrive split at any byte reads and bills like one of whole blocks', async () => {
    // Whole blocks are forwarded as bytes; split ones go through the SSE splitter: both must agree.
    await setOptions(app, { ModelRatio: JSON.stringify({ ...JSON.parse(PRICING.ModelRatio), 'ragged-model': 1 }) });
    await seedChannel(app, { base_url: mock.url, models: 'ragged-model', key: 'sk-fault-ragged', name: 'ragged' });
    try {
      const before = await quotaOf(userId);
      const stream = await client.chat.completions.create({
        model: 'ragged-model',
        messages: [{ role: 'user', content: 'x' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const { text, usage } = await readStream(stream);
      expect(text).toBe('Hello from the mock');
      expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
      expect(before - (await quotaOf(userId))).toBe(18); // 1 × (11 + 7)
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'ragged-model', messages: [{ role: 'user', content: 'x' }], stream: true }),
      });
      const raw = await res.text();
      expect(raw).not.toContain('"prompt_tokens"'); // the usage-only chunk the client did not ask for is dropped
      expect(raw.trim().endsWith('data: [DONE]')).toBe(true);
      expect(raw.match(/\n\n/g)).toHaveLength(7); // role, 4 pieces, finish, [DONE]
    } finally {
      await setOptions(app, { ModelRatio: PRICING.ModelRatio });
    }
  });

  test('stream without upstream usage: counted with the tokenizer', async () => {
    await seedChannel(app, { base_url: mock.url, models: 'test-cheap', key: 'sk-fault-nousage', name: 'nousage', priority: 10 });
    const before = await quotaOf(userId);
    const stream = await client.chat.completions.create({ model: 'test-cheap', messages: [{ role: 'user', content: 'count me please' }], stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello from the mock');
    await flushUsage(app);
    const log = await app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc').first();
    // "Hello from the mock" is 4 tokens in cl100k; prompt: 3 + 3 + tokens("count me please") = 3
    expect(log.model_name).toBe('test-cheap');
    expect(log.completion_tokens).toBe(4);
    expect(log.prompt_tokens).toBe(9);
    const expected = Math.round(0.5 * (9 + 4));
    expect(Number(log.quota)).toBe(expected);
    expect(before - (await quotaOf(userId))).toBe(expected);
  });

  test('legacy completions, non-stream and stream', async () => {
    const before = await quotaOf(userId);
    const c = await client.completions.create({ model: 'test-model', prompt: 'Say hi' });
    expect(c.choices[0]!.text).toBe('Hello from the mock');
    const s = await client.completions.create({ model: 'test-model', prompt: 'Say hi', stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: unknown;
    for await (const ch of s) {
      text += ch.choices[0]?.text ?? '';
      if (ch.usage) usage = ch.usage;
    }
    expect(text).toBe('Hello from the mock');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(before - (await quotaOf(userId))).toBe(128);
  });

  test('embeddings, moderations, models list', async () => {
    const before = await quotaOf(userId);
    const e = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'] });
    expect(e.data).toHaveLength(2);
    expect(e.usage.prompt_tokens).toBe(11);
    // round(0.01 × 11) = 0
    expect(before - (await quotaOf(userId))).toBe(0);
    const m = await client.moderations.create({ model: 'omni-moderation-latest', input: 'hello world' });
    expect(m.results).toHaveLength(1);
    const models = await client.models.list();
    const ids = models.data.map((x) => x.id);
    expect(ids).toEqual(expect.arrayContaining(['test-model', 'text-embedding-3-small']));
    expect(ids).not.toContain('unserved-model');
    const asClaude = await app.http().get('/v1/models').set('x-api-key', key).set('anthropic-version', '2023-06-01');
    expect(asClaude.status).toBe(200);
    expect(asClaude.body.data.map((m: { id: string }) => m.id)).toEqual(expect.arrayContaining(['test-model']));
    expect(asClaude.body.data[0].type).toBe('model');
    expect(asClaude.body.has_more).toBe(false);
    const one = await client.models.retrieve('test-model');
    expect(one.id).toBe('test-model');
  });

  test('images at a fixed price per image × group ratio', async () => {
    const before = await quotaOf(userId);
    const img = await client.images.generate({ model: 'dall-e-3', prompt: 'a cat', n: 2 });
    expect(img.data).toHaveLength(2);
    // 0.04 × 1 × 500000 × 2
    expect(before - (await quotaOf(userId))).toBe(40000);
  });

  test('fixed ModelPrice chat and group ratio (vip token)', async () => {
    const vipTok = await seedToken(app, userId, { group: 'vip' });
    await seedChannel(app, { base_url: mock.url, models: 'fixed-model,test-model', group: 'vip', name: 'vip' });
    const vip = new OpenAI({ apiKey: vipTok.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    let before = await quotaOf(userId);
    await vip.chat.completions.create({ model: 'fixed-model', messages: [{ role: 'user', content: 'x' }] });
    // round(0.002 × 1.5 × 500000) = 1500
    expect(before - (await quotaOf(userId))).toBe(1500);
    before = await quotaOf(userId);
    await vip.chat.completions.create({ model: 'test-model', messages: [{ role: 'user', content: 'x' }] });
    // round(1.5 × 2 × (11 + 21)) = 96
    expect(before - (await quotaOf(userId))).toBe(96);
    await flushUsage(app);
    const log = await app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc').first();
    expect(log.group).toBe('vip');
    expect(JSON.parse(log.other).group_ratio).toBe(1.5);
  });

  test('Responses API: non-stream and stream pass through, billed from input/output tokens', async () => {
    let before = await quotaOf(userId);
    const r = await client.responses.create({ model: 'test-model', input: 'hello' });
    expect(r.output_text).toBe('Hello from the mock');
    expect(before - (await quotaOf(userId))).toBe(64);
    before = await quotaOf(userId);
    const stream = await client.responses.create({ model: 'test-model', input: [{ role: 'user', content: 'hello' }], stream: true });
    let text = '';
    for await (const ev of stream) if (ev.type === 'response.output_text.delta') text += ev.delta;
    expect(text).toBe('Hello from the mock');
    expect(before - (await quotaOf(userId))).toBe(64);
    expect(mock.received('/v1/responses').at(-1)!.json.stream_options).toBeUndefined();
  });

  test('rerank: passthrough, billed on total tokens', async () => {
    await setOptions(app, { ModelRatio: JSON.stringify({ ...JSON.parse(PRICING.ModelRatio), 'rerank-model': 3 }) });
    await seedChannel(app, { type: 38, base_url: mock.url, models: 'rerank-model' });
    const before = await quotaOf(userId);
    const res = await app
      .http()
      .post('/v1/rerank')
      .set('authorization', `Bearer ${key}`)
      .send({ model: 'rerank-model', query: 'q', documents: ['a', 'b'] });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(2);
    expect(before - (await quotaOf(userId))).toBe(33);
    const bad = await app.http().post('/v1/rerank').set('authorization', `Bearer ${key}`).send({ model: 'rerank-model' });
    expect(bad.status).toBe(400);
  });

  test('image edits (multipart) at the fixed price × n', async () => {
    const before = await quotaOf(userId);
    const image = await OpenAI.toFile(Buffer.from('png bytes'), 'a.png', { type: 'image/png' });
    const res = await client.images.edit({ model: 'dall-e-3', image, prompt: 'hat', n: 3 });
    expect(res.data).toHaveLength(3);
    expect(before - (await quotaOf(userId))).toBe(60000);
  });

  test('audio speech (binary) and transcription (multipart) pass through', async () => {
    const speech = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hello' });
    const buf = Buffer.from(await speech.arrayBuffer());
    expect(buf.subarray(0, 3).toString()).toBe('ID3');
    expect(buf.length).toBe(2051);
    const file = await OpenAI.toFile(Buffer.from('fake audio'), 'a.mp3', { type: 'audio/mpeg' });
    const tr = await client.audio.transcriptions.create({ model: 'whisper-1', file });
    expect(tr.text).toBe('hello transcription');
    const fwd = mock.received('/v1/audio/transcriptions')[0]!;
    expect(String(fwd.headers['content-type'])).toContain('multipart/form-data; boundary=');
    expect(fwd.body.toString()).toContain('fake audio');
  });

  test('errors: bad key 401, unknown model 404, no channel 503, malformed 400, in OpenAI format', async () => {
    const bad = new OpenAI({ apiKey: 'sk-nope', baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await expect(bad.chat.completions.create({ model: 'test-model', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 401 });
    await expect(client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 404 });
    // priced but no channel serves it
    await expect(client.chat.completions.create({ model: 'other-model', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 503 });
    const res = await app.http().post('/v1/chat/completions').set('authorization', `Bearer ${key}`).set('content-type', 'application/json').send('{not json');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(typeof res.body.error.message).toBe('string');
    const noMsgs = await app.http().post('/v1/chat/completions').set('authorization', `Bearer ${key}`).send({ model: 'test-model', messages: [] });
    expect(noMsgs.status).toBe(400);
    const noKey = await app
      .http()
      .post('/v1/chat/completions')
      .send({ model: 'test-model', messages: [{ role: 'user', content: 'x' }] });
    expect(noKey.status).toBe(401);
    expect(noKey.body.error.message).toBeTruthy();
    const unknownPath = await app.http().post('/v1/nothing').set('authorization', `Bearer ${key}`).send({});
    expect(unknownPath.status).toBe(404);
    expect(unknownPath.body.error).toBeDefined();
  });

  test('after a burst the upstream pool and the database cache are let go (idle GC hook) and the next call opens a fresh one', async () => {
    const raw = key.slice(3);
    const call = () =>
      app
        .http()
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${raw}`)
        .send({ model: 'test-model', messages: [{ role: 'user', content: 'x' }] });
    expect((await call()).status).toBe(200);
    const before = upstreamAgent(app.ctx);
    await app.releaseIdle();
    expect(before.closed).toBe(true);
    const res = await call();
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBeTruthy();
    expect(upstreamAgent(app.ctx)).not.toBe(before);
  });

  test('key without sk- prefix is accepted; non-relay paths fall through', async () => {
    const raw = key.slice(3);
    const res = await app
      .http()
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${raw}`)
      .send({ model: 'test-model', messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).toBe(200);
    const azureStyle = await app
      .http()
      .post('/v1/chat/completions')
      .set('api-key', key)
      .send({ model: 'test-model', messages: [{ role: 'user', content: 'x' }] });
    expect(azureStyle.status).toBe(200);
    const pre = await app
      .http()
      .options('/v1/chat/completions')
      .set('Origin', 'https://chat.example')
      .set('Access-Control-Request-Headers', 'authorization,content-type');
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    expect(pre.headers['access-control-allow-headers']).toBe('authorization,content-type');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    // Every kind of relay answer carries it: streams, errors, lists.
    const sse = await app
      .http()
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .send({ model: 'test-model', messages: [{ role: 'user', content: 'x' }], stream: true });
    expect(sse.status).toBe(200);
    expect(sse.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(sse.headers['access-control-allow-origin']).toBe('*');
    const denied = await app.http().post('/v1/chat/completions').set('authorization', 'Bearer sk-nope').send({ model: 'test-model', messages: [] });
    expect(denied.status).toBe(401);
    expect(denied.headers['access-control-allow-origin']).toBe('*');
    const models = await app.http().get('/v1/models').set('authorization', `Bearer ${key}`);
    expect(models.status).toBe(200);
    expect(models.headers['access-control-allow-origin']).toBe('*');
    const status = await app.http().get('/api/status');
    expect(status.body.success).toBe(true);
  });

  test('oversized body → 413 in OpenAI format', async () => {
    const big = 'x'.repeat(app.ctx.config.relayBodyLimit + 10);
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test-model', messages: [{ role: 'user', content: big }] }),
    }).catch((e: Error) => e);
    if (res instanceof Error) return expect(res).toBeInstanceOf(Error); // server may close the socket early
    expect(res.status).toBe(413);
    expect((await res.json()).error).toBeDefined();
  });

  test('playground: session user, usable group, billed to the user', async () => {
    const u = await makeUser(app, { quota: 100_000 });
    const agent = app.http();
    const login = await agent.post('/api/user/login').send({ username: u.username, password: u.password });
    expect(login.body.success).toBe(true);
    const before = await quotaOf(u.id);
    const ok = await agent
      .post('/pg/chat/completions')
      .set('New-Api-User', String(u.id))
      .send({ model: 'test-model', group: 'default', max_tokens: 0, temperature: 0, messages: [{ role: 'user', content: 'x' }] });
    expect(ok.status).toBe(200);
    expect(ok.body.choices[0].message.content).toBe('Hello from the mock');
    const fwd = mock.received('/v1/chat/completions').at(-1)!.json;
    expect(fwd.group).toBeUndefined();
    expect(fwd.max_tokens).toBeUndefined();
    expect(fwd.temperature).toBe(0);
    const st = await agent
      .post('/pg/chat/completions')
      .set('New-Api-User', String(u.id))
      .send({ model: 'test-model', stream: true, messages: [{ role: 'user', content: 'x' }] });
    expect(st.status).toBe(200);
    expect(st.text).toContain('"content":" from"');
    expect(st.text.trim().endsWith('data: [DONE]')).toBe(true);
    expect(before - (await quotaOf(u.id))).toBe(128);
    const badGroup = await agent
      .post('/pg/chat/completions')
      .set('New-Api-User', String(u.id))
      .send({ model: 'test-model', group: 'svip', messages: [{ role: 'user', content: 'x' }] });
    expect(badGroup.status).toBe(403);
    const anon = await app
      .http()
      .post('/pg/chat/completions')
      .send({ model: 'test-model', messages: [{ role: 'user', content: 'x' }] });
    expect(anon.status).toBe(401);
    await flushUsage(app);
    const log = await app.knex('logs').where({ user_id: u.id, type: 2 }).first();
    expect(log.token_name).toBe('playground');
    expect(log.token_id).toBe(0);
    expect(Number(log.quota)).toBe(64);
  });

  test('dashboard billing endpoints report the balance in USD', async () => {
    const u = await makeUser(app, { quota: 750_000 });
    await app.knex('users').where({ id: u.id }).update({ used_quota: 250_000 });
    const t = await seedToken(app, u.id);
    const sub = await app.http().get('/v1/dashboard/billing/subscription').set('authorization', `Bearer ${t.key}`);
    expect(sub.status).toBe(200);
    expect(sub.body).toMatchObject({ object: 'billing_subscription', hard_limit_usd: 2 });
    const usage = await app.http().get('/dashboard/billing/usage').set('authorization', `Bearer ${t.key}`);
    expect(usage.body).toMatchObject({ total_usage: 50 });
    const limited = await seedToken(app, u.id, { unlimited_quota: false, remain_quota: 500_000 });
    const tokSub = await app.http().get('/v1/dashboard/billing/subscription').set('authorization', `Bearer ${limited.key}`);
    expect(tokSub.body.hard_limit_usd).toBe(1);
    const anon = await app.http().get('/v1/dashboard/billing/usage');
    expect(anon.status).toBe(401);
  });

  test('disabled user → 401', async () => {
    const u = await makeUser(app, { quota: 100_000 });
    const t = await seedToken(app, u.id);
    await setUser(app, u.id, { status: 2 });
    const c = new OpenAI({ apiKey: t.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await expect(c.chat.completions.create({ model: 'test-model', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 401 });
  });
});
