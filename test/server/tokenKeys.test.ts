/**
 * Issue 40 item 10: `GET /api/token/` used to list every full API key, so a copied session cookie
 * read every spendable key at once. Lists, searches, reads and update answers now mask the key; the
 * full key is one explicit call per key (POST /api/token/:id/key): New-Api-User needed, counted per
 * user in the shared KV, written to the user's logs.
 */
import crypto from 'node:crypto';
import { ALL_TARGETS, describeEach, loginAgent, makeUser, setupRoot, type TestApp } from '../helpers/app';
import { TOKEN_KEY_READS } from '../../server/src/services/tokens';
import { maskTokenKey } from '../../server/src/repositories/tokens';

async function as(app: TestApp, id: number) {
  const token = crypto.randomBytes(16).toString('hex');
  await app.knex('users').where({ id }).update({ access_token: token });
  const wrap = (m: 'get' | 'post' | 'put' | 'delete') => (url: string) =>
    app.http()[m](url).set('Authorization', token).set('New-Api-User', String(id)).set('Accept-Language', 'zh');
  return { id, get: wrap('get'), post: wrap('post'), put: wrap('put'), del: wrap('delete') };
}
type Client = Awaited<ReturnType<typeof as>>;

describe('token key masking', () => {
  it('keeps a short prefix and suffix, never enough to use', () => {
    expect(maskTokenKey('abcdEFGHijklMNOPqrstUVWXyz0123456789ABCDEFGHwxyz')).toBe('abcd…wxyz');
    expect(maskTokenKey('0123456789ab')).toBe('…ab');
    expect(maskTokenKey('short')).toBe('…');
    expect(maskTokenKey('')).toBe('');
  });
});

