/**
 * Requests recorded from Claude Code, Codex CLI and Gemini CLI (test/fixtures/agents), replayed
 * through the gateway as the client sent them (path, query, headers, body; only the key is the
 * gateway's) to every channel kind: an OpenAI channel, a Claude channel, a Gemini channel and an
 * OpenAI channel whose upstream speaks the Responses API. The fixture's model is mapped to the
 * model the channel serves; each kind has its own group (and user), so the same model name routes
 * to that kind only.
 *
 * Each replay must: answer 2xx in the client's protocol (stream well-formed; a tool call, when the
 * mock upstream answers one, in the client's tool-call shape); hand the upstream a body its API
 * accepts (a passthrough forwards the client's body, unknown fields and beta headers included,
 * with only the model mapped); take quota and write a log row.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ALL_TARGETS, describeEach, makeUser, type TestApp } from '../helpers/app';
import { startMockUpstream, type MockRequest, type MockUpstream } from '../mock-upstream';
import { installClaudeMock } from '../mock-upstream/claude';
import { installGeminiMock } from '../mock-upstream/gemini';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import {
  checkChatRequest,
  checkClaudeRequest,
  checkGeminiRequest,
  checkResponsesRequest,
  readClaudeMessage,
  readClaudeStream,
  readGeminiBody,
  readGeminiStream,
  readResponsesBody,
  readResponsesStream,
  type Answer,
} from '../helpers/wire';

type Protocol = 'chat' | 'responses' | 'claude' | 'gemini';

interface Fixture {
  client: string;
  version: string;
  case: string;
  description: string;
  toolCall?: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, any>;
}

const FIXTURE_DIR = path.join(__dirname, '../fixtures/agents');
const FIXTURES: Array<{ file: string; fx: Fixture }> = fs
  .readdirSync(FIXTURE_DIR, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) =>
    fs
      .readdirSync(path.join(FIXTURE_DIR, d.name))
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => ({ file: `${d.name}/${f}`, fx: JSON.parse(fs.readFileSync(path.join(FIXTURE_DIR, d.name, f), 'utf8')) as Fixture })),
  );

const clientProtocol = (fx: Fixture): Protocol => {
  const p = fx.path.split('?')[0]!;
  if (p === '/v1/messages') return 'claude';
  if (p === '/v1/responses') return 'responses';
  if (p.startsWith('/v1beta/models/')) return 'gemini';
  throw new Error(`fixture path ${fx.path}: which protocol?`);
};
/** The model the client asked for: in the body, or in a Gemini path. */
const clientModel = (fx: Fixture): string =>
  clientProtocol(fx) === 'gemini' ? decodeURIComponent(/models\/([^/:]+):/.exec(fx.path)![1]!) : String(fx.body.model);
const clientStreams = (fx: Fixture): boolean => (clientProtocol(fx) === 'gemini' ? fx.path.includes(':streamGenerateContent') : fx.body.stream === true);

/**
 * How an OpenAI channel is told that its upstream speaks the Responses API rather than Chat
 * Completions (the channel's JSON `setting`).
 */
const RESPONSES_UPSTREAM_SETTING = { upstream_protocol: 'responses' };

interface Kind {
  name: 'openai' | 'claude' | 'gemini' | 'openai-responses';
  type: number;
  setting?: string;
  upstreamModel: string;
  /** The protocol the upstream is called in, for a client protocol. */
  upstream(client: Protocol): Protocol;
}
const KINDS: Kind[] = [
  // An OpenAI channel serves Chat Completions and, to a Responses client, the Responses API itself.
  { name: 'openai', type: 1, upstreamModel: 'gpt-upstream', upstream: (c) => (c === 'responses' ? 'responses' : 'chat') },
  { name: 'claude', type: 14, upstreamModel: 'claude-upstream', upstream: () => 'claude' },
  { name: 'gemini', type: 24, upstreamModel: 'gemini-upstream', upstream: () => 'gemini' },
  { name: 'openai-responses', type: 1, setting: JSON.stringify(RESPONSES_UPSTREAM_SETTING), upstreamModel: 'gpt-resp-upstream', upstream: () => 'responses' },
];

