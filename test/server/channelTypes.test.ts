import crypto from 'node:crypto';
import { DB_TARGETS, describeEach, makeUser, setupRoot, type TestApp } from '../helpers/app';
import {
  AZURE_DEFAULT_API_VERSION,
  CHANNEL_TYPES,
  adaptorIdOf,
  channelType,
  consoleChannelTypes,
  defaultBaseUrl,
  isKnownChannelType,
} from '../../server/src/channels/catalogue';
import { CHANNEL_TYPE } from '../../server/src/channels/kinds';
import { ADAPTORS, adaptorFor } from '../../server/src/channels/providers';
import { baseUrlOf, openaiUrl } from '../../server/src/protocols/openai/adaptor';
import { azureUrl } from '../../server/src/channels/providers/azure';
import { channelKeys } from '../../server/src/channels/routeTable';
import { channelModelMap } from '../../server/src/services/channelModels';
import type { ChannelInfo } from '../../server/src/relay/types';

/** The kinds the product lists (id: console label); the console's type menu offers exactly these. */
const PRODUCT_KINDS: Record<number, string> = {
  1: 'OpenAI',
  2: 'Midjourney Proxy',
  3: 'Azure OpenAI',
  4: 'Ollama',
  5: 'Midjourney Proxy Plus',
  8: 'custom',
  11: 'PaLM2',
  14: 'Claude',
  15: 'Baidu',
  16: 'Zhipu',
  17: 'Alibaba',
  18: 'iFlytek',
  19: '360',
  20: 'OpenRouter',
  21: 'AI Proxy',
  22: 'FastGPT',
  23: 'Tencent',
  24: 'Gemini',
  25: 'Moonshot',
  26: 'Zhipu GLM-4V',
  31: 'Yi',
  33: 'AWS Claude',
  34: 'Cohere',
  35: 'MiniMax',
  36: 'Suno',
  37: 'Dify',
  38: 'Jina',
  39: 'Cloudflare',
  40: 'SiliconCloud',
  41: 'Vertex AI',
  42: 'Mistral',
  43: 'DeepSeek',
  44: 'M3E',
  45: 'Volcano Ark',
  46: 'Baidu V2',
  47: 'Xinference',
  48: 'xAI',
};

const info = (over: Partial<ChannelInfo>): ChannelInfo =>
  ({ id: 1, type: 1, key: 'k', baseUrl: '', other: '', organization: '', setting: {}, ...over }) as unknown as ChannelInfo;

describe('channel-type catalogue', () => {
  it('names every type once, with its named constant', () => {
    const ids = CHANNEL_TYPES.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const e of CHANNEL_TYPES) expect([e.name, CHANNEL_TYPE[e.name]]).toEqual([e.name, e.id]);
    expect(Object.values(CHANNEL_TYPE).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
  });

  it('gives every type exactly one adaptor, and adaptorFor answers it', () => {
    const claimedBy = new Map<number, string[]>();
    for (const [id, a] of Object.entries(ADAPTORS)) {
      expect(a.name).toBe(id);
      for (const t of a.channelTypes) claimedBy.set(t, [...(claimedBy.get(t) ?? []), a.name]);
    }
    const doubles = [...claimedBy].filter(([, names]) => names.length > 1);
    expect(doubles).toEqual([]);
    expect([...claimedBy.keys()].sort((a, b) => a - b)).toEqual(CHANNEL_TYPES.map((e) => e.id).sort((a, b) => a - b));
    for (const e of CHANNEL_TYPES) expect([e.id, adaptorFor(e.id).name]).toEqual([e.id, adaptorIdOf(e)]);
    expect(adaptorFor(CHANNEL_TYPE.Azure)).toBe(ADAPTORS.azure);
    expect(adaptorFor(CHANNEL_TYPE.Ollama)).toBe(ADAPTORS.ollama);
    expect(adaptorFor(CHANNEL_TYPE.Xinference)).toBe(ADAPTORS.xinference);
    expect(adaptorFor(CHANNEL_TYPE.AwsClaude)).toBe(ADAPTORS.bedrock);
  });

  it('holds every kind the console can create, offered in the menu with its label', () => {
    const offered = Object.fromEntries(CHANNEL_TYPES.filter((e) => e.offered).map((e) => [e.id, e.label]));
    expect(offered).toEqual(PRODUCT_KINDS);
    for (const id of Object.keys(PRODUCT_KINDS)) expect(isKnownChannelType(Number(id))).toBe(true);
  });

  it('refuses types it does not know', () => {
    for (const t of [0, -1, 28, 29, 30, 32, 57, 999, 1.5, NaN]) expect([t, isKnownChannelType(t)]).toEqual([t, false]);
    expect(isKnownChannelType(CHANNEL_TYPE.Perplexity)).toBe(true); // not offered, still valid for stored channels
  });

  it('supplies the defaults: base URL, API prefix, Azure API version, models', () => {
    expect(baseUrlOf(info({ type: CHANNEL_TYPE.DeepSeek }))).toBe(defaultBaseUrl(CHANNEL_TYPE.DeepSeek));
    expect(defaultBaseUrl(CHANNEL_TYPE.DeepSeek)).toBe('https://api.deepseek.com');
    expect(baseUrlOf(info({ type: CHANNEL_TYPE.DeepSeek, baseUrl: 'https://mine.example/' }))).toBe('https://mine.example');
    expect(openaiUrl(info({ type: CHANNEL_TYPE.VolcEngine }), 'chat', 'm')).toBe('https://ark.cn-beijing.volces.com/api/v3/chat/completions');
    expect(openaiUrl(info({ type: CHANNEL_TYPE.Perplexity }), 'chat', 'm')).toBe('https://api.perplexity.ai/chat/completions');
    expect(channelType(CHANNEL_TYPE.Azure)?.version?.value).toBe(AZURE_DEFAULT_API_VERSION);
    expect(azureUrl(info({ type: CHANNEL_TYPE.Azure, baseUrl: 'https://x.openai.azure.com' }), 'chat', 'gpt-4.1')).toBe(
      `https://x.openai.azure.com/openai/deployments/gpt-41/chat/completions?api-version=${AZURE_DEFAULT_API_VERSION}`,
    );
    expect(channelModelMap()[String(CHANNEL_TYPE.DeepSeek)]).toEqual(['deepseek-chat', 'deepseek-reasoner']);
    expect(Object.keys(channelModelMap()).map(Number)).toEqual(
      CHANNEL_TYPES.filter((e) => e.models)
        .map((e) => e.id)
        .sort((a, b) => a - b),
    );
  });

  it('reads a JSON key as one key only for the kinds whose key format is JSON', () => {
    const sa = '{\n "type": "service_account",\n "project_id": "p"\n}';
    expect(channelKeys(CHANNEL_TYPE.VertexAI, sa)).toEqual([JSON.stringify({ type: 'service_account', project_id: 'p' })]);
    expect(channelKeys(CHANNEL_TYPE.OpenAI, sa)).toHaveLength(4);
  });

  it('describes the console form of a kind (fields, default version, key hint)', () => {
    const byId = new Map(consoleChannelTypes('zh').map((t) => [t.id, t]));
    expect(byId.get(CHANNEL_TYPE.Azure)?.fields).toMatchObject({
      other: { default: AZURE_DEFAULT_API_VERSION },
      strip_model_dots: true,
      base_url: { required: true },
    });
    expect(byId.get(CHANNEL_TYPE.Xunfei)?.fields.other?.default).toBe('v2.1');
    expect(byId.get(CHANNEL_TYPE.VertexAI)).toMatchObject({ json_key: true, key_hint: '{ "type": "service_account", ... }' });
    expect(byId.get(CHANNEL_TYPE.OpenAI)?.fields).toEqual({ organization: true });
    expect(byId.get(CHANNEL_TYPE.Suno)?.predefined_models).toBe(true);
    // Nothing server-only leaks to the console answer.
    for (const t of byId.values())
      expect(Object.keys(t).sort()).toEqual(['color', 'fields', 'id', 'json_key', 'key_hint', 'label', 'name', 'offered', 'predefined_models', 'retired']);
  });
});

