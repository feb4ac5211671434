/**
 * Claude Code through the gateway, with the official @anthropic-ai/sdk: requests shaped like
 * current Claude Code's (system turns inside `messages`, adaptive thinking, effort,
 * context_management, cache_control, betas, `?beta=true`, unknown fields, a tool round trip) on a
 * Claude channel (passthrough), an OpenAI channel and a Gemini channel (conversion), billed and
 * logged; `/v1/messages/count_tokens`; the Anthropic model list; errors in Claude's shape.
 */
import type http from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import { ALL_TARGETS, describeEach, makeUser, type TestApp } from '../helpers/app';
import { CLAUDE_CODE_BODY, CLAUDE_ONLY, GEMINI_REQUEST_FIELDS, OPENAI_CHAT_FIELDS } from '../helpers/claudeCode';
import { startMockUpstream, type MockRequest, type MockUpstream } from '../mock-upstream';
import { installClaudeMock, type ClaudeMockState } from '../mock-upstream/claude';
import { installGeminiMock } from '../mock-upstream/gemini';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';

const MODELS = ['claude-opus-4-8', 'cc-sonnet', 'cc-gpt', 'cc-gemini', 'cc-nocount', 'cc-bedrock'];
const PRICING = {
  ModelRatio: JSON.stringify(Object.fromEntries(MODELS.map((m) => [m, 1]))),
  CompletionRatio: JSON.stringify({ 'cc-gpt': 2 }),
  CacheRatio: JSON.stringify({ 'cc-gpt': 0.5 }),
  GroupRatio: JSON.stringify({ default: 1 }),
  PreConsumedQuota: '100',
};

/** What the OpenAI tool mock bills: prompt 40 of which 8 cached, completion 12 of which 5 reasoning. */
const OA_USAGE = {
  prompt_tokens: 40,
  completion_tokens: 12,
  total_tokens: 52,
  prompt_tokens_details: { cached_tokens: 8 },
  completion_tokens_details: { reasoning_tokens: 5 },
};
/** quota for OA_USAGE at ratio 1, completion ratio 2, cache ratio 0.5: (40 − 8) + 8 × 0.5 + 12 × 2. */
const OA_COST = 32 + 4 + 24;

