/**
 * End to end over a real gateway and the mock upstream: Claude (`/v1/messages`) and Gemini
 * (`/v1beta/models/...`) client formats and Claude/Gemini channels, in every direction, billed by
 * the same code as the OpenAI path (the canonical usage).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describeEach, DB_TARGETS, makeUser, type TestApp } from '../helpers/app';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { installClaudeMock, type ClaudeMockState } from '../mock-upstream/claude';
import { installGeminiMock, type GeminiMockState } from '../mock-upstream/gemini';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { channelInfoFrom, fetchUpstreamModels } from '../../server/src/channels/operations';
import { signV4 } from '../../server/src/channels/providers/bedrock';

const PRICING = {
  ModelRatio: JSON.stringify({
    'claude-aws': 1,
    'claude-overloaded': 1,
    'claude-midstream': 1,
    'gpt-midstream': 1,
    'claude-test': 1,
    'claude-test-thinking': 1,
    'gemini-test': 1,
    'gpt-test': 1,
    'claude-alias': 1,
  }),
  CompletionRatio: JSON.stringify({ 'claude-test': 2, 'gemini-test': 3, 'gpt-test': 4 }),
  CacheRatio: JSON.stringify({ 'claude-test': 0.1, 'gemini-test': 0.25 }),
  GroupRatio: JSON.stringify({ default: 1 }),
  PreConsumedQuota: '100',
};

/** quota = model_ratio × ((prompt − cached) + cached × cache_ratio + completion × completion_ratio), ratio 1 here. */
const expectedQuota = (prompt: number, cached: number, completion: number, cacheRatio: number, completionRatio: number) =>
  Math.round(prompt - cached + cached * cacheRatio + completion * completionRatio);

function sseEvents(text: string): Array<{ event?: string; data: string }> {
  return text
    .replace(/\r/g, '')
    .split('\n\n')
    .filter((b) => b.trim())
    .map((b) => ({ event: /^event: (.*)$/m.exec(b)?.[1], data: /^data: (.*)$/m.exec(b)?.[1] ?? '' }));
}

