/**
 * Requests recorded from Claude Code, Codex CLI and Gemini CLI (test/fixtures/agents), replayed
 * through the gateway as the client sent them (path, query, headers, body; only the key is the
 * gateway's) to every channel kind the mock upstream serves these protocols for: OpenAI (Chat, and
 * Responses for a Responses client), an OpenAI channel whose upstream speaks the Responses API,
 * Claude, Gemini, Azure OpenAI (Azure's paths and `api-key`), AWS Bedrock Claude (`invoke` /
 * `invoke-with-response-stream`, SigV4, event-stream answers) and Vertex AI (Claude models by
 * `rawPredict`, Gemini models by `generateContent`, OAuth token). The fixture's model is mapped to
 * the model the channel serves; each kind has its own group (and user), so the same model name
 * routes to that kind only.
 *
 * Each replay must: answer 2xx in the client's protocol (stream well-formed; a tool call, when the
 * mock upstream answers one, in the client's tool-call shape); reach the upstream once, at the
 * kind's path and with its credentials, naming the mapped model as the platform names it; hand the
 * upstream a body its API accepts (a passthrough forwards the client's body, unknown fields and beta
 * headers included, with only the model mapped); take quota and write a log row.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ALL_TARGETS, describeEach, makeUser, type TestApp } from '../helpers/app';
import { CHANNEL_TYPE } from '../../server/src/channels/kinds';
import { startMockUpstream, type MockRequest, type MockUpstream } from '../mock-upstream';
import { installBedrockStreamMock } from '../mock-upstream/bedrock';
import { installClaudeMock } from '../mock-upstream/claude';
import { installGeminiMock } from '../mock-upstream/gemini';
import { installVertexMock } from '../mock-upstream/vertex';
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

/** One upstream call read as its protocol's API takes it. */
interface Call {
  /** The model it names (in the body, or in the path where the protocol or platform puts it). */
  model: unknown;
  stream: boolean;
  /** The body in the protocol's own shape: a platform's envelope fields out, a model it moves to the path back in. */
  body: Record<string, any>;
  /** The client's Anthropic betas as the upstream reads them (the header; the body's `anthropic_beta` on Bedrock). */
  betas?: string;
  /** The client's `anthropic-version` header, where the platform forwards it (Bedrock and Vertex fix their own in the body). */
  anthropicVersion?: string;
}

/** Where a kind's upstream lives: the path of a call in a protocol, and how a call there reads. */
interface Platform {
  path(protocol: Protocol, stream: boolean): RegExp;
  /** Reads a call, checking the platform's own parts (credentials, envelope fields) on the way. */
  read(req: MockRequest, protocol: Protocol, channelKey: string): Call;
}

const NO_PATH = /$^/;
const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
const pathModel = (path: string) => decodeURIComponent(/models\/([^/:]+):/.exec(path)?.[1] ?? '');
const query = (req: MockRequest) => new URL(req.url, 'http://mock').searchParams;

/** The providers' own APIs (OpenAI, Anthropic, Google AI Studio). */
const NATIVE: Platform = {
  path: (p) =>
    ({
      chat: /^\/v1\/chat\/completions$/,
      responses: /^\/v1\/responses$/,
      claude: /^\/v1\/messages$/,
      gemini: /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)$/,
    })[p],
  read(req, p) {
    const body = req.json ?? {};
    if (p === 'gemini') return { model: pathModel(req.path), stream: req.path.endsWith(':streamGenerateContent') && query(req).get('alt') === 'sse', body };
    const header = (h: string) => req.headers[h] as string | undefined;
    return { model: body.model, stream: body.stream === true, body, betas: header('anthropic-beta'), anthropicVersion: header('anthropic-version') };
  },
};

const AZURE_API_VERSION = '2025-04-01-preview';
/** Azure OpenAI: Chat under `/openai/deployments/{deployment}` (`api-version` query), Responses on `/openai/v1`; `api-key`. */
const AZURE: Platform = {
  path: (p) => (p === 'chat' ? /^\/openai\/deployments\/[^/]+\/chat\/completions$/ : p === 'responses' ? /^\/openai\/v1\/responses$/ : NO_PATH),
  read(req, p, key) {
    expect(req.headers['api-key']).toBe(key);
    expect(req.headers.authorization).toBeUndefined();
    const body = req.json ?? {};
    if (p === 'responses') return { model: body.model, stream: body.stream === true, body };
    expect(query(req).get('api-version')).toBe(AZURE_API_VERSION);
    return { model: decodeURIComponent(req.path.split('/')[3]!), stream: body.stream === true, body };
  },
};

/**
 * AWS Bedrock: `/model/{id}/invoke` or `invoke-with-response-stream`, SigV4 with the channel's key
 * id and region; the Claude body without `model`/`stream`, with `anthropic_version` and the betas.
 */
