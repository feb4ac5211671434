import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DB_TARGETS, describeEach, makeUser, setupRoot, type TestApp } from '../helpers/app';
import { setResolver } from '../../server/src/lib/guardedFetch';
import { maskKey } from '../../server/src/services/channels';

async function as(app: TestApp, id: number) {
  const token = crypto.randomBytes(16).toString('hex');
  await app.knex('users').where({ id }).update({ access_token: token });
  const wrap = (m: 'get' | 'post' | 'put' | 'delete') => (url: string) =>
    app.http()[m](url).set('Authorization', token).set('New-Api-User', String(id)).set('Accept-Language', 'zh');
  return { get: wrap('get'), post: wrap('post'), put: wrap('put'), del: wrap('delete') };
}
type Client = Awaited<ReturnType<typeof as>>;

/** An OpenAI-like upstream on 127.0.0.1 that counts every request it gets. */
async function upstream() {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.setHeader('content-type', 'application/json');
    if (req.url?.endsWith('/v1/models')) res.end(JSON.stringify({ data: [{ id: 'local-a' }, { id: 'local-b' }] }));
    else if (req.url?.includes('/dashboard/billing/credit_grants')) res.end(JSON.stringify({ total_available: 12.5 }));
    else if (req.url?.includes('/dashboard/billing/')) res.writeHead(404).end('{}');
    else
      res.end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const KEY = 'sk-abcdefghijklmnopqrstuvwxyz0123456789';

describe('channel key masking', () => {
  it('shows a recognisable fragment, never enough to use', () => {
    expect(maskKey(KEY)).toBe('sk-a…6789');
    expect(maskKey('short-key-1')).toBe('…-1');
    expect(maskKey('abc')).toBe('…');
    expect(maskKey(`${KEY}\nsk-zyxwvutsrqponmlkjihgfedcba9876`)).toBe('sk-a…6789\nsk-z…9876');
    expect(maskKey('{"type":"service_account","private_key":"-----BEGIN"}')).toBe('{…}');
    expect(maskKey('')).toBe('');
  });
});

describeEach(DB_TARGETS, 'channel keys and destinations', (getApp) => {
  let root: Client;
  let admin: Client;
  const base = { type: 1, models: 'gpt-4o', group: 'default' };
  const stored = async (id: number) => getApp().knex('channels').where({ id }).first();
  const count = async () => Number((await getApp().knex('channels').count({ n: '*' }).first())?.n ?? 0);

  beforeAll(async () => {
    const app = getApp();
    const r = await setupRoot(app);
    root = await as(app, r.id);
    admin = await as(app, (await makeUser(app, { role: 10 })).id);
  });
  afterEach(async () => {
    setResolver(getApp().ctx, undefined);
    await getApp().ctx.options.set('fetch_setting.allow_link_local_enabled', 'false');
  });

  describe('upstream keys', () => {
    let id: number;
    beforeAll(async () => {
      const res = await root.post('/api/channel/').send({ ...base, name: 'keyed', key: KEY, base_url: 'https://api.example.com' });
      // Answers mask the key for root too; the full key needs a re-verification (twoFactor.test.ts).
      expect(res.body.data).toMatchObject({ key: 'sk-a…6789', key_masked: true });
      id = res.body.data.id;
    });

    it('every channel answer gives an admin the masked key only; root reads the full key after a re-verification', async () => {
      const one = await admin.get(`/api/channel/${id}`);
      expect(one.body.data).toMatchObject({ key: 'sk-a…6789', key_masked: true });
      expect((await root.get(`/api/channel/${id}`)).body.data.key).toBe('sk-a…6789');
      expect((await root.post(`/api/channel/${id}/key`)).body.data).toMatchObject({ verification_required: true });
      expect((await root.post('/api/verify').send({ method: 'password', password: 'rootpass123' })).body.success).toBe(true);
      expect((await root.post(`/api/channel/${id}/key`)).body.data.key).toBe(KEY);
      const answers = [
        (await admin.get('/api/channel/?p=1&page_size=100')).text,
        (await admin.get('/api/channel/search?keyword=keyed')).text,
        (await admin.get('/api/channel/?tag_mode=true')).text,
        (await admin.put('/api/channel/').send({ id, priority: 2 })).text,
        (await admin.post('/api/channel/').send({ ...base, name: 'new-by-admin', key: `${KEY}-admin`, base_url: 'https://api.example.com' })).text,
        (await admin.post(`/api/channel/copy/${id}`)).text,
      ];
      for (const text of answers) expect(text).not.toContain('abcdefghijklmnop');
      // Nor does searching by the key find it for an admin.
      expect((await admin.get(`/api/channel/search?keyword=${KEY}`)).body.data.items).toEqual([]);
    });

    it('an admin update with the masked key or without a key keeps it; a new key replaces it', async () => {
      expect((await admin.put('/api/channel/').send({ id, name: 'keyed', key: 'sk-a…6789' })).body.success).toBe(true);
      expect((await stored(id)).key).toBe(KEY);
      expect((await admin.put('/api/channel/').send({ id, name: 'keyed' })).body.success).toBe(true);
      expect((await admin.put('/api/channel/').send({ id, key: '' })).body.success).toBe(true);
      expect((await stored(id)).key).toBe(KEY);
      expect((await admin.put('/api/channel/').send({ id, key: 'sk-replaced-by-admin-0000' })).body.success).toBe(true);
      expect((await stored(id)).key).toBe('sk-replaced-by-admin-0000');
      await root.put('/api/channel/').send({ id, key: KEY });
    });

    it('copy on the server keeps the real key, resets counters and names the copy', async () => {
      await getApp().knex('channels').where({ id }).update({ used_quota: 500, balance: 9, response_time: 120 });
      const res = await admin.post(`/api/channel/copy/${id}?suffix=-2`);
      expect(res.body).toMatchObject({ success: true, data: { name: 'keyed-2', key_masked: true } });
      const copy = await stored(res.body.data.id);
      expect(copy).toMatchObject({ key: KEY, base_url: 'https://api.example.com', models: 'gpt-4o' });
      expect([Number(copy.used_quota), Number(copy.balance), Number(copy.response_time)]).toEqual([0, 0, 0]);
      expect((await admin.post('/api/channel/copy/999999')).body.success).toBe(false);
    });
  });

  describe('destinations', () => {
    it('an admin cannot save a channel pointing at loopback, private or metadata addresses; nothing is written', async () => {
      const before = await count();
      const bad: Array<Record<string, unknown>> = [
        { base_url: 'http://127.0.0.1:11434' },
        { base_url: 'http://localhost:11434' },
        { base_url: 'http://[::1]:8080' },
        { base_url: 'http://10.0.0.5' },
        { base_url: 'http://2130706433' },
        { base_url: 'http://169.254.169.254' },
        { base_url: 'https://api.example.com', setting: JSON.stringify({ proxy: 'http://192.168.1.10:3128' }) },
        { base_url: 'https://api.example.com', setting: JSON.stringify({ proxy: 'socks5://user:pw@127.0.0.1:1080' }) },
        { type: 41, key: JSON.stringify({ type: 'service_account', token_uri: 'http://127.0.0.1:9000/token' }) },
      ];
      for (const extra of bad) {
        const res = await admin.post('/api/channel/').send({ ...base, name: 'evil', key: 'sk-x', ...extra });
        expect([extra, res.body.success]).toEqual([extra, false]);
        expect(res.body.message).toMatch(/fetch refused: .* is a private address/);
      }
      // Batch creates are vetted too.
      expect((await admin.post('/api/channel/').send({ ...base, name: 'evil', key: 'k1\nk2', base_url: 'http://127.0.0.1' })).body.success).toBe(false);
      expect(await count()).toBe(before);
    });

    it('a name resolving to the metadata address is refused for everyone unless root allows link-local', async () => {
      setResolver(getApp().ctx, async () => [{ address: '169.254.169.254', family: 4 }]);
      const res = await root.post('/api/channel/').send({ ...base, name: 'meta', key: 'sk-x', base_url: 'http://metadata.example.com' });
      expect(res.body).toMatchObject({ success: false });
      expect(res.body.message).toContain('fetch refused: 169.254.169.254 is a private address (link-local)');
      expect((await root.post('/api/channel/').send({ ...base, name: 'meta', key: 'sk-x', base_url: 'http://[fe80::1]' })).body.success).toBe(false);
      await getApp().ctx.options.set('fetch_setting.allow_link_local_enabled', 'true');
      expect((await root.post('/api/channel/').send({ ...base, name: 'meta', key: 'sk-x', base_url: 'http://metadata.example.com' })).body.success).toBe(true);
      // The switch is root's, for root's channels: an admin is still refused.
      expect((await admin.post('/api/channel/').send({ ...base, name: 'meta2', key: 'sk-x', base_url: 'http://metadata.example.com' })).body.success).toBe(
        false,
      );
    });

    it('root may point a channel at a local upstream; admins may edit it but not re-point or copy it, nor reach it through test / models / balance', async () => {
      const up = await upstream();
      try {
        const created = await root.post('/api/channel/').send({ ...base, name: 'ollama', key: 'sk-local', base_url: up.url, test_model: 'gpt-4o' });
        expect(created.body.success).toBe(true);
        const id = created.body.data.id as number;
        // Admin edits that leave the destination alone are fine.
        expect((await admin.put('/api/channel/').send({ id, priority: 4, base_url: up.url })).body.success).toBe(true);
        // Also when the proxy stays root's private one while other settings change.
        await root.put('/api/channel/').send({ id, setting: JSON.stringify({ proxy: 'http://10.0.0.9:3128' }) });
        expect(
          (await admin.put('/api/channel/').send({ id, setting: JSON.stringify({ proxy: 'http://10.0.0.9:3128', force_format: true }) })).body.success,
        ).toBe(true);
        expect((await admin.put('/api/channel/').send({ id, setting: JSON.stringify({ proxy: 'http://10.0.0.10:3128' }) })).body.success).toBe(false);
        await root.put('/api/channel/').send({ id, setting: '' });
        const moved = await admin.put('/api/channel/').send({ id, base_url: 'http://127.0.0.1:6379' });
        expect(moved.body.success).toBe(false);
        expect((await stored(id)).base_url).toBe(up.url);
        expect((await admin.post(`/api/channel/copy/${id}`)).body.success).toBe(false);

        const before = await stored(id);
        const test = await admin.get(`/api/channel/test/${id}`);
        expect(test.body).toMatchObject({ success: false });
        expect(test.body.message).toMatch(/fetch refused: 127.0.0.1 is a private address/);
        const models = await admin.get(`/api/channel/fetch_models/${id}`);
        expect(models.body.success).toBe(false);
        const typed = await admin.post('/api/channel/fetch_models').send({ type: 1, key: 'sk-x', base_url: up.url });
        expect(typed.body).toMatchObject({ success: false });
        expect(typed.body.message).toMatch(/fetch refused/);
        const balance = await admin.get(`/api/channel/update_balance/${id}`);
        expect(balance.body.success).toBe(false);
        expect(up.hits).toEqual([]);
        // A refused call records nothing and disables nothing.
        expect(await stored(id)).toEqual(before);

        // Root reaches it.
        expect((await root.get(`/api/channel/test/${id}`)).body).toMatchObject({ success: true });
        expect((await root.get(`/api/channel/fetch_models/${id}`)).body).toMatchObject({ success: true, data: ['local-a', 'local-b'] });
        expect((await root.post('/api/channel/fetch_models').send({ type: 1, key: 'sk-x', base_url: up.url })).body.data).toEqual(['local-a', 'local-b']);
        expect((await root.get(`/api/channel/update_balance/${id}`)).body).toMatchObject({ success: true, data: 12.5 });
        expect(up.hits.length).toBeGreaterThanOrEqual(4);
      } finally {
        await up.close();
      }
    });

    it('the test-all sweep runs under the rule of whoever started it', async () => {
      const up = await upstream();
      const sweep = () => getApp().ctx.memo('relay:sweep:test', () => ({ running: false, stopped: false, done: Promise.resolve() })).done;
      try {
        const created = await root.post('/api/channel/').send({ ...base, name: 'sweep-local', key: 'sk-local', base_url: up.url, test_model: 'gpt-4o' });
        expect(created.body.success).toBe(true);
        expect((await admin.get('/api/channel/test')).body.success).toBe(true);
        await sweep();
        expect(up.hits).toEqual([]);
        expect((await root.get('/api/channel/test')).body.success).toBe(true);
        await sweep();
        expect(up.hits).toContain('POST /v1/chat/completions');
        await root.del(`/api/channel/${created.body.data.id}`);
      } finally {
        await up.close();
      }
    });

    it('a stored name that now resolves to a private address is refused at call time (admin)', async () => {
      const up = await upstream();
      const port = new URL(up.url).port;
      try {
        setResolver(getApp().ctx, async () => [{ address: '93.184.216.34', family: 4 }]);
        const created = await admin.post('/api/channel/').send({ ...base, name: 'rebind', key: 'sk-x', base_url: `http://rebind.example.com:${port}` });
        expect(created.body.success).toBe(true);
        setResolver(getApp().ctx, async () => [{ address: '127.0.0.1', family: 4 }]);
        const models = await admin.get(`/api/channel/fetch_models/${created.body.data.id}`);
        expect(models.body).toMatchObject({ success: false });
        expect(models.body.message).toContain('fetch refused: 127.0.0.1 is a private address (loopback)');
        expect(up.hits).toEqual([]);
      } finally {
        await up.close();
      }
    });
  });
});
