/**
 * The remaining channel kinds end to end with the official `openai` client, each against a mock of
 * its provider's published wire format: Dify (chat-messages, blocking and streaming), Baidu ERNIE
 * (OAuth token, wenxinworkshop chat and embeddings), Tencent Hunyuan (TC3-HMAC-SHA256), iFlytek Spark
 * (HMAC-signed WebSocket), AI Proxy library (document Q&A), and PaLM2 retired (refused clearly,
 * never relayed).
 */
import OpenAI from 'openai';
import { describeEach, ALL_TARGETS, loginAgent, makeUser, setupRoot, type TestApp } from '../helpers/app';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { installDifyMock } from '../mock-upstream/dify';
import { installBaiduMock, BAIDU_AK, BAIDU_SK, type BaiduMockState } from '../mock-upstream/baidu';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { installTencentMock, TENCENT_SECRET_ID, TENCENT_SECRET_KEY, type TencentMockState } from '../mock-upstream/tencent';
import { startSparkMock, SPARK_APP_ID, SPARK_API_KEY, SPARK_API_SECRET, type SparkMock } from '../mock-upstream/xunfei';
import { installAiproxyLibraryMock, LIBRARY_ID } from '../mock-upstream/aiproxyLibrary';
import { invalidateChannels } from '../../server/src/services/invalidate';
import { testChannel } from '../../server/src/channels/operations';

const MODELS = [
  'SparkDesk-v3.5',
  'spark-default',
  'spark-badkey',
  'library-qa',
  'hunyuan-lite',
  'hunyuan-bad',
  'dify-app',
  'ERNIE-4.0-8K',
  'ERNIE-Speed-128K',
  'palm-old',
  'ERNIE-badkey',
  'Embedding-V1',
];
const PRICING = {
  ModelRatio: JSON.stringify(Object.fromEntries(MODELS.map((m) => [m, 1]))),
  CompletionRatio: JSON.stringify(Object.fromEntries(MODELS.map((m) => [m, 2]))),
  GroupRatio: JSON.stringify({ default: 1 }),
  PreConsumedQuota: '100',
};
/** ratio 1, completion ratio 2, the mocks' usage (11 prompt, 7 completion) */
const COST = 11 + 7 * 2;