function sendJson(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * An OpenAI Chat upstream that, like OpenAI, refuses arguments it does not define, and answers a
 * request with tools (and no tool result yet) with two parallel calls of the first tool plus
 * reasoning; streams interleave the two calls' argument deltas. Otherwise a text answer.
 */
function openaiToolUpstream(req: MockRequest, res: http.ServerResponse) {
  const body = (req.json ?? {}) as Record<string, any>;
  for (const k of Object.keys(body)) {
    // the canonical-only fields are the OpenAI adaptor's to drop; everything Claude must never arrive
    if (!OPENAI_CHAT_FIELDS.has(k))
      return sendJson(res, 400, { error: { message: `Unrecognized request argument supplied: ${k}`, type: 'invalid_request_error' } });
  }
  for (const m of body.messages ?? []) {
    if (!['system', 'developer', 'user', 'assistant', 'tool'].includes(m?.role)) return sendJson(res, 400, { error: { message: `Invalid role: ${m?.role}` } });
  }
  const last = body.messages?.[body.messages.length - 1];
  const tool = body.tools?.[0]?.function?.name as string | undefined;
  const callTools = !!tool && last?.role !== 'tool';
  const id = 'chatcmpl-oatools';
  const model = body.model;
  if (!body.stream) {
    const message = callTools
      ? {
          role: 'assistant',
          content: null,
          reasoning_content: 'Two commands.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: tool, arguments: '{"command":"ls"}' } },
            { id: 'call_2', type: 'function', function: { name: tool, arguments: '{"command":"pwd"}' } },
          ],
        }
      : { role: 'assistant', content: 'Two files in /work.' };
    return sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created: 1,
      model,
      choices: [{ index: 0, message, finish_reason: callTools ? 'tool_calls' : 'stop' }],
      usage: OA_USAGE,
    });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  chunk({ role: 'assistant', content: '' });
  if (callTools) {
    chunk({ reasoning_content: 'Two ' });
    chunk({ reasoning_content: 'commands.' });
    chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: tool, arguments: '{"comm' } }] });
    chunk({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: tool, arguments: '{"command":' } }] });
    chunk({ tool_calls: [{ index: 0, function: { arguments: 'and":"ls"}' } }] });
    chunk({ tool_calls: [{ index: 1, function: { arguments: '"pwd"}' } }] });
    chunk({}, 'tool_calls');
  } else {
    chunk({ content: 'Two files' });
    chunk({ content: ' in /work.' });
    chunk({}, 'stop');
  }
  if (body.stream_options?.include_usage)
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model, choices: [], usage: OA_USAGE })}\n\n`);
  res.end('data: [DONE]\n\n');
}

type Params = Record<string, any>;

/**
 * A Claude Code turn for `model`: the shared body without its stream flag (the SDK call decides)
 * and with a max_tokens the SDK lets through without streaming.
 */
function claudeCodeTurn(model: string, over: Params = {}): Params {
  const { stream: _s, ...rest } = CLAUDE_CODE_BODY;
  return { ...structuredClone(rest), model, max_tokens: 4096, ...over };
}

/** The first turn of a tool round trip: the user's ask and a system turn after it, no history yet. */
function firstTurn(model: string, text = 'List the files.'): Params {
  return claudeCodeTurn(model, {
    messages: [
      { role: 'user', content: [{ type: 'text', text, cache_control: { type: 'ephemeral' } }] },
      { role: 'system', content: [{ type: 'text', text: 'Skills available: commit, review.' }] },
    ],
  });
}

describeEach(ALL_TARGETS, 'Claude Code through the gateway', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let claudeState: ClaudeMockState;
  let gw: { url: string; close(): Promise<void> };
  let userId: number;
  let key: string;
  let client: Anthropic;

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    claudeState = installClaudeMock(mock);
    installGeminiMock(mock);
    mock.route('POST', /^\/oa\/v1\/chat\/completions$/, (req, res) => openaiToolUpstream(req, res));
    gw = await listen(app.callback);
    await setOptions(app, PRICING);
    userId = (await makeUser(app, { quota: 1_000_000 })).id;
    key = (await seedToken(app, userId)).key;
    await seedChannel(app, {
      name: 'cc-claude',
      type: 14,
      key: 'sk-ant-upstream',
      base_url: mock.url,
      models: 'claude-opus-4-8,cc-sonnet',
      model_mapping: JSON.stringify({ 'cc-sonnet': 'claude-sonnet-4-5-20250929' }),
    });
    await seedChannel(app, { name: 'cc-openai', type: 1, key: 'sk-oa-upstream', base_url: `${mock.url}/oa`, models: 'cc-gpt' });
    await seedChannel(app, {
      name: 'cc-gemini',
      type: 24,
      key: 'gem-upstream',
      base_url: mock.url,
      models: 'cc-gemini',
      model_mapping: JSON.stringify({ 'cc-gemini': 'gemini-2.5-flash' }),
    });
    await seedChannel(app, { name: 'cc-aws', type: 33, key: 'AKIDTEST|aws-secret-key|us-west-2', base_url: mock.url, models: 'cc-bedrock' });
    // a Claude channel whose upstream fails every call (count_tokens then counts locally)
    await seedChannel(app, { name: 'cc-broken', type: 14, key: 'sk-ant-fault-500', base_url: mock.url, models: 'cc-nocount', auto_ban: 0 });
    client = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await mock?.close();
  });
  beforeEach(() => {
    mock.reset();
    claudeState.cacheCreationTokens = 0;
  });

  const quota = async () => Number((await app.knex('users').where({ id: userId }).first()).quota);
  const logs = async () => {
    await flushUsage(app);
    return app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc');
  };

  // ---------------------------------------------------------------- Claude channel: passthrough

  test('passthrough (beta, non-stream): body forwarded as sent, betas and system turn kept for Opus 4.8, billed', async () => {
    const before = await quota();
    const logsBefore = (await logs()).length;
    const params = claudeCodeTurn('claude-opus-4-8');
    const msg = await client.beta.messages.create({ ...params, betas: ['context-management-2025-06-27', 'interleaved-thinking-2025-05-14'] } as never);
    expect(msg.content[0]).toEqual({ type: 'thinking', thinking: 'Mock thinking.', signature: 'sig-mock' });
    const up = mock.received('/v1/messages')[0]!;
    expect(up.url).toBe('/v1/messages'); // the SDK's ?beta=true is not forwarded
    expect(up.headers['anthropic-beta']).toBe('context-management-2025-06-27,interleaved-thinking-2025-05-14');
    expect(up.headers['x-api-key']).toBe('sk-ant-upstream');
    expect(up.json).toEqual(params); // system turn, thinking, effort, context_management, cache_control, metadata, unknown field
    const rows = await logs();
    expect(rows.length).toBe(logsBefore + 1);
    expect(rows[0].model_name).toBe('claude-opus-4-8');
    expect(rows[0].channel_name).toBe('cc-claude');
    expect(Number(rows[0].quota)).toBeGreaterThan(0);
    expect(before - (await quota())).toBe(Number(rows[0].quota));
  });

  test('passthrough (stream) to an older model: system turns hoisted into system, model mapped, signature kept', async () => {
    const stream = client.beta.messages.stream({ ...claudeCodeTurn('cc-sonnet'), betas: ['context-management-2025-06-27'] } as never);
    const final = await stream.finalMessage();
    expect(final.content[0]).toEqual({ type: 'thinking', thinking: 'Mock thinking.', signature: 'sig-mock' });
    expect(final.content.at(-1)).toEqual({ type: 'text', text: 'Hello from the mock' });
    const up = mock.received('/v1/messages')[0]!.json;
    expect(up.model).toBe('claude-sonnet-4-5-20250929');
    expect(up.stream).toBe(true);
    expect(up.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(up.system).toEqual([...CLAUDE_CODE_BODY.system, { type: 'text', text: 'Skills available: commit, review.' }]);
    expect(up.context_management).toEqual(CLAUDE_CODE_BODY.context_management);
    const rows = await logs();
    expect(rows[0].model_name).toBe('cc-sonnet');
    expect(Boolean(rows[0].is_stream)).toBe(true);
  });

  test('passthrough headers: the client’s anthropic-version is forwarded, the channel’s is the default', async () => {
    const post = (headers: Record<string, string>) =>
      fetch(`${gw.url}/v1/messages?beta=true`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers },
        body: JSON.stringify({ model: 'claude-opus-4-8', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
      });
    expect((await post({ 'anthropic-version': '2024-10-22' })).status).toBe(200);
    expect((await post({})).status).toBe(200);
    const [a, b] = mock.received('/v1/messages');
    expect(a!.headers['anthropic-version']).toBe('2024-10-22');
    expect(b!.headers['anthropic-version']).toBe('2023-06-01');
    expect(b!.headers['anthropic-beta']).toBeUndefined();
  });

  test('passthrough to Bedrock: system turns hoisted (Bedrock has none), betas in the body, unknown fields kept', async () => {
    const params = claudeCodeTurn('cc-bedrock');
    const msg = await client.beta.messages.create({ ...params, betas: ['context-management-2025-06-27'] } as never);
    expect(msg.content[0]).toEqual({ type: 'thinking', thinking: 'Mock thinking.', signature: 'sig-mock' });
    const up = mock.received(/^\/model\//)[0]!;
    expect(up.path).toBe('/model/anthropic.cc-bedrock/invoke');
    const { model: _m, messages: _msgs, system: _sys, ...rest } = params;
    expect(up.json).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      ...rest,
      messages: params.messages.filter((m: { role: string }) => m.role !== 'system'),
      system: [...CLAUDE_CODE_BODY.system, { type: 'text', text: 'Skills available: commit, review.' }],
      anthropic_beta: ['context-management-2025-06-27'],
    });
    expect((await logs())[0].channel_name).toBe('cc-aws');
  });

  // ---------------------------------------------------------------- OpenAI channel: conversion

  test('OpenAI channel (non-stream): a Claude Code tool round trip, only OpenAI fields upstream, billed and logged', async () => {
    const before = await quota();
    const first = firstTurn('cc-gpt');
    const { data: msg, response } = await client.beta.messages.create({ ...first, betas: ['context-management-2025-06-27'] } as never).withResponse();
    expect(msg.stop_reason).toBe('tool_use');
    // the server tool has no OpenAI equivalent: left out, and the answer says so
    expect(response.headers.get('x-gateway-unconverted')).toMatch(/^web_search/);
    expect(msg.content).toEqual([
      { type: 'thinking', thinking: 'Two commands.', signature: '' },
      { type: 'tool_use', id: 'call_1', name: 'Bash', input: { command: 'ls' } },
      { type: 'tool_use', id: 'call_2', name: 'Bash', input: { command: 'pwd' } },
    ]);
    expect(msg.usage).toMatchObject({ input_tokens: 32, cache_read_input_tokens: 8, output_tokens: 12 });
    const up1 = mock.received('/oa/v1/chat/completions')[0]!.json;
    expect(JSON.stringify(up1)).not.toMatch(CLAUDE_ONLY);
    expect(up1.messages).toEqual([
      { role: 'system', content: "You are Claude Code, Anthropic's official CLI for Claude.\nUse the tools." },
      { role: 'user', content: 'List the files.' },
      { role: 'system', content: 'Skills available: commit, review.' },
    ]);
    // Claude Code's effort: not for this upstream model (not a reasoning model, which would refuse it)
    expect(up1.reasoning_effort).toBeUndefined();
    expect(up1.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['Bash']); // web_search dropped

    // the client runs both tools and sends everything back, thinking block included
    const second = {
      ...first,
      messages: [
        ...first.messages,
        { role: 'assistant', content: msg.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: 'a.ts\nb.ts' },
            { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '/work' }], cache_control: { type: 'ephemeral' } },
          ],
        },
      ],
    };
    const done = await client.messages.create(second as never);
    expect(done.content).toEqual([{ type: 'text', text: 'Two files in /work.' }]);
    expect(done.stop_reason).toBe('end_turn');
    const up2 = mock.received('/oa/v1/chat/completions')[1]!.json;
    expect(JSON.stringify(up2)).not.toMatch(CLAUDE_ONLY);
    // reasoning_content goes back only to upstreams that want it (DeepSeek, Moonshot), not to OpenAI
    expect(up2.messages.slice(3)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } },
          { id: 'call_2', type: 'function', function: { name: 'Bash', arguments: '{"command":"pwd"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'a.ts\nb.ts' },
      { role: 'tool', tool_call_id: 'call_2', content: '/work' },
    ]);
    const rows = await logs();
    expect(rows.slice(0, 2).map((r: { model_name: string; channel_name: string; quota: number }) => [r.model_name, r.channel_name, Number(r.quota)])).toEqual([
      ['cc-gpt', 'cc-openai', OA_COST],
      ['cc-gpt', 'cc-openai', OA_COST],
    ]);
    expect(before - (await quota())).toBe(2 * OA_COST);
  });

  test('OpenAI channel (stream): thinking, interleaved parallel tool calls and usage in Claude events', async () => {
    const before = await quota();
    const stream = client.messages.stream(firstTurn('cc-gpt') as never);
    const json: string[] = [];
    stream.on('inputJson', (partial) => json.push(partial));
    const final = await stream.finalMessage();
    expect(final.content).toEqual([
      { type: 'thinking', thinking: 'Two commands.', signature: '' },
      { type: 'tool_use', id: 'call_1', name: 'Bash', input: { command: 'ls' } },
      { type: 'tool_use', id: 'call_2', name: 'Bash', input: { command: 'pwd' } },
    ]);
    expect(final.stop_reason).toBe('tool_use');
    expect(final.usage).toMatchObject({ input_tokens: 32, cache_read_input_tokens: 8, output_tokens: 12, output_tokens_details: { thinking_tokens: 5 } });
    const up = mock.received('/oa/v1/chat/completions')[0]!.json;
    expect(up.stream).toBe(true);
    expect(up.stream_options).toEqual({ include_usage: true });
    expect(JSON.stringify(up)).not.toMatch(CLAUDE_ONLY);
    const rows = await logs();
    expect(Boolean(rows[0].is_stream)).toBe(true);
    expect(Number(rows[0].quota)).toBe(OA_COST);
    expect(before - (await quota())).toBe(OA_COST);
  });

  // ---------------------------------------------------------------- Gemini channel: conversion

  test('Gemini channel (non-stream and stream): tool round trip with only Gemini fields upstream, billed', async () => {
    const before = await quota();
    const first = firstTurn('cc-gemini', 'What is the weather in Paris?');
    const msg = await client.messages.create(first as never);
    const call = msg.content.find((b) => b.type === 'tool_use');
    expect(call).toMatchObject({ type: 'tool_use', name: 'Bash', input: { city: 'Paris' } });
    expect(msg.stop_reason).toBe('tool_use');
    const up1 = mock.received(/:generateContent$/)[0]!;
    expect(up1.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    for (const k of Object.keys(up1.json)) expect([k, GEMINI_REQUEST_FIELDS.has(k)]).toEqual([k, true]);
    expect(JSON.stringify(up1.json)).not.toMatch(CLAUDE_ONLY);
    expect(JSON.stringify(up1.json.systemInstruction)).toContain('Skills available: commit, review.');

    const second = {
      ...first,
      messages: [
        ...first.messages,
        { role: 'assistant', content: msg.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: (call as { id: string }).id, content: '18°C, sunny' }] },
      ],
    };
    const stream = client.messages.stream(second as never);
    await stream.finalMessage();
    const up2 = mock.received(/:streamGenerateContent$/)[0]!.json;
    expect(JSON.stringify(up2)).not.toMatch(CLAUDE_ONLY);
    const parts = up2.contents.flatMap((c: { parts: unknown[] }) => c.parts);
    expect(parts).toContainEqual({ functionResponse: { name: 'Bash', response: { content: '18°C, sunny' } } });
    const rows = await logs();
    expect(rows.slice(0, 2).map((r: { channel_name: string }) => r.channel_name)).toEqual(['cc-gemini', 'cc-gemini']);
    expect(before - (await quota())).toBe(Number(rows[0].quota) + Number(rows[1].quota));
  });

  // ---------------------------------------------------------------- count_tokens

  test('count_tokens on a Claude channel: passed through (betas, model mapped, system turn hoisted), not billed', async () => {
    const before = await quota();
    const logsBefore = (await logs()).length;
    claudeState.countTokens = 4321;
    const { max_tokens: _m, thinking: _t, output_config: _o, metadata: _md, some_future_field: _f, ...countable } = claudeCodeTurn('cc-sonnet');
    const res = await client.beta.messages.countTokens({ ...countable, betas: ['context-management-2025-06-27'] } as never);
    expect(res).toEqual({ input_tokens: 4321 });
    const up = mock.received('/v1/messages/count_tokens')[0]!;
    // the client's betas (the SDK adds its token-counting one) go upstream
    expect(String(up.headers['anthropic-beta']).split(',')).toContain('context-management-2025-06-27');
    expect(up.json.model).toBe('claude-sonnet-4-5-20250929');
    expect(up.json.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(await quota()).toBe(before);
    expect((await logs()).length).toBe(logsBefore);
  });

  test('count_tokens counted locally: on an OpenAI channel, and when the Claude upstream fails', async () => {
    const body = { model: 'cc-gpt', system: 'Be brief.', messages: [{ role: 'user' as const, content: 'Count these words, please.' }] };
    const local = await client.messages.countTokens(body);
    expect(local.input_tokens).toBeGreaterThan(5);
    expect(mock.requests.length).toBe(0);
    // tools count too
    const withTools = await client.messages.countTokens({
      ...body,
      tools: [{ name: 'Bash', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
    });
    expect(withTools.input_tokens).toBeGreaterThan(local.input_tokens);
    const fallback = await client.messages.countTokens({ ...body, model: 'cc-nocount' });
    expect(fallback.input_tokens).toBe(local.input_tokens);
    expect(mock.received('/v1/messages/count_tokens')).toHaveLength(1); // tried, failed (500), counted here
  });

  test('count_tokens errors in Claude’s shape: upstream 400, unknown model, bad key, bad body', async () => {
    const post = (body: unknown, k = key) =>
      fetch(`${gw.url}/v1/messages/count_tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': k, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify(body),
      });
    const upstream400 = await post({ model: 'claude-opus-4-8', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    expect(upstream400.status).toBe(400);
    expect(await upstream400.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens: Extra inputs are not permitted' },
    });
    await expect(client.messages.countTokens({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 404,
      error: { type: 'error', error: { type: 'not_found_error' } },
    });
    const unauth = await post({ model: 'cc-gpt', messages: [] }, 'sk-wrong');
    expect(unauth.status).toBe(401);
    expect((await unauth.json()).error.type).toBe('authentication_error');
    const bad = await post({ model: 'cc-gpt', messages: [{ role: 'tool', content: 'x' }] });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  // ---------------------------------------------------------------- models and errors

  test('GET /v1/models in Anthropic’s shape, cursor pages the SDK follows, one model, errors', async () => {
    const page = await client.models.list({ limit: 2 });
    expect(page.data.map((m) => m.id)).toEqual(['cc-bedrock', 'cc-gemini']);
    expect(page.has_more).toBe(true);
    expect(page.first_id).toBe('cc-bedrock');
    expect(page.last_id).toBe('cc-gemini');
    expect(page.data[0]).toMatchObject({ type: 'model', id: 'cc-bedrock', display_name: 'cc-bedrock', lifecycle: 'active' });
    expect(new Date(page.data[0]!.created_at).getTime()).toBeGreaterThan(0);
    const all: string[] = [];
    for await (const m of client.models.list({ limit: 2 })) all.push(m.id);
    expect(all).toEqual([...MODELS].sort());
    const back = await fetch(`${gw.url}/v1/models?limit=2&before_id=cc-sonnet`, { headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' } });
    expect(await back.json()).toMatchObject({ has_more: true, first_id: 'cc-gpt', last_id: 'cc-nocount' });
    expect(await client.models.retrieve('cc-gpt')).toMatchObject({ type: 'model', id: 'cc-gpt' });
    await expect(client.models.retrieve('nope')).rejects.toMatchObject({ status: 404, error: { type: 'error', error: { type: 'not_found_error' } } });
    await expect(client.models.list({ limit: 5000 })).rejects.toMatchObject({ status: 400, error: { error: { type: 'invalid_request_error' } } });
    const unauth = await fetch(`${gw.url}/v1/models`, { headers: { 'x-api-key': 'sk-wrong', 'anthropic-version': '2023-06-01' } });
    expect(unauth.status).toBe(401);
    expect(await unauth.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  test('/v1/messages errors in Claude’s shape: unknown model, bad role, upstream refusal', async () => {
    await expect(client.messages.create({ model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 404,
      error: { type: 'error', error: { type: 'not_found_error' } },
    });
    await expect(client.messages.create({ model: 'cc-gpt', max_tokens: 5, messages: [{ role: 'tool', content: 'x' }] } as never)).rejects.toMatchObject({
      status: 400,
      error: { type: 'error', error: { type: 'invalid_request_error', message: 'messages.0.role: must be "user", "assistant" or "system"' } },
    });
    await expect(client.messages.create({ model: 'cc-nocount', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 500,
      error: { type: 'error', error: { type: 'api_error' } },
    });
  });
});
