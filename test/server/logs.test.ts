import crypto from 'node:crypto';
import { DB_TARGETS, describeEach, makeUser, setupRoot, type TestApp } from '../helpers/app';
import { insertLogs, type NewLog } from '../../server/src/repositories/logs';

async function as(app: TestApp, id: number) {
  const token = crypto.randomBytes(16).toString('hex');
  await app.knex('users').where({ id }).update({ access_token: token });
  const wrap = (m: 'get' | 'post' | 'put' | 'delete') => (url: string) =>
    app.http()[m](url).set('Authorization', token).set('New-Api-User', String(id)).set('Accept-Language', 'zh');
  return { id, get: wrap('get'), post: wrap('post'), put: wrap('put'), del: wrap('delete') };
}
type Client = Awaited<ReturnType<typeof as>>;

const now = () => Math.floor(Date.now() / 1000);

describeEach(DB_TARGETS, 'usage logs', (getApp) => {
  let root: Client;
  let admin: Client;
  let alice: Client & { username: string };
  let bob: Client & { username: string };
  let seeded: Array<NewLog & { created_at: number }>;
  const T0 = 1_700_000_000;

  beforeAll(async () => {
    const app = getApp();
    const r = await setupRoot(app);
    root = await as(app, r.id);
    admin = await as(app, (await makeUser(app, { role: 10 })).id);
    const a = await makeUser(app, { username: 'alice' });
    const b = await makeUser(app, { username: 'bob' });
    alice = { ...(await as(app, a.id)), username: 'alice' };
    bob = { ...(await as(app, b.id)), username: 'bob' };
    await app.knex('logs').delete(); // drop sign-up gift logs: the figures below come from the seed only
    const t = now();
    const other = JSON.stringify({ model_ratio: 1, group_ratio: 1, admin_info: { use_channel: ['3', '4'] } });
    seeded = [
      // old consumption rows (fixed timestamps)
      {
        user_id: a.id,
        username: 'alice',
        type: 2,
        created_at: T0 + 10,
        model_name: 'gpt-4o',
        token_name: 'ta',
        channel_id: 3,
        channel_name: 'up3',
        group: 'default',
        quota: 100,
        prompt_tokens: 10,
        completion_tokens: 5,
        other,
      },
      {
        user_id: a.id,
        username: 'alice',
        type: 2,
        created_at: T0 + 20,
        model_name: 'o3',
        token_name: 'ta',
        channel_id: 4,
        channel_name: 'up4',
        group: 'vip',
        quota: 200,
        prompt_tokens: 20,
        completion_tokens: 10,
        other,
      },
      {
        user_id: b.id,
        username: 'bob',
        type: 2,
        created_at: T0 + 30,
        model_name: 'gpt-4o',
        token_name: 'tb',
        channel_id: 3,
        channel_name: 'up3',
        group: 'default',
        quota: 400,
        prompt_tokens: 40,
        completion_tokens: 20,
        other,
      },
      { user_id: a.id, username: 'alice', type: 1, created_at: T0 + 40, content: 'top-up', quota: 5000 },
      { user_id: b.id, username: 'bob', type: 3, created_at: T0 + 50, content: 'admin did a thing' },
      // recent rows (inside the last 60 s): count for rpm / tpm
      {
        user_id: a.id,
        username: 'alice',
        type: 2,
        created_at: t - 5,
        model_name: 'gpt-4o',
        token_name: 'ta',
        channel_id: 3,
        group: 'default',
        quota: 1000,
        prompt_tokens: 100,
        completion_tokens: 50,
        other,
      },
      {
        user_id: b.id,
        username: 'bob',
        type: 2,
        created_at: t - 3,
        model_name: 'o3',
        token_name: 'tb',
        channel_id: 4,
        group: 'vip',
        quota: 3000,
        prompt_tokens: 300,
        completion_tokens: 70,
        other,
      },
      { user_id: a.id, username: 'alice', type: 4, created_at: t - 2, content: 'system note' },
    ];
    await insertLogs(app.knex, seeded);
  });

  it('enforces roles: user 403 on admin endpoints, anonymous 401', async () => {
    const app = getApp();
    expect((await app.http().get('/api/log/self/')).status).toBe(401);
    expect((await alice.get('/api/log/')).status).toBe(403);
    expect((await alice.get('/api/log/stat')).status).toBe(403);
    expect((await alice.del('/api/log/?target_timestamp=1')).status).toBe(403);
    expect((await admin.del('/api/log/?target_timestamp=1')).status).toBe(403);
  });

  it('lists all logs newest first with admin filters', async () => {
    const ids = async (qs: string) => (await admin.get(`/api/log/?${qs}`)).body.data.items.map((l: { content: string; quota: number }) => l.quota);
    const all = await admin.get('/api/log/?p=1&page_size=100');
    expect(all.body.data).toMatchObject({ total: seeded.length, page: 1, page_size: 100 });
    const times = all.body.data.items.map((l: { created_at: number }) => l.created_at);
    expect(times).toEqual([...times].sort((x: number, y: number) => y - x));
    expect(all.body.data.items[all.body.data.items.length - 1]).toMatchObject({ channel: 3, channel_name: 'up3', is_stream: false });
    expect(JSON.parse(all.body.data.items[all.body.data.items.length - 1].other).admin_info).toEqual({ use_channel: ['3', '4'] });
    expect(await ids('type=2')).toEqual([3000, 1000, 400, 200, 100]);
    expect(await ids('type=0&username=bob')).toEqual([3000, 0, 400]);
    expect(await ids('type=2&model_name=gpt-4o')).toEqual([1000, 400, 100]);
    expect(await ids('token_name=ta')).toEqual([1000, 200, 100]);
    expect(await ids('channel=4')).toEqual([3000, 200]);
    expect(await ids('group=vip')).toEqual([3000, 200]);
    expect(await ids(`start_timestamp=${T0 + 20}&end_timestamp=${T0 + 40}`)).toEqual([5000, 400, 200]);
    const paged = await admin.get('/api/log/?p=2&page_size=3');
    expect(paged.body.data.items).toHaveLength(3);
    expect(paged.body.data.total).toBe(seeded.length);
    for (const bad of ['type=abc', 'type=9', 'start_timestamp=-1', 'channel=x', 'channel=99999999999', 'end_timestamp=1e30', 'p=0', 'page_size=1000']) {
      const res = await admin.get(`/api/log/?${bad}`);
      expect([bad, res.body.success]).toEqual([bad, false]);
    }
  });

  it('shows a user only their own logs, without channel or admin info', async () => {
    const res = await alice.get('/api/log/self/?p=1&page_size=50&username=bob&channel=4');
    const items = res.body.data.items as Array<Record<string, unknown>>;
    expect(res.body.data.total).toBe(5); // username/channel filters are ignored for self
    expect(items.every((l) => l.user_id === alice.id)).toBe(true);
    for (const l of items) {
      expect(l).not.toHaveProperty('channel');
      expect(l).not.toHaveProperty('channel_id');
      expect(l).not.toHaveProperty('channel_name');
      if (l.other) {
        const other = JSON.parse(l.other as string);
        expect(other).not.toHaveProperty('admin_info');
        expect(other.model_ratio).toBe(1);
      }
    }
    const consume = await alice.get('/api/log/self?type=2&model_name=o3');
    expect(consume.body.data.items.map((l: { quota: number }) => l.quota)).toEqual([200]);
  });

  it('computes stats from the seeded rows', async () => {
    // quota: all type-2 rows; rpm/tpm: type-2 rows of the last 60 s.
    expect((await admin.get('/api/log/stat')).body.data).toEqual({ quota: 4700, rpm: 2, tpm: 520 });
    expect((await admin.get('/api/log/stat?username=alice')).body.data).toEqual({ quota: 1300, rpm: 1, tpm: 150 });
    expect((await admin.get(`/api/log/stat?start_timestamp=${T0}&end_timestamp=${T0 + 25}`)).body.data).toEqual({ quota: 300, rpm: 2, tpm: 520 });
    expect((await admin.get('/api/log/stat?model_name=o3&channel=4')).body.data).toEqual({ quota: 3200, rpm: 1, tpm: 370 });
    expect((await bob.get('/api/log/self/stat')).body.data).toEqual({ quota: 3400, rpm: 1, tpm: 370 });
    expect((await bob.get('/api/log/self/stat?username=alice')).body.data).toEqual({ quota: 3400, rpm: 1, tpm: 370 });
    expect((await alice.get('/api/log/self/stat?group=vip')).body.data).toEqual({ quota: 200, rpm: 0, tpm: 0 });
    expect((await alice.get('/api/log/self/stat?type=x')).body.success).toBe(false);
  });

  it('the consumption index: on PostgreSQL it carries quota (usage figures sum edge hours from it), on SQLite it stays plain', async () => {
    const a = getApp();
    if (a.target.db !== 'postgres') {
      // SQLite keeps the plain index (migration 010 leaves it): same key, no INCLUDE.
      const rows = (await a.knex.raw("select sql from sqlite_master where type = 'index' and name = 'idx_logs_type_created'")) as Array<{ sql: string }>;
      expect(rows.map((r) => r.sql.replace(/[`"]/g, ''))).toEqual([expect.stringMatching(/\(type, created_at, id\)$/)]);
      return;
    }
    const { rows } = (await a.knex.raw("select indexdef from pg_indexes where indexname = 'idx_logs_type_created' and schemaname = current_schema()")) as {
      rows: Array<{ indexdef: string }>;
    };
    expect(rows.map((r) => r.indexdef)).toEqual([expect.stringMatching(/\(type, created_at, id\) INCLUDE \(quota\)$/)]);
  });

  it('lets only root delete old logs, with a positive target timestamp', async () => {
    const app = getApp();
    for (const bad of ['', '?target_timestamp=', '?target_timestamp=abc', '?target_timestamp=-5', '?target_timestamp=0', '?target_timestamp=1.5']) {
      const res = await root.del(`/api/log/${bad}`);
      expect([bad, res.body.success]).toEqual([bad, false]);
    }
    expect(Number((await app.knex('logs').count({ n: '*' }).first())?.n)).toBe(seeded.length);
    const res = await root.del(`/api/log/?target_timestamp=${T0 + 30}`);
    expect(res.body).toMatchObject({ success: true, data: 2 });
    const left = await app.knex('logs').orderBy('created_at');
    expect(left).toHaveLength(seeded.length - 2);
    expect(Number(left[0].created_at)).toBe(T0 + 30);
  });
});