describeEach(ALL_TARGETS, 'relay: Dify, Baidu, Tencent, iFlytek, AI Proxy, PaLM2 kinds', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let baidu: BaiduMockState;
  let tencent: TencentMockState;
  let spark: SparkMock;
  let gw: { url: string; close(): Promise<void> };
  let userId: number;
  let openai: OpenAI;
  let palmChannel: number;
  let baiduChannel: number;

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    installDifyMock(mock);
    baidu = installBaiduMock(mock);
    tencent = installTencentMock(mock);
    installAiproxyLibraryMock(mock);
    spark = await startSparkMock();
    gw = await listen(app.callback);
    await setOptions(app, PRICING);
    userId = (await makeUser(app, { quota: 1_000_000 })).id;
    const key = (await seedToken(app, userId)).key;
    await seedChannel(app, {
      name: 'dify-ch',
      type: 37,
      key: 'app-dify-key',
      base_url: mock.url,
      models: 'dify-app',
      setting: JSON.stringify({ dify_inputs: { lang: 'en' } }),
    });
    baiduChannel = await seedChannel(app, {
      name: 'baidu-ch',
      type: 15,
      key: `${BAIDU_AK}|${BAIDU_SK}`,
      base_url: mock.url,
      models: 'ERNIE-4.0-8K,ERNIE-Speed-128K,Embedding-V1',
    });
    await seedChannel(app, { name: 'baidu-bad', type: 15, key: `${BAIDU_AK}|wrong`, base_url: mock.url, models: 'ERNIE-badkey', auto_ban: 0 });
    palmChannel = await seedChannel(app, { name: 'palm-ch', type: 11, key: 'palm-key', base_url: mock.url, models: 'palm-old', auto_ban: 0 });
    await seedChannel(app, {
      name: 'tc-ch',
      type: 23,
      key: `1250000000|${TENCENT_SECRET_ID}|${TENCENT_SECRET_KEY}`,
      base_url: mock.url,
      models: 'hunyuan-lite',
      other: 'ap-guangzhou',
    });
    await seedChannel(app, { name: 'tc-bad', type: 23, key: `1250000000|${TENCENT_SECRET_ID}|wrong`, base_url: mock.url, models: 'hunyuan-bad', auto_ban: 0 });
    const sparkKey = `${SPARK_APP_ID}|${SPARK_API_SECRET}|${SPARK_API_KEY}`;
    await seedChannel(app, { name: 'spark-ch', type: 18, key: sparkKey, base_url: spark.url, models: 'SparkDesk-v3.5,spark-default', other: 'v2.1' });
    await seedChannel(app, {
      name: 'spark-bad',
      type: 18,
      key: `${SPARK_APP_ID}|wrong-secret|${SPARK_API_KEY}`,
      base_url: spark.url,
      models: 'spark-badkey',
      auto_ban: 0,
    });
    await seedChannel(app, { name: 'lib-ch', type: 21, key: 'aiproxy-key', base_url: mock.url, models: 'library-qa', other: LIBRARY_ID });
    openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await mock?.close();
    await spark?.close();
  });
  beforeEach(() => {
    mock.reset();
    spark.handshakes.length = 0;
    spark.frames.length = 0;
  });

  const quota = async () => Number((await app.knex('users').where({ id: userId }).first()).quota);
  /** One streamed chat through the gateway with the official client: its pieces, text, reasoning, usage and finish reason. */
  const streamChat = async (model: string, content: string) => {
    const stream = await openai.chat.completions.create({
      model,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content }],
    });
    const pieces: string[] = [];
    let reasoning = '';
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null | undefined;
    for await (const c of stream) {
      if (c.choices[0]?.delta?.content) pieces.push(c.choices[0].delta.content);
      reasoning += (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
      if (c.usage) usage = c.usage;
    }
    return { pieces, text: pieces.join(''), reasoning, usage, finish };
  };
  const lastLog = async () => {
    await flushUsage(app);
    return app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc').first();
  };

  // ------------------------------------------------------------------------------------ Dify

  test('Dify blocking: the conversation as one query, inputs and user, answer and usage billed', async () => {
    const before = await quota();
    const res = await openai.chat.completions.create({
      model: 'dify-app',
      user: 'alice',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          ],
        },
      ],
    });
    expect(res.choices[0]!.message.content).toBe('Hello from the mock');
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    const up = mock.received('/v1/chat-messages')[0]!;
    expect(up.headers.authorization).toBe('Bearer app-dify-key');
    expect(up.json).toMatchObject({
      response_mode: 'blocking',
      user: 'alice',
      inputs: { lang: 'en' },
      conversation_id: '',
      query: 'SYSTEM: Be brief.\nUSER: Hi\nASSISTANT: Hello!\nUSER: What is this?',
      files: [{ type: 'image', transfer_method: 'remote_url', url: 'https://example.com/cat.png' }],
    });
    expect(before - (await quota())).toBe(COST);
    expect(Number((await lastLog()).quota)).toBe(COST);
  });

  test('Dify streaming: message pieces, agent thoughts as reasoning, usage from message_end', async () => {
    const before = await quota();
    const { text, reasoning, usage, finish } = await streamChat('dify-app', 'think then answer');
    expect(text).toBe('Hello from the mock');
    expect(reasoning).toBe('Thinking it over');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(mock.received('/v1/chat-messages')[0]!.json).toMatchObject({ response_mode: 'streaming', query: 'think then answer', user: 'gateway' });
    expect(before - (await quota())).toBe(COST);
  });

  test('Dify errors: an error body before the answer, an error event within the stream', async () => {
    await expect(openai.chat.completions.create({ model: 'dify-app', messages: [{ role: 'user', content: 'please fail' }] })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('Model is overloaded'),
    });
    const stream = await openai.chat.completions.create({ model: 'dify-app', stream: true, messages: [{ role: 'user', content: 'streamfail' }] });
    let text = '';
    await expect(
      (async () => {
        for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
      })(),
    ).rejects.toThrow(/Workflow node failed/);
    expect(text).toBe('Hello from the mock');
  });

  // ------------------------------------------------------------------------------------ Baidu

  test('Baidu: access token minted once and cached, model endpoint, ERNIE body, usage billed', async () => {
    const minted = baidu.minted;
    const before = await quota();
    const res = await openai.chat.completions.create({
      model: 'ERNIE-4.0-8K',
      temperature: 0.5,
      max_tokens: 100,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'assistant', content: 'dropped: the conversation must start with the user' },
        { role: 'user', content: 'Hi' },
        { role: 'user', content: 'there' },
      ],
    });
    expect(res.choices[0]!.message.content).toBe('Hello from the mock');
    expect(res.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    const up = mock.received(/wenxinworkshop/)[0]!;
    expect(up.path).toBe('/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions_pro');
    expect(up.json).toEqual({
      messages: [{ role: 'user', content: 'Hi\nthere' }],
      system: 'Be brief.',
      stream: false,
      temperature: 0.5,
      max_output_tokens: 100,
    });
    expect(before - (await quota())).toBe(COST);
    await openai.chat.completions.create({ model: 'ERNIE-Speed-128K', messages: [{ role: 'user', content: 'again' }] });
    expect(baidu.minted).toBe(minted + 1);
    expect(baidu.endpoints.slice(-1)).toEqual(['ernie-speed-128k']);
  });

  test('Baidu stream: result pieces, usage on is_end; an expired token is minted again', async () => {
    const { text, usage } = await streamChat('ERNIE-4.0-8K', 'Hi');
    expect(text).toBe('Hello from the mock');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    // Baidu revokes the token: the call fails with its message (HTTP 200 error body), the next one mints anew.
    const token = new URL(mock.received(/wenxinworkshop/)[0]!.url, 'http://x').searchParams.get('access_token')!;
    baidu.revoked.add(token);
    const minted = baidu.minted;
    await expect(openai.chat.completions.create({ model: 'ERNIE-4.0-8K', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({
      message: expect.stringContaining('Access token invalid'),
    });
    const res = await openai.chat.completions.create({ model: 'ERNIE-4.0-8K', messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.choices[0]!.message.content).toBe('Hello from the mock');
    expect(baidu.minted).toBe(minted + 1);
  });

  test('Baidu: a wrong secret is reported from the token endpoint; channel test goes through the token too', async () => {
    await expect(openai.chat.completions.create({ model: 'ERNIE-badkey', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({
      message: expect.stringContaining('unknown client id'),
    });
    const r = await testChannel(app.ctx, baiduChannel, 'ERNIE-4.0-8K');
    expect(r).toMatchObject({ success: true });
  });

  test('Baidu embeddings: the Embedding-V1 endpoint with the token, vectors (base64 or float) and usage billed', async () => {
    const before = await quota();
    // The openai client asks for base64 vectors by default and decodes them.
    const res = await openai.embeddings.create({ model: 'Embedding-V1', input: ['hello', 'hi'], user: 'alice' });
    expect(res.data.map((d) => d.index)).toEqual([0, 1]);
    expect(res.data[0]!.embedding).toEqual([0.5, 0.5, -0.25]);
    expect(res.data[1]!.embedding[0]).toBeCloseTo(0.2, 6);
    expect(res.usage).toMatchObject({ prompt_tokens: 7, total_tokens: 7 });
    expect(baidu.embeddings.slice(-1)).toEqual([{ endpoint: 'embedding-v1', body: { input: ['hello', 'hi'], user_id: 'alice' } }]);
    expect(mock.received(/wenxinworkshop\/embeddings/)[0]!.url).toMatch(/access_token=24\.tok/);
    expect(before - (await quota())).toBe(7);
    const log = await lastLog();
    expect(log.model_name).toBe('Embedding-V1');
    expect(Number(log.prompt_tokens)).toBe(7);
    const floats = await openai.embeddings.create({ model: 'Embedding-V1', input: 'hello', encoding_format: 'float' });
    expect(floats.data[0]!.embedding).toEqual([0.5, 0.5, -0.25]);
    // Baidu's error (HTTP 200 body) reaches the client: more than 16 texts.
    const many = Array.from({ length: 17 }, (_, i) => `t${i}`);
    await expect(openai.embeddings.create({ model: 'Embedding-V1', input: many })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('input parameter is invalid'),
    });
  });

  // ------------------------------------------------------------------------------------ Tencent

  test('Tencent Hunyuan: TC3-signed request (checked by the mock), Hunyuan body, answer and usage billed', async () => {
    const before = await quota();
    const res = await openai.chat.completions.create({
      model: 'hunyuan-lite',
      temperature: 0.3,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(res.choices[0]!.message.content).toBe('Hello from the mock');
    expect(res.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(tencent.checks.slice(-1)).toEqual([{ ok: true, region: 'ap-guangzhou' }]);
    expect(mock.received('/')[0]!.json).toEqual({
      Model: 'hunyuan-lite',
      Messages: [
        { Role: 'system', Content: 'Be brief.' },
        { Role: 'user', Content: 'Hi' },
      ],
      Stream: false,
      Temperature: 0.3,
    });
    expect(before - (await quota())).toBe(COST);
  });

  test('Tencent Hunyuan stream: Delta pieces, usage billed; a bad secret is refused with its signature error', async () => {
    const before = await quota();
    const { text, usage } = await streamChat('hunyuan-lite', 'Hi');
    expect(text).toBe('Hello from the mock');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(tencent.checks.slice(-1)[0]!.ok).toBe(true);
    expect(before - (await quota())).toBe(COST);
    await expect(openai.chat.completions.create({ model: 'hunyuan-bad', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({
      status: 401,
      message: expect.stringContaining('AuthFailure.SignatureFailure'),
    });
    expect(tencent.checks.slice(-1)[0]!.ok).toBe(false);
  });

  // ------------------------------------------------------------------------------------ iFlytek

  test('iFlytek Spark: signed WebSocket URL (checked by the mock), version from the model, frames merged, usage billed', async () => {
    const before = await quota();
    const res = await openai.chat.completions.create({
      model: 'SparkDesk-v3.5',
      temperature: 0.5,
      max_tokens: 200,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(res.choices[0]!.message.content).toBe('Hello from Spark');
    expect(res.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(spark.handshakes).toEqual([{ path: '/v3.5/chat', signed: true }]);
    expect(spark.frames[0]).toEqual({
      header: { app_id: SPARK_APP_ID },
      parameter: { chat: { domain: 'generalv3.5', temperature: 0.5, max_tokens: 200 } },
      payload: {
        message: {
          text: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'Hi' },
          ],
        },
      },
    });
    expect(before - (await quota())).toBe(COST);
  });

  test('iFlytek Spark stream: one chunk per frame, usage from the last; the channel version otherwise', async () => {
    const before = await quota();
    const { pieces, usage } = await streamChat('spark-default', 'Hi');
    expect(pieces).toEqual(['Hello', ' from', ' Spark']);
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(spark.handshakes).toEqual([{ path: '/v2.1/chat', signed: true }]);
    expect(spark.frames[0]!.parameter.chat.domain).toBe('generalv2');
    expect(before - (await quota())).toBe(COST);
  });

  test('iFlytek Spark: a wrong secret is refused at the handshake with its message, nothing billed', async () => {
    const before = await quota();
    await expect(openai.chat.completions.create({ model: 'spark-badkey', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({
      status: 401,
      message: expect.stringContaining('HMAC signature does not match'),
    });
    expect(spark.handshakes).toEqual([{ path: '/v1.1/chat', signed: false }]);
    expect(await quota()).toBe(before);
  });

  test('iFlytek Spark: the channel test goes through the WebSocket too, under the channel rule', async () => {
    const id = Number((await app.knex('channels').where({ name: 'spark-ch' }).first()).id);
    expect(await testChannel(app.ctx, id, 'SparkDesk-v3.5')).toMatchObject({ success: true });
    expect(spark.handshakes).toEqual([{ path: '/v3.5/chat', signed: true }]);
    // An admin's test may not reach a private address, WebSocket or not: nothing is sent.
    const refused = await testChannel(app.ctx, id, 'SparkDesk-v3.5', 'admin');
    expect(refused.success).toBe(false);
    expect(refused.message).toMatch(/fetch refused/);
    expect(spark.handshakes).toHaveLength(1);
  });

  // ------------------------------------------------------------------------------------ AI Proxy library

  test('AI Proxy library: the question and library id, the answer with its documents, billed by the relay count', async () => {
    const res = await openai.chat.completions.create({
      model: 'library-qa',
      messages: [
        { role: 'user', content: 'earlier question' },
        { role: 'assistant', content: 'earlier answer' },
        { role: 'user', content: 'How do I start?' },
      ],
    });
    expect(res.choices[0]!.message.content).toBe('Hello from the mock\n\n参考文档：\n1. [Guide](https://docs.example.com/guide)');
    // The library reports no usage: the relay's count is answered and billed.
    expect(res.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(res.usage!.completion_tokens).toBeGreaterThan(0);
    const up = mock.received('/api/library/ask')[0]!;
    expect(up.headers.authorization).toBe('Bearer aiproxy-key');
    expect(up.json).toEqual({ model: 'library-qa', query: 'How do I start?', libraryId: LIBRARY_ID, stream: false });
    const log = await lastLog();
    expect(Number(log.quota)).toBe(Number(log.prompt_tokens) + Number(log.completion_tokens) * 2);
    expect(Number(log.completion_tokens)).toBe(res.usage!.completion_tokens);
  });

  test('AI Proxy library stream: content pieces then the documents; a wrong library is an error', async () => {
    const { text, usage } = await streamChat('library-qa', 'Q');
    expect(text).toBe('Hello from the mock\n\n参考文档：\n1. [Guide](https://docs.example.com/guide)');
    expect(usage!.completion_tokens).toBeGreaterThan(0);
    expect(mock.received('/api/library/ask')[0]!.json.stream).toBe(true);
    await app.knex('channels').where({ other: LIBRARY_ID }).update({ other: 'lib-missing' });
    await invalidateChannels(app.ctx);
    try {
      await expect(openai.chat.completions.create({ model: 'library-qa', messages: [{ role: 'user', content: 'Q' }] })).rejects.toMatchObject({
        message: expect.stringContaining('library not found'),
      });
    } finally {
      await app.knex('channels').where({ other: 'lib-missing' }).update({ other: LIBRARY_ID });
      await invalidateChannels(app.ctx);
    }
  });

  // ------------------------------------------------------------------------------------ PaLM2

  test('PaLM2: a stored channel is never relayed as OpenAI; calls and tests get the retirement message', async () => {
    const before = await quota();
    await expect(openai.chat.completions.create({ model: 'palm-old', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({
      status: 503,
      message: expect.stringContaining('Google has shut PaLM2 down'),
    });
    expect(mock.requests).toHaveLength(0);
    expect(await quota()).toBe(before);
    const r = await testChannel(app.ctx, palmChannel);
    expect(r.success).toBe(false);
    expect(r.message).toContain('PaLM2');
    expect(mock.requests).toHaveLength(0);
  });

  test('PaLM2: creating one, copying one or changing a channel to it is refused; a stored one stays editable', async () => {
    const root = await setupRoot(app).catch(async () => {
      const row = await app.knex('users').where({ role: 100 }).first();
      return { username: row.username, password: 'rootpass123' };
    });
    const admin = await loginAgent(app, root.username, root.password);
    const count = async () => Number((await app.knex('channels').count('* as n').first())!.n);
    const n = await count();
    const created = await admin.post('/api/channel/').send({ name: 'new-palm', type: 11, key: 'k', models: 'palm-old', group: 'default' });
    expect(created.body.success).toBe(false);
    expect(created.body.message).toContain('PaLM2 已被 Google 停止服务');
    expect(await count()).toBe(n);
    const copied = await admin.post(`/api/channel/copy/${palmChannel}`);
    expect(copied.body).toMatchObject({ success: false, message: expect.stringContaining('PaLM2') });
    expect(await count()).toBe(n);
    const other = await seedChannel(app, { name: 'to-palm', type: 1, key: 'sk-x', base_url: mock.url, models: 'palm-old', status: 2 });
    const changed = await admin.put('/api/channel/').send({ id: other, type: 11 });
    expect(changed.body.success).toBe(false);
    expect(changed.body.message).toContain('PaLM2');
    expect(Number((await app.knex('channels').where({ id: other }).first()).type)).toBe(1);
    const renamed = await admin.put('/api/channel/').send({ id: palmChannel, type: 11, name: 'palm-renamed', status: 2 });
    expect(renamed.body.success).toBe(true);
    // The catalogue tells the console it is retired.
    const types = await admin.get('/api/channel/types');
    const palm = (types.body.data as Array<{ id: number; retired: string }>).find((t) => t.id === 11)!;
    expect(palm.retired).toContain('PaLM2');
    expect((types.body.data as Array<{ id: number; retired: string }>).find((t) => t.id === 1)!.retired).toBe('');
  });
});
