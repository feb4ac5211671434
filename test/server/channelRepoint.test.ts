/**
 * Issue 40 item 2: an admin could take any channel's upstream key by re-pointing the channel (base
 * URL, proxy, kind, region) and letting the next call or a channel test send it to the new host.
 * Rule: a change of where the key goes needs the key typed again in the same request; root may
 * always (docs/security.md, "Upstream keys").
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { DB_TARGETS, describeEach, makeUser, setupRoot, type TestApp } from '../helpers/app';
import { listen, setOptions } from '../mock-upstream/seed';
import { setResolver } from '../../server/src/lib/guardedFetch';
import { CHANNEL_TYPE } from '../../server/src/channels/kinds';

async function as(app: TestApp, id: number) {
  const token = crypto.randomBytes(16).toString('hex');
  await app.knex('users').where({ id }).update({ access_token: token });
  const client = (lang: string) => {
    const wrap = (m: 'get' | 'post' | 'put' | 'delete') => (url: string) =>
      app.http()[m](url).set('Authorization', token).set('New-Api-User', String(id)).set('Accept-Language', lang);
    return { get: wrap('get'), post: wrap('post'), put: wrap('put'), del: wrap('delete') };
  };
  return { ...client('zh'), en: client('en') };
}
type Client = Awaited<ReturnType<typeof as>>;

/** An OpenAI-like upstream that records the Authorization header of every request. */
async function recorder() {
  const auth: string[] = [];
  const server = await listen((req: http.IncomingMessage, res: http.ServerResponse) => {
    auth.push(String(req.headers.authorization ?? ''));
    req.resume();
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        id: 'x',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  });
  return { ...server, auth };
}

const KEY = 'sk-root-secret-0123456789abcdefghij';
const REFUSED = /重新填写密钥/;

