/**
 * AWS Claude (type 33) streaming end to end: `invoke-with-response-stream` answers in AWS's binary
 * event-stream framing; the relay decodes the frames into Claude SSE events, translates them for
 * OpenAI clients and forwards them to Claude clients, billed from the Claude usage.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describeEach, DB_TARGETS, makeUser, type TestApp } from '../helpers/app';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { installClaudeMock } from '../mock-upstream/claude';
import { installBedrockStreamMock } from '../mock-upstream/bedrock';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';

describeEach(DB_TARGETS, 'relay: AWS Claude streams (event-stream framing)', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let gw: { url: string; close(): Promise<void> };
  let userId: number;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    installClaudeMock(mock);
    installBedrockStreamMock(mock);
    gw = await listen(app.callback);
    await setOptions(app, {
      ModelRatio: JSON.stringify({ 'claude-aws': 1, 'claude-throttle': 1 }),
      CompletionRatio: JSON.stringify({ 'claude-aws': 3, 'claude-throttle': 3 }),
      GroupRatio: JSON.stringify({ default: 1 }),
      PreConsumedQuota: '100',
    });
    userId = (await makeUser(app, { quota: 1_000_000 })).id;
    const key = (await seedToken(app, userId)).key;
    await seedChannel(app, {
      name: 'aws-claude',
      type: 33,
      key: 'AKIDTEST|aws-secret-key|us-west-2',
      base_url: mock.url,
      models: 'claude-aws,claude-throttle',
      auto_ban: 0,
    });
    openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await mock?.close();
  });
  beforeEach(() => mock.reset());

  const quota = async () => Number((await app.knex('users').where({ id: userId }).first()).quota);
  const lastLog = async () => {
    await flushUsage(app);
    return app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc').first();
  };

  test('OpenAI SDK stream → AWS Claude: frames decoded and translated, usage billed', async () => {
    const before = await quota();
    const stream = await openai.chat.completions.create({
      model: 'claude-aws',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 40,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('Hello from the mock');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    const up = mock.received(/invoke-with-response-stream$/)[0]!;
    expect(up.path).toBe('/model/anthropic.claude-aws/invoke-with-response-stream');
    expect(up.headers.accept).toBe('application/vnd.amazon.eventstream');
    expect(String(up.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/us-west-2\/bedrock\/aws4_request/);
    expect(up.json).toEqual({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 40, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] });
    expect(before - (await quota())).toBe(11 + 7 * 3);
    const log = await lastLog();
    expect(Boolean(log.is_stream)).toBe(true);
    expect(log.prompt_tokens).toBe(11);
    expect(log.completion_tokens).toBe(7);
  });

  test('Anthropic SDK stream → AWS Claude: Claude events forwarded, SDK assembles the message', async () => {
    const before = await quota();
    const stream = anthropic.messages.stream({ model: 'claude-aws', max_tokens: 40, messages: [{ role: 'user', content: 'Hi' }] });
    const pieces: string[] = [];
    stream.on('text', (t) => pieces.push(t));
    const final = await stream.finalMessage();
    expect(pieces.join('')).toBe('Hello from the mock');
    expect(final.content).toEqual([{ type: 'text', text: 'Hello from the mock' }]);
    expect(final.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
    expect(before - (await quota())).toBe(11 + 7 * 3);
  });

  test('throttlingException frame before any output → 429 to the client, nothing charged', async () => {
    const before = await quota();
    await expect(
      openai.chat.completions
        .create({ model: 'claude-throttle', stream: true, max_tokens: 40, messages: [{ role: 'user', content: 'Hi' }] })
        .then(async (s) => {
          for await (const _ of s) void _;
        }),
    ).rejects.toMatchObject({ status: 429 });
    expect(mock.received(/invoke-with-response-stream$/)).toHaveLength(1);
    expect(await quota()).toBe(before);
  });
});
