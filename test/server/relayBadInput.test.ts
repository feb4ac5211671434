/**
 * Bad input on the relay, for every client protocol and every native upstream protocol: requests
 * built from valid ones by random mutations (a value of another type, a key removed, an unknown key,
 * an element repeated, a huge or deeply nested value), sent through the gateway to an OpenAI Chat,
 * an OpenAI Responses, a Claude and a Gemini channel. The mutations come from a seeded generator,
 * so a failing case is the same on every run; its title carries the seed.
 *
 * Whatever the body, the gateway must:
 * - never answer a 5xx: a body it cannot take is a 4xx, and the mock upstreams, like the providers,
 *   refuse a bad body with a 4xx, which the gateway passes on (a 502 here would be a converted body
 *   the gateway made unreadable, or an answer it misread);
 * - answer an error in the caller's own error format (OpenAI `error`, Claude `type: "error"`,
 *   Gemini `error.status`);
 * - move money only with a log row: after all the cases, each user's quota taken equals the sum of
 *   its consume logs, and no reservation is left open.
 */
import http from 'node:http';
import { ALL_TARGETS, describeEach, makeUser, type TestApp } from '../helpers/app';
import { CHANNEL_TYPE } from '../../server/src/channels/kinds';
import { OVERHEAD_HEADER } from '../../server/src/metrics';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { installClaudeMock } from '../mock-upstream/claude';
import { installGeminiMock } from '../mock-upstream/gemini';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';