describeEach(DB_TARGETS, 'channel re-pointing needs the key (issue 40 item 2)', (getApp) => {
  let root: Client;
  let admin: Client;
  let adminEn: Client['en'];
  const base = { type: 1, models: 'gpt-4o', group: 'default', test_model: 'gpt-4o' };
  const stored = async (id: number) => getApp().knex('channels').where({ id }).first();
  const create = async (fields: Record<string, unknown>) => {
    const res = await root.post('/api/channel/').send({ ...base, name: `c-${crypto.randomBytes(3).toString('hex')}`, key: KEY, ...fields });
    expect(res.body.success).toBe(true);
    return res.body.data.id as number;
  };

  beforeAll(async () => {
    const app = getApp();
    const r = await setupRoot(app);
    root = await as(app, r.id);
    const a = await makeUser(app, { role: 10 });
    admin = await as(app, a.id);
    adminEn = admin.en;
    // Public-looking names resolve to a public address (the save-time check passes them).
    setResolver(app.ctx, async () => [{ address: '93.184.216.34', family: 4 }]);
  });
  afterAll(() => setResolver(getApp().ctx, undefined));

  it('an admin cannot send the stored key to a new host: the refused edit changes nothing and the test still calls the old host', async () => {
    const app = getApp();
    const good = await recorder();
    const evil = await recorder();
    // Both upstreams are local: the IP allow list lets an admin reach them (the private-address rule is not what is tested).
    await setOptions(app, { 'fetch_setting.ip_allow_list': '127.0.0.1', 'fetch_setting.allowed_ports': '' });
    try {
      const id = await create({ base_url: good.url });
      const before = await stored(id);
      for (const body of [
        { id, base_url: evil.url },
        // The masked key sent back is not the key typed again.
        { id, base_url: evil.url, key: 'sk-r…ghij' },
        { id, base_url: evil.url, key: '' },
        { id, setting: JSON.stringify({ proxy: evil.url }) },
        { id, name: 'renamed', priority: 5, base_url: `${evil.url}/v1` },
      ]) {
        const res = await admin.put('/api/channel/').send(body);
        expect([body, res.status, res.body.success]).toEqual([body, 200, false]);
        expect(res.body.message).toMatch(REFUSED);
      }
      expect(await stored(id)).toEqual(before);
      // The admin's own channel test goes where root pointed it, with root's key; the other host saw nothing.
      expect((await admin.get(`/api/channel/test/${id}`)).body.success).toBe(true);
      expect(good.auth).toEqual([`Bearer ${KEY}`]);
      expect(evil.auth).toEqual([]);

      // With the key typed again the admin may re-point it: the new host gets the admin's key, never root's.
      const moved = await admin.put('/api/channel/').send({ id, base_url: evil.url, key: 'sk-admin-own-key-0000000000' });
      expect(moved.body).toMatchObject({ success: true, data: { base_url: evil.url } });
      expect((await stored(id)).key).toBe('sk-admin-own-key-0000000000');
      expect((await admin.get(`/api/channel/test/${id}`)).body.success).toBe(true);
      expect(evil.auth).toEqual(['Bearer sk-admin-own-key-0000000000']);

      // Root may re-point without the key.
      expect((await root.put('/api/channel/').send({ id, base_url: good.url })).body.success).toBe(true);
      expect((await stored(id)).base_url).toBe(good.url);
    } finally {
      await setOptions(app, { 'fetch_setting.ip_allow_list': '', 'fetch_setting.allowed_ports': '80,443,8080,8443' });
      await good.close();
      await evil.close();
    }
  });

  it('base URL, proxy, kind and region are destinations; other edits and moves back to a known place are not', async () => {
    const noKey = async (id: number, fields: Record<string, unknown>) => {
      const before = await stored(id);
      const res = await admin.put('/api/channel/').send({ id, ...fields });
      expect([fields, res.body.success]).toEqual([fields, false]);
      expect(res.body.message).toMatch(REFUSED);
      expect(await stored(id)).toEqual(before);
    };
    const allowed = async (id: number, fields: Record<string, unknown>) => {
      const res = await admin.put('/api/channel/').send({ id, ...fields });
      expect([fields, res.body.success, res.body.message]).toEqual([fields, true, expect.any(String)]);
    };

    const openai = await create({ base_url: 'https://api.example.com' });
    await noKey(openai, { base_url: 'https://attacker.example.net' });
    await noKey(openai, { base_url: 'http://api.example.com' }); // another scheme
    await noKey(openai, { base_url: 'https://api.example.com:8443' }); // another port
    await noKey(openai, { base_url: '' }); // back to the kind's own host
    await noKey(openai, { setting: JSON.stringify({ proxy: 'http://proxy.example.net:3128' }) });
    await noKey(openai, { setting: JSON.stringify({ proxy: 'socks5://proxy.example.net:1080' }) });
    // Same origin, another path; other fields; the same base URL sent back.
    await allowed(openai, { base_url: 'https://api.example.com/openai', name: 'edited', priority: 3, models: 'gpt-4o,o3', other: 'x' });
    await allowed(openai, { base_url: 'https://api.example.com', setting: JSON.stringify({ force_format: true }), model_mapping: '{"a":"b"}' });
    // A proxy root set stays; removing it sends the key nowhere new.
    expect((await root.put('/api/channel/').send({ id: openai, setting: JSON.stringify({ proxy: 'http://proxy.example.org:3128' }) })).body.success).toBe(true);
    await allowed(openai, { setting: JSON.stringify({ proxy: 'http://proxy.example.org:3128', force_format: true }) });
    await noKey(openai, { setting: JSON.stringify({ proxy: 'http://proxy.example.org:3129' }) });
    await allowed(openai, { setting: '' });

    // Without a base URL the kind decides the host: another kind is another host.
    const official = await create({ base_url: '' });
    await noKey(official, { type: CHANNEL_TYPE.DeepSeek });
    await noKey(official, { base_url: 'https://attacker.example.net', type: CHANNEL_TYPE.DeepSeek });
    // With a base URL the kind does not move the key (the same host gets it).
    await allowed(openai, { type: CHANNEL_TYPE.DeepSeek });

    // AWS Bedrock and Vertex AI without a base URL: the region in `other` is in the host name.
    const bedrock = await create({ type: CHANNEL_TYPE.AwsClaude, key: 'AKIAEXAMPLE|secretsecret', other: 'us-east-1', base_url: '' });
    await noKey(bedrock, { other: 'eu-west-1' });
    const vertexKey = JSON.stringify({ type: 'service_account', project_id: 'p', client_email: 'a@p.iam.gserviceaccount.com', private_key: 'x' });
    const vertex = await create({ type: CHANNEL_TYPE.VertexAI, key: vertexKey, other: 'us-central1', base_url: '' });
    await noKey(vertex, { other: JSON.stringify({ default: 'us-central1', 'gemini-2.5-pro': 'europe-west4' }) });
    await allowed(vertex, { other: 'europe-west4', key: vertexKey });
    // Azure's `other` is an API version, not a place.
    const azure = await create({ type: CHANNEL_TYPE.Azure, base_url: 'https://res.openai.azure.com', other: '2024-10-21' });
    await allowed(azure, { other: '2025-04-01-preview' });
    await noKey(azure, { base_url: 'https://other-res.openai.azure.com' });
  });

  it('the refusal names the field in the caller language', async () => {
    const id = await create({ base_url: 'https://api.example.com' });
    const zh = await admin.put('/api/channel/').send({ id, setting: JSON.stringify({ proxy: 'http://proxy.example.net:3128' }) });
    expect(zh.body).toMatchObject({
      success: false,
      message: '修改渠道密钥的发送地址（代理地址）需要在同一次保存中重新填写密钥（只有超级管理员可以不填密钥修改）',
    });
    const en = await adminEn.put('/api/channel/').send({ id, base_url: 'https://attacker.example.net' });
    expect(en.body.message).toBe(
      'Changing where this channel sends its key (Base URL) needs the key typed again in the same save (only root may re-point a channel without it)',
    );
    const type = await adminEn.put('/api/channel/').send({ id, base_url: 'https://attacker.example.net', type: CHANNEL_TYPE.DeepSeek });
    expect(type.body.message).toContain('(The channel type)');
  });

  it('tag edits and batch tag cannot change a destination', async () => {
    const id = await create({ base_url: 'https://api.example.com', tag: 'repoint-tag' });
    const before = await stored(id);
    const destination = { base_url: 'https://attacker.example.net', setting: JSON.stringify({ proxy: 'http://p.example.net:1' }), type: 43, other: 'x' };
    // Only the tag edit's own fields are read: the destination fields are not among them.
    const onlyDestination = await admin.put('/api/channel/tag').send({ tag: 'repoint-tag', ...destination });
    expect(onlyDestination.body).toMatchObject({ success: false, message: '没有任何修改！' });
    const withPriority = await admin.put('/api/channel/tag').send({ tag: 'repoint-tag', priority: 9, ...destination });
    expect(withPriority.body.success).toBe(true);
    const batch = await admin.post('/api/channel/batch/tag').send({ ids: [id], tag: 'repoint-tag', ...destination });
    expect(batch.body.success).toBe(true);
    const after = await stored(id);
    expect(Number(after.priority)).toBe(9);
    expect({ ...after, priority: before.priority }).toEqual(before);
  });
});