const UPSTREAM_PATH: Record<Protocol, RegExp> = {
  chat: /^\/v1\/chat\/completions$/,
  responses: /^\/v1\/responses$/,
  claude: /^\/v1\/messages$/,
  gemini: /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)$/,
};
const GENERATION_PATH = /^\/v1\/(chat\/completions|responses|messages)$|^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)$/;

function readAnswer(protocol: Protocol, stream: boolean, text: string, strict: boolean): Answer {
  const body = () => JSON.parse(text);
  switch (protocol) {
    case 'claude':
      return stream ? readClaudeStream(text) : readClaudeMessage(body());
    case 'responses':
      return stream ? readResponsesStream(text, strict) : readResponsesBody(body());
    case 'gemini':
      return stream ? readGeminiStream(text) : readGeminiBody(body());
    default:
      throw new Error(`no client reader for ${protocol}`);
  }
}

const CHECK_REQUEST: Record<Protocol, (body: any) => string[]> = {
  chat: checkChatRequest,
  responses: checkResponsesRequest,
  claude: checkClaudeRequest,
  gemini: checkGeminiRequest,
};

function upstreamStreams(protocol: Protocol, req: MockRequest): boolean {
  if (protocol === 'gemini') return req.path.endsWith(':streamGenerateContent');
  return req.json?.stream === true;
}

const MODELS = [...new Set(FIXTURES.map(({ fx }) => clientModel(fx)))];

/**
 * What a Claude channel gets from Claude Code: the body as sent, model mapped, except that the
 * `role: "system"` turns Claude Code puts in `messages` move (their text blocks) to the end of the
 * top-level `system`, since the channel's model (not an Opus ≥ 4.8) refuses them in place.
 */
function claudePassthroughBody(body: Record<string, any>, model: string): Record<string, any> {
  const blocks = (c: unknown) => (typeof c === 'string' ? [{ type: 'text', text: c }] : (c as Array<{ type: string }>).filter((b) => b.type === 'text'));
  const turns = (body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'system');
  if (!turns.length) return { ...body, model };
  return {
    ...body,
    model,
    messages: body.messages.filter((m: { role: string }) => m.role !== 'system'),
    system: [...(body.system === undefined ? [] : blocks(body.system)), ...turns.flatMap((m) => blocks(m.content))],
  };
}