/** A client authenticated by system access token + New-Api-User (no session needed). */
async function as(app: TestApp, id: number) {
  const token = crypto.randomBytes(16).toString('hex');
  await app.knex('users').where({ id }).update({ access_token: token });
  const wrap = (m: 'get' | 'post') => (url: string) =>
    app.http()[m](url).set('Authorization', token).set('New-Api-User', String(id)).set('Accept-Language', 'zh');
  return { get: wrap('get'), post: wrap('post') };
}

describeEach(DB_TARGETS, 'channel types over the console API', (getApp) => {
  let admin: Awaited<ReturnType<typeof as>>;
  let user: Awaited<ReturnType<typeof as>>;
  const base = { name: 'c', type: 1, key: 'sk-upstream-1', models: 'gpt-4o' };

  beforeAll(async () => {
    const app = getApp();
    await setupRoot(app);
    admin = await as(app, (await makeUser(app, { role: 10 })).id);
    user = await as(app, (await makeUser(app, { role: 1 })).id);
  });

  it('GET /api/channel/types answers the catalogue to admins only', async () => {
    const res = await admin.get('/api/channel/types');
    expect(res.status).toBe(200);
    // Retired notes answered in the caller's language (the test client: zh).
    expect(res.body).toEqual({ success: true, message: '', data: JSON.parse(JSON.stringify(consoleChannelTypes('zh'))) });
    expect(res.body.data.find((t: { id: number }) => t.id === CHANNEL_TYPE.PaLM).retired).toContain('PaLM2 已被 Google 停止服务');
    const en = await admin.get('/api/channel/types').set('Accept-Language', 'en');
    expect(en.body.data.find((t: { id: number }) => t.id === CHANNEL_TYPE.PaLM).retired).toContain('Google has shut PaLM2 down');
    expect(res.body.data.map((t: { id: number }) => t.id)).toEqual(CHANNEL_TYPES.map((e) => e.id));
    expect((await user.get('/api/channel/types')).status).toBe(403);
    expect((await getApp().http().get('/api/channel/types')).status).toBe(401);
  });

  it('refuses a type the catalogue does not know and writes nothing', async () => {
    const app = getApp();
    for (const type of [28, 57, 0]) {
      const res = await admin.post('/api/channel/').send({ ...base, type });
      expect([type, res.body.success, res.body.message]).toEqual([type, false, '未知的渠道类型']);
    }
    expect(Number((await app.knex('channels').count({ n: '*' }).first())?.n)).toBe(0);
  });

  it('pins the version of a kind that asks for it on create, and only that kind', async () => {
    const spark = await admin.post('/api/channel/').send({ ...base, name: 'spark', type: CHANNEL_TYPE.Xunfei });
    expect(spark.body.data).toMatchObject({ type: CHANNEL_TYPE.Xunfei, other: 'v2.1' });
    const azure = await admin.post('/api/channel/').send({ ...base, name: 'az', type: CHANNEL_TYPE.Azure, base_url: 'https://x.openai.azure.com' });
    expect(azure.body.data).toMatchObject({ type: CHANNEL_TYPE.Azure, other: '' });
    const legacy = await admin.post('/api/channel/').send({ ...base, name: 'old', type: CHANNEL_TYPE.OhMyGPT });
    expect(legacy.body).toMatchObject({ success: true, data: { type: CHANNEL_TYPE.OhMyGPT } });
  });
});
