/**
 * Gemini clients through a real gateway, with the official `@google/genai` SDK (what Gemini CLI
 * is built on): generateContent, streams, a function-call round trip, countTokens, embeddings and
 * the model list, against a Gemini channel (passthrough), a strict OpenAI channel (conversion: it
 * refuses any field OpenAI does not define, as OpenAI does) and a Claude channel (conversion),
 * billed and logged.
 */
import crypto from 'node:crypto';
import { FunctionCallingConfigMode, GoogleGenAI, HarmBlockThreshold, HarmCategory, ThinkingLevel, type Content } from '@google/genai';
import { ALL_TARGETS, describeEach, makeUser, type TestApp } from '../helpers/app';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { installClaudeMock } from '../mock-upstream/claude';
import { installGeminiMock, type GeminiMockState } from '../mock-upstream/gemini';
import { installStrictOpenAIMock } from '../mock-upstream/openaiStrict';
import { installVertexMock, type VertexMockState } from '../mock-upstream/vertex';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';

const MODELS = [
  'gemini-2.5-pro',
  'gemini-alias',
  'gemini-embedding-001',
  'gemini-broken',
  'gemini-refuses',
  'gpt-conv',
  'gpt-5-mini',
  'text-embedding-3-small',
  'claude-conv',
  'gemini-3-pro-vx',
];
const PRICING = {
  ModelRatio: JSON.stringify(Object.fromEntries(MODELS.map((m) => [m, 1]))),
  CompletionRatio: JSON.stringify({ 'gemini-2.5-pro': 2, 'gpt-conv': 2, 'gpt-5-mini': 2, 'claude-conv': 2 }),
  GroupRatio: JSON.stringify({ default: 1 }),
  PreConsumedQuota: '100',
};

const WEATHER_TOOL = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'Weather of a city',
      parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  ],
};

/** What Gemini CLI sends on every chat turn (its chat-base config): topK, thinking, tools. */
const CLI_CONFIG = {
  temperature: 1,
  topP: 0.95,
  topK: 64,
  thinkingConfig: { includeThoughts: true, thinkingBudget: -1 },
  tools: [WEATHER_TOOL],
};

const VERTEX_KEYS = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const VERTEX_EMAIL = 'relay@test-project.iam.gserviceaccount.com';