const BEDROCK: Platform = {
  path: (p, stream) => (p !== 'claude' ? NO_PATH : stream ? /^\/model\/[^/]+\/invoke-with-response-stream$/ : /^\/model\/[^/]+\/invoke$/),
  read(req, _p, key) {
    const [keyId, , region] = key.split('|');
    expect(req.headers.authorization).toMatch(
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${keyId}/\\d{8}/${region}/bedrock/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$`),
    );
    expect(req.headers['x-amz-content-sha256']).toBe(sha256(req.body));
    const { anthropic_version: version, anthropic_beta: betas, ...rest } = req.json ?? {};
    expect(version).toBe('bedrock-2023-05-31');
    expect(rest).not.toHaveProperty('model');
    expect(rest).not.toHaveProperty('stream');
    const model = decodeURIComponent(req.path.split('/')[2]!);
    const stream = req.path.endsWith('/invoke-with-response-stream');
    return { model, stream, body: { ...rest, model, ...(stream ? { stream: true } : {}) }, betas: betas === undefined ? undefined : betas.join(',') };
  },
};

const VERTEX_PROJECT = 'agents-project';
const VERTEX_EMAIL = 'relay@agents-project.iam.gserviceaccount.com';
const VERTEX_KEYS = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
/** A service-account key whose token endpoint is the mock's. */
const vertexKey = (mock: MockUpstream) =>
  JSON.stringify({
    type: 'service_account',
    project_id: VERTEX_PROJECT,
    private_key: VERTEX_KEYS.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: VERTEX_EMAIL,
    token_uri: `${mock.url}/vertex/token`,
  });
/**
 * Vertex AI in a region: `…/publishers/anthropic/models/{model}:rawPredict|streamRawPredict` (the
 * Claude body without `model`, with `anthropic_version`), `…/publishers/google/models/{model}:
 * generateContent|streamGenerateContent?alt=sse` (the Gemini body); a minted OAuth token.
 */
const vertex = (region: string): Platform => {
  const base = `^/v1/projects/${VERTEX_PROJECT}/locations/${region}/publishers/`;
  return {
    path: (p, stream) =>
      p === 'claude'
        ? new RegExp(`${base}anthropic/models/[^/:]+:${stream ? 'streamRawPredict' : 'rawPredict'}$`)
        : p === 'gemini'
          ? new RegExp(`${base}google/models/[^/:]+:${stream ? 'streamGenerateContent' : 'generateContent'}$`)
          : NO_PATH,
    read(req, p) {
      expect(req.headers.authorization).toMatch(/^Bearer ya29\.mock-/);
      const model = pathModel(req.path);
      if (p === 'gemini') return { model, stream: req.path.endsWith(':streamGenerateContent') && query(req).get('alt') === 'sse', body: req.json ?? {} };
      const { anthropic_version: version, ...rest } = req.json ?? {};
      expect(version).toBe('vertex-2023-10-16');
      expect(rest).not.toHaveProperty('model');
      return { model, stream: rest.stream === true, body: { ...rest, model } };
    },
  };
};

interface Kind {
  name: string;
  type: number;
  platform: Platform;
  /** The channel's key; `upstream-key-{name}` when the kind takes a plain key. */
  key?: (mock: MockUpstream) => string;
  setting?: Record<string, unknown>;
  other?: string;
  /** What the channel maps every fixture model to. */
  upstreamModel: string;
  /** How the upstream names it (Azure deployments lose their dots, Vertex Claude versions take an `@`). */
  wireModel?: string;
  /** The protocol the upstream is called in, for a client protocol. */
  upstream(client: Protocol): Protocol;
  /** Converted even for a client of the upstream's protocol (Vertex AI: one channel, two native formats). */
  alwaysConverted?: boolean;
}
const KINDS: Kind[] = [
  // An OpenAI channel serves Chat Completions and, to a Responses client, the Responses API itself.
  {
    name: 'openai',
    type: CHANNEL_TYPE.OpenAI,
    platform: NATIVE,
    upstreamModel: 'gpt-upstream',
    upstream: (c) => (c === 'responses' ? 'responses' : 'chat'),
  },
  { name: 'claude', type: CHANNEL_TYPE.Anthropic, platform: NATIVE, upstreamModel: 'claude-upstream', upstream: () => 'claude' },
  { name: 'gemini', type: CHANNEL_TYPE.Gemini, platform: NATIVE, upstreamModel: 'gemini-upstream', upstream: () => 'gemini' },
  {
    name: 'openai-responses',
    type: CHANNEL_TYPE.OpenAI,
    platform: NATIVE,
    setting: RESPONSES_UPSTREAM_SETTING,
    upstreamModel: 'gpt-resp-upstream',
    upstream: () => 'responses',
  },
  // Azure speaks Chat and Responses too; the deployment name is the mapped model without its dots.
  {
    name: 'azure',
    type: CHANNEL_TYPE.Azure,
    platform: AZURE,
    other: AZURE_API_VERSION,
    upstreamModel: 'gpt-4.1-agents',
    wireModel: 'gpt-41-agents',
    upstream: (c) => (c === 'responses' ? 'responses' : 'chat'),
  },
  // A cross-region inference profile id, set through model_mapping as operators do: used as given.
  {
    name: 'bedrock',
    type: CHANNEL_TYPE.AwsClaude,
    platform: BEDROCK,
    key: () => 'AKIDAGENTS|agents-secret-key|us-west-2',
    upstreamModel: 'us.anthropic.claude-agents-v1:0',
    upstream: () => 'claude',
  },
  {
    name: 'vertex-claude',
    type: CHANNEL_TYPE.VertexAI,
    platform: vertex('us-east5'),
    key: vertexKey,
    other: 'us-east5',
    upstreamModel: 'claude-agents-vx-20250101',
    wireModel: 'claude-agents-vx@20250101',
    upstream: () => 'claude',
    alwaysConverted: true,
  },
  {
    name: 'vertex-gemini',
    type: CHANNEL_TYPE.VertexAI,
    platform: vertex('global'),
    key: vertexKey,
    other: 'global',
    upstreamModel: 'gemini-agents-vx',
    upstream: () => 'gemini',
    alwaysConverted: true,
  },
];

/** Every generation path of every platform, to count the gateway's calls whatever their kind. */
const GENERATION_PATH = new RegExp(
  [
    '^/v1/(chat/completions|responses|messages)$',
    '^/v1beta/models/[^/:]+:(generateContent|streamGenerateContent)$',
    '^/openai/(deployments/[^/]+/chat/completions|v1/responses)$',
    '^/model/[^/]+/(invoke|invoke-with-response-stream)$',
    '^/v1/projects/[^/]+/locations/[^/]+/publishers/[^/]+/models/[^/:]+:[A-Za-z]+$',
  ].join('|'),
);
/** The Bedrock and Vertex mocks answer by calling the Claude and Gemini mocks with these keys: not the gateway's calls. */
const forwardedByMock = (r: MockRequest) => /^(bedrock|vertex)-forward$/.test(String(r.headers['x-api-key'] ?? r.headers['x-goog-api-key'] ?? ''));

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
  const users: Record<string, { id: number; key: string; channelId: number; channelKey: string }> = {};

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    installClaudeMock(mock);
    installGeminiMock(mock);
    installBedrockStreamMock(mock);
    installVertexMock(mock, VERTEX_KEYS.publicKey, VERTEX_EMAIL);
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
      const channelKey = k.key?.(mock) ?? `upstream-key-${k.name}`;
      const channelId = await seedChannel(app, {
        name: `agents-${k.name}`,
        type: k.type,
        key: channelKey,
        base_url: mock.url,
        group,
        models: MODELS.join(','),
        model_mapping: JSON.stringify(Object.fromEntries(MODELS.map((m) => [m, k.upstreamModel]))),
        setting: k.setting && JSON.stringify(k.setting),
        other: k.other,
        auto_ban: 0,
      });
      users[k.name] = { id: u.id, key, channelId, channelKey };
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
    const passthrough = client === upstream && !kind.alwaysConverted;
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

    // What the upstream got: one generation call, at the kind's path, in its protocol, valid for it.
    const calls = mock.requests.filter((r) => GENERATION_PATH.test(r.path) && !forwardedByMock(r));
    expect(calls.map((r) => r.path)).toHaveLength(1);
    const up = calls[0]!;
    expect(up.path).toMatch(kind.platform.path(upstream, stream));
    const call = kind.platform.read(up, upstream, user.channelKey);
    expect(call.stream).toBe(stream);
    const model = kind.wireModel ?? kind.upstreamModel;
    expect(call.model).toBe(model);
    if (passthrough) {
      // Only the model is mapped; everything else, unknown fields included, as the client sent it.
      // A Gemini body without safetySettings gets the operator's (gemini.safety_settings, docs/formats.md).
      const { safetySettings, ...sent } = call.body;
      if (upstream === 'gemini' && fx.body.safetySettings === undefined) {
        expect(safetySettings).toEqual(expect.arrayContaining([{ category: expect.stringMatching(/^HARM_CATEGORY_/), threshold: expect.any(String) }]));
        expect(sent).toEqual(fx.body);
      } else if (upstream === 'claude') expect(call.body).toEqual(claudePassthroughBody(fx.body, model));
      else expect(call.body).toEqual(upstream === 'gemini' ? fx.body : { ...fx.body, model });
      if (client === 'claude') {
        // The betas where the platform reads them (Bedrock: the body's anthropic_beta); the version where it is a header.
        expect(call.betas).toBe(fx.headers['anthropic-beta']);
        if (kind.platform === NATIVE) expect(call.anthropicVersion).toBe(fx.headers['anthropic-version']);
      }
    } else {
      expect(CHECK_REQUEST[upstream](call.body)).toEqual([]);
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
