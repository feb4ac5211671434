import crypto from 'node:crypto';
import { DB_TARGETS, describeEach, makeUser, setupRoot, type TestApp } from '../helpers/app';

async function as(app: TestApp, id: number) {
  const token = crypto.randomBytes(16).toString('hex');
  await app.knex('users').where({ id }).update({ access_token: token });
  const wrap = (m: 'get' | 'post' | 'put' | 'delete') => (url: string) =>
    app.http()[m](url).set('Authorization', token).set('New-Api-User', String(id)).set('Accept-Language', 'zh');
  return { id, get: wrap('get'), post: wrap('post'), put: wrap('put'), del: wrap('delete') };
}
type Client = Awaited<ReturnType<typeof as>>;

const count = async (app: TestApp, table: string, where: Record<string, unknown> = {}) =>
  Number((await app.knex(table).where(where).count({ n: '*' }).first())?.n ?? 0);
const quotaOf = async (app: TestApp, id: number) => Number((await app.knex('users').where({ id }).first()).quota);

describeEach(DB_TARGETS, 'redemption codes', (getApp) => {
  let admin: Client;
  let user: Client;
  let other: Client;

  beforeAll(async () => {
    const app = getApp();
    await setupRoot(app);
    admin = await as(app, (await makeUser(app, { role: 10 })).id);
    user = await as(app, (await makeUser(app, { quota: 0 })).id);
    other = await as(app, (await makeUser(app, { quota: 0 })).id);
  });

  it('is admin-only (user 403, anonymous 401) except redeeming', async () => {
    const app = getApp();
    expect((await app.http().get('/api/redemption/')).status).toBe(401);
    for (const [m, url] of [
      ['get', '/api/redemption/'],
      ['get', '/api/redemption/search'],
      ['get', '/api/redemption/1'],
      ['post', '/api/redemption/'],
      ['put', '/api/redemption/'],
      ['delete', '/api/redemption/1/'],
    ] as const) {
      expect([url, (await user[m === 'delete' ? 'del' : m](url).send({ quota: 1, count: 1, name: 'x' })).status]).toEqual([url, 403]);
    }
    expect((await app.http().post('/api/user/topup').send({ key: 'x' })).status).toBe(401);
    expect(await count(app, 'redemptions')).toBe(0);
  });

  it('creates codes (32-char keys), with the name defaulting to the formatted quota', async () => {
    const app = getApp();
    const res = await admin.post('/api/redemption/').send({ name: 'promo', quota: 100000, count: 3 });
    expect(res.body.success).toBe(true);
    expect(res.body.data).toHaveLength(3);
    for (const k of res.body.data) expect(k).toMatch(/^[A-Za-z0-9]{32}$/);
    const rows = await app.knex('redemptions').whereIn('key', res.body.data);
    expect(rows.map((r) => [r.name, Number(r.quota), Number(r.status), Number(r.used_user_id)])).toEqual(Array(3).fill(['promo', 100000, 1, 0]));
    const unnamed = await admin.post('/api/redemption/').send({ quota: 250000 });
    expect(unnamed.body.data).toHaveLength(1);
    const row = await app.knex('redemptions').where({ key: unnamed.body.data[0] }).first();
    expect(row.name).toContain('0.5');
    expect([...row.name].length).toBeLessThanOrEqual(20);
  });

  it('refuses bad create input and writes nothing', async () => {
    const app = getApp();
    const before = await count(app, 'redemptions');
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: 'x'.repeat(21), quota: 1 }, /1-20/],
      [{ name: 'ok' }, /额度|quota/],
      [{ name: 'ok', quota: 0 }, /额度必须大于 0/],
      [{ name: 'ok', quota: -5 }, /额度必须大于 0/],
      [{ name: 'ok', quota: 1.5 }, /额度必须是整数/],
      [{ name: 'ok', quota: 'many' }, /额度必须是整数/],
      [{ name: 'ok', quota: 1, count: 0 }, /兑换码个数必须大于0/],
      [{ name: 'ok', quota: 1, count: 101 }, /不能大于 100/],
      [{ name: 'ok', quota: 1, count: 'x' }, /个数/],
      [{ name: 42, quota: 1 }, /名称/],
    ];
    for (const [body, msg] of cases) {
      const res = await admin.post('/api/redemption/').send(body);
      expect([JSON.stringify(body), res.body.success]).toEqual([JSON.stringify(body), false]);
      expect(res.body.message).toMatch(msg);
    }
    expect(await count(app, 'redemptions')).toBe(before);
  });

  it('lists, searches and reads codes', async () => {
    const app = getApp();
    const total = await count(app, 'redemptions');
    const list = await admin.get('/api/redemption/?p=1&page_size=2');
    expect(list.body.data).toMatchObject({ total, page: 1, page_size: 2 });
    expect(list.body.data.items).toHaveLength(2);
    expect(list.body.data.items[0].id).toBeGreaterThan(list.body.data.items[1].id);
    const search = await admin.get('/api/redemption/search?keyword=promo&p=1&page_size=10');
    expect(search.body.data.total).toBe(3);
    const one = search.body.data.items[0];
    const got = await admin.get(`/api/redemption/${one.id}`);
    expect(got.body.data).toMatchObject({ id: one.id, name: 'promo', key: one.key, status: 1, quota: 100000, used_user_id: 0 });
    expect((await admin.get('/api/redemption/search?keyword=' + one.id)).body.data.items.map((r: { id: number }) => r.id)).toContain(one.id);
    expect((await admin.get('/api/redemption/999999')).body.success).toBe(false);
  });

  it('redeems a code exactly once, crediting quota and writing a top-up log', async () => {
    const app = getApp();
    const [key] = (await admin.post('/api/redemption/').send({ name: 'once', quota: 7777 })).body.data;
    expect((await user.post('/api/user/topup').send({})).body.message).toBe('请输入兑换码！');
    expect((await user.post('/api/user/topup').send({ key: 'no-such-code' })).body.message).toBe('无效的兑换码');
    const ok = await user.post('/api/user/topup').send({ key });
    expect(ok.body).toMatchObject({ success: true, data: 7777 });
    expect(await quotaOf(app, user.id)).toBe(7777);
    const row = await app.knex('redemptions').where({ key }).first();
    expect([Number(row.status), Number(row.used_user_id), Number(row.redeemed_time) > 0]).toEqual([3, user.id, true]);
    const logs = await app.knex('logs').where({ user_id: user.id, type: 1 });
    expect(logs).toHaveLength(1);
    expect(Number(logs[0].quota)).toBe(7777);
    const again = await other.post('/api/user/topup').send({ key });
    expect(again.body).toMatchObject({ success: false, message: '该兑换码已被使用' });
    expect(await quotaOf(app, other.id)).toBe(0);
  });

  it('lets exactly one of 20 concurrent redeems win', async () => {
    const app = getApp();
    const [key] = (await admin.post('/api/redemption/').send({ name: 'race', quota: 1000 })).body.data;
    const racers = [user, other];
    const before = { [user.id]: await quotaOf(app, user.id), [other.id]: await quotaOf(app, other.id) };
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => racers[i % 2]!.post('/api/user/topup').send({ key })));
    const wins = results.filter((r) => r.body.success);
    expect(wins).toHaveLength(1);
    for (const r of results) expect(r.status).toBe(200);
    const gained = (await quotaOf(app, user.id)) - before[user.id]! + (await quotaOf(app, other.id)) - before[other.id]!;
    expect(gained).toBe(1000);
    const redemptionLogs = await app
      .knex('logs')
      .where({ type: 1 })
      .where('content', 'like', `%ID ${(await app.knex('redemptions').where({ key }).first()).id}`);
    expect(redemptionLogs).toHaveLength(1);
  });

  it('edits only unused codes; a used code cannot be re-enabled; disabled codes cannot be redeemed', async () => {
    const app = getApp();
    const [k1, k2] = (await admin.post('/api/redemption/').send({ name: 'edit', quota: 10, count: 2 })).body.data;
    const r1 = await app.knex('redemptions').where({ key: k1 }).first();
    const r2 = await app.knex('redemptions').where({ key: k2 }).first();
    const edited = await admin.put('/api/redemption/').send({ id: r1.id, name: 'edited', quota: 20 });
    expect(edited.body).toMatchObject({ success: true, data: { name: 'edited', quota: 20 } });
    for (const bad of [{ id: r1.id, quota: 0 }, { id: r1.id, name: 'x'.repeat(21) }, { id: r1.id, name: '' }, { id: 'x' }, { id: 999999, name: 'n' }]) {
      expect((await admin.put('/api/redemption/').send(bad)).body.success).toBe(false);
    }
    // Disable → cannot redeem, cannot edit; enable again → redeemable.
    expect((await admin.put('/api/redemption/?status_only=true').send({ id: r1.id, status: 2 })).body.data.status).toBe(2);
    expect((await user.post('/api/user/topup').send({ key: k1 })).body.success).toBe(false);
    expect((await admin.put('/api/redemption/').send({ id: r1.id, name: 'nope' })).body.success).toBe(false);
    expect((await admin.put('/api/redemption/?status_only=true').send({ id: r1.id, status: 3 })).body.success).toBe(false);
    expect((await admin.put('/api/redemption/?status_only=true').send({ id: r1.id, status: 1 })).body.data.status).toBe(1);
    expect((await user.post('/api/user/topup').send({ key: k1 })).body).toMatchObject({ success: true, data: 20 });
    // Used: no edit, no status change.
    expect((await admin.put('/api/redemption/').send({ id: r1.id, quota: 99999 })).body.success).toBe(false);
    expect((await admin.put('/api/redemption/?status_only=true').send({ id: r1.id, status: 1 })).body.success).toBe(false);
    expect((await admin.put('/api/redemption/?status_only=true').send({ id: r1.id, status: 2 })).body.success).toBe(false);
    const used = await app.knex('redemptions').where({ id: r1.id }).first();
    expect([Number(used.status), Number(used.quota), used.name]).toEqual([3, 20, 'edited']);
    // Delete (soft): gone from lists, not redeemable.
    expect((await admin.del(`/api/redemption/${r2.id}/`)).body.success).toBe(true);
    expect((await admin.get(`/api/redemption/${r2.id}`)).body.success).toBe(false);
    expect((await admin.del(`/api/redemption/${r2.id}/`)).body.success).toBe(false);
    expect((await user.post('/api/user/topup').send({ key: k2 })).body.message).toBe('无效的兑换码');
    expect((await app.knex('redemptions').where({ id: r2.id }).first()).deleted_at).not.toBeNull();
  });
});