describeEach(ALL_TARGETS, 'token keys: masked in answers, read one at a time (issue 40 item 10)', (getApp) => {
  let alice: Client;
  let bob: Client;
  let aliceName: string;
  let alicePassword: string;

  beforeAll(async () => {
    const app = getApp();
    await setupRoot(app);
    const a = await makeUser(app);
    aliceName = a.username;
    alicePassword = a.password;
    alice = await as(app, a.id);
    bob = await as(app, (await makeUser(app)).id);
  });

  it('lists, searches, reads and update answers carry the masked key only; the create answer carries the new key', async () => {
    const created = await alice.post('/api/token/').send({ name: 'masked', unlimited_quota: true });
    expect(created.body.success).toBe(true);
    const { id, key } = created.body.data as { id: number; key: string };
    expect(key).toMatch(/^[A-Za-z0-9]{48}$/);
    expect(created.body.data.key_masked).toBe(false);
    const masked = `${key.slice(0, 4)}…${key.slice(-4)}`;
    const answers: Array<[string, Awaited<ReturnType<Client['get']>>]> = [
      ['list', await alice.get('/api/token/?p=1&size=100')],
      ['search by name', await alice.get('/api/token/search?keyword=mask')],
      ['search by key', await alice.get(`/api/token/search?token=sk-${key}`)],
      ['read', await alice.get(`/api/token/${id}`)],
      ['update', await alice.put('/api/token/').send({ id, name: 'masked2' })],
      ['status', await alice.put('/api/token/?status_only=true').send({ id, status: 2 })],
    ];
    for (const [what, res] of answers) {
      expect([what, res.body.success]).toEqual([what, true]);
      expect(res.text).not.toContain(key.slice(4, -4));
      const items = Array.isArray(res.body.data.items) ? res.body.data.items : [res.body.data];
      expect(items.find((t: { id: number }) => t.id === id)).toMatchObject({ key: masked, key_masked: true });
    }
  });

  it('searching by key needs the whole key: a part of it finds nothing (no way to read a key out piece by piece)', async () => {
    const { id, key } = (await alice.post('/api/token/').send({ name: 'search-me', unlimited_quota: true })).body.data as { id: number; key: string };
    const found = async (q: string) => (await alice.get(`/api/token/search?token=${encodeURIComponent(q)}`)).body.data.items.map((t: { id: number }) => t.id);
    expect(await found(key)).toEqual([id]);
    expect(await found(`sk-${key}`)).toEqual([id]);
    for (const part of [key.slice(0, 1), key.slice(0, 10), key.slice(0, 47), key.slice(1), key.slice(5, 20)]) expect(await found(part)).toEqual([]);
    // Bob cannot find Alice's key even with the whole of it.
    expect((await bob.get(`/api/token/search?token=${key}`)).body.data.items).toEqual([]);
  });

  it('POST /api/token/:id/key answers the full key to its owner, not cached, and writes an audit row without the key', async () => {
    const app = getApp();
    const { id, key } = (await alice.post('/api/token/').send({ name: 'reveal', unlimited_quota: true })).body.data as { id: number; key: string };
    const before = Number((await app.knex('logs').where({ user_id: alice.id, type: 4 }).count({ n: '*' }).first())?.n ?? 0);
    const res = await alice.post(`/api/token/${id}/key`);
    expect(res.body).toEqual({ success: true, message: '', data: { key } });
    expect(res.headers['cache-control']).toBe('no-store');
    const rows = await app.knex('logs').where({ user_id: alice.id, type: 4 }).orderBy('id', 'desc');
    expect(rows).toHaveLength(before + 1);
    expect(rows[0]).toMatchObject({ token_id: id, token_name: 'reveal', content: `读取了令牌 reveal（#${id}）的完整密钥` });
    expect(rows[0].ip).not.toBe('');
    expect(JSON.stringify(rows[0])).not.toContain(key.slice(4, -4));
    // The owner sees the row in their own logs.
    const own = await alice.get('/api/log/self?p=1&page_size=10&type=4');
    expect(JSON.stringify(own.body.data)).toContain(`读取了令牌 reveal（#${id}）的完整密钥`);
  });

  it("refuses another user's, a deleted and a missing token alike, and a call without New-Api-User; nothing is logged", async () => {
    const app = getApp();
    const { id } = (await alice.post('/api/token/').send({ name: 'private', unlimited_quota: true })).body.data as { id: number };
    const logs = async () => Number((await app.knex('logs').where({ type: 4 }).count({ n: '*' }).first())?.n ?? 0);
    const n = await logs();
    expect((await bob.post(`/api/token/${id}/key`)).body).toMatchObject({ success: false, message: '令牌不存在' });
    expect((await alice.post('/api/token/999999/key')).body).toMatchObject({ success: false, message: '令牌不存在' });
    const gone = (await alice.post('/api/token/').send({ name: 'gone', unlimited_quota: true })).body.data as { id: number };
    await alice.del(`/api/token/${gone.id}/`);
    expect((await alice.post(`/api/token/${gone.id}/key`)).body).toMatchObject({ success: false, message: '令牌不存在' });
    // A cookie alone (a request another site makes the browser send) is not enough.
    const session = await loginAgent(app, aliceName, alicePassword);
    const cookieOnly = await session.agent.post(`/api/token/${id}/key`);
    expect(cookieOnly.status).toBe(401);
    expect(cookieOnly.text).not.toMatch(/"key"/);
    expect((await session.post(`/api/token/${id}/key`)).body.success).toBe(true);
    expect(await logs()).toBe(n + 1);
  });

  it('counts reads per user: past the limit 429 with no key and no log row, other users unaffected', async () => {
    const app = getApp();
    const carol = await as(app, (await makeUser(app)).id);
    const { id, key } = (await carol.post('/api/token/').send({ name: 'many', unlimited_quota: true })).body.data as { id: number; key: string };
    for (let i = 0; i < TOKEN_KEY_READS.limit; i++) expect((await carol.post(`/api/token/${id}/key`)).body.data.key).toBe(key);
    const logged = Number((await app.knex('logs').where({ user_id: carol.id }).count({ n: '*' }).first())?.n ?? 0);
    expect(logged).toBe(TOKEN_KEY_READS.limit);
    const refused = await carol.post(`/api/token/${id}/key`);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ success: false, message: '请求次数过多，请稍后再试' });
    expect(refused.text).not.toContain(key);
    expect(Number((await app.knex('logs').where({ user_id: carol.id }).count({ n: '*' }).first())?.n ?? 0)).toBe(logged);
    // Another user's reads are their own count.
    const mine = (await bob.post('/api/token/').send({ name: 'bob', unlimited_quota: true })).body.data as { id: number; key: string };
    expect((await bob.post(`/api/token/${mine.id}/key`)).body.data.key).toBe(mine.key);
  });
});
