/**
 * End to end over a real gateway and the mock upstream: the OpenAI Responses API as a client
 * protocol served by Claude, Gemini and Chat-only channels (converted), by channels that speak it
 * (passthrough), and as an upstream protocol for Chat and Claude clients (a channel whose upstream
 * has only Responses). Official SDKs on the client side; billed and logged like any call.
 */
import crypto from 'node:crypto';
import type http from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { ALL_TARGETS, describeEach, makeUser, type TestApp } from '../helpers/app';
import { startMockUpstream, type MockRequest, type MockUpstream } from '../mock-upstream';
import { installClaudeMock } from '../mock-upstream/claude';
import { installGeminiMock } from '../mock-upstream/gemini';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { testChannel } from '../../server/src/channels/operations';

const PRICING = {
  ModelRatio: JSON.stringify({
    'claude-r': 1,
    'gemini-r': 1,
    'chat-r': 1,
    'resp-only': 1,
    'gpt-4.1-az': 1,
    'gpt-native': 1,
    'claude-midstream': 1,
    'resp-cut': 1,
    mixed: 1,
    'gpt-5-codex': 1,
  }),
  CompletionRatio: JSON.stringify({ 'claude-r': 2, 'gemini-r': 3, 'chat-r': 4, 'resp-only': 5, 'gpt-4.1-az': 2, 'gpt-native': 2 }),
  CacheRatio: JSON.stringify({ 'resp-only': 0.5 }),
  GroupRatio: JSON.stringify({ default: 1 }),
  PreConsumedQuota: '100',
};

const WEATHER_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

function sendJson(res: http.ServerResponse, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * A Chat Completions upstream that calls tools: with tools, when tool_choice is `required` or
 * names a function, it calls every tool (first only when parallel_tool_calls is false) with
 * `{"city":"Paris"}`; otherwise it answers "Sunny in Paris". Usage 11/7 (+ include_usage chunk).
 */
function chatWithTools(req: MockRequest, res: http.ServerResponse) {
  const body = req.json ?? {};
  const tools: Array<{ function: { name: string } }> = Array.isArray(body.tools) ? body.tools : [];
  const forced = body.tool_choice === 'required' || body.tool_choice?.type === 'function';
  const names = !tools.length || !forced ? [] : body.tool_choice?.type === 'function' ? [body.tool_choice.function.name] : tools.map((t) => t.function.name);
  const calls = (body.parallel_tool_calls === false ? names.slice(0, 1) : names).map((name: string, i: number) => ({
    id: `call_chat${i}`,
    type: 'function',
    function: { name, arguments: '{"city":"Paris"}' },
  }));
  const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
  const base = { id: 'chatcmpl-tools', created: 1700000000, model: body.model };
  if (!body.stream) {
    const message = calls.length ? { role: 'assistant', content: null, tool_calls: calls } : { role: 'assistant', content: 'Sunny in Paris' };
    return sendJson(res, { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: calls.length ? 'tool_calls' : 'stop' }], usage });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const write = (delta: unknown, finish: string | null = null) =>
    res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  write({ role: 'assistant', content: '' });
  if (calls.length) {
    calls.forEach((c: { id: string; function: { name: string } }, index: number) => {
      write({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] });
      write({ tool_calls: [{ index, function: { arguments: '{"city":' } }] });
      write({ tool_calls: [{ index, function: { arguments: '"Paris"}' } }] });
    });
  } else for (const piece of ['Sunny', ' in', ' Paris']) write({ content: piece });
  write({}, calls.length ? 'tool_calls' : 'stop');
  if (body.stream_options?.include_usage) res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
  res.end('data: [DONE]\n\n');
}