describeEach(ALL_TARGETS, 'agent fixtures replayed to every channel kind', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let gw: { url: string; close(): Promise<void> };
  const users: Record<string, { id: number; key: string; channelId: number }> = {};

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    installClaudeMock(mock);
    installGeminiMock(mock);
    gw = await listen(app.callback);
    const ratios = Object.fromEntries([...MODELS, ...KINDS.map((k) => k.upstreamModel)].map((m) => [m, 1]));
    await setOptions(app, {
      ModelRatio: JSON.stringify(ratios),
      CompletionRatio: JSON.stringify({}),
      GroupRatio: JSON.stringify(Object.fromEntries([['default', 1], ...KINDS.map((k) => [`agents-${k.name}`, 1])])),
      PreConsumedQuota: '100',
    });
    for (const k of KINDS) {
      const group = `agents-${k.name}`;
      const u = await makeUser(app, { quota: 50_000_000, group });
      const { key } = await seedToken(app, u.id);
      const channelId = await seedChannel(app, {
        name: `agents-${k.name}`,
        type: k.type,
        key: `upstream-key-${k.name}`,
        base_url: mock.url,
        group,
        models: MODELS.join(','),
        model_mapping: JSON.stringify(Object.fromEntries(MODELS.map((m) => [m, k.upstreamModel]))),
        setting: k.setting,
        auto_ban: 0,
      });
      users[k.name] = { id: u.id, key, channelId };
    }
  });
  afterAll(async () => {
    await gw?.close();
    await mock?.close();
  });

  const quotaOf = async (userId: number) => Number((await app.knex('users').where({ id: userId }).first()).quota);
  const logsOf = async (userId: number) => {
    await flushUsage(app);
    return app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc');
  };

  const cases = KINDS.flatMap((kind) => FIXTURES.map(({ file, fx }) => [`${file} → ${kind.name} channel`, fx, kind] as const));

  test.each(cases)('%s', async (_title, fx, kind) => {
    const user = users[kind.name]!;
    const client = clientProtocol(fx);
    const upstream = kind.upstream(client);
    const passthrough = client === upstream;
    const stream = clientStreams(fx);
    mock.reset();
    if (fx.toolCall) mock.options.toolCall = fx.toolCall;
    const quotaBefore = await quotaOf(user.id);
    const logsBefore = (await logsOf(user.id)).length;

    // The recorded request, the gateway's key in the header the client sends its key in.
    const auth: Record<string, string> =
      client === 'claude' ? { 'x-api-key': user.key } : client === 'gemini' ? { 'x-goog-api-key': user.key } : { authorization: `Bearer ${user.key}` };
    const res = await fetch(`${gw.url}${fx.path}`, { method: fx.method, headers: { ...fx.headers, ...auth }, body: JSON.stringify(fx.body) });
    const text = await res.text();
    if (res.status < 200 || res.status > 299) throw new Error(`gateway answered ${res.status}: ${text.slice(0, 600)}`);

    // What the upstream got: one generation call, in the kind's protocol, valid for it.
    const calls = mock.requests.filter((r) => GENERATION_PATH.test(r.path));
    expect(calls.map((r) => r.path)).toHaveLength(1);
    const up = calls[0]!;
    expect(up.path).toMatch(UPSTREAM_PATH[upstream]);
    expect(upstreamStreams(upstream, up)).toBe(stream);
    if (upstream === 'gemini') expect(decodeURIComponent(up.path)).toContain(`models/${kind.upstreamModel}:`);
    else expect(up.json?.model).toBe(kind.upstreamModel);
    if (passthrough) {
      // Only the model is mapped; everything else, unknown fields included, as the client sent it.
      // A Gemini body without safetySettings gets the operator's (gemini.safety_settings, docs/formats.md).
      const { safetySettings, ...sent } = up.json ?? {};
      if (upstream === 'gemini' && fx.body.safetySettings === undefined) {
        expect(safetySettings).toEqual(expect.arrayContaining([{ category: expect.stringMatching(/^HARM_CATEGORY_/), threshold: expect.any(String) }]));
        expect(sent).toEqual(fx.body);
      } else if (upstream === 'claude') expect(up.json).toEqual(claudePassthroughBody(fx.body, kind.upstreamModel));
      else expect(up.json).toEqual(upstream === 'gemini' ? fx.body : { ...fx.body, model: kind.upstreamModel });
      if (client === 'claude') {
        expect(up.headers['anthropic-beta']).toBe(fx.headers['anthropic-beta']);
        expect(up.headers['anthropic-version']).toBe(fx.headers['anthropic-version']);
      }
    } else {
      expect(CHECK_REQUEST[upstream](up.json)).toEqual([]);
    }

    // The answer, read as the client reads it.
    const answer = readAnswer(client, stream, text, !passthrough);
    if (fx.toolCall) {
      expect(answer.toolCalls.map((c) => c.name)).toContain(fx.toolCall);
    } else {
      expect(answer.toolCalls).toEqual([]);
      expect(answer.text).toContain('Hello from the mock');
    }

    // Billed and logged, under the model the client asked for, on this kind's channel.
    expect(await quotaOf(user.id)).toBeLessThan(quotaBefore);
    const logs = await logsOf(user.id);
    expect(logs.length).toBe(logsBefore + 1);
    expect(logs[0]).toMatchObject({ model_name: clientModel(fx), channel_id: user.channelId });
    expect(Number(logs[0].quota)).toBe(quotaBefore - (await quotaOf(user.id)));
  });
});