describeEach(DB_TARGETS, 'relay: Claude and Gemini formats', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let claudeState: ClaudeMockState;
  let geminiState: GeminiMockState;
  let gw: { url: string; close(): Promise<void> };
  let userId: number;
  let key: string;
  let anthropic: Anthropic;
  let openai: OpenAI;

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    claudeState = installClaudeMock(mock);
    geminiState = installGeminiMock(mock);
    gw = await listen(app.callback);
    await setOptions(app, PRICING);
    const u = await makeUser(app, { quota: 1_000_000 });
    userId = u.id;
    key = (await seedToken(app, userId)).key;
    await seedChannel(app, {
      name: 'claude-ch',
      type: 14,
      key: 'sk-ant-upstream',
      base_url: mock.url,
      models: 'claude-test,claude-test-thinking,claude-alias',
      model_mapping: JSON.stringify({ 'claude-alias': 'claude-test' }),
    });
    await seedChannel(app, { name: 'gemini-ch', type: 24, key: 'gem-upstream', base_url: mock.url, models: 'gemini-test' });
    await seedChannel(app, { name: 'openai-ch', type: 1, key: 'sk-openai-upstream', base_url: mock.url, models: 'gpt-test' });
    // faulty Claude channels (the mock reads the fault from the upstream key)
    await seedChannel(app, {
      name: 'claude-overloaded',
      type: 14,
      key: 'sk-ant-fault-overloaded',
      base_url: mock.url,
      models: 'claude-overloaded',
      auto_ban: 0,
    });
    await seedChannel(app, { name: 'aws-claude', type: 33, key: 'AKIDTEST|aws-secret-key|us-west-2', base_url: mock.url, models: 'claude-aws', auto_ban: 0 });
    await seedChannel(app, { name: 'claude-midstream', type: 14, key: 'sk-ant-fault-midstream', base_url: mock.url, models: 'claude-midstream', auto_ban: 0 });
    await seedChannel(app, { name: 'openai-midstream', type: 1, key: 'sk-fault-midstream', base_url: mock.url, models: 'gpt-midstream', auto_ban: 0 });
    anthropic = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
    openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await mock?.close();
  });
  beforeEach(() => {
    mock.reset();
    claudeState.cacheCreationTokens = 0;
    geminiState.thoughtsTokens = 0;
  });

  const quota = async () => Number((await app.knex('users').where({ id: userId }).first()).quota);
  const lastLog = async () => {
    await flushUsage(app);
    return app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc').first();
  };

  // ------------------------------------------------------------------ Anthropic SDK → Claude channel

  test('Anthropic SDK → Claude channel (non-stream): passthrough, cache usage, billed from canonical usage', async () => {
    mock.options.cachedTokens = 8;
    claudeState.cacheCreationTokens = 4;
    const before = await quota();
    const msg = await anthropic.messages.create({
      model: 'claude-test',
      max_tokens: 300,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(msg.type).toBe('message');
    expect(msg.content).toEqual([{ type: 'text', text: 'Hello from the mock' }]);
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.usage).toMatchObject({ input_tokens: 11, output_tokens: 7, cache_read_input_tokens: 8, cache_creation_input_tokens: 4 });
    const up = mock.received('/v1/messages')[0]!;
    expect(up.headers['x-api-key']).toBe('sk-ant-upstream');
    expect(up.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/); // the SDK's own (claude-code.test.ts pins the forwarding)
    expect(up.json).toEqual({ model: 'claude-test', max_tokens: 300, system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }] });
    // prompt = 11 + 8 + 4 = 23 of which 8 cached: (15 + 0.8 + 7×2) = 29.8 → 30
    const cost = expectedQuota(23, 8, 7, 0.1, 2);
    expect(cost).toBe(30);
    expect(before - (await quota())).toBe(cost);
    const log = await lastLog();
    expect(Number(log.quota)).toBe(cost);
    expect(log.prompt_tokens).toBe(23);
    expect(log.completion_tokens).toBe(7);
    expect(log.channel_name).toBe('claude-ch');
    expect(JSON.parse(log.other)).toMatchObject({ cache_tokens: 8, request_format: 'claude', upstream_format: 'claude', passthrough: true });
  });

  test('Anthropic SDK → Claude channel (stream): events pass through, SDK assembles the message, billed', async () => {
    mock.options.cachedTokens = 2;
    const before = await quota();
    const stream = anthropic.messages.stream({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'Stream please' }] });
    const pieces: string[] = [];
    stream.on('text', (t) => pieces.push(t));
    const final = await stream.finalMessage();
    expect(pieces.join('')).toBe('Hello from the mock');
    expect(final.content).toEqual([{ type: 'text', text: 'Hello from the mock' }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: 11, output_tokens: 7, cache_read_input_tokens: 2 });
    expect(mock.received('/v1/messages')[0]!.json.stream).toBe(true);
    const cost = expectedQuota(13, 2, 7, 0.1, 2);
    expect(before - (await quota())).toBe(cost);
    const log = await lastLog();
    expect(Boolean(log.is_stream)).toBe(true);
    expect(Number(log.quota)).toBe(cost);
  });

  test('Anthropic SDK → Claude channel: tool use, Bearer auth, model mapping', async () => {
    const bearer = new Anthropic({ authToken: key, apiKey: null, baseURL: gw.url, maxRetries: 0 });
    const msg = await bearer.messages.create({
      model: 'claude-alias',
      max_tokens: 100,
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
    });
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.content[1]).toEqual({ type: 'tool_use', id: 'toolu_mock1', name: 'get_weather', input: { city: 'Paris' } });
    expect(mock.received('/v1/messages')[0]!.json.model).toBe('claude-test');
    const log = await lastLog();
    expect(log.model_name).toBe('claude-alias');
  });

  test('thinking adapter: claude-test-thinking → extended thinking upstream, thinking block back', async () => {
    await setOptions(app, { 'claude.thinking_adapter_enabled': 'true', 'claude.thinking_adapter_budget_tokens_percentage': '0.5' });
    const res = await openai.chat.completions.create({ model: 'claude-test-thinking', max_tokens: 4000, messages: [{ role: 'user', content: 'think' }] });
    const up = mock.received('/v1/messages')[0]!.json;
    expect(up.model).toBe('claude-test');
    expect(up.thinking).toEqual({ type: 'enabled', budget_tokens: 2000 });
    expect((res.choices[0]!.message as unknown as { reasoning_content: string }).reasoning_content).toBe('Mock thinking.');
    expect(res.choices[0]!.message.content).toBe('Hello from the mock');
  });

  test('OpenAI client → Claude channel: a file stored at OpenAI is refused (not dropped); a JSON schema becomes output_config.format', async () => {
    const calls = mock.received('/v1/messages').length;
    const err = await openai.chat.completions
      .create({
        model: 'claude-test',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Sum it up' },
              { type: 'file', file: { file_id: 'file-abc123' } },
            ],
          },
        ],
      })
      .catch((e: unknown) => e as { status: number; message: string });
    expect(err).toMatchObject({ status: 400 });
    expect((err as { message: string }).message).toMatch(/file_id.*file_data/);
    expect(mock.received('/v1/messages')).toHaveLength(calls);
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    await openai.chat.completions.create({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'Where?' }],
      response_format: { type: 'json_schema', json_schema: { name: 'place', schema, strict: true } },
    });
    const up = mock.received('/v1/messages').at(-1)!.json;
    expect(up.output_config).toEqual({ format: { type: 'json_schema', schema } });
  });

  test('AWS Claude channel (type 33): SigV4-signed Bedrock invoke, Claude and OpenAI clients', async () => {
    const msg = await anthropic.messages.create({ model: 'claude-aws', max_tokens: 20, messages: [{ role: 'user', content: 'Hi' }] });
    expect(msg.content).toEqual([{ type: 'text', text: 'Hello from the mock' }]);
    expect(msg.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
    const up = mock.received(/^\/model\//)[0]!;
    expect(up.path).toBe('/model/anthropic.claude-aws/invoke');
    expect(up.json).toEqual({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 20, messages: [{ role: 'user', content: 'Hi' }] });
    // the signature is the one SigV4 gives for exactly what arrived (date from the request)
    const amzDate = String(up.headers['x-amz-date']);
    const again = signV4({
      method: 'POST',
      url: `${mock.url}${up.url}`,
      headers: { 'content-type': String(up.headers['content-type']), accept: String(up.headers.accept) },
      body: up.body,
      accessKeyId: 'AKIDTEST',
      secretAccessKey: 'aws-secret-key',
      region: 'us-west-2',
      service: 'bedrock',
      contentSha256Header: true,
      now: new Date(
        `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
      ),
    });
    expect(up.headers.authorization).toBe(again.authorization);

    const res = await openai.chat.completions.create({ model: 'claude-aws', messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.choices[0]!.message.content).toBe('Hello from the mock');
    // streams (invoke-with-response-stream, AWS event-stream framing): test/server/adaptors-bedrock.test.ts
  });

  // ------------------------------------------------------------------ Anthropic SDK → OpenAI channel

  test('Anthropic SDK → OpenAI channel (non-stream): converted both ways, billed', async () => {
    const before = await quota();
    const msg = await anthropic.messages.create({
      model: 'gpt-test',
      max_tokens: 64,
      system: [{ type: 'text', text: 'System text' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Hello' },
            { type: 'image', source: { type: 'url', url: 'https://img.example/a.png' } },
          ],
        },
      ],
      stop_sequences: ['###'],
    });
    expect(msg.content).toEqual([{ type: 'text', text: 'Hello from the mock' }]);
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.model).toBe('gpt-test');
    expect(msg.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
    const up = mock.received('/v1/chat/completions')[0]!;
    expect(up.headers.authorization).toBe('Bearer sk-openai-upstream');
    expect(up.json).toMatchObject({
      model: 'gpt-test',
      max_tokens: 64,
      stop: ['###'],
      messages: [
        { role: 'system', content: 'System text' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Hello' },
            { type: 'image_url', image_url: { url: 'https://img.example/a.png' } },
          ],
        },
      ],
    });
    const cost = expectedQuota(11, 0, 7, 1, 4);
    expect(before - (await quota())).toBe(cost);
    const log = await lastLog();
    expect(Number(log.quota)).toBe(cost);
    expect(JSON.parse(log.other)).toMatchObject({ request_format: 'claude', upstream_format: 'openai', passthrough: false });
  });

  test('Anthropic SDK → OpenAI channel (stream): Claude event sequence from OpenAI chunks, usage from upstream', async () => {
    const before = await quota();
    const stream = anthropic.messages.stream({ model: 'gpt-test', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    const types: string[] = [];
    stream.on('streamEvent', (e) => types.push(e.type));
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Hello from the mock' }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(types.filter((t) => t === 'content_block_start')).toHaveLength(1);
    expect(mock.received('/v1/chat/completions')[0]!.json.stream_options).toEqual({ include_usage: true });
    expect(before - (await quota())).toBe(expectedQuota(11, 0, 7, 1, 4));
  });

  // ------------------------------------------------------------------ OpenAI SDK → Claude / Gemini

  test('OpenAI SDK → Claude channel (non-stream): Claude request built, usage with cache tokens', async () => {
    mock.options.cachedTokens = 5;
    claudeState.cacheCreationTokens = 3;
    const before = await quota();
    const res = await openai.chat.completions.create({
      model: 'claude-test',
      messages: [
        { role: 'system', content: 'Sys' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
      ],
      temperature: 0.5,
    });
    expect(res.object).toBe('chat.completion');
    expect(res.choices[0]!.message.content).toBe('Hello from the mock');
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 19, completion_tokens: 7, total_tokens: 26, prompt_tokens_details: { cached_tokens: 5 } });
    const up = mock.received('/v1/messages')[0]!;
    expect(up.headers['x-api-key']).toBe('sk-ant-upstream');
    expect(up.headers.authorization).toBeUndefined();
    expect(up.json).toEqual({
      model: 'claude-test',
      max_tokens: 8192,
      system: [{ type: 'text', text: 'Sys' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
          ],
        },
      ],
      temperature: 0.5,
    });
    const cost = expectedQuota(19, 5, 7, 0.1, 2);
    expect(before - (await quota())).toBe(cost);
    expect(Number((await lastLog()).quota)).toBe(cost);
  });

  test('OpenAI SDK → Claude channel (stream + tools): tool call deltas and usage chunk', async () => {
    const stream = await openai.chat.completions.create({
      model: 'claude-test',
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      messages: [{ role: 'user', content: 'weather in Paris?' }],
    });
    let text = '';
    let args = '';
    let name = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const c of stream) {
      const ch = c.choices[0];
      text += ch?.delta?.content ?? '';
      for (const tc of ch?.delta?.tool_calls ?? []) {
        name += tc.function?.name ?? '';
        args += tc.function?.arguments ?? '';
      }
      if (ch?.finish_reason) finish = ch.finish_reason;
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('Let me check.');
    expect(name).toBe('get_weather');
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
    expect(finish).toBe('tool_calls');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    const up = mock.received('/v1/messages')[0]!.json;
    expect(up.stream).toBe(true);
    expect(up.tools).toEqual([{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }]);
  });

  test('OpenAI SDK → Gemini channel (non-stream): URL, key header, conversion, usage, billing', async () => {
    mock.options.cachedTokens = 4;
    const before = await quota();
    const res = await openai.chat.completions.create({
      model: 'gemini-test',
      max_tokens: 50,
      messages: [
        { role: 'system', content: 'Sys' },
        { role: 'user', content: 'Hello' },
      ],
    });
    expect(res.choices[0]!.message.content).toBe('Hello from the mock');
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 4 } });
    const up = mock.received(/^\/v1beta\/models\//)[0]!;
    expect(up.path).toBe('/v1beta/models/gemini-test:generateContent');
    expect(up.headers['x-goog-api-key']).toBe('gem-upstream');
    expect(up.json.systemInstruction).toEqual({ parts: [{ text: 'Sys' }] });
    expect(up.json.contents).toEqual([{ role: 'user', parts: [{ text: 'Hello' }] }]);
    expect(up.json.generationConfig).toEqual({ maxOutputTokens: 50 });
    expect(up.json.safetySettings.length).toBeGreaterThan(0);
    const cost = expectedQuota(11, 4, 7, 0.25, 3);
    expect(before - (await quota())).toBe(cost);
    expect(Number((await lastLog()).quota)).toBe(cost);
  });

  test('OpenAI SDK → Gemini channel (stream + tool call)', async () => {
    const stream = await openai.chat.completions.create({
      model: 'gemini-test',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Hi' }],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('Hello from the mock');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(mock.received(/^\/v1beta\//)[0]!.url).toBe('/v1beta/models/gemini-test:streamGenerateContent?alt=sse');

    const tool = await openai.chat.completions.create({
      model: 'gemini-test',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      tool_choice: 'required',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(tool.choices[0]!.finish_reason).toBe('tool_calls');
    expect(tool.choices[0]!.message.tool_calls![0]!).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
  });

  // ------------------------------------------------------------------ Gemini format

  test('Gemini format → Gemini channel (non-stream, key in ?key=): passthrough and billing', async () => {
    geminiState.thoughtsTokens = 0;
    const before = await quota();
    const body = { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }], generationConfig: { temperature: 0.2 } };
    const res = await fetch(`${gw.url}/v1beta/models/gemini-test:generateContent?key=${key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const json = (await res.json()) as any;
    expect(json.candidates[0].content.parts).toEqual([{ text: 'Hello from the mock' }]);
    expect(json.usageMetadata).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 7 });
    const up = mock.received(/^\/v1beta\//)[0]!;
    expect(up.headers['x-goog-api-key']).toBe('gem-upstream');
    expect(up.url).not.toContain(key.slice(3));
    expect(up.json.contents).toEqual(body.contents);
    expect(up.json.generationConfig).toEqual({ temperature: 0.2 });
    const cost = expectedQuota(11, 0, 7, 0.25, 3);
    expect(before - (await quota())).toBe(cost);
    expect(Number((await lastLog()).quota)).toBe(cost);
  });

  test('Gemini format → Gemini channel (stream, x-goog-api-key, thoughts billed as completion)', async () => {
    geminiState.thoughtsTokens = 5;
    const before = await quota();
    const res = await fetch(`${gw.url}/v1beta/models/gemini-test:streamGenerateContent?alt=sse`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }], generationConfig: { thinkingConfig: { includeThoughts: true } } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = sseEvents(await res.text()).map((e) => JSON.parse(e.data));
    const text = events
      .flatMap((e) => e.candidates[0].content.parts)
      .filter((p: any) => !p.thought)
      .map((p: any) => p.text)
      .join('');
    expect(text).toBe('Hello from the mock');
    expect(events[events.length - 1].usageMetadata).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 7, thoughtsTokenCount: 5 });
    expect(mock.received(/^\/v1beta\//)[0]!.url).toBe('/v1beta/models/gemini-test:streamGenerateContent?alt=sse');
    const cost = expectedQuota(11, 0, 12, 0.25, 3);
    expect(before - (await quota())).toBe(cost);
  });

  test('Gemini format → OpenAI channel (non-stream and stream)', async () => {
    const before = await quota();
    const res = await fetch(`${gw.url}/v1beta/models/gpt-test:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
      body: JSON.stringify({
        systemInstruction: { parts: [{ text: 'S' }] },
        contents: [{ role: 'user', parts: [{ text: 'Hello' }] }],
        generationConfig: { maxOutputTokens: 20, stopSequences: ['Z'] },
      }),
    });
    expect(res.status).toBe(200);
    const json = (await res.json()) as any;
    expect(json).toMatchObject({
      candidates: [{ content: { role: 'model', parts: [{ text: 'Hello from the mock' }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 },
      modelVersion: 'gpt-test',
    });
    expect(mock.received('/v1/chat/completions')[0]!.json).toMatchObject({
      model: 'gpt-test',
      max_tokens: 20,
      stop: ['Z'],
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: 'Hello' },
      ],
    });
    expect(before - (await quota())).toBe(expectedQuota(11, 0, 7, 1, 4));

    const s = await fetch(`${gw.url}/v1beta/models/gpt-test:streamGenerateContent?alt=sse&key=${key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] }),
    });
    expect(s.status).toBe(200);
    const events = sseEvents(await s.text()).map((e) => JSON.parse(e.data));
    expect(events.map((e) => e.candidates[0].content.parts.map((p: any) => p.text).join('')).join('')).toBe('Hello from the mock');
    const last = events[events.length - 1];
    expect(last.candidates[0].finishReason).toBe('STOP');
    expect(last.usageMetadata).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 7 });
  });

  test('Gemini format → Claude channel (cross-provider conversion)', async () => {
    const res = await fetch(`${gw.url}/v1beta/models/claude-test:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
    });
    expect(res.status).toBe(200);
    const json = (await res.json()) as any;
    expect(json.candidates[0].content.parts).toEqual([{ text: 'Hello from the mock' }]);
    expect(mock.received('/v1/messages')[0]!.json.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
  });

  test('a failed tool result keeps its flag: Anthropic SDK → Gemini {error} / OpenAI text; Gemini {error} → Claude is_error', async () => {
    const history = [
      { role: 'user' as const, content: 'Weather in Atlantis?' },
      { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 'toolu_w1', name: 'get_weather', input: { city: 'Atlantis' } }] },
      { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_w1', is_error: true, content: 'unknown city' }] },
    ];
    const tools = [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];
    const viaGemini = await anthropic.messages.create({ model: 'gemini-test', max_tokens: 64, tools, messages: history });
    expect(viaGemini.content.length).toBeGreaterThan(0); // the mock answers (a tool call, as tools were given)
    const gemUp = mock.received(/:generateContent$/).at(-1)!.json;
    const parts = gemUp.contents.flatMap((c: { parts: unknown[] }) => c.parts);
    expect(parts).toContainEqual({ functionResponse: { name: 'get_weather', response: { error: 'unknown city' } } });

    await anthropic.messages.create({ model: 'gpt-test', max_tokens: 64, tools, messages: history });
    const oaUp = mock.received('/v1/chat/completions').at(-1)!.json;
    expect(oaUp.messages).toContainEqual({ role: 'tool', tool_call_id: 'toolu_w1', content: '{"error":"unknown city"}' });

    const res = await fetch(`${gw.url}/v1beta/models/claude-test:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
      body: JSON.stringify({
        contents: [
          { role: 'user', parts: [{ text: 'Weather in Atlantis?' }] },
          { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Atlantis' } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { error: 'unknown city' } } }] },
        ],
        tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } }] }],
      }),
    });
    expect(res.status).toBe(200);
    const claudeUp = mock.received('/v1/messages').at(-1)!.json;
    const blocks = claudeUp.messages.flatMap((m: { content: unknown }) => (Array.isArray(m.content) ? m.content : []));
    expect(blocks).toContainEqual(expect.objectContaining({ type: 'tool_result', content: 'unknown city', is_error: true }));
  });

  test('fetch models from Claude and Gemini channels', async () => {
    const claudeModels = await fetchUpstreamModels(app.ctx, channelInfoFrom({ type: 14, base_url: mock.url, key: 'sk-ant-list' }));
    expect(claudeModels).toContain('gpt-4o-mini'); // the mock's /v1/models list (same `data[].id` shape as Anthropic's)
    expect(mock.received('/v1/models')[0]!.headers).toMatchObject({ 'x-api-key': 'sk-ant-list', 'anthropic-version': '2023-06-01' });
    const geminiModels = await fetchUpstreamModels(app.ctx, channelInfoFrom({ type: 24, base_url: mock.url, key: 'gem-list' }));
    expect(geminiModels).toEqual(['gemini-2.0-flash', 'gemini-2.5-pro']);
  });

  test('Anthropic SDK → Gemini channel (stream) and Gemini format → Claude channel (stream)', async () => {
    const before = await quota();
    const stream = anthropic.messages.stream({ model: 'gemini-test', max_tokens: 30, system: 'S', messages: [{ role: 'user', content: 'Hi' }] });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Hello from the mock' }]);
    expect(final.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
    const up = mock.received(/^\/v1beta\//)[0]!;
    expect(up.url).toBe('/v1beta/models/gemini-test:streamGenerateContent?alt=sse');
    expect(up.json.systemInstruction).toEqual({ parts: [{ text: 'S' }] });
    expect(before - (await quota())).toBe(expectedQuota(11, 0, 7, 0.25, 3));

    mock.reset();
    const res = await fetch(`${gw.url}/v1beta/models/claude-test:streamGenerateContent?alt=sse`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
      body: JSON.stringify({
        contents: [{ role: 'user', parts: [{ text: 'weather?' }] }],
        tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } }] }],
      }),
    });
    expect(res.status).toBe(200);
    const events = sseEvents(await res.text()).map((e) => JSON.parse(e.data));
    const parts = events.flatMap((e) => e.candidates[0].content.parts);
    expect(
      parts
        .filter((p: any) => p.text)
        .map((p: any) => p.text)
        .join(''),
    ).toBe('Let me check.');
    expect(parts.filter((p: any) => p.functionCall)).toEqual([{ functionCall: { id: 'toolu_mock1', name: 'get_weather', args: { city: 'Paris' } } }]);
    expect(events[events.length - 1].usageMetadata).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 7 });
    expect(mock.received('/v1/messages')[0]!.json.tools).toEqual([
      { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
    ]);
  });

  test('OpenAI SDK → Claude channel: multi-turn with a tool result reaches Claude as tool_use/tool_result', async () => {
    const res = await openai.chat.completions.create({
      model: 'claude-test',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'toolu_prev', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_prev', content: '18C and sunny' },
      ],
      tool_choice: 'none',
    });
    expect(res.choices[0]!.message.content).toBe('Hello from the mock');
    expect(mock.received('/v1/messages')[0]!.json.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'weather in Paris?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_prev', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_prev', content: '18C and sunny' }] },
    ]);
    expect(mock.received('/v1/messages')[0]!.json.tool_choice).toEqual({ type: 'none' });
  });

  // ------------------------------------------------------------------ errors in the caller's format

  test('errors come in the caller format (Claude)', async () => {
    const bad = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-wrong' },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 5, messages: [] }),
    });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });

    const malformed = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ model: 'claude-test', messages: 'nope' }),
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });

    // the SDK surfaces it as a typed error
    await expect(anthropic.messages.create({ model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 404,
    });

    // upstream Claude error: status and message relayed, nothing billed
    const before = await quota();
    const up = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ model: 'claude-overloaded', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(up.status).toBe(529);
    expect(await up.json()).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(await quota()).toBe(before);
    // …and through the OpenAI format
    await expect(openai.chat.completions.create({ model: 'claude-overloaded', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 529,
      message: expect.stringContaining('Overloaded'),
    });
  });

  test('mid-stream upstream error reaches the Claude client as an error event (passthrough)', async () => {
    const stream = anthropic.messages.stream({ model: 'claude-midstream', max_tokens: 50, messages: [{ role: 'user', content: 'x' }] });
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    await expect(stream.finalMessage()).rejects.toMatchObject({ error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    expect(texts.join('')).toBe('Hello');
  });

  test('mid-stream Claude error, converted for an OpenAI client: the stream fails', async () => {
    const stream = await openai.chat.completions.create({ model: 'claude-midstream', stream: true, messages: [{ role: 'user', content: 'x' }] });
    let text = '';
    await expect(
      (async () => {
        for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
      })(),
    ).rejects.toBeTruthy();
    expect(text).toBe('Hello');
  });

  test('mid-stream OpenAI error: forwarded verbatim on passthrough, an error event for a Claude client', async () => {
    const raw = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'gpt-midstream', stream: true, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(raw.status).toBe(200);
    const text = await raw.text();
    expect(text).toContain(
      'data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}\n\n',
    );

    const stream = anthropic.messages.stream({ model: 'gpt-midstream', max_tokens: 50, messages: [{ role: 'user', content: 'x' }] });
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    await expect(stream.finalMessage()).rejects.toMatchObject({
      error: { type: 'error', error: { type: 'api_error', message: 'The server had an error while processing your request.' } },
    });
    expect(texts.join('')).toBe(mock.options.chunks[0]);
  });

  test('errors come in the caller format (Gemini)', async () => {
    const noKey = await fetch(`${gw.url}/v1beta/models/gemini-test:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [] }),
    });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });

    const malformed = await fetch(`${gw.url}/v1beta/models/gemini-test:generateContent?key=${key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: 'x' }),
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });

    const unknown = await fetch(`${gw.url}/v1beta/models/nothing-here:generateContent?key=${key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ parts: [{ text: 'x' }] }] }),
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
  });
  it('checks sensitive words in the Claude system prompt and Gemini contents, refusing with no charge', async () => {
    await setOptions(app, { CheckSensitiveEnabled: 'true', CheckSensitiveOnPromptEnabled: 'true', SensitiveWords: 'forbidden-word' });
    try {
      const before = await quota();
      const claude = await fetch(`${gw.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-test', max_tokens: 16, system: 'you know the FORBIDDEN-WORD', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(claude.status).toBe(400);
      expect(await claude.json()).toMatchObject({ type: 'error', error: { message: expect.stringContaining('forbidden-word') } });
      const gemini = await fetch(`${gw.url}/v1beta/models/gemini-test:generateContent?key=${key}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'say forbidden-word' }] }] }),
      });
      expect(gemini.status).toBe(400);
      expect(mock.received('/v1/messages')).toHaveLength(0);
      expect(mock.received(/generateContent/)).toHaveLength(0);
      expect(await quota()).toBe(before);
    } finally {
      await setOptions(app, { CheckSensitiveEnabled: 'false', CheckSensitiveOnPromptEnabled: 'false', SensitiveWords: '' });
    }
  });
});