type Protocol = 'chat' | 'responses' | 'claude' | 'gemini';
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const MODEL = 'fuzz-model';
const TOOL = {
  name: 'get_weather',
  description: 'Weather of a city',
  schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const IMAGE = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** Valid requests of each protocol: text, system, tools with a call and its result, an image, sampling fields. */
const SEEDS: Record<Protocol, Array<{ [k: string]: Json }>> = {
  chat: [
    {
      model: MODEL,
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${IMAGE}` } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: TOOL.name, arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
      tools: [{ type: 'function', function: { name: TOOL.name, description: TOOL.description, parameters: TOOL.schema } }],
      tool_choice: 'auto',
      temperature: 0.5,
      max_tokens: 64,
      stop: ['END'],
    },
    { model: MODEL, messages: [{ role: 'user', content: 'hello' }], stream: true, stream_options: { include_usage: true }, reasoning_effort: 'low' },
  ],
  responses: [
    {
      model: MODEL,
      instructions: 'Be brief.',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Weather?' },
            { type: 'input_image', image_url: `data:image/png;base64,${IMAGE}` },
          ],
        },
        { type: 'function_call', call_id: 'call_1', name: TOOL.name, arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
      ],
      tools: [{ type: 'function', name: TOOL.name, description: TOOL.description, parameters: TOOL.schema }],
      tool_choice: 'auto',
      max_output_tokens: 64,
      store: false,
    },
    { model: MODEL, input: 'hello', stream: true, reasoning: { effort: 'low', summary: 'auto' } },
  ],
  claude: [
    {
      model: MODEL,
      max_tokens: 64,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: IMAGE } },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: TOOL.name, input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
      ],
      tools: [{ name: TOOL.name, description: TOOL.description, input_schema: TOOL.schema }],
      tool_choice: { type: 'auto' },
      temperature: 0.5,
      stop_sequences: ['END'],
    },
    { model: MODEL, max_tokens: 2048, messages: [{ role: 'user', content: 'hello' }], stream: true, thinking: { type: 'enabled', budget_tokens: 1024 } },
  ],
  gemini: [
    {
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Weather?' }, { inlineData: { mimeType: 'image/png', data: IMAGE } }] },
        { role: 'model', parts: [{ functionCall: { name: TOOL.name, args: { city: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: TOOL.name, response: { output: 'sunny' } } }] },
      ],
      tools: [{ functionDeclarations: [{ name: TOOL.name, description: TOOL.description, parameters: TOOL.schema }] }],
      toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
      generationConfig: { temperature: 0.5, topK: 40, maxOutputTokens: 64, stopSequences: ['END'] },
    },
    { contents: [{ role: 'user', parts: [{ text: 'hello' }] }], generationConfig: { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } } },
  ],
};

/** mulberry32: a small seeded generator, so that every run draws the same cases. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]! };
}
type Rng = ReturnType<typeof rng>;

const deep = (n: number): Json => (n === 0 ? 'x' : [deep(n - 1)]);
/** Values of every JSON type, edge cases included. */
const ODD_VALUES: Json[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  '',
  'x',
  'system',
  'tool',
  'model',
  '\u0000\ud800',
  'x'.repeat(20_000),
  [],
  [null],
  [1, 'a', {}],
  {},
  { type: 'text' },
  { type: 'unknown_kind', text: 1 },
  { role: 'user' },
  { a: { b: { c: [] } } },
  deep(200),
];

/** Every place in a JSON value: the container and the key or index that names it. */
function places(v: Json, out: Array<{ parent: Json[] | { [k: string]: Json }; key: string | number }> = []) {
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      out.push({ parent: v, key: i });
      places(x, out);
    });
  } else if (v && typeof v === 'object') {
    for (const k of Object.keys(v)) {
      out.push({ parent: v, key: k });
      places(v[k]!, out);
    }
  }
  return out;
}
const containers = (v: Json): Array<Json[] | { [k: string]: Json }> => [
  ...(v && typeof v === 'object' ? [v as { [k: string]: Json }] : []),
  ...places(v)
    .map((p) => (p.parent as Record<string | number, Json>)[p.key]!)
    .filter((x): x is Json[] | { [k: string]: Json } => !!x && typeof x === 'object'),
];

/** One to three mutations of a copy of `seed`. The model stays (the routing is not what is tried here). */
function mutate(seed: { [k: string]: Json }, r: Rng): { [k: string]: Json } {
  const body = structuredClone(seed);
  const n = 1 + r.int(3);
  for (let i = 0; i < n; i++) {
    const all = places(body).filter((p) => !(p.parent === body && p.key === 'model'));
    if (!all.length) break;
    const p = r.pick(all);
    const parent = p.parent as Record<string | number, Json>;
    switch (r.int(5)) {
      case 0:
      case 1:
        parent[p.key] = structuredClone(r.pick(ODD_VALUES));
        break;
      case 2:
        if (Array.isArray(p.parent)) p.parent.splice(p.key as number, 1);
        else delete parent[p.key];
        break;
      case 3: {
        const c = r.pick(containers(body));
        if (Array.isArray(c)) c.splice(r.int(c.length + 1), 0, structuredClone(r.pick(ODD_VALUES)));
        else c[r.pick(['zz_unknown', 'type', 'role', 'content', 'text', 'parts', 'stream', 'n'])] = structuredClone(r.pick(ODD_VALUES));
        break;
      }
      default:
        if (Array.isArray(p.parent)) p.parent.push(structuredClone(p.parent[p.key as number]!));
        else parent[p.key] = [structuredClone(parent[p.key]!), structuredClone(parent[p.key]!)];
    }
  }
  return body;
}

/** Where each protocol's client calls (the key in that protocol's header, `keyHeaders`). */
function requestOf(protocol: Protocol, body: { [k: string]: Json }, key: string): { path: string; headers: Record<string, string> } {
  const path = {
    chat: '/v1/chat/completions',
    responses: '/v1/responses',
    claude: '/v1/messages',
    gemini: seedStreams(body) ? `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse` : `/v1beta/models/${MODEL}:generateContent`,
  }[protocol];
  return { path, headers: keyHeaders(protocol, key) };
}
/** Gemini streams by path: the second seed (thinking) is sent as a stream. */
const seedStreams = (body: { [k: string]: Json }) => JSON.stringify(body.generationConfig ?? null).includes('thinkingConfig');

/** An error answer in the caller's format; what is wrong with it, or undefined. */
function errorShapeProblem(protocol: Protocol, status: number, text: string): string | undefined {
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return `not JSON: ${text.slice(0, 200)}`;
  }
  if (protocol === 'claude') {
    return body?.type === 'error' && typeof body.error?.type === 'string' && typeof body.error?.message === 'string'
      ? undefined
      : `not a Claude error: ${text.slice(0, 300)}`;
  }
  if (protocol === 'gemini') {
    return body?.error?.code === status && typeof body.error.message === 'string' && typeof body.error.status === 'string'
      ? undefined
      : `not a Gemini error: ${text.slice(0, 300)}`;
  }
  return typeof body?.error?.message === 'string' && typeof body.error.type === 'string' ? undefined : `not an OpenAI error: ${text.slice(0, 300)}`;
}

const KINDS: Array<{ name: string; type: number; setting?: string }> = [
  { name: 'openai', type: CHANNEL_TYPE.OpenAI },
  { name: 'openai-responses', type: CHANNEL_TYPE.OpenAI, setting: JSON.stringify({ upstream_protocol: 'responses' }) },
  { name: 'claude', type: CHANNEL_TYPE.Anthropic },
  { name: 'gemini', type: CHANNEL_TYPE.Gemini },
];
const PROTOCOLS: Protocol[] = ['chat', 'responses', 'claude', 'gemini'];
/** The other endpoints these clients call, each with the error format of its family. */
const ENDPOINTS: Array<{ name: string; family: Protocol; path: string; seeds: Array<{ [k: string]: Json }> }> = [
  {
    name: 'Claude count_tokens',
    family: 'claude',
    path: '/v1/messages/count_tokens',
    seeds: [
      {
        model: MODEL,
        system: 'Be brief.',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
        tools: [{ name: TOOL.name, description: TOOL.description, input_schema: TOOL.schema }],
      },
    ],
  },
  {
    name: 'Gemini countTokens',
    family: 'gemini',
    path: `/v1beta/models/${MODEL}:countTokens`,
    seeds: [
      { contents: [{ role: 'user', parts: [{ text: 'hello' }] }] },
      { generateContentRequest: { model: `models/${MODEL}`, contents: [{ role: 'user', parts: [{ text: 'hello' }] }] } },
    ],
  },
  {
    name: 'Gemini embedContent',
    family: 'gemini',
    path: `/v1beta/models/${MODEL}:embedContent`,
    seeds: [{ content: { parts: [{ text: 'hello' }] }, taskType: 'RETRIEVAL_QUERY', outputDimensionality: 8 }],
  },
  {
    name: 'Gemini batchEmbedContents',
    family: 'gemini',
    path: `/v1beta/models/${MODEL}:batchEmbedContents`,
    seeds: [
      {
        requests: [
          { model: `models/${MODEL}`, content: { parts: [{ text: 'a' }] } },
          { model: `models/${MODEL}`, content: { parts: [{ text: 'b' }] } },
        ],
      },
    ],
  },
  {
    name: 'OpenAI embeddings',
    family: 'chat',
    path: '/v1/embeddings',
    seeds: [
      { model: MODEL, input: ['a', 'b'], dimensions: 8 },
      { model: MODEL, input: 'a', encoding_format: 'float' },
    ],
  },
  {
    name: 'OpenAI completions',
    family: 'chat',
    path: '/v1/completions',
    seeds: [
      { model: MODEL, prompt: 'Say', max_tokens: 8 },
      { model: MODEL, prompt: ['a', 'b'], stream: true },
    ],
  },
];
/** The header a protocol's client sends its key in (Chat and Responses: a bearer token). */
function keyHeaders(family: Protocol, key: string): Record<string, string> {
  if (family === 'claude') return { 'x-api-key': key, 'anthropic-version': '2023-06-01' };
  if (family === 'gemini') return { 'x-goog-api-key': key };
  return { authorization: `Bearer ${key}` };
}

/** Cases per client protocol and channel; `FUZZ_CASES=3000` for a longer search (≈ 2 min on SQLite). */
const CASES_PER_PAIR = Number(process.env.FUZZ_CASES ?? 100);

describeEach(ALL_TARGETS, 'relay: mutated requests of every protocol to every upstream protocol', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let gw: { url: string; close(): Promise<void> };
  const users: Record<string, { id: number; key: string }> = {};
  const startQuota = 1_000_000_000;

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    installClaudeMock(mock);
    installGeminiMock(mock);
    gw = await listen(app.callback);
    await setOptions(app, {
      ModelRatio: JSON.stringify({ [MODEL]: 1 }),
      GroupRatio: JSON.stringify(Object.fromEntries([['default', 1], ...KINDS.map((k) => [`fuzz-${k.name}`, 1])])),
    });
    for (const k of KINDS) {
      const group = `fuzz-${k.name}`;
      const u = await makeUser(app, { quota: startQuota, group });
      const { key } = await seedToken(app, u.id);
      await seedChannel(app, {
        name: group,
        type: k.type,
        key: `upstream-${k.name}`,
        base_url: mock.url,
        group,
        models: MODEL,
        setting: k.setting,
        auto_ban: 0,
      });
      users[k.name] = { id: u.id, key };
    }
  });
  afterAll(async () => {
    await gw?.close();
    await mock?.close();
  });

  // What the search found (each was a 500, a misread answer or a broken header), kept as examples.
  const post = async (protocol: Protocol, kind: string, body: { [k: string]: Json }) => {
    const { path, headers } = requestOf(protocol, body, users[kind]!.key);
    const res = await fetch(gw.url + path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, headers: res.headers, json: (await res.json()) as any };
  };
  it.each([
    ['a message without a role', { messages: [{ role: 'user', content: 'x' }, { content: 'y' }] }, 'messages[1]'],
    ['a message content of another type', { messages: [{ role: 'user', content: 1.5 }] }, 'messages[0].content'],
    ['a content part that is not an object', { messages: [{ role: 'user', content: ['hi'] }] }, 'messages[0].content'],
    [
      'tool calls that are not a list',
      {
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: null, tool_calls: 'x' },
        ],
      },
      'messages[1].tool_calls',
    ],
    [
      'tool call arguments that are not a JSON text',
      { messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: [] } }] }] },
      'messages[0].tool_calls',
    ],
    ['a function tool without a name', { messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: {} }] }, 'tools[0].function'],
    ['a non-boolean stream', { messages: [{ role: 'user', content: 'x' }], stream: 'yes' }, 'stream'],
  ])('a Chat client sending %s gets a 400 naming the field, on a converting channel and a passthrough one', async (_what, body, field) => {
    for (const kind of ['openai', 'claude']) {
      const res = await post('chat', kind, { model: MODEL, ...(body as { [k: string]: Json }) });
      expect(res.status).toBe(400);
      expect(res.json.error.message).toBe(`${field} is malformed`);
    }
  });
  it('a Claude client sending a non-boolean stream gets a 400 in Claude format', async () => {
    const res = await post('claude', 'openai', { model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'x' }], stream: 1 });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('stream') } });
  });
  it('built-in tools left out by a conversion are named in a short header, whatever their names', async () => {
    const tools = [
      { type: 'web_search' },
      { type: 'x'.repeat(20_000) },
      { type: 'bad\u0000name' },
      ...Array.from({ length: 12 }, (_, i) => ({ type: `builtin_${i}` })),
    ];
    const res = await post('responses', 'claude', { model: MODEL, input: 'hi', tools });
    expect(res.status).toBe(200);
    const note = res.headers.get('x-gateway-unconverted')!;
    expect(note.startsWith('web_search, unnamed, builtin_0, ')).toBe(true);
    expect(note).toMatch(/, \.\.\. \(14 in all\)$/);
  });
  it('a max_tokens no balance covers is refused for quota, not by the database', async () => {
    for (const max of [1e308, 2 ** 63]) {
      const res = await post('chat', 'openai', { model: MODEL, messages: [{ role: 'user', content: 'x' }], max_tokens: max });
      expect(res.status).toBe(403);
      expect(res.json.error.type).toBe('insufficient_quota');
    }
  });
  it('a call whose answer cannot be written after it was billed still gets its log row', async () => {
    const user = users.gemini!;
    const quotaOf = async () => Number((await app.knex('users').where({ id: user.id }).first()).quota);
    const before = await quotaOf();
    await flushUsage(app);
    const logsBefore = await app.knex('logs').where({ user_id: user.id, type: 2 }).count({ n: '*' }).first();
    // The gateway's own head of a whole answer (it carries the overhead header) fails once, as a
    // header with a character Node refuses did.
    const writeHead = http.ServerResponse.prototype.writeHead;
    let failed = false;
    const spy = jest.spyOn(http.ServerResponse.prototype, 'writeHead').mockImplementation(function (this: http.ServerResponse, ...args: any[]) {
      if (!failed && Array.isArray(args[1]) && args[1].includes(OVERHEAD_HEADER)) {
        failed = true;
        throw new TypeError('Invalid character in header content');
      }
      return (writeHead as (...a: any[]) => http.ServerResponse).apply(this, args);
    });
    try {
      const res = await post('chat', 'gemini', { model: MODEL, messages: [{ role: 'user', content: 'x' }] });
      expect(failed).toBe(true);
      expect(res.status).toBe(500);
    } finally {
      spy.mockRestore();
    }
    await flushUsage(app);
    const logs = await app.knex('logs').where({ user_id: user.id, type: 2 }).orderBy('id', 'desc');
    expect(logs.length).toBe(Number(logsBefore?.n) + 1);
    expect(Number(logs[0].quota)).toBe(before - (await quotaOf()));
    expect(Number(logs[0].quota)).toBeGreaterThan(0);
  });
  it("a Chat client's non-function tools are left out for a Responses upstream, its function tools kept", async () => {
    mock.reset();
    const res = await post('chat', 'openai-responses', {
      model: MODEL,
      messages: [{ role: 'user', content: 'x' }],
      tools: [
        { type: 'custom', custom: { name: 'grep' } },
        { type: 'function', function: { name: 'f', parameters: { type: 'object' } } },
      ],
    });
    expect(res.status).toBe(200);
    const sent = mock.requests.find((r) => r.path === '/v1/responses')!.json;
    expect(sent.tools).toEqual([{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: false }]);
  });

  /** Sends `cases` mutations of the seeds; the problems found (a 5xx, an error not in the family's format) and the statuses seen. */
  async function search(
    title: string,
    kind: string,
    family: Protocol,
    cases: number,
    request: (body: { [k: string]: Json }) => { path: string; headers: Record<string, string> },
    seeds: Array<{ [k: string]: Json }>,
  ) {
    const problems: string[] = [];
    const statuses = new Set<number>();
    for (let i = 0; i < cases; i++) {
      const seed = `${title}/${kind}/${i}`;
      const r = rng([...seed].reduce((h, ch) => Math.imul(h ^ ch.charCodeAt(0), 16777619), 2166136261));
      const body = mutate(r.pick(seeds), r);
      const { path, headers } = request(body);
      const res = await fetch(gw.url + path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const text = await res.text();
      statuses.add(res.status);
      if (res.status >= 500) problems.push(`[${seed}] ${res.status}: ${text.slice(0, 300)} ← ${JSON.stringify(body).slice(0, 400)}`);
      else if (res.status >= 400) {
        const p = errorShapeProblem(family, res.status, text);
        if (p) problems.push(`[${seed}] ${res.status} ${p}`);
      }
    }
    return { problems, statuses };
  }

  for (const kind of KINDS) {
    for (const ep of ENDPOINTS) {
      it(`${ep.name} → ${kind.name} channel: ${CASES_PER_PAIR} mutated requests, no 5xx, errors in the client's format`, async () => {
        const key = users[kind.name]!.key;
        const { problems } = await search(
          ep.name,
          kind.name,
          ep.family,
          CASES_PER_PAIR,
          () => ({ path: ep.path, headers: keyHeaders(ep.family, key) }),
          ep.seeds,
        );
        expect(problems).toEqual([]);
      });
    }
    for (const protocol of PROTOCOLS) {
      it(`${protocol} client → ${kind.name} channel: ${CASES_PER_PAIR} mutated requests, no 5xx, errors in the client's format`, async () => {
        const key = users[kind.name]!.key;
        const { problems, statuses } = await search(protocol, kind.name, protocol, CASES_PER_PAIR, (body) => requestOf(protocol, body, key), SEEDS[protocol]);
        expect(problems).toEqual([]);
        // Mutations leave many bodies valid: some cases must have been taken.
        expect([...statuses].some((s) => s < 300)).toBe(true);
      });
    }

    it(`${kind.name} channel: quota taken = the consume logs' sum, no reservation left`, async () => {
      const user = users[kind.name]!;
      await flushUsage(app);
      const quota = Number((await app.knex('users').where({ id: user.id }).first()).quota);
      const logged = await app.knex('logs').where({ user_id: user.id, type: 2 }).sum({ s: 'quota' }).first();
      expect(startQuota - quota).toBe(Number(logged?.s ?? 0));
      expect(startQuota - quota).toBeGreaterThan(0);
      const open = await app.knex('reservations').where({ user_id: user.id }).count({ n: '*' }).first();
      expect(Number(open?.n)).toBe(0);
    });
  }
});