describeEach(ALL_TARGETS, 'relay: OpenAI Responses API', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let gw: { url: string; close(): Promise<void> };
  let userId: number;
  let key: string;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let respOnlyId: number;

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    installClaudeMock(mock);
    installGeminiMock(mock);
    mock.route('POST', /^\/v1\/chat\/completions$/, chatWithTools);
    gw = await listen(app.callback);
    await setOptions(app, PRICING);
    const u = await makeUser(app, { quota: 1_000_000 });
    userId = u.id;
    key = (await seedToken(app, userId)).key;
    await seedChannel(app, { name: 'claude-ch', type: 14, key: 'sk-ant-upstream', base_url: mock.url, models: 'claude-r,gpt-5-codex' });
    await seedChannel(app, { name: 'gemini-ch', type: 24, key: 'gem-upstream', base_url: mock.url, models: 'gemini-r' });
    await seedChannel(app, { name: 'deepseek-ch', type: 43, key: 'sk-ds', base_url: mock.url, models: 'chat-r' });
    await seedChannel(app, { name: 'openai-native', type: 1, key: 'sk-native', base_url: mock.url, models: 'gpt-native' });
    respOnlyId = await seedChannel(app, {
      name: 'resp-only-ch',
      type: 1,
      key: 'sk-resp',
      base_url: mock.url,
      models: 'resp-only',
      setting: JSON.stringify({ upstream_protocol: 'responses' }),
    });
    // one model on a Claude channel (preferred) and on an OpenAI channel that speaks Responses
    await seedChannel(app, { name: 'mixed-claude', type: 14, key: 'sk-ant-upstream', base_url: mock.url, models: 'mixed', priority: 10 });
    await seedChannel(app, { name: 'mixed-openai', type: 1, key: 'sk-native', base_url: mock.url, models: 'mixed', priority: 0 });
    await seedChannel(app, { name: 'claude-midstream', type: 14, key: 'sk-ant-fault-midstream', base_url: mock.url, models: 'claude-midstream', auto_ban: 0 });
    await seedChannel(app, {
      name: 'resp-cut',
      type: 1,
      key: 'sk-fault-cut',
      base_url: mock.url,
      models: 'resp-cut',
      auto_ban: 0,
      setting: JSON.stringify({ upstream_protocol: 'responses' }),
    });
    await seedChannel(app, {
      name: 'azure-resp',
      type: 3,
      key: 'az-key',
      base_url: mock.url,
      models: 'gpt-4.1-az',
      setting: JSON.stringify({ upstream_protocol: 'responses' }),
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
  /** Checks the call's bill: the user's quota moved by exactly the priced usage, and the log row says so. */
  const expectBilled = async (before: number, cost: number, prompt: number, completion: number, model: string, channel: string) => {
    expect(before - (await quota())).toBe(cost);
    const log = await lastLog();
    expect(Number(log.quota)).toBe(cost);
    expect(log.prompt_tokens).toBe(prompt);
    expect(log.completion_tokens).toBe(completion);
    expect(log.model_name).toBe(model);
    expect(log.channel_name).toBe(channel);
  };

  // ------------------------------------------------------------------ Responses client → Claude

  test('Responses → Claude (non-stream): instructions and input converted, Response object back, billed', async () => {
    const before = await quota();
    const r = await openai.responses.create({ model: 'claude-r', instructions: 'Be brief.', input: 'Hello', max_output_tokens: 300 });
    expect(r.object).toBe('response');
    expect(r.status).toBe('completed');
    expect(r.model).toBe('claude-r');
    expect(r.output_text).toBe('Hello from the mock');
    expect(r.usage).toMatchObject({ input_tokens: 11, output_tokens: 7, total_tokens: 18 });
    const up = mock.received('/v1/messages').at(-1)!.json;
    expect(up.system).toEqual([{ type: 'text', text: 'Be brief.' }]);
    expect(up.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }]);
    expect(up.max_tokens).toBe(300);
    // 11 + 7 × 2
    await expectBilled(before, 25, 11, 7, 'claude-r', 'claude-ch');
  });

  test('Responses → Claude (stream): function tool round trip with function_call_output', async () => {
    const before = await quota();
    const stream = openai.responses.stream({ model: 'claude-r', input: 'Paris, please', tools: [WEATHER_TOOL], tool_choice: 'required' });
    const types: string[] = [];
    let args = '';
    stream.on('event', (e) => types.push(e.type));
    stream.on('response.function_call_arguments.delta', (e) => (args += e.delta));
    const first = await stream.finalResponse();
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.output_text.delta');
    expect(types).toContain('response.function_call_arguments.delta');
    expect(types.at(-1)).toBe('response.completed');
    expect(args).toBe('{"city": "Paris"}');
    const call = first.output.find((o) => o.type === 'function_call')!;
    expect(call).toMatchObject({ type: 'function_call', call_id: 'toolu_mock1', name: 'get_weather', arguments: '{"city": "Paris"}', status: 'completed' });
    expect(first.output_text).toBe('Let me check.');
    expect(first.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
    expect(mock.received('/v1/messages').at(-1)!.json.tool_choice).toEqual({ type: 'any' });
    await expectBilled(before, 25, 11, 7, 'claude-r', 'claude-ch');

    // the client sends back the whole history (store: false), with the tool's output
    const second = await openai.responses.create({
      model: 'claude-r',
      store: false,
      input: [
        { role: 'user', content: 'Paris, please' },
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 24°C' },
      ],
      tools: [WEATHER_TOOL],
    });
    expect(second.output_text).toBe('Hello from the mock');
    expect(second).toMatchObject({ store: false });
    const msgs = mock.received('/v1/messages').at(-1)!.json.messages;
    expect(msgs).toHaveLength(3);
    expect(msgs[1]).toMatchObject({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'toolu_mock1', name: 'get_weather', input: { city: 'Paris' } },
      ],
    });
    expect(msgs[2]).toMatchObject({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_mock1', content: 'Sunny, 24°C' }] });
  });

  // ------------------------------------------------------------------ Responses client → Gemini

  test('Responses → Gemini: stream and non-stream, function call and its output', async () => {
    let before = await quota();
    const stream = openai.responses.stream({ model: 'gemini-r', input: 'Paris?', tools: [WEATHER_TOOL], tool_choice: 'required' });
    const first = await stream.finalResponse();
    const call = first.output.find((o) => o.type === 'function_call')!;
    expect(call).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(call.call_id).toBeTruthy();
    const up = mock.received(/:streamGenerateContent$/).at(-1)!.json;
    expect(up.tools[0].functionDeclarations[0].name).toBe('get_weather');
    expect(up.toolConfig.functionCallingConfig.mode).toBe('ANY');
    // 11 + 7 × 3
    await expectBilled(before, 32, 11, 7, 'gemini-r', 'gemini-ch');

    before = await quota();
    const second = await openai.responses.create({
      model: 'gemini-r',
      input: [
        { role: 'user', content: 'Paris?' },
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { type: 'function_call_output', call_id: call.call_id, output: '{"temp":24}' },
      ],
      tools: [WEATHER_TOOL],
    });
    expect(second.output_text).toBe('Hello from the mock');
    const contents = mock.received(/:generateContent$/).at(-1)!.json.contents;
    expect(contents.at(-2).parts).toEqual([expect.objectContaining({ functionCall: { name: 'get_weather', args: { city: 'Paris' } } })]);
    expect(contents.at(-1).parts).toEqual([{ functionResponse: { name: 'get_weather', response: { temp: 24 } } }]);
    await expectBilled(before, 32, 11, 7, 'gemini-r', 'gemini-ch');
  });

  // ------------------------------------------------------------------ Responses client → Chat-only OpenAI-compatible

  test('Responses → Chat-only channel (DeepSeek): converted to Chat Completions, parallel calls, round trip', async () => {
    const before = await quota();
    const stream = openai.responses.stream({
      model: 'chat-r',
      instructions: 'Sys.',
      input: 'Paris and Rome',
      tools: [WEATHER_TOOL, { ...WEATHER_TOOL, name: 'get_time' }],
      tool_choice: 'required',
    });
    const first = await stream.finalResponse();
    const calls = first.output.filter((o) => o.type === 'function_call');
    expect(calls.map((c) => [c.call_id, c.name, c.arguments])).toEqual([
      ['call_chat0', 'get_weather', '{"city":"Paris"}'],
      ['call_chat1', 'get_time', '{"city":"Paris"}'],
    ]);
    expect(first.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
    const up = mock.received('/v1/chat/completions').at(-1)!.json;
    expect(up.messages).toEqual([
      { role: 'system', content: 'Sys.' },
      { role: 'user', content: 'Paris and Rome' },
    ]);
    expect(up.tools[0]).toEqual({ type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_TOOL.parameters } });
    expect(up.tool_choice).toBe('required');
    expect(up.stream_options).toEqual({ include_usage: true });
    expect(up).not.toHaveProperty('input');
    expect(up).not.toHaveProperty('instructions');
    // 11 + 7 × 4
    await expectBilled(before, 39, 11, 7, 'chat-r', 'deepseek-ch');

    const second = await openai.responses.create({
      model: 'chat-r',
      input: [
        { role: 'user', content: 'Paris and Rome' },
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { type: 'function_call_output', call_id: 'call_chat0', output: 'sunny' },
        { type: 'function_call_output', call_id: 'call_chat1', output: 'noon' },
      ],
      tools: [WEATHER_TOOL],
    });
    expect(second.output_text).toBe('Sunny in Paris');
    const msgs = mock.received('/v1/chat/completions').at(-1)!.json.messages;
    expect(msgs[1]).toMatchObject({ role: 'assistant', content: null, tool_calls: [{ id: 'call_chat0' }, { id: 'call_chat1' }] });
    expect(msgs.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'call_chat0', content: 'sunny' },
      { role: 'tool', tool_call_id: 'call_chat1', content: 'noon' },
    ]);
  });

  // ------------------------------------------------------------------ what conversion cannot honour

  test('previous_response_id: 400 in OpenAI shape when the call would be converted, nothing billed; forwarded to a Responses channel', async () => {
    const before = await quota();
    const res = await app
      .http()
      .post('/v1/responses')
      .set('authorization', `Bearer ${key}`)
      .send({ model: 'claude-r', input: 'and then?', previous_response_id: 'resp_abc' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_by_channel' });
    expect(res.body.error.message).toContain('previous_response_id');
    expect(res.body.error.message).toContain('claude-r');
    expect(res.body.error.message).toContain('OpenAI Responses');
    expect(res.body.error.message).toContain('Claude');
    expect(mock.received('/v1/messages')).toHaveLength(0);
    expect(await quota()).toBe(before);

    // the SDK surfaces it as a BadRequestError
    await expect(openai.responses.create({ model: 'chat-r', input: 'x', previous_response_id: 'resp_abc' })).rejects.toMatchObject({ status: 400 });

    const ok = await openai.responses.create({ model: 'gpt-native', input: 'and then?', previous_response_id: 'resp_abc' });
    expect(ok.output_text).toBe('Hello from the mock');
    expect(mock.received('/v1/responses').at(-1)!.json).toEqual({ model: 'gpt-native', input: 'and then?', previous_response_id: 'resp_abc' });
  });

  test('an input_image by file_id: 400 naming it on a Chat-only channel (Chat images take URLs only); passed through to a Responses channel', async () => {
    const input = [{ role: 'user' as const, content: [{ type: 'input_image' as const, file_id: 'file-img1', detail: 'auto' as const }] }];
    const before = await quota();
    const chatCalls = mock.received('/v1/chat/completions').length;
    const err = (await openai.responses.create({ model: 'chat-r', input }).then(
      () => ({ status: 200, message: 'answered' }),
      (e: unknown) => e,
    )) as { status: number; message: string };
    expect(err).toMatchObject({ status: 400 });
    expect(err.message).toContain('input_image file_id');
    expect(mock.received('/v1/chat/completions')).toHaveLength(chatCalls);
    expect(await quota()).toBe(before);

    const ok = await openai.responses.create({ model: 'gpt-native', input });
    expect(ok.output_text).toBe('Hello from the mock');
    expect(mock.received('/v1/responses').at(-1)!.json).toEqual({ model: 'gpt-native', input });
  });

  test('a body only a Responses upstream can honour goes to the channel that speaks it, whatever the priorities', async () => {
    const plain = await openai.responses.create({ model: 'mixed', input: 'Hi' });
    expect(plain.output_text).toBe('Hello from the mock');
    expect(mock.received('/v1/messages')).toHaveLength(1);
    expect(mock.received('/v1/responses')).toHaveLength(0);
    const chained = await openai.responses.create({ model: 'mixed', input: 'and then?', previous_response_id: 'resp_1' });
    expect(chained.id).toBe('resp_mock');
    expect(mock.received('/v1/messages')).toHaveLength(1);
    expect(mock.received('/v1/responses').at(-1)!.json.previous_response_id).toBe('resp_1');
    expect((await lastLog()).channel_name).toBe('mixed-openai');
  });

  test('a Codex-shaped turn on a Claude channel: developer items, function and custom tools, encrypted reasoning kept out', async () => {
    const body = {
      model: 'gpt-5-codex',
      instructions: 'You are a coding agent.',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions instructions>' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>cwd=/repo</environment_context>' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'fix the bug' }] },
        { type: 'reasoning', id: 'rs_prev', summary: [{ type: 'summary_text', text: 'Looked around.' }], content: null, encrypted_content: 'gAAAAopenai' },
        { type: 'function_call', id: 'fc_prev', call_id: 'call_prev', name: 'shell', arguments: '{"command":["ls"]}' },
        { type: 'function_call_output', call_id: 'call_prev', output: 'src\ntest' },
      ],
      tools: [
        {
          type: 'function',
          name: 'shell',
          description: 'Runs a shell command',
          strict: false,
          parameters: {
            type: 'object',
            properties: { command: { type: 'array', items: { type: 'string' } } },
            required: ['command'],
            additionalProperties: false,
          },
        },
        {
          type: 'custom',
          name: 'apply_patch',
          description: 'Edit files',
          format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch' },
        },
        { type: 'web_search' },
      ],
      tool_choice: { type: 'custom', name: 'apply_patch' },
      parallel_tool_calls: false,
      reasoning: { effort: 'medium', summary: 'auto' },
      store: false,
      stream: true,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'thread-1',
      text: { verbosity: 'medium' },
    };
    const stream = openai.responses.stream(body as unknown as OpenAI.Responses.ResponseCreateParamsStreaming);
    const final = await stream.finalResponse();
    const call = final.output.find((o) => o.type === 'custom_tool_call');
    expect(call).toMatchObject({ type: 'custom_tool_call', call_id: 'toolu_mock1', name: 'apply_patch' });
    const up = mock.received('/v1/messages').at(-1)!.json;
    expect(up.system.map((b: { text: string }) => b.text)).toEqual(['You are a coding agent.', '<permissions instructions>']);
    expect(up.tools.map((t: { name: string }) => t.name)).toEqual(['shell', 'apply_patch']);
    expect(up.tools[1].input_schema).toMatchObject({ properties: { input: { type: 'string' } }, required: ['input'] });
    expect(up.tool_choice).toMatchObject({ type: 'tool', name: 'apply_patch', disable_parallel_tool_use: true });
    expect(JSON.stringify(up)).not.toContain('gAAAAopenai');
    expect(up.messages.at(-2)).toMatchObject({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'call_prev', name: 'shell', input: { command: ['ls'] } }],
    });
    expect(up.messages.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_prev', content: 'src\ntest' }] });
  });

  test('a built-in tool: dropped when converting (said in a header and the log), refused when tool_choice requires it', async () => {
    const { data: r, response } = await openai.responses
      .create({ model: 'claude-r', input: 'Hi', tools: [{ type: 'web_search' }, WEATHER_TOOL] })
      .withResponse();
    expect(r.output_text).toBe('Hello from the mock');
    expect(response.headers.get('x-gateway-unconverted')).toBe('web_search');
    expect(
      mock
        .received('/v1/messages')
        .at(-1)!
        .json.tools.map((t: { name: string }) => t.name),
    ).toEqual(['get_weather']);
    await flushUsage(app);
    const log = await app.knex('logs').where({ type: 2 }).orderBy('id', 'desc').first();
    expect(JSON.parse(log.other)).toMatchObject({ request_format: 'responses', upstream_format: 'claude', passthrough: false, unconverted: 'web_search' });
    const streamed = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-r', input: 'Hi', stream: true, tools: [{ type: 'web_search_preview' }] }),
    });
    await streamed.text();
    expect(streamed.headers.get('x-gateway-unconverted')).toBe('web_search_preview');
    const res = await app
      .http()
      .post('/v1/responses')
      .set('authorization', `Bearer ${key}`)
      .send({ model: 'claude-r', input: 'Hi', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('tool_choice (web_search)');
  });

  test('malformed Responses input converted → 400 in OpenAI shape, refunded', async () => {
    const before = await quota();
    const res = await app
      .http()
      .post('/v1/responses')
      .set('authorization', `Bearer ${key}`)
      .send({ model: 'claude-r', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/input\[0\]\.call_id/);
    expect(await quota()).toBe(before);
  });

  test('no channel for the protocol: says which protocol, which model and why', async () => {
    const res = await app.http().post('/v1/embeddings').set('authorization', `Bearer ${key}`).send({ model: 'claude-r', input: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('endpoint_not_supported');
    expect(res.body.error.message).toContain('claude-r');
    expect(res.body.error.message).toContain('Claude');
    expect(res.body.error.message).toContain('/v1/embeddings');
    expect(res.body.error.message).not.toContain('无可用渠道');
  });

  // ------------------------------------------------------------------ Responses as the upstream protocol

  test('Responses client on a Responses channel: passthrough, usage from response.completed', async () => {
    const before = await quota();
    const stream = openai.responses.stream(
      {
        model: 'resp-only',
        input: 'Hi',
        reasoning: { effort: 'low', summary: 'auto' },
        include: ['reasoning.encrypted_content'],
      },
      { headers: { 'OpenAI-Beta': 'responses=experimental' } },
    );
    const final = await stream.finalResponse();
    expect(final.id).toBe('resp_mock');
    expect(final.output_text).toBe('Hello from the mock');
    expect(final.output[0]).toMatchObject({ type: 'reasoning', encrypted_content: 'enc-mock' });
    const up = mock.received('/v1/responses').at(-1)!;
    expect(up.json).toEqual({
      model: 'resp-only',
      input: 'Hi',
      reasoning: { effort: 'low', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      stream: true,
    });
    expect(up.headers.authorization).toBe('Bearer sk-resp');
    expect(up.headers['openai-beta']).toBe('responses=experimental'); // provider headers pass through
    // 11 + 7 × 5
    await expectBilled(before, 46, 11, 7, 'resp-only', 'resp-only-ch');
  });

  test('Chat client on a Responses-only channel (non-stream): parallel tool calls and the round trip', async () => {
    let before = await quota();
    mock.options.cachedTokens = 4;
    const first = await openai.chat.completions.create({
      model: 'resp-only',
      messages: [
        { role: 'system', content: 'Sys.' },
        { role: 'user', content: 'weather and time?' },
      ],
      tools: [
        { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } },
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
      ],
      max_tokens: 8,
      stop: ['END'],
    });
    const msg = first.choices[0]!.message;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(msg.content).toBe('Let me check.');
    expect(msg.tool_calls!.map((t) => (t.type === 'function' ? [t.id, t.function.name, t.function.arguments] : []))).toEqual([
      ['call_mock0', 'get_weather', '{"city":"Paris"}'],
      ['call_mock1', 'get_time', '{"city":"Paris"}'],
    ]);
    expect(first.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 4 } });
    const up = mock.received('/v1/responses').at(-1)!.json;
    expect(up).toMatchObject({
      model: 'resp-only',
      store: false,
      max_output_tokens: 16,
      input: [
        { role: 'system', content: 'Sys.' },
        { role: 'user', content: 'weather and time?' },
      ],
    });
    expect(up.tools[0]).toEqual({ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false });
    expect(up).not.toHaveProperty('stop');
    expect(up).not.toHaveProperty('messages');
    // (11 − 4) + 4 × 0.5 + 7 × 5 = 44
    await expectBilled(before, 44, 11, 7, 'resp-only', 'resp-only-ch');

    before = await quota();
    const second = await openai.chat.completions.create({
      model: 'resp-only',
      messages: [
        { role: 'user', content: 'weather and time?' },
        msg as OpenAI.Chat.ChatCompletionMessageParam,
        { role: 'tool', tool_call_id: 'call_mock0', content: 'sunny' },
        { role: 'tool', tool_call_id: 'call_mock1', content: 'noon' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
    });
    expect(second.choices[0]!.message.content).toBe('Hello from the mock');
    expect(second.choices[0]!.finish_reason).toBe('stop');
    expect(mock.received('/v1/responses').at(-1)!.json.input).toEqual([
      { role: 'user', content: 'weather and time?' },
      { role: 'assistant', content: 'Let me check.' },
      { type: 'function_call', call_id: 'call_mock0', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'call_mock1', name: 'get_time', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_mock0', output: 'sunny' },
      { type: 'function_call_output', call_id: 'call_mock1', output: 'noon' },
    ]);
    await expectBilled(before, 44, 11, 7, 'resp-only', 'resp-only-ch');
  });

  test('Chat client on a Responses-only channel (stream): text, reasoning and usage', async () => {
    const before = await quota();
    const stream = await openai.chat.completions.create({
      model: 'resp-only',
      messages: [{ role: 'user', content: 'Hi' }],
      reasoning_effort: 'low',
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let reasoning = '';
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null | undefined;
    for await (const c of stream) {
      const d = c.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
      text += d?.content ?? '';
      reasoning += d?.reasoning_content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('Hello from the mock');
    expect(reasoning).toBe('Mock reasoning.');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, completion_tokens_details: { reasoning_tokens: 2 } });
    const up = mock.received('/v1/responses').at(-1)!.json;
    expect(up).toMatchObject({ stream: true, reasoning: { effort: 'low' }, include: ['reasoning.encrypted_content'] });
    expect(up).not.toHaveProperty('stream_options');
    await expectBilled(before, 46, 11, 7, 'resp-only', 'resp-only-ch');
  });

  test('Claude client on a Responses-only channel (stream), and Azure: v1 surface, api-key, deployment without dots', async () => {
    const before = await quota();
    const stream = anthropic.messages.stream({ model: 'resp-only', max_tokens: 100, system: 'Sys.', messages: [{ role: 'user', content: 'Hi' }] });
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    const final = await stream.finalMessage();
    expect(texts.join('')).toBe('Hello from the mock');
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
    expect(mock.received('/v1/responses').at(-1)!.json).toMatchObject({
      model: 'resp-only',
      max_output_tokens: 100,
      input: [{ role: 'system', content: 'Sys.' }, { role: 'user' }],
    });
    await expectBilled(before, 46, 11, 7, 'resp-only', 'resp-only-ch');

    const az = await openai.chat.completions.create({ model: 'gpt-4.1-az', messages: [{ role: 'user', content: 'Hi' }] });
    expect(az.choices[0]!.message.content).toBe('Hello from the mock');
    const up = mock.received('/openai/v1/responses').at(-1)!;
    expect(up.headers['api-key']).toBe('az-key');
    expect(up.json.model).toBe('gpt-41-az');
    const r = await openai.responses.create({ model: 'gpt-4.1-az', input: 'Hi' });
    expect(r.output_text).toBe('Hello from the mock');
    expect(mock.received('/openai/v1/responses').at(-1)!.json).toEqual({ model: 'gpt-41-az', input: 'Hi' });
  });

  test('a stream that breaks mid-way ends with response.failed (converted and passthrough), billed for what was delivered', async () => {
    const read = async (model: string) => {
      const before = await quota();
      const res = await fetch(`${gw.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, input: 'Hi', stream: true }),
      });
      expect(res.status).toBe(200);
      const text = await res.text();
      return { text, cost: before - (await quota()) };
    };
    // Claude's in-band error event after the first text delta, converted
    const conv = await read('claude-midstream');
    expect(conv.text).toContain('event: response.output_text.delta');
    expect(conv.text).not.toContain('event: response.completed');
    const failed = JSON.parse(/event: response\.failed\ndata: (.*)\n/.exec(conv.text)![1]!);
    const created = JSON.parse(/event: response\.created\ndata: (.*)\n/.exec(conv.text)![1]!);
    // the failure belongs to the response the stream started, and carries what it had
    expect(failed.response).toMatchObject({ id: created.response.id, status: 'failed', error: { code: 'overloaded_error' } });
    expect(failed.response.output[0].content[0].text).toBe('Hello');
    expect(failed.sequence_number).toBe(5);
    expect(conv.cost).toBeGreaterThan(0);
    // a Responses upstream whose connection drops, passed through
    const pass = await read('resp-cut');
    expect(pass.text).toContain('event: response.output_text.delta');
    expect(pass.text).toMatch(/event: response\.failed\ndata: .*"upstream_stream_interrupted"/);
    expect(pass.cost).toBeGreaterThan(0);
  });

  test('channel test of a Responses-only channel goes through the Responses adaptor', async () => {
    const result = await testChannel(app.ctx, respOnlyId, 'resp-only');
    expect(result).toMatchObject({ success: true });
    expect(mock.received('/v1/responses').at(-1)!.json).toMatchObject({ model: 'resp-only', max_output_tokens: 16, store: false });
  });

  test('the channel form refuses an unknown upstream_protocol', async () => {
    const token = crypto.randomBytes(16).toString('hex');
    const admin = await makeUser(app, { role: 10 });
    await app.knex('users').where({ id: admin.id }).update({ access_token: token });
    const post = (setting: string) =>
      app
        .http()
        .post('/api/channel/')
        .set('Authorization', token)
        .set('New-Api-User', String(admin.id))
        .send({ name: 'x', type: 1, key: 'sk-x', models: 'm-x', group: 'default', setting });
    const bad = await post(JSON.stringify({ upstream_protocol: 'grpc' }));
    expect(bad.body.success).toBe(false);
    expect(bad.body.message).toContain('upstream_protocol');
    const good = await post(JSON.stringify({ upstream_protocol: 'responses' }));
    expect(good.body.success).toBe(true);
  });
});
