import crypto from 'node:crypto';
import { DB_TARGETS, describeEach, makeUser, setupRoot, type TestApp } from '../helpers/app';
import { tokenCache } from '../../server/src/services/invalidate';

async function as(app: TestApp, id: number) {
  const token = crypto.randomBytes(16).toString('hex');
  await app.knex('users').where({ id }).update({ access_token: token });
  const wrap = (m: 'get' | 'post' | 'put' | 'delete') => (url: string) =>
    app.http()[m](url).set('Authorization', token).set('New-Api-User', String(id)).set('Accept-Language', 'zh');
  return { id, get: wrap('get'), post: wrap('post'), put: wrap('put'), del: wrap('delete') };
}
type Client = Awaited<ReturnType<typeof as>>;

const count = async (app: TestApp, where: Record<string, unknown> = {}) => Number((await app.knex('tokens').where(where).count({ n: '*' }).first())?.n ?? 0);

const now = () => Math.floor(Date.now() / 1000);

describeEach(DB_TARGETS, 'API tokens', (getApp) => {
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    const app = getApp();
    await setupRoot(app);
    alice = await as(app, (await makeUser(app, { group: 'default' })).id);
    bob = await as(app, (await makeUser(app, { group: 'special' })).id);
  });

  it('needs a login', async () => {
    const app = getApp();
    expect((await app.http().get('/api/token/')).status).toBe(401);
    expect((await app.http().post('/api/token/').send({ name: 'x' })).status).toBe(401);
  });

  it('creates a token with a 48-char key, lists it masked for its owner only (the full key: tokenKeys.test.ts)', async () => {
    const app = getApp();
    const exp = now() + 3600;
    const res = await alice.post('/api/token/').send({
      name: 'first',
      remain_quota: 500000,
      expired_time: exp,
      unlimited_quota: false,
      model_limits_enabled: true,
      model_limits: 'gpt-4o, o3,gpt-4o',
      allow_ips: '10.0.0.1\n192.168.0.0/16\n::1',
      group: 'vip',
    });
    expect(res.body).toMatchObject({ success: true });
    const t = res.body.data;
    expect(t).toMatchObject({
      name: 'first',
      remain_quota: 500000,
      expired_time: exp,
      unlimited_quota: false,
      model_limits_enabled: true,
      model_limits: 'gpt-4o,o3',
      allow_ips: '10.0.0.1\n192.168.0.0/16\n::1',
      group: 'vip',
      status: 1,
      used_quota: 0,
      user_id: alice.id,
    });
    expect(t.key).toMatch(/^[A-Za-z0-9]{48}$/);
    const list = await alice.get('/api/token/?p=1&size=10');
    expect(list.body.data).toMatchObject({ total: 1, page: 1, page_size: 10 });
    expect(list.body.data.items[0]).toMatchObject({ key: `${t.key.slice(0, 4)}…${t.key.slice(-4)}`, key_masked: true });
    expect((await alice.get(`/api/token/${t.id}`)).body.data).toMatchObject({ key: `${t.key.slice(0, 4)}…${t.key.slice(-4)}`, key_masked: true });
    // Bob sees nothing of it and cannot touch it.
    expect((await bob.get('/api/token/')).body.data).toMatchObject({ items: [], total: 0 });
    expect((await bob.get(`/api/token/${t.id}`)).body.success).toBe(false);
    expect((await bob.put('/api/token/').send({ id: t.id, name: 'stolen' })).body.success).toBe(false);
    expect((await bob.put('/api/token/?status_only=true').send({ id: t.id, status: 2 })).body.success).toBe(false);
    expect((await bob.del(`/api/token/${t.id}/`)).body.success).toBe(false);
    expect((await bob.get(`/api/token/search?token=${t.key}`)).body.data.items).toEqual([]);
    const row = await app.knex('tokens').where({ id: t.id }).first();
    expect(row.name).toBe('first');
    expect(Number(row.status)).toBe(1);
    expect(row.deleted_at).toBeNull();
  });

  it('refuses bad token input and writes nothing', async () => {
    const app = getApp();
    const before = await count(app);
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{}, /名称/],
      [{ name: '   ' }, /令牌名称不能为空/],
      [{ name: 'x'.repeat(31) }, /令牌名称过长/],
      [{ name: 1234 }, /名称/],
      [{ name: 'a', remain_quota: 'lots' }, /额度必须是整数/],
      [{ name: 'a', remain_quota: 1.5 }, /额度必须是整数/],
      [{ name: 'a', remain_quota: -1 }, /负数/],
      [{ name: 'a', expired_time: 'tomorrow' }, /过期时间格式错误！/],
      [{ name: 'a', expired_time: now() - 10 }, /过期时间/],
      [{ name: 'a', unlimited_quota: 'yes' }, /unlimited_quota/],
      [{ name: 'a', allow_ips: '10.0.0.300' }, /IP/],
      [{ name: 'a', allow_ips: '10.0.0.0/33' }, /IP/],
      [{ name: 'a', allow_ips: 'example.com' }, /IP/],
      [{ name: 'a', group: 'svip' }, /分组/],
      [{ name: 'a', group: 'special' }, /分组/], // Bob's group, not Alice's
      [{ name: 'a', count: 0 }, /数量/],
      [{ name: 'a', count: 101 }, /数量/],
      [{ name: 'a', count: 'many' }, /数量/],
      [{ name: 'a', model_limits: 5 }, /模型限制/],
    ];
    for (const [body, msg] of cases) {
      const res = await alice.post('/api/token/').send(body);
      expect(res.status).toBe(200);
      expect([JSON.stringify(body), res.body.success]).toEqual([JSON.stringify(body), false]);
      expect(res.body.message).toMatch(msg);
    }
    expect((await alice.post('/api/token/').send([1])).body.success).toBe(false);
    expect(await count(app)).toBe(before);
  });

  it("accepts the user's own group even when it is not listed as usable", async () => {
    const res = await bob.post('/api/token/').send({ name: 'own-group', group: 'special' });
    expect(res.body).toMatchObject({ success: true, data: { group: 'special' } });
    await bob.del(`/api/token/${res.body.data.id}/`);
  });

  it('batch-creates count tokens with suffixed names and distinct keys', async () => {
    const app = getApp();
    const before = await count(app, { user_id: alice.id });
    const res = await alice.post('/api/token/').send({ name: 'bulk', count: 5, remain_quota: 10, unlimited_quota: true });
    expect(res.body.success).toBe(true);
    const tokens = res.body.data as Array<{ id: number; name: string; key: string; unlimited_quota: boolean }>;
    expect(tokens).toHaveLength(5);
    expect(tokens[0]!.name).toBe('bulk');
    for (const t of tokens.slice(1)) expect(t.name).toMatch(/^bulk-[A-Za-z0-9]{6}$/);
    expect(new Set(tokens.map((t) => t.key)).size).toBe(5);
    expect(tokens.every((t) => t.unlimited_quota)).toBe(true);
    expect(await count(app, { user_id: alice.id })).toBe(before + 5);
    const page = await alice.get('/api/token/?p=2&size=4');
    expect(page.body.data).toMatchObject({ total: before + 5, page: 2, page_size: 4 });
    expect(page.body.data.items).toHaveLength(before + 5 - 4);
    const search = await alice.get('/api/token/search?keyword=BULK-');
    expect(search.body.data.items).toHaveLength(4);
    const byKey = await alice.get(`/api/token/search?token=sk-${tokens[2]!.key}`);
    expect(byKey.body.data.items.map((t: { id: number }) => t.id)).toEqual([tokens[2]!.id]);
  });

  it('updates own tokens, drops the relay cache entry, refuses bad updates', async () => {
    const app = getApp();
    const t = (await alice.post('/api/token/').send({ name: 'upd', remain_quota: 100 })).body.data;
    await tokenCache(app.ctx).get(t.key, async () => ({ stale: true }));
    const res = await alice
      .put('/api/token/')
      .send({ id: t.id, name: 'renamed', remain_quota: 5, unlimited_quota: true, model_limits: ['a', 'b'], allow_ips: '' });
    expect(res.body).toMatchObject({
      success: true,
      data: { name: 'renamed', remain_quota: 5, unlimited_quota: true, model_limits: 'a,b', key: `${t.key.slice(0, 4)}…${t.key.slice(-4)}`, key_masked: true },
    });
    expect(tokenCache(app.ctx).peek(t.key)).toBeUndefined();
    const before = await app.knex('tokens').where({ id: t.id }).first();
    for (const bad of [
      { id: t.id, name: '' },
      { id: t.id, remain_quota: -5 },
      { id: t.id, expired_time: 5 },
      { id: t.id, allow_ips: 'nope' },
      { id: 'x' },
      { name: 'no id' },
      { id: 999999, name: 'ghost' },
      { id: t.id, group: 'svip' },
    ]) {
      expect((await alice.put('/api/token/').send(bad)).body.success).toBe(false);
    }
    expect(await app.knex('tokens').where({ id: t.id }).first()).toEqual(before);

    const off = await alice.put('/api/token/?status_only=true').send({ id: t.id, status: 2, name: 'ignored' });
    expect(off.body.data).toMatchObject({ status: 2, name: 'renamed' });
    expect((await alice.put('/api/token/?status_only=true').send({ id: t.id, status: 3 })).body.success).toBe(false);
    expect((await alice.put('/api/token/?status_only=true').send({ id: t.id })).body.success).toBe(false);
    expect((await alice.put('/api/token/?status_only=true').send({ id: t.id, status: 1 })).body.data.status).toBe(1);
  });

  it('refuses to re-enable an expired or exhausted token until fixed', async () => {
    const app = getApp();
    const t = (await alice.post('/api/token/').send({ name: 'old', remain_quota: 10, expired_time: now() + 3600 })).body.data;
    await app
      .knex('tokens')
      .where({ id: t.id })
      .update({ status: 3, expired_time: now() - 60 });
    const refused = await alice.put('/api/token/?status_only=true').send({ id: t.id, status: 1 });
    expect(refused.body).toMatchObject({ success: false });
    expect(refused.body.message).toContain('令牌已过期');
    expect(Number((await app.knex('tokens').where({ id: t.id }).first()).status)).toBe(3);
    await alice.put('/api/token/').send({ id: t.id, expired_time: -1 });
    expect((await alice.put('/api/token/?status_only=true').send({ id: t.id, status: 1 })).body.success).toBe(true);

    await app.knex('tokens').where({ id: t.id }).update({ status: 4, remain_quota: 0 });
    const exhausted = await alice.put('/api/token/?status_only=true').send({ id: t.id, status: 1 });
    expect(exhausted.body.message).toContain('额度已用尽');
    const fixed = await alice.put('/api/token/').send({ id: t.id, remain_quota: 1000, status: 1 });
    expect(fixed.body.data).toMatchObject({ status: 1, remain_quota: 1000 });
  });

  it('soft-deletes a token: gone from lists and lookups, row kept', async () => {
    const app = getApp();
    const t = (await alice.post('/api/token/').send({ name: 'bye' })).body.data;
    await tokenCache(app.ctx).get(t.key, async () => ({ stale: true }));
    expect((await alice.del(`/api/token/${t.id}/`)).body.success).toBe(true);
    expect(tokenCache(app.ctx).peek(t.key)).toBeUndefined();
    expect((await alice.get(`/api/token/${t.id}`)).body.success).toBe(false);
    expect((await alice.get('/api/token/search?keyword=bye')).body.data.items).toEqual([]);
    expect((await alice.del(`/api/token/${t.id}/`)).body.success).toBe(false);
    expect((await alice.put('/api/token/').send({ id: t.id, name: 'zombie' })).body.success).toBe(false);
    const row = await app.knex('tokens').where({ id: t.id }).first();
    expect(row.deleted_at).not.toBeNull();
    expect(row.name).toBe('bye');
  });
});
