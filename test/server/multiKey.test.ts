/**
 * Multi-key channels (new-api's create shape): one channel holding many keys, used at random or in
 * turn; per-key status in channel_info; single-key actions; a disabled key is never sent; the
 * log names the key by index; an invalid key is disabled alone; a failing key's call moves on.
 */
import { ALL_TARGETS, describeEach, loginAgent, makeUser, setupRoot, type LoggedIn, type TestApp } from '../helpers/app';
import { startFaultUpstream, type FaultUpstream } from '../mock-upstream/faults';
import { flushUsage, listen, seedToken, setOptions } from '../mock-upstream/seed';
import { ROLE } from '../../server/src/repositories/users';
import { CHANNEL_TYPE } from '../../server/src/channels/kinds';
import { authenticateKey } from '../../server/src/relay/auth';
import { pickTaskChannel } from '../../server/src/tasks/core';
import { invalidateChannels } from '../../server/src/services/invalidate';

let n = 0;
const fresh = () => `mk-model-${process.pid}-${++n}`;

describeEach(ALL_TARGETS, 'multi-key channels', (getApp) => {
  let app: TestApp;
  let up: FaultUpstream;
  let gw: { url: string; close(): Promise<void> };
  let root: LoggedIn;
  let userId: number;
  let token: string;

  beforeAll(async () => {
    app = getApp();
    up = await startFaultUpstream();
    gw = await listen(app.callback);
    const r = await setupRoot(app);
    root = await loginAgent(app, r.username, r.password);
    await setOptions(app, {
      ModelRatio: '{}',
      GroupRatio: JSON.stringify({ default: 1 }),
      PreConsumedQuota: '0',
      RetryTimes: '2',
      AutomaticDisableChannelEnabled: 'true',
      AutomaticEnableChannelEnabled: 'true',
      RoutingBreakerCooldownSeconds: '60',
    });
    const u = await makeUser(app, { quota: 100_000_000 });
    userId = u.id;
    await app
      .knex('users')
      .where({ id: u.id })
      .update({ setting: JSON.stringify({ accept_unset_model_ratio_model: true }) });
    token = (await seedToken(app, u.id)).key;
  });
  afterAll(async () => {
    await gw.close();
    await up.close();
  });
  beforeEach(() => up.reset());

  const chat = async (model: string) => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await res.arrayBuffer();
    return res.status;
  };
  const create = async (model: string, keys: string[], mode: 'random' | 'polling', extra: Record<string, unknown> = {}) => {
    const res = await root.post('/api/channel').send({
      mode: 'multi_to_single',
      multi_key_mode: mode,
      channel: { name: `mk-${model}`, type: 1, key: keys.join('\n'), base_url: up.url, models: model, group: 'default', ...extra },
    });
    expect(res.body.success).toBe(true);
    return res.body.data as { id: number; channel_info: Record<string, unknown> };
  };
  const manage = (body: Record<string, unknown>) => root.post('/api/channel/multi_key/manage').send(body);

  test('create in new-api shape: one channel, channel_info says multi-key; keys used in turn (polling)', async () => {
    const model = fresh();
    const keys = ['sk-mk-a-0000000000000000', 'sk-mk-a-1111111111111111', 'sk-mk-a-2222222222222222'];
    const ch = await create(model, keys, 'polling');
    expect(ch.channel_info).toMatchObject({ is_multi_key: true, multi_key_size: 3, multi_key_mode: 'polling', multi_key_status_list: {} });
    expect(await app.knex('channels').where({ name: `mk-${model}` })).toHaveLength(1);
    for (let i = 0; i < 6; i++) expect(await chat(model)).toBe(200);
    expect(keys.map((k) => up.count(k))).toEqual([2, 2, 2]);
    // The usage log names the key by index, never the key.
    await flushUsage(app);
    const logs = await app.knex('logs').where({ user_id: userId, model_name: model }).orderBy('id');
    expect(logs).toHaveLength(6);
    const idx = logs.map((l: { other: string }) => JSON.parse(l.other).admin_info.multi_key_index);
    expect([...idx].sort()).toEqual([0, 0, 1, 1, 2, 2]);
    for (const l of logs) expect(JSON.stringify(l)).not.toContain('sk-mk-a');
  });

  test('key list is masked with state; a disabled key is never sent; enable brings it back; delete re-indexes', async () => {
    const model = fresh();
    const keys = ['sk-mk-b-0000000000000000', 'sk-mk-b-1111111111111111', 'sk-mk-b-2222222222222222'];
    const ch = await create(model, keys, 'random');
    let res = await manage({ channel_id: ch.id, action: 'get_key_status' });
    expect(res.body.success).toBe(true);
    expect(res.body.data.total).toBe(3);
    expect(res.body.data.items[1]).toMatchObject({ index: 1, status: 1, breaker: 'closed' });
    expect(JSON.stringify(res.body.data)).not.toContain('1111111111111111');
    res = await manage({ channel_id: ch.id, action: 'disable_key', key_index: 1 });
    expect(res.body.data.items[1]).toMatchObject({ status: 2, disabled_reason: '手动禁用' });
    const row = await app.knex('channels').where({ id: ch.id }).first();
    expect(JSON.parse(row.channel_info).multi_key_status_list).toEqual({ 1: 2 });
    for (let i = 0; i < 20; i++) expect(await chat(model)).toBe(200);
    expect(up.count(keys[1]!)).toBe(0);
    expect(up.count(keys[0]!) + up.count(keys[2]!)).toBe(20);
    // Random order spreads over the enabled keys (all 20 on one: odds of 2 in a million).
    expect(up.count(keys[0]!)).toBeGreaterThan(0);
    expect(up.count(keys[2]!)).toBeGreaterThan(0);
    await manage({ channel_id: ch.id, action: 'enable_key', key_index: 1 });
    up.reset();
    for (let i = 0; i < 30; i++) await chat(model);
    expect(up.count(keys[1]!)).toBeGreaterThan(0);
    // Delete key 0: the others move up one index and keep their state.
    await manage({ channel_id: ch.id, action: 'disable_key', key_index: 2 });
    res = await manage({ channel_id: ch.id, action: 'delete_key', key_index: 0 });
    expect(res.body.data.total).toBe(2);
    expect(res.body.data.items.map((x: { status: number }) => x.status)).toEqual([1, 2]);
    const after = await app.knex('channels').where({ id: ch.id }).first();
    expect(after.key).toBe(`${keys[1]}\n${keys[2]}`);
    // The last key cannot be deleted; indexes are checked.
    await manage({ channel_id: ch.id, action: 'delete_key', key_index: 0 });
    expect((await manage({ channel_id: ch.id, action: 'delete_key', key_index: 0 })).body.success).toBe(false);
    expect((await manage({ channel_id: ch.id, action: 'disable_key', key_index: 9 })).body).toMatchObject({ success: false, message: 'key_index 超出范围' });
    expect((await manage({ channel_id: ch.id, action: 'nope' })).body.success).toBe(false);
  });

  test('an invalid key is auto-disabled alone; the call moves to another key; all keys gone disables the channel', async () => {
    const model = fresh();
    const keys = ['sk-mk-c-0000000000000000', 'sk-mk-c-1111111111111111'];
    up.set(keys[0]!, { mode: 'auth' });
    const ch = await create(model, keys, 'polling');
    expect(await chat(model)).toBe(200); // key 0: 401 → retried with key 1 of the same channel
    expect(up.count(keys[0]!)).toBe(1);
    let row = await app.knex('channels').where({ id: ch.id }).first();
    for (let i = 0; i < 50 && !JSON.parse(row.channel_info).multi_key_status_list['0']; i++) {
      await new Promise((r) => setTimeout(r, 20));
      row = await app.knex('channels').where({ id: ch.id }).first();
    }
    expect(JSON.parse(row.channel_info).multi_key_status_list).toEqual({ 0: 3 });
    expect(Number(row.status)).toBe(1);
    for (let i = 0; i < 5; i++) expect(await chat(model)).toBe(200);
    expect(up.count(keys[0]!)).toBe(1);
    // The other key dies too: no key left, the channel is auto-disabled.
    up.set(keys[1]!, { mode: 'auth' });
    await chat(model);
    for (let i = 0; i < 50 && Number(row.status) === 1; i++) {
      await new Promise((r) => setTimeout(r, 20));
      row = await app.knex('channels').where({ id: ch.id }).first();
    }
    expect(Number(row.status)).toBe(3);
    // A passing test re-enables the keys that pass on their own (auto-enable) and so the channel.
    up.set(keys[0]!, { mode: 'ok' });
    up.set(keys[1]!, { mode: 'ok' });
    const t = await root.get(`/api/channel/test/${ch.id}`);
    expect(t.body.success).toBe(true);
    row = await app.knex('channels').where({ id: ch.id }).first();
    expect(JSON.parse(row.channel_info).multi_key_status_list).toEqual({});
    expect(Number(row.status)).toBe(1);
  });

  test('a key rate-limited with Retry-After rests alone; the others carry the traffic; /metrics counts per key', async () => {
    const model = fresh();
    const keys = ['sk-mk-f-0000000000000000', 'sk-mk-f-1111111111111111', 'sk-mk-f-2222222222222222'];
    up.set(keys[0]!, { mode: 'rate', retryAfter: 30 });
    const ch = await create(model, keys, 'polling');
    for (let i = 0; i < 9; i++) expect(await chat(model)).toBe(200);
    expect(up.count(keys[0]!)).toBe(1);
    expect(up.count(keys[1]!) + up.count(keys[2]!)).toBe(9);
    const st = await manage({ channel_id: ch.id, action: 'get_key_status' });
    expect(st.body.data.items[0]).toMatchObject({ status: 1, breaker: 'open' });
    expect(st.body.data.items[0].open_until - Date.now() / 1000).toBeGreaterThan(25);
    expect(st.body.data.items[1].breaker).toBe('closed');
    // Each key's own last failure and last use.
    expect(st.body.data.items[0].last_failure).toContain('429');
    expect(st.body.data.items[1].last_failure).toBe('');
    for (const i of [0, 1, 2]) expect(st.body.data.items[i].last_used).toBeGreaterThan(Date.now() / 1000 - 60);
    // The channel's breaker stays closed: one key's rate limit is not the upstream's outage.
    const health = (await root.get('/api/channel/health')).body.data;
    expect(health.channels[ch.id]).toMatchObject({ breaker: 'closed', keys: 3, keys_open: 1 });
    expect(health.open).toContainEqual(expect.objectContaining({ id: ch.id, key_index: 0, breaker: 'open' }));
    const metrics = await app.http().get('/metrics');
    expect(metrics.text).toContain(`gateway_upstream_failures_total{channel="${ch.id}",key_index="0",kind="rate_limit",app="gateway"} 1`);
    expect(metrics.text).toContain(`gateway_breaker_state{channel="${ch.id}",key_index="0",app="gateway"} 1`);
  });

  test("a 5xx is the channel's failure: the retry goes to another channel, not to another key of the same one", async () => {
    const model = fresh();
    const keys = ['sk-mk-h-0000000000000000', 'sk-mk-h-1111111111111111'];
    for (const k of keys) up.set(k, { mode: 'fail', status: 502 });
    await create(model, keys, 'polling', { priority: 10 });
    await root.post('/api/channel').send({ name: 'fallback-h', type: 1, key: 'sk-mk-h-fallback', base_url: up.url, models: model, priority: 0 });
    // RetryTimes 2: three attempts were allowed, yet each call touched the failing channel once.
    for (let i = 1; i <= 4; i++) {
      expect(await chat(model)).toBe(200);
      expect(up.count(keys[0]!) + up.count(keys[1]!)).toBe(i);
      expect(up.count('sk-mk-h-fallback')).toBe(i);
    }
  });

  test('a task submission never takes a disabled key', async () => {
    const model = fresh();
    const keys = ['sk-mk-i-0000000000000000', 'sk-mk-i-1111111111111111', 'sk-mk-i-2222222222222222'];
    const ch = await create(model, keys, 'random');
    await manage({ channel_id: ch.id, action: 'disable_key', key_index: 1 });
    const principal = await authenticateKey(app.ctx, token.replace(/^sk-/, ''), '127.0.0.1');
    const seen = new Set<number>();
    for (let i = 0; i < 40; i++) {
      const picked = await pickTaskChannel(app.ctx, principal, model, () => true);
      expect(picked.channel.info.id).toBe(ch.id);
      expect(picked.key).toBe(keys[picked.keyIndex]);
      seen.add(picked.keyIndex);
    }
    expect([...seen].sort()).toEqual([0, 2]);
  });

  test('a channel test never sends a key an admin disabled; with every key disabled it tests an auto-disabled one', async () => {
    const model = fresh();
    const keys = ['sk-mk-j-0000000000000000', 'sk-mk-j-1111111111111111'];
    const ch = await create(model, keys, 'random');
    await manage({ channel_id: ch.id, action: 'disable_all_keys' });
    let t = await root.get(`/api/channel/test/${ch.id}`);
    expect(t.body).toMatchObject({ success: false, message: '所有密钥均已禁用' });
    expect(up.requests).toHaveLength(0);
    // Key 0 disabled by an admin, key 1 automatically: the test goes with key 1 (once) and re-enables it.
    const info = JSON.parse((await app.knex('channels').where({ id: ch.id }).first()).channel_info);
    info.multi_key_status_list = { 0: 2, 1: 3 };
    await app
      .knex('channels')
      .where({ id: ch.id })
      .update({ channel_info: JSON.stringify(info) });
    await invalidateChannels(app.ctx);
    t = await root.get(`/api/channel/test/${ch.id}`);
    expect(t.body.success).toBe(true);
    expect(up.count(keys[0]!)).toBe(0);
    expect(up.count(keys[1]!)).toBe(1);
    const row = await app.knex('channels').where({ id: ch.id }).first();
    expect(JSON.parse(row.channel_info).multi_key_status_list).toEqual({ 0: 2 });
  });

  test('quota exhausted auto-disables a single-key channel; a 5xx only rests it', async () => {
    const model = fresh();
    const dead = await root.post('/api/channel').send({ name: 'dead', type: 1, key: 'sk-mk-g-dead', base_url: up.url, models: model, priority: 5 });
    const down = await root.post('/api/channel').send({ name: 'down', type: 1, key: 'sk-mk-g-down', base_url: up.url, models: model, priority: 5 });
    await root.post('/api/channel').send({ name: 'fine', type: 1, key: 'sk-mk-g-fine', base_url: up.url, models: model, priority: 0 });
    up.set('sk-mk-g-dead', { mode: 'quota' });
    up.set('sk-mk-g-down', { mode: 'fail', status: 503 });
    for (let i = 0; i < 8; i++) expect(await chat(model)).toBe(200);
    const status = async (id: number) => Number((await app.knex('channels').where({ id }).first()).status);
    for (let i = 0; i < 50 && (await status(dead.body.data.id)) !== 3; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await status(dead.body.data.id)).toBe(3);
    expect(await status(down.body.data.id)).toBe(1);
    const disabled = (await root.get('/api/channel/health')).body.data.disabled;
    expect(disabled).toContainEqual(expect.objectContaining({ id: dead.body.data.id, status: 3, reason: expect.stringContaining('429') }));
  });

  test('Vertex keys as a JSON list: one channel, one key per service account', async () => {
    const model = fresh();
    const sa = (p: string) => ({ type: 'service_account', project_id: p, client_email: `x@${p}.iam.gserviceaccount.com`, private_key: 'k' });
    const res = await root.post('/api/channel').send({
      mode: 'multi_to_single',
      multi_key_mode: 'random',
      channel: { name: 'vx', type: CHANNEL_TYPE.VertexAI, key: JSON.stringify([sa('p1'), sa('p2')], null, 2), models: model, other: 'us-central1' },
    });
    expect(res.body.success).toBe(true);
    expect(res.body.data.channel_info).toMatchObject({ is_multi_key: true, multi_key_size: 2 });
    const st = await manage({ channel_id: res.body.data.id, action: 'get_key_status' });
    expect(st.body.data.items.map((x: { key: string }) => x.key)).toEqual(['{…}', '{…}']);
  });

  test('an edit of the key list keeps each key its state; the mode can change', async () => {
    const model = fresh();
    const keys = ['sk-mk-d-0000000000000000', 'sk-mk-d-1111111111111111'];
    const ch = await create(model, keys, 'random');
    await manage({ channel_id: ch.id, action: 'disable_key', key_index: 1 });
    const res = await root.put('/api/channel').send({ id: ch.id, key: `sk-mk-d-new0000000000000\n${keys[1]}\n${keys[0]}`, multi_key_mode: 'polling' });
    expect(res.body.success).toBe(true);
    expect(res.body.data.channel_info).toMatchObject({ multi_key_size: 3, multi_key_mode: 'polling', multi_key_status_list: { 1: 2 } });
  });

  test('only admins manage keys', async () => {
    const model = fresh();
    const ch = await create(model, ['sk-mk-e-0000000000000000', 'sk-mk-e-1111111111111111'], 'random');
    const plain = await makeUser(app);
    const p = await loginAgent(app, plain.username, plain.password);
    expect((await p.post('/api/channel/multi_key/manage').send({ channel_id: ch.id, action: 'disable_key', key_index: 0 })).status).toBe(403);
    expect((await app.http().post('/api/channel/multi_key/manage').send({ channel_id: ch.id, action: 'get_key_status' })).status).toBe(401);
    const row = await app.knex('channels').where({ id: ch.id }).first();
    expect(row.channel_info).not.toContain('status_list":{"0"');
    const admin = await makeUser(app, { role: ROLE.admin });
    const a = await loginAgent(app, admin.username, admin.password);
    const res = await a.post('/api/channel/multi_key/manage').send({ channel_id: ch.id, action: 'disable_key', key_index: 0 });
    expect(res.body.success).toBe(true);
    expect(res.body.data.items[0].status).toBe(2);
    // A single-key channel has no key list.
    const single = await root.post('/api/channel').send({ name: 'single', type: 1, key: 'sk-single', base_url: up.url, models: model });
    expect((await manage({ channel_id: single.body.data.id, action: 'get_key_status' })).body).toMatchObject({
      success: false,
      message: '该渠道不是多密钥渠道',
    });
  });
});