describeEach(ALL_TARGETS, 'Gemini clients (@google/genai) through the gateway', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let gemini: GeminiMockState;
  let vertex: VertexMockState;
  let gw: { url: string; close(): Promise<void> };
  let userId: number;
  let key: string;
  let ai: GoogleGenAI;

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    installClaudeMock(mock);
    gemini = installGeminiMock(mock);
    installStrictOpenAIMock(mock, '/strict');
    vertex = installVertexMock(mock, VERTEX_KEYS.publicKey, VERTEX_EMAIL);
    gw = await listen(app.callback);
    await setOptions(app, PRICING);
    userId = (await makeUser(app, { quota: 1_000_000 })).id;
    key = (await seedToken(app, userId)).key;
    await seedChannel(app, {
      name: 'gemini-ch',
      type: 24,
      key: 'gem-upstream',
      base_url: mock.url,
      models: 'gemini-2.5-pro,gemini-alias,gemini-embedding-001',
      model_mapping: JSON.stringify({ 'gemini-alias': 'gemini-2.5-pro' }),
    });
    await seedChannel(app, {
      name: 'openai-ch',
      type: 1,
      key: 'sk-openai-upstream',
      base_url: `${mock.url}/strict`,
      models: 'gpt-conv,gpt-5-mini,text-embedding-3-small',
    });
    await seedChannel(app, { name: 'claude-ch', type: 14, key: 'sk-ant-upstream', base_url: mock.url, models: 'claude-conv' });
    const serviceAccount = JSON.stringify({
      type: 'service_account',
      project_id: 'test-project',
      private_key: VERTEX_KEYS.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: VERTEX_EMAIL,
      token_uri: vertex.tokenUrl,
    });
    await seedChannel(app, { name: 'vertex-ch', type: 41, key: serviceAccount, base_url: mock.url, models: 'gemini-3-pro-vx', other: 'global' });
    // Gemini channels the mock fails (the fault is read from the key)
    await seedChannel(app, { name: 'gemini-500', type: 24, key: 'gem-fault-500', base_url: mock.url, models: 'gemini-broken', auto_ban: 0 });
    await seedChannel(app, { name: 'gemini-400', type: 24, key: 'gem-fault-400', base_url: mock.url, models: 'gemini-refuses', auto_ban: 0 });
    ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url } });
  });
  afterAll(async () => {
    await gw?.close();
    await mock?.close();
  });
  beforeEach(() => {
    mock.reset();
    gemini.thoughtsTokens = 0;
    gemini.thoughtSignature = undefined;
  });

  const quota = async () => Number((await app.knex('users').where({ id: userId }).first()).quota);
  const logCount = async () => {
    await flushUsage(app);
    return Number((await app.knex('logs').where({ user_id: userId, type: 2 }).count({ n: '*' }).first())!.n);
  };
  const lastLog = async () => {
    await flushUsage(app);
    return app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc').first();
  };
  /** Billed and logged: the quota moved by `cost`, and the last log row says so. */
  const expectBilled = async (before: number, cost: number, channel: string, prompt: number, completion: number) => {
    expect(before - (await quota())).toBe(cost);
    const log = await lastLog();
    expect(Number(log.quota)).toBe(cost);
    expect(log.channel_name).toBe(channel);
    expect(log.prompt_tokens).toBe(prompt);
    expect(log.completion_tokens).toBe(completion);
  };
  const raw = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': key, ...headers },
      body: JSON.stringify(body),
    });

  // ------------------------------------------------------------------ Gemini channel: passthrough

  test('generateContent → Gemini channel: the body goes as sent (topK, thinking), billed', async () => {
    gemini.thoughtsTokens = 3;
    const before = await quota();
    const res = await ai.models.generateContent({ model: 'gemini-2.5-pro', contents: 'Hi', config: { systemInstruction: 'Be brief.', ...CLI_CONFIG } });
    expect(res.text).toBe('Hello from the mock');
    expect(res.candidates?.[0]?.content?.parts?.[0]).toEqual({ text: 'Mock thought.', thought: true });
    expect(res.usageMetadata).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 7, thoughtsTokenCount: 3 });
    const up = mock.received(/gemini-2\.5-pro:generateContent$/)[0]!;
    expect(up.headers['x-goog-api-key']).toBe('gem-upstream');
    expect(up.json.generationConfig).toEqual({ temperature: 1, topP: 0.95, topK: 64, thinkingConfig: { includeThoughts: true, thinkingBudget: -1 } });
    expect(up.json.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }], role: 'user' });
    // completion = candidates + thoughts = 10, at ×2
    await expectBilled(before, 11 + 10 * 2, 'gemini-ch', 11, 10);
  });

  test('a mapped model: only the model changes, unknown fields are forwarded', async () => {
    const body = { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }], generationConfig: { topK: 40 }, futureField: { keep: [1, 2] } };
    const res = await fetch(`${gw.url}/v1beta/models/gemini-alias:generateContent?key=${key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const up = mock.received(/:generateContent$/)[0]!;
    expect(up.path).toBe('/v1beta/models/gemini-2.5-pro:generateContent');
    expect(up.json).toMatchObject(body);
    expect(up.json.model).toBeUndefined();
  });

  test('generateContentStream → Gemini channel, billed from the last usageMetadata', async () => {
    const before = await quota();
    let text = '';
    let last: { usageMetadata?: unknown } | undefined;
    for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-2.5-pro', contents: 'Hi' })) {
      text += chunk.text ?? '';
      last = chunk;
    }
    expect(text).toBe('Hello from the mock');
    expect(last?.usageMetadata).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 7 });
    expect(mock.received(/:streamGenerateContent$/)[0]!.url).toContain('alt=sse');
    await expectBilled(before, 11 + 7 * 2, 'gemini-ch', 11, 7);
  });

  test('function call round trip on the Gemini channel keeps the thought signature', async () => {
    gemini.thoughtSignature = 'sig-gemini-3';
    const question: Content = { role: 'user', parts: [{ text: 'Paris, tomorrow?' }] };
    const first = await ai.models.generateContent({
      model: 'gemini-2.5-pro',
      contents: [question],
      config: { tools: [WEATHER_TOOL], toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } } },
    });
    expect(first.functionCalls).toEqual([{ name: 'get_weather', args: { city: 'Paris' } }]);
    const callContent = first.candidates![0]!.content!;
    expect(callContent.parts![0]!.thoughtSignature).toBe('sig-gemini-3');
    const second = await ai.models.generateContent({
      model: 'gemini-2.5-pro',
      contents: [question, callContent, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '18C' } } }] }],
      config: { tools: [WEATHER_TOOL] },
    });
    expect(second.text).toBe('Hello from the mock');
    const up = mock.received(/:generateContent$/)[1]!;
    expect(up.json.contents[1].parts[0]).toEqual({ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-gemini-3' });
  });

  test('countTokens: a Gemini channel counts; other channels are counted locally; never billed', async () => {
    const before = await quota();
    const logs = await logCount();
    gemini.countTokens = 42;
    expect((await ai.models.countTokens({ model: 'gemini-alias', contents: 'How many tokens is this?' })).totalTokens).toBe(42);
    const up = mock.received(/:countTokens$/);
    expect(up).toHaveLength(1);
    expect(up[0]!.path).toBe('/v1beta/models/gemini-2.5-pro:countTokens');
    expect(up[0]!.headers['x-goog-api-key']).toBe('gem-upstream');

    const local = await ai.models.countTokens({ model: 'gpt-conv', contents: 'How many tokens is this?' });
    expect(local.totalTokens).toBeGreaterThan(5);
    expect(local.totalTokens).toBeLessThan(20);
    const longer = await ai.models.countTokens({ model: 'claude-conv', contents: 'How many tokens is this? '.repeat(20) });
    expect(longer.totalTokens!).toBeGreaterThan(local.totalTokens! * 10);
    expect(mock.received(/:countTokens$/)).toHaveLength(1);
    // a Gemini channel that fails: counted locally; one that refuses the request: its 400
    const fallback = await ai.models.countTokens({ model: 'gemini-broken', contents: 'How many tokens is this?' });
    expect(fallback.totalTokens).toBe(local.totalTokens);
    expect(mock.received(/gemini-broken:countTokens$/)).toHaveLength(1);
    const refused = await raw('/v1beta/models/gemini-refuses:countTokens', { contents: [{ parts: [{ text: 'x' }] }] });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string; status: string } }).error).toEqual({
      code: 400,
      message: 'mock failure 400',
      status: 'INVALID_ARGUMENT',
    });
    expect(await quota()).toBe(before);
    expect(await logCount()).toBe(logs);
  });

  test('embedContent → Gemini channel (batchEmbedContents forwarded), billed by the tokenizer', async () => {
    const before = await quota();
    const res = await ai.models.embedContent({ model: 'gemini-embedding-001', contents: ['first text', 'second text'] });
    expect(res.embeddings?.map((e) => e.values)).toEqual([
      [0.5, 0.125, -2],
      [1.5, 0.125, -2],
    ]);
    const up = mock.received(/:batchEmbedContents$/)[0]!;
    expect(up.json.requests.map((r: { model: string }) => r.model)).toEqual(['models/gemini-embedding-001', 'models/gemini-embedding-001']);
    const log = await lastLog();
    expect(log.channel_name).toBe('gemini-ch');
    expect(log.model_name).toBe('gemini-embedding-001');
    expect(log.prompt_tokens).toBe(4); // "first text" + "second text", no usage from Gemini
    expect(before - (await quota())).toBe(4);
  });

  test('embedContent → OpenAI channel: converted to /v1/embeddings and back, billed from its usage', async () => {
    const before = await quota();
    const res = await ai.models.embedContent({
      model: 'text-embedding-3-small',
      contents: ['a', 'b'],
      config: { outputDimensionality: 3, taskType: 'RETRIEVAL_QUERY' },
    });
    // the strict upstream answered out of order: back in the request's order
    expect(res.embeddings?.map((e) => e.values)).toEqual([
      [0.5, 0.25, -1],
      [1.5, 0.25, -1],
    ]);
    const up = mock.received('/strict/v1/embeddings')[0]!;
    expect(up.json).toEqual({ model: 'text-embedding-3-small', input: ['a', 'b'], encoding_format: 'float', dimensions: 3 });
    await expectBilled(before, 11, 'openai-ch', 11, 0);
    // an image cannot go through OpenAI's embeddings: a clear 400 in Gemini's shape
    const bad = await raw('/v1beta/models/text-embedding-3-small:embedContent', {
      content: { parts: [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }] },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { status: string; message: string } }).error).toMatchObject({ status: 'INVALID_ARGUMENT' });
  });

  test('models.list and models.get in Gemini’s shape, paged', async () => {
    const names: string[] = [];
    for await (const m of await ai.models.list({ config: { pageSize: 3 } })) names.push(m.name!);
    expect(names).toEqual(
      MODELS.slice()
        .sort()
        .map((m) => `models/${m}`),
    );
    const one = await ai.models.get({ model: 'gemini-2.5-pro' });
    expect(one).toMatchObject({ name: 'models/gemini-2.5-pro', displayName: 'gemini-2.5-pro', inputTokenLimit: 1_048_576 });
    expect(one.supportedActions).toEqual(['generateContent', 'countTokens']);
    const page = await fetch(`${gw.url}/v1beta/models?pageSize=2`, { headers: { 'x-goog-api-key': key } });
    const body = (await page.json()) as { models: Array<{ name: string }>; nextPageToken?: string };
    expect(body.models).toHaveLength(2);
    expect(typeof body.nextPageToken).toBe('string');
    const missing = await fetch(`${gw.url}/v1beta/models/nope`, { headers: { 'x-goog-api-key': key } });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { status: string } }).error.status).toBe('NOT_FOUND');
  });

  // ------------------------------------------------------------------ OpenAI channel: conversion

  test('generateContent → OpenAI channel: Gemini CLI’s config converts to OpenAI fields only', async () => {
    const before = await quota();
    const res = await ai.models.generateContent({
      model: 'gpt-conv',
      contents: 'Hi',
      config: { systemInstruction: 'Be brief.', ...CLI_CONFIG, tools: undefined },
    });
    expect(res.text).toBe('Hello from the mock');
    expect(res.candidates?.[0]?.finishReason).toBe('STOP');
    const up = mock.received('/strict/v1/chat/completions')[0]!;
    expect(up.headers.authorization).toBe('Bearer sk-openai-upstream');
    expect(up.json).toEqual({
      model: 'gpt-conv',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      temperature: 1,
      top_p: 0.95,
      stream: false,
    });
    await expectBilled(before, 11 + 7 * 2, 'openai-ch', 11, 7);
  });

  test('a reasoning model gets max_completion_tokens and reasoning_effort, no sampling fields', async () => {
    await ai.models.generateContent({
      model: 'gpt-5-mini',
      contents: 'Hi',
      config: { ...CLI_CONFIG, tools: undefined, maxOutputTokens: 500, stopSequences: ['END'], thinkingConfig: { thinkingBudget: 8192 } },
    });
    const up = mock.received('/strict/v1/chat/completions')[0]!;
    // temperature 1 is the default these models take; top_p 0.95, topK and stop they refuse
    expect(up.json).toEqual({
      model: 'gpt-5-mini',
      messages: [{ role: 'user', content: 'Hi' }],
      temperature: 1,
      max_completion_tokens: 500,
      reasoning_effort: 'medium',
      stream: false,
    });
  });

  test('generateContentStream → OpenAI channel, billed', async () => {
    const before = await quota();
    let text = '';
    let last: { usageMetadata?: unknown; candidates?: Array<{ finishReason?: string }> } | undefined;
    for await (const chunk of await ai.models.generateContentStream({ model: 'gpt-conv', contents: 'Hi', config: CLI_CONFIG })) {
      text += chunk.text ?? '';
      last = chunk;
    }
    expect(text).toBe('Hello from the mock');
    expect(last?.candidates?.[0]?.finishReason).toBe('STOP');
    expect(last?.usageMetadata).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 });
    const up = mock.received('/strict/v1/chat/completions')[0]!;
    expect(up.json.stream_options).toEqual({ include_usage: true });
    expect(up.json.top_k).toBeUndefined();
    await expectBilled(before, 11 + 7 * 2, 'openai-ch', 11, 7);
  });

  test('function call round trip → OpenAI channel (parallel calls, streamed)', async () => {
    const question: Content = { role: 'user', parts: [{ text: 'Call get_weather and get_time for Paris' }] };
    const tools = [
      { functionDeclarations: [...WEATHER_TOOL.functionDeclarations, { name: 'get_time', parametersJsonSchema: { type: 'object', properties: {} } }] },
    ];
    const parts: NonNullable<Content['parts']> = [];
    let finish: string | undefined;
    for await (const chunk of await ai.models.generateContentStream({ model: 'gpt-conv', contents: [question], config: { ...CLI_CONFIG, tools } })) {
      parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
      finish = chunk.candidates?.[0]?.finishReason ?? finish;
    }
    const calls = parts.filter((p) => p.functionCall).map((p) => p.functionCall!);
    expect(calls).toEqual([
      { id: 'call_strict0', name: 'get_weather', args: { city: 'Paris' } },
      { id: 'call_strict1', name: 'get_time', args: { city: 'Paris' } },
    ]);
    expect(finish).toBe('STOP');
    // Gemini CLI answers with one functionResponse per call, ids echoed
    const res = await ai.models.generateContent({
      model: 'gpt-conv',
      contents: [
        question,
        { role: 'model', parts: calls.map((functionCall) => ({ functionCall })) },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'call_strict1', name: 'get_time', response: { output: 'noon' } } },
            { functionResponse: { id: 'call_strict0', name: 'get_weather', response: { output: '18C' } } },
          ],
        },
      ],
      config: { ...CLI_CONFIG, tools },
    });
    expect(res.text).toBe('Tool said: {"output":"noon"} | {"output":"18C"}');
    const up = mock.received('/strict/v1/chat/completions')[1]!;
    expect(up.json.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_strict0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_strict1', type: 'function', function: { name: 'get_time', arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_strict1', content: '{"output":"noon"}' },
      { role: 'tool', tool_call_id: 'call_strict0', content: '{"output":"18C"}' },
    ]);
  });

  test('a Gemini CLI turn with thoughts, signatures and built-in tools converts for OpenAI', async () => {
    const res = await raw('/v1beta/models/gpt-conv:generateContent', {
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
        {
          role: 'model',
          parts: [
            { text: 'I should call the tool.', thought: true },
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnLTE=' },
          ],
        },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '18C' } } }] },
      ],
      systemInstruction: { role: 'user', parts: [{ text: 'You are Gemini CLI.' }] },
      generationConfig: CLI_CONFIG,
      tools: [WEATHER_TOOL, { googleSearch: {} }],
      toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
      cachedContent: 'cachedContents/abc',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-unconverted')).toBe('googleSearch'); // Google's own tool: left out, said so
    const body = (await res.json()) as { candidates: Array<{ content: { parts: Array<{ text?: string }> } }> };
    expect(body.candidates[0]!.content.parts[0]!.text).toBe('Tool said: {"output":"18C"}');
    const up = mock.received('/strict/v1/chat/completions')[0]!.json;
    expect(up.tools).toEqual([
      {
        type: 'function',
        function: { name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_TOOL.functionDeclarations[0]!.parametersJsonSchema },
      },
    ]);
    expect(up.tool_choice).toBe('auto');
    expect(up.messages[2].tool_calls[0]).toEqual({
      id: up.messages[3].tool_call_id,
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
  });

  // ------------------------------------------------------------------ Claude channel: conversion

  test('generateContent and stream → Claude channel', async () => {
    const before = await quota();
    const res = await ai.models.generateContent({
      model: 'claude-conv',
      contents: 'Hi',
      config: { systemInstruction: 'Be brief.', ...CLI_CONFIG, tools: undefined },
    });
    expect(res.text).toBe('Hello from the mock');
    const up = mock.received('/v1/messages')[0]!.json;
    expect(up.system).toEqual([{ type: 'text', text: 'Be brief.' }]);
    expect(up.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
    await expectBilled(before, 11 + 7 * 2, 'claude-ch', 11, 7);

    let text = '';
    for await (const chunk of await ai.models.generateContentStream({ model: 'claude-conv', contents: 'Hi' })) text += chunk.text ?? '';
    expect(text).toBe('Hello from the mock');
  });

  test('function call round trip → Claude channel: tool_result answers its tool_use', async () => {
    const question: Content = { role: 'user', parts: [{ text: 'What is the weather in Paris?' }] };
    const first = await ai.models.generateContent({ model: 'claude-conv', contents: [question], config: { ...CLI_CONFIG, tools: [WEATHER_TOOL] } });
    const call = first.functionCalls![0]!;
    expect(call).toMatchObject({ name: 'get_weather', args: { city: 'Paris' } });
    expect(call.id).toBeTruthy();
    await ai.models.generateContent({
      model: 'claude-conv',
      contents: [
        question,
        first.candidates![0]!.content!,
        { role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name, response: { output: '18C' } } }] },
      ],
      config: { ...CLI_CONFIG, tools: [WEATHER_TOOL] },
    });
    const up = mock.received('/v1/messages')[1]!.json;
    const roles = up.messages.map((m: { role: string }) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'user']);
    const toolUse = up.messages[1].content.find((b: { type: string }) => b.type === 'tool_use');
    expect(toolUse).toMatchObject({ id: call.id, name: 'get_weather', input: { city: 'Paris' } });
    expect(up.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: call.id });
  });

  // ------------------------------------------------------------------ Vertex AI: conversion back to Gemini

  test('Vertex AI (always converted): Gemini-only fields and thought signatures come back', async () => {
    const VERTEX_CALL = /^\/v1\/projects\/test-project\/locations\/global\/publishers\/google\/models\/gemini-3-pro-vx:generateContent$/;
    gemini.thoughtSignature = 'sig-vertex';
    const config = {
      tools: [WEATHER_TOOL, { googleSearch: {} }],
      toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } },
      thinkingConfig: { includeThoughts: true, thinkingLevel: ThinkingLevel.HIGH },
      safetySettings: [{ category: HarmCategory.HARM_CATEGORY_HARASSMENT, threshold: HarmBlockThreshold.BLOCK_NONE }],
      topK: 64,
    };
    const question: Content = { role: 'user', parts: [{ text: 'Paris?' }] };
    const first = await ai.models.generateContent({ model: 'gemini-3-pro-vx', contents: [question], config });
    const callContent = first.candidates![0]!.content!;
    expect(callContent.parts!.find((p) => p.functionCall)).toMatchObject({ functionCall: { name: 'get_weather' }, thoughtSignature: 'sig-vertex' });
    expect(vertex.calls.at(-1)).toMatchObject({ region: 'global', publisher: 'google', model: 'gemini-3-pro-vx', action: 'generateContent' });
    const up1 = mock.received(VERTEX_CALL)[0]!.json;
    expect(up1.tools).toEqual([{ functionDeclarations: [expect.objectContaining({ name: 'get_weather' })] }, { googleSearch: {} }]);
    expect(up1.safetySettings).toEqual(config.safetySettings);
    expect(up1.generationConfig).toMatchObject({ topK: 64, thinkingConfig: { includeThoughts: true, thinkingLevel: 'HIGH' } });

    const call = callContent.parts!.find((p) => p.functionCall)!.functionCall!;
    await ai.models.generateContent({
      model: 'gemini-3-pro-vx',
      contents: [question, callContent, { role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name, response: { output: '18C' } } }] }],
      config: { ...config, toolConfig: undefined },
    });
    const up2 = mock.received(VERTEX_CALL)[1]!.json;
    expect(up2.contents[1].parts).toEqual([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-vertex' }]);
    expect(up2.contents[2].parts).toEqual([{ functionResponse: { name: 'get_weather', response: { output: '18C' } } }]);

    expect((await ai.models.countTokens({ model: 'gemini-3-pro-vx', contents: 'x' })).totalTokens).toBe(42);
    expect(vertex.calls.at(-1)).toMatchObject({ model: 'gemini-3-pro-vx', action: 'countTokens' });
  });

  // ------------------------------------------------------------------ errors in Gemini's shape

  test('errors come in Gemini’s shape', async () => {
    const bad = new GoogleGenAI({ apiKey: 'sk-wrong', httpOptions: { baseUrl: gw.url } });
    await expect(bad.models.generateContent({ model: 'gemini-2.5-pro', contents: 'Hi' })).rejects.toMatchObject({ status: 401 });
    const r401 = await raw('/v1beta/models/gemini-2.5-pro:countTokens', { contents: [] }, { 'x-goog-api-key': 'nope' });
    expect(r401.status).toBe(401);
    expect(((await r401.json()) as { error: { status: string } }).error.status).toBe('UNAUTHENTICATED');
    const unknown = await raw('/v1beta/models/no-such-model:countTokens', { contents: [{ parts: [{ text: 'x' }] }] });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { status: string } }).error.status).toBe('NOT_FOUND');
    const noContents = await raw('/v1beta/models/gpt-conv:countTokens', {});
    expect(noContents.status).toBe(400);
    expect(((await noContents.json()) as { error: { status: string } }).error.status).toBe('INVALID_ARGUMENT');
    const path = await raw('/v1beta/files', {});
    expect(path.status).toBe(404);
    expect(((await path.json()) as { error: { code: number; status: string } }).error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
  });
});
