import net from 'node:net';
import OpenAI from 'openai';
import { ALL_TARGETS, buildApp, describeEach, DB_TARGETS, makeUser, setupRoot, loginAgent, type TestApp } from '../helpers/app';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { flushUsage, listen, seedChannel, seedToken, setOptions, setUser, updateChannel } from '../mock-upstream/seed';
import { invalidateToken } from '../../server/src/services/invalidate';
import { parseAllowIps } from '../../server/src/relay/ip';
import { startSmtp } from '../helpers/smtp';

const PRICING = {
  ModelRatio: JSON.stringify({ 'test-model': 2, 'r-model': 1, 'x-model': 1 }),
  CompletionRatio: JSON.stringify({ 'test-model': 3 }),
  CacheRatio: '{}',
  ModelPrice: '{}',
  GroupRatio: JSON.stringify({ default: 1 }),
  PreConsumedQuota: '100',
};

const msg = [{ role: 'user' as const, content: 'hi' }];

describeEach(DB_TARGETS, 'relay: routing, retries, channel health', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let gw: { url: string; close(): Promise<void> };
  let userId: number;
  let client: OpenAI;
  let n = 0;
  /** A model name unique to one test, so channels seeded by other tests never serve it. */
  const fresh = () => `r-model-${++n}`;

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    gw = await listen(app.callback);
    await setOptions(app, PRICING);
    const u = await makeUser(app, { quota: 10_000_000 });
    userId = u.id;
    await setUser(app, userId, { setting: JSON.stringify({ accept_unset_model_ratio_model: false }) });
    const t = await seedToken(app, userId);
    client = new OpenAI({ apiKey: t.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await mock?.close();
  });
  beforeEach(async () => {
    mock.reset();
    await setOptions(app, { RetryTimes: '0', AutomaticDisableChannelEnabled: 'false', AutomaticEnableChannelEnabled: 'false', RoutingBreakerEnabled: 'true' });
  });
  const priced = async (model: string) => setOptions(app, { ModelRatio: JSON.stringify({ ...JSON.parse(PRICING.ModelRatio), [model]: 1 }) });
  const quotaOf = async () => Number((await app.knex('users').where({ id: userId }).first()).quota);
  const lastLog = async () => {
    await flushUsage(app);
    return app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc').first();
  };

  test('retry moves to the next (lower priority) channel on 500', async () => {
    const model = fresh();
    await priced(model);
    await setOptions(app, { RetryTimes: '2' });
    const bad = await seedChannel(app, { base_url: mock.url, models: model, key: 'sk-fault-500', priority: 10 });
    const good = await seedChannel(app, { base_url: mock.url, models: model, priority: 0, name: 'good' });
    const res = await client.chat.completions.create({ model, messages: msg });
    expect(res.choices[0]!.message.content).toBe('Hello from the mock');
    expect(mock.received('/v1/chat/completions')).toHaveLength(2);
    const log = await lastLog();
    expect(log.channel_id).toBe(good);
    expect(JSON.parse(log.other).admin_info.use_channel).toEqual([bad, good]);
    const ch = await app.knex('channels').where({ id: good }).first();
    expect(Number(ch.used_quota)).toBe(Number(log.quota));
  });

  test('429 and 401 are retried too; RetryTimes 0 means one try', async () => {
    const model = fresh();
    await priced(model);
    await seedChannel(app, { base_url: mock.url, models: model, key: 'sk-fault-429', priority: 5 });
    await seedChannel(app, { base_url: mock.url, models: model, priority: 0 });
    await expect(client.chat.completions.create({ model, messages: msg })).rejects.toMatchObject({ status: 429 });
    expect(mock.received('/v1/chat/completions')).toHaveLength(1);
    mock.reset();
    await setOptions(app, { RetryTimes: '1' });
    const ok = await client.chat.completions.create({ model, messages: msg });
    expect(ok.choices).toHaveLength(1);
    expect(mock.received('/v1/chat/completions')).toHaveLength(2);
  });

  test('a stream that dies before its first byte is retried on the next channel', async () => {
    const model = fresh();
    await priced(model);
    await setOptions(app, { RetryTimes: '1' });
    await seedChannel(app, { base_url: mock.url, models: model, key: 'sk-fault-cutearly', priority: 3 });
    await seedChannel(app, { base_url: mock.url, models: model, priority: 1 });
    const stream = await client.chat.completions.create({ model, messages: msg, stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello from the mock');
    expect(mock.received('/v1/chat/completions')).toHaveLength(2);
  });

  test('no retry on 400; the reservation is refunded; status_code_mapping rewrites the status', async () => {
    const model = fresh();
    await priced(model);
    await setOptions(app, { RetryTimes: '3' });
    const bad = await seedChannel(app, { base_url: mock.url, models: model, key: 'sk-fault-400', priority: 10 });
    await seedChannel(app, { base_url: mock.url, models: model, priority: 0 });
    const before = await quotaOf();
    const err = await client.chat.completions.create({ model, messages: msg }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400 });
    expect((err as { error?: { message?: string } }).error?.message).toContain('mock failure 400');
    expect(mock.received('/v1/chat/completions')).toHaveLength(1);
    expect(await quotaOf()).toBe(before);
    await updateChannel(app, bad, { status_code_mapping: JSON.stringify({ 400: '422' }) });
    await expect(client.chat.completions.create({ model, messages: msg })).rejects.toMatchObject({ status: 422 });
  });

  test('higher priority is always tried first; weight 0 channels of one tier share traffic', async () => {
    const model = fresh();
    await priced(model);
    const hi1 = await seedChannel(app, { base_url: mock.url, models: model, priority: 7 });
    const hi2 = await seedChannel(app, { base_url: mock.url, models: model, priority: 7 });
    const lo = await seedChannel(app, { base_url: mock.url, models: model, priority: 1 });
    for (let i = 0; i < 40; i++) await client.chat.completions.create({ model, messages: msg });
    await flushUsage(app);
    const counts = await app.knex('channels').whereIn('id', [hi1, hi2, lo]).select('id', 'request_count');
    const by = Object.fromEntries(counts.map((c: { id: number; request_count: number }) => [c.id, Number(c.request_count)]));
    expect(by[lo]).toBe(0);
    expect(by[hi1]! + by[hi2]!).toBe(40);
    expect(by[hi1]).toBeGreaterThan(0);
    expect(by[hi2]).toBeGreaterThan(0);
  });

  test('auto-disable on upstream 401 (and keyword), only with auto_ban and the option on', async () => {
    const model = fresh();
    await priced(model);
    const noBan = await seedChannel(app, { base_url: mock.url, models: model, key: 'sk-fault-401', auto_ban: 0 });
    // A 401 also opens the channel's breaker at once (routingHealth.test.ts); this test is about
    // the permanent auto-disable, so the same channel is called again with breakers off.
    await setOptions(app, { AutomaticDisableChannelEnabled: 'true', RoutingBreakerEnabled: 'false' });
    await expect(client.chat.completions.create({ model, messages: msg })).rejects.toMatchObject({ status: 401 });
    expect((await app.knex('channels').where({ id: noBan }).first()).status).toBe(1);
    await updateChannel(app, noBan, { auto_ban: 1 });
    await expect(client.chat.completions.create({ model, messages: msg })).rejects.toMatchObject({ status: 401 });
    const waitStatus = async (id: number) => {
      for (let i = 0; i < 50; i++) {
        const row = await app.knex('channels').where({ id }).first();
        if (row.status !== 1) return row;
        await new Promise((r) => setTimeout(r, 20));
      }
      return app.knex('channels').where({ id }).first();
    };
    const row = await waitStatus(noBan);
    expect(row.status).toBe(3);
    const info = JSON.parse(row.other_info);
    expect(info.status_reason).toContain('mock failure 401');
    expect(typeof info.status_time).toBe('number');
    const abilities = await app.knex('abilities').where({ channel_id: noBan });
    expect(abilities.every((a: { enabled: unknown }) => !a.enabled)).toBe(true);
    await expect(client.chat.completions.create({ model, messages: msg })).rejects.toMatchObject({ status: 503 });

    const model2 = fresh();
    await priced(model2);
    const kw = await seedChannel(app, { base_url: mock.url, models: model2, key: 'sk-fault-keyword' });
    await expect(client.chat.completions.create({ model: model2, messages: msg })).rejects.toMatchObject({ status: 403 });
    expect((await waitStatus(kw)).status).toBe(3);
  });

  test('model_mapping: upstream gets the mapped name, billing/logs use the requested one', async () => {
    await seedChannel(app, { base_url: mock.url, models: 'test-model', model_mapping: JSON.stringify({ 'test-model': 'upstream-real' }), group: 'mapped' });
    await setOptions(app, { UserUsableGroups: JSON.stringify({ default: 'd', mapped: 'm' }) });
    const t = await seedToken(app, userId, { group: 'mapped' });
    const c = new OpenAI({ apiKey: t.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const before = await quotaOf();
    await c.chat.completions.create({ model: 'test-model', messages: msg });
    expect(mock.received('/v1/chat/completions')[0]!.json.model).toBe('upstream-real');
    expect(before - (await quotaOf())).toBe(64);
    const log = await lastLog();
    expect(log.model_name).toBe('test-model');
    const other = JSON.parse(log.other);
    expect(other.is_model_mapped).toBe(true);
    expect(other.upstream_model_name).toBe('upstream-real');
  });

  test('param_override merges into the body; organization header; Azure and custom URLs', async () => {
    const model = fresh();
    await priced(model);
    await seedChannel(app, {
      base_url: mock.url,
      models: model,
      param_override: JSON.stringify({ temperature: 0.1, top_p: 0.5 }),
      openai_organization: 'org-123',
    });
    await client.chat.completions.create({ model, messages: msg, temperature: 1 });
    const fwd = mock.received('/v1/chat/completions')[0]!;
    expect(fwd.json).toMatchObject({ model, temperature: 0.1, top_p: 0.5 });
    expect(fwd.headers['openai-organization']).toBe('org-123');

    const az = 'gpt-4.1-az';
    await priced(az);
    await seedChannel(app, { type: 3, base_url: mock.url, models: az, key: 'azure-key', other: '2024-06-01' });
    await client.chat.completions.create({ model: az, messages: msg });
    const azReq = mock.received(/\/openai\/deployments\//)[0]!;
    expect(azReq.path).toBe('/openai/deployments/gpt-41-az/chat/completions');
    expect(azReq.url).toContain('api-version=2024-06-01');
    expect(azReq.headers['api-key']).toBe('azure-key');

    const cu = fresh();
    await priced(cu);
    await seedChannel(app, { type: 8, base_url: `${mock.url}/custom/{model}/chat`, models: cu });
    await client.chat.completions.create({ model: cu, messages: msg });
    expect(mock.received(`/custom/${cu}/chat`)).toHaveLength(1);
  });

  test('pass-through mode forwards the body untouched; channel proxy setting tunnels through the proxy', async () => {
    const model = fresh();
    await priced(model);
    await seedChannel(app, { base_url: mock.url, models: model });
    await setOptions(app, { 'global.pass_through_request_enabled': 'true' });
    try {
      const raw = JSON.stringify({ model, messages: msg, stream: true, custom_field: { a: 1 } });
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${(await seedToken(app, userId)).key}`, 'content-type': 'application/json' },
        body: raw,
      });
      expect(await res.text()).toContain('"content":"Hello"');
      expect(mock.received('/v1/chat/completions')[0]!.body.toString()).toBe(raw);
      const log = await lastLog();
      expect(log.completion_tokens).toBe(4); // no upstream usage without stream_options: tokenizer
    } finally {
      await setOptions(app, { 'global.pass_through_request_enabled': 'false' });
    }

    const connects: string[] = [];
    const proxy = net.createServer((client) => {
      client.once('data', (head) => {
        const line = head.toString('latin1').split('\r\n')[0]!;
        const [, target] = line.split(' ');
        connects.push(line);
        const [host, port] = target!.split(':');
        const up = net.connect(Number(port), host!, () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          up.pipe(client);
          client.pipe(up);
        });
        up.on('error', () => client.destroy());
        client.on('error', () => up.destroy());
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const pm = fresh();
      await priced(pm);
      const port = (proxy.address() as net.AddressInfo).port;
      await app.knex('channels').insert({
        name: 'via-proxy',
        type: 1,
        key: 'k',
        base_url: mock.url,
        models: pm,
        group: 'default',
        status: 1,
        setting: JSON.stringify({ proxy: `http://127.0.0.1:${port}` }),
      });
      const row = await app.knex('channels').where({ name: 'via-proxy' }).first();
      await updateChannel(app, row.id, { status: 1 });
      await client.chat.completions.create({ model: pm, messages: msg });
      expect(connects.some((c) => c.startsWith(`CONNECT 127.0.0.1:${mock.port}`))).toBe(true);
    } finally {
      proxy.close();
    }
  });

  test('channel settings: system_prompt added when the request has none; disable_stream_options', async () => {
    const model = fresh();
    await priced(model);
    await seedChannel(app, { base_url: mock.url, models: model, setting: JSON.stringify({ system_prompt: 'Be brief.' }) });
    await client.chat.completions.create({ model, messages: msg });
    expect(mock.received('/v1/chat/completions')[0]!.json.messages).toEqual([{ role: 'system', content: 'Be brief.' }, ...msg]);
    await client.chat.completions.create({ model, messages: [{ role: 'system', content: 'Mine.' }, ...msg] });
    expect(mock.received('/v1/chat/completions')[1]!.json.messages[0]).toEqual({ role: 'system', content: 'Mine.' });
    const m2 = fresh();
    await priced(m2);
    await seedChannel(app, { base_url: mock.url, models: m2, setting: JSON.stringify({ disable_stream_options: true }) });
    const stream = await client.chat.completions.create({ model: m2, messages: msg, stream: true });
    for await (const c of stream) void c;
    expect(mock.received('/v1/chat/completions')[2]!.json.stream_options).toBeUndefined();
    expect((await lastLog()).completion_tokens).toBe(4); // tokenizer
  });

  test('max_input_tokens: long prompts skip the small channel; nothing fits → 400', async () => {
    const model = fresh();
    await priced(model);
    const small = await seedChannel(app, { base_url: mock.url, models: model, priority: 9, max_input_tokens: 50 });
    const big = await seedChannel(app, { base_url: mock.url, models: model, priority: 1, max_input_tokens: 500 });
    await client.chat.completions.create({ model, messages: msg });
    expect((await lastLog()).channel_id).toBe(small);
    const long = 'word '.repeat(200); // ≈ 200 tokens
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: long }] });
    expect((await lastLog()).channel_id).toBe(big);
    const huge = 'word '.repeat(1000);
    await expect(client.chat.completions.create({ model, messages: [{ role: 'user', content: huge }] })).rejects.toMatchObject({ status: 400 });
  });

  test('admin keys may pin a channel with a -<id> suffix; users may not', async () => {
    const model = fresh();
    await priced(model);
    const a = await seedChannel(app, { base_url: mock.url, models: model, priority: 9 });
    const b = await seedChannel(app, { base_url: mock.url, models: 'something-else', priority: 0 });
    const adminUser = await makeUser(app, { quota: 1_000_000, role: 10 });
    const adminTok = await seedToken(app, adminUser.id);
    const pinned = new OpenAI({ apiKey: `${adminTok.key}-${b}`, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await pinned.chat.completions.create({ model, messages: msg });
    await flushUsage(app);
    const log = await app.knex('logs').where({ user_id: adminUser.id, type: 2 }).orderBy('id', 'desc').first();
    expect(log.channel_id).toBe(b);
    expect(log.channel_id).not.toBe(a);
    const plainTok = await seedToken(app, userId);
    const notAllowed = new OpenAI({ apiKey: `${plainTok.key}-${b}`, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await expect(notAllowed.chat.completions.create({ model, messages: msg })).rejects.toMatchObject({ status: 403 });
    const gone = new OpenAI({ apiKey: `${adminTok.key}-999999`, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await expect(gone.chat.completions.create({ model, messages: msg })).rejects.toMatchObject({ status: 503 });
  });

  test('unpriced models are refused unless the user accepts unset ratios', async () => {
    const model = 'unpriced-model';
    await seedChannel(app, { base_url: mock.url, models: model });
    const before = await quotaOf();
    const err = await client.chat.completions.create({ model, messages: msg }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 403 });
    expect(mock.received('/v1/chat/completions')).toHaveLength(0);
    expect(await quotaOf()).toBe(before);
    await setUser(app, userId, { setting: JSON.stringify({ accept_unset_model_ratio_model: true }) });
    await client.chat.completions.create({ model, messages: msg });
    // 37.5 × (11 + 7)
    expect(before - (await quotaOf())).toBe(675);
    await setUser(app, userId, { setting: '' });
  });

  test('token rules: expired 401 (status 3), exhausted 403, model limits 403, IP allow-list', async () => {
    const model = fresh();
    await priced(model);
    await seedChannel(app, { base_url: mock.url, models: `${model},x-model` });
    const call = (key: string, m = model) =>
      new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 }).chat.completions.create({ model: m, messages: msg });

    const expired = await seedToken(app, userId, { expired_time: Math.floor(Date.now() / 1000) - 10 });
    await expect(call(expired.key)).rejects.toMatchObject({ status: 401 });
    for (let i = 0; i < 50 && (await app.knex('tokens').where({ id: expired.id }).first()).status !== 3; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await app.knex('tokens').where({ id: expired.id }).first()).status).toBe(3);

    const exhausted = await seedToken(app, userId, { unlimited_quota: false, remain_quota: 0 });
    await expect(call(exhausted.key)).rejects.toMatchObject({ status: 403 });
    const small = await seedToken(app, userId, { unlimited_quota: false, remain_quota: 50 });
    await expect(call(small.key)).rejects.toMatchObject({ status: 403 }); // estimate 100 > 50

    const limited = await seedToken(app, userId, { model_limits: 'x-model' });
    await expect(call(limited.key)).rejects.toMatchObject({ status: 403 });
    await expect(call(limited.key, 'x-model')).resolves.toBeDefined();
    const models = await new OpenAI({ apiKey: limited.key, baseURL: `${gw.url}/v1`, maxRetries: 0 }).models.list();
    expect(models.data.map((m) => m.id)).toEqual(['x-model']);

    const far = await seedToken(app, userId, { allow_ips: '10.0.0.0/8\n192.168.1.1' });
    await expect(call(far.key)).rejects.toMatchObject({ status: 403 });
    const near = await seedToken(app, userId, { allow_ips: '10.0.0.0/8\n127.0.0.0/24' });
    await expect(call(near.key)).resolves.toBeDefined();

    const foreignGroup = await seedToken(app, userId, { group: 'svip-only' });
    await expect(call(foreignGroup.key)).rejects.toMatchObject({ status: 403 });
  });

  test('allow_ips parsing: IPv4, IPv6, CIDR, mapped addresses', () => {
    const l = parseAllowIps('192.168.0.0/16, 2001:db8::/32\n::1\n10.1.2.3 bogus 300.1.1.1')!;
    expect(l.allows('192.168.44.2')).toBe(true);
    expect(l.allows('::ffff:192.168.1.1')).toBe(true);
    expect(l.allows('192.169.0.1')).toBe(false);
    expect(l.allows('2001:db8:1::5')).toBe(true);
    expect(l.allows('2001:db9::5')).toBe(false);
    expect(l.allows('::1')).toBe(true);
    expect(l.allows('10.1.2.3')).toBe(true);
    expect(l.allows('10.1.2.4')).toBe(false);
    expect(parseAllowIps('  \n ')).toBeNull();
  });

  test('channel API: test (records time, auto-disable, auto-enable), fetch models, balance', async () => {
    const root = await setupRoot(app).catch(async () => {
      const r = await app.knex('users').where({ role: 100 }).first();
      return { id: r.id, username: r.username, password: 'rootpass123' };
    });
    const admin = await loginAgent(app, root.username, root.password);
    const model = fresh();
    await priced(model);
    const id = await seedChannel(app, { base_url: mock.url, models: model, test_model: model });
    const ok = await admin.get(`/api/channel/test/${id}`);
    expect(ok.body).toMatchObject({ success: true });
    expect(typeof ok.body.time).toBe('number');
    const fwd = mock.received('/v1/chat/completions').at(-1)!;
    expect(fwd.json).toMatchObject({ model, max_tokens: 1 });
    const row = await app.knex('channels').where({ id }).first();
    expect(Number(row.test_time)).toBeGreaterThan(0);

    await setOptions(app, { AutomaticDisableChannelEnabled: 'true', AutomaticEnableChannelEnabled: 'true' });
    const smtp = await startSmtp();
    await setOptions(app, {
      SMTPServer: '127.0.0.1',
      SMTPPort: String(smtp.port),
      SMTPAccount: '',
      SMTPToken: '',
      SMTPFrom: 'noreply@test.local',
      SMTPSSLEnabled: 'false',
    });
    await app.knex('users').where({ id: root.id }).update({ email: 'root@example.com' });
    await updateChannel(app, id, { key: 'sk-fault-401' });
    const bad = await admin.get(`/api/channel/test/${id}`);
    expect(bad.body.success).toBe(false);
    expect(bad.body.message).toContain('mock failure 401');
    expect((await app.knex('channels').where({ id }).first()).status).toBe(3);
    const notice = await smtp.waitFor('root@example.com');
    expect(notice.subject).toContain(`#${id}`);
    expect(notice.subject).toContain('已被禁用');
    await smtp.close();
    await setOptions(app, { SMTPServer: '' });
    await app.knex('channels').where({ id }).update({ key: 'sk-good' });
    const again = await admin.get(`/api/channel/test/${id}?model=${model}`);
    expect(again.body.success).toBe(true);
    expect((await app.knex('channels').where({ id }).first()).status).toBe(1);
    expect((await app.knex('abilities').where({ channel_id: id }).first()).enabled).toBeTruthy();

    const all = await admin.get('/api/channel/test');
    expect(all.body.success).toBe(true);

    const models = await admin.get(`/api/channel/fetch_models/${id}`);
    expect(models.body).toMatchObject({ success: true, data: ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'] });
    const byBody = await admin.post('/api/channel/fetch_models').send({ base_url: mock.url, type: 1, key: 'k' });
    expect(byBody.body.data).toContain('gpt-4o');
    const noKey = await admin.post('/api/channel/fetch_models').send({ base_url: mock.url, type: 1, key: '' });
    expect(noKey.body.success).toBe(false);

    const bal = await admin.get(`/api/channel/update_balance/${id}/`);
    expect(bal.body).toMatchObject({ success: true, balance: 75 });
    expect(Number((await app.knex('channels').where({ id }).first()).balance)).toBe(75);
    const other = await seedChannel(app, { type: 42, base_url: mock.url, models: model });
    const unsupported = await admin.get(`/api/channel/update_balance/${other}/`);
    expect(unsupported.body.success).toBe(false);

    const user = await makeUser(app, { password: 'password123' });
    const plain = await loginAgent(app, user.username, user.password);
    expect((await plain.get(`/api/channel/test/${id}`)).status).toBe(403);
  });
});

describeEach(ALL_TARGETS, 'relay: caches are invalidated across nodes', (getApp) => {
  let mock: MockUpstream;
  beforeAll(async () => {
    mock = await startMockUpstream();
  });
  afterAll(async () => mock?.close());

  test('token disabled after warm-up → 401; channel disabled → 503', async () => {
    const app = getApp();
    await setOptions(app, PRICING);
    const u = await makeUser(app, { quota: 1_000_000 });
    const t = await seedToken(app, u.id);
    const ch = await seedChannel(app, { base_url: mock.url, models: 'test-model' });
    const call = () => app.http().post('/v1/chat/completions').set('authorization', `Bearer ${t.key}`).send({ model: 'test-model', messages: msg });
    expect((await call()).status).toBe(200);
    await app.knex('tokens').where({ id: t.id }).update({ status: 2 });
    await invalidateToken(app.ctx, t.raw);
    for (let i = 0; i < 50 && (await call()).status === 200; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await call()).status).toBe(401);
    await app.knex('tokens').where({ id: t.id }).update({ status: 1 });
    await invalidateToken(app.ctx, t.raw);
    await updateChannel(app, ch, { status: 2 });
    let res = await call();
    for (let i = 0; i < 50 && res.status !== 503; i++) {
      await new Promise((r) => setTimeout(r, 20));
      res = await call();
    }
    expect(res.status).toBe(503);
    expect(res.body.error.message).toContain('无可用渠道');
  });

  test('model request rate limit → 429 in OpenAI format with Retry-After; sensitive words → 400', async () => {
    const app = getApp();
    await setOptions(app, PRICING);
    const u = await makeUser(app, { quota: 1_000_000 });
    const t = await seedToken(app, u.id);
    await seedChannel(app, { base_url: mock.url, models: 'x-model' });
    await setOptions(app, {
      ModelRequestRateLimitEnabled: 'true',
      ModelRequestRateLimitCount: '2',
      ModelRequestRateLimitSuccessCount: '1000',
      ModelRequestRateLimitDurationMinutes: '1',
    });
    try {
      const call = () => app.http().post('/v1/chat/completions').set('authorization', `Bearer ${t.key}`).send({ model: 'x-model', messages: msg });
      expect((await call()).status).toBe(200);
      expect((await call()).status).toBe(200);
      const limited = await call();
      expect(limited.status).toBe(429);
      expect(limited.body.error.type).toBe('rate_limit_error');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await setOptions(app, { ModelRequestRateLimitEnabled: 'false' });
    }
    await setOptions(app, { CheckSensitiveEnabled: 'true', CheckSensitiveOnPromptEnabled: 'true', SensitiveWords: 'forbiddenword' });
    try {
      const before = Number((await app.knex('users').where({ id: u.id }).first()).quota);
      const res = await app
        .http()
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${t.key}`)
        .send({ model: 'x-model', messages: [{ role: 'user', content: 'say ForbiddenWord now' }] });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('敏感词');
      expect(Number((await app.knex('users').where({ id: u.id }).first()).quota)).toBe(before);
    } finally {
      await setOptions(app, { CheckSensitiveEnabled: 'false' });
    }
  });
});

describe.each(DB_TARGETS.map((t) => [t.name, t] as const))('relay: upstream timeouts [%s]', (_n, target) => {
  let app: TestApp;
  let mock: MockUpstream;
  beforeAll(async () => {
    app = await buildApp(target, { config: { upstreamTimeoutMs: 400 } });
    mock = await startMockUpstream();
  });
  afterAll(async () => {
    await app?.close();
    await mock?.close();
  });

  test('a hanging channel times out and the call moves on; a lone hanging channel refunds', async () => {
    await setOptions(app, { ...PRICING, RetryTimes: '1' });
    const u = await makeUser(app, { quota: 1_000_000 });
    const t = await seedToken(app, u.id);
    await seedChannel(app, { base_url: mock.url, models: 'x-model', key: 'sk-fault-hang', priority: 5 });
    await seedChannel(app, { base_url: mock.url, models: 'x-model', priority: 0 });
    const ok = await app.http().post('/v1/chat/completions').set('authorization', `Bearer ${t.key}`).send({ model: 'x-model', messages: msg });
    expect(ok.status).toBe(200);
    expect(mock.received('/v1/chat/completions')).toHaveLength(2);

    await seedChannel(app, { base_url: mock.url, models: 'r-model', key: 'sk-fault-hang' });
    const before = Number((await app.knex('users').where({ id: u.id }).first()).quota);
    const res = await app.http().post('/v1/chat/completions').set('authorization', `Bearer ${t.key}`).send({ model: 'r-model', messages: msg });
    expect(res.status).toBe(502);
    expect(res.body.error.message).toContain('超时');
    expect(Number((await app.knex('users').where({ id: u.id }).first()).quota)).toBe(before);
  });
});
