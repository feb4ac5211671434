import http from 'node:http';
import { ALL_TARGETS, buildApp, loginAgent, makeUser, setupRoot, type LoggedIn, type TestApp } from '../helpers/app';
import { fakeWallClock } from '../helpers/clock';
import { flushUsage, listen, seedChannel, seedToken } from '../mock-upstream/seed';

/** A request a local mock server received. */
interface Hit {
  method: string;
  path: string;
  body: string;
}

/** A local server answering through `answer`, recording every request. */
async function mockServer(answer: (hit: Hit, res: http.ServerResponse, headers: http.IncomingHttpHeaders) => void) {
  const hits: Hit[] = [];
  const srv = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = { method: req.method ?? '', path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') };
      hits.push(hit);
      answer(hit, res, req.headers);
    });
  });
  return { ...srv, hits };
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

const until = async (check: () => boolean | Promise<boolean>, ms = 3000) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
};

const BAD_KEY = 'sk-badkey-Zq8RvT2mWx5LpN7cKd3HsJ9f';
const BOOM_KEY = 'sk-boomkey-Yt4GhB6nMv1QzR8wXe2UaP5k';

describe.each(ALL_TARGETS.map((t) => [t.name, t] as const))(
  'operations: notice, chat link, alerts, error log, update check, test summary [%s]',
  (_n, target) => {
    let app: TestApp;
    let telegram: Awaited<ReturnType<typeof mockServer>>;
    let upstream: Awaited<ReturnType<typeof mockServer>>;
    let feed: Awaited<ReturnType<typeof mockServer>>;
    let gw: { url: string; close(): Promise<void> };
    let root: LoggedIn;
    let admin: LoggedIn;
    let user: LoggedIn;

    beforeAll(async () => {
      telegram = await mockServer((_hit, res) => json(res, 200, { ok: true, result: { message_id: 1 } }));
      // An OpenAI-style upstream: a key named "badkey" is refused (echoing the key, as OpenAI does),
      // "boomkey" fails with a 500, anything else answers.
      upstream = await mockServer((hit, res, headers) => {
        const auth = String(headers.authorization ?? '').replace(/^Bearer /, '');
        if (hit.path.endsWith('/chat/completions') && auth.includes('badkey'))
          return json(res, 401, { error: { message: `Incorrect API key provided: ${auth}`, type: 'invalid_request_error', code: 'invalid_api_key' } });
        if (auth.includes('boomkey')) return json(res, 500, { error: { message: `upstream exploded for ${auth}`, type: 'server_error' } });
        return json(res, 200, {
          id: 'x',
          object: 'chat.completion',
          model: 'ok-model',
          choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
        });
      });
      feed = await mockServer((_hit, res) =>
        json(res, 200, [
          { tag_name: 'v100.0.0-rc1', prerelease: true, html_url: 'https://example.com/rc' },
          { tag_name: 'v99.1.0', html_url: 'https://example.com/releases/v99.1.0' },
        ]),
      );
      app = await buildApp(target, { config: { telegramApiUrl: telegram.url } });
      gw = await listen(app.callback);
      const r = await setupRoot(app);
      root = await loginAgent(app, r.username, r.password);
      const a = await makeUser(app, { role: 10 });
      admin = await loginAgent(app, a.username, a.password);
      const u = await makeUser(app, { quota: 10_000_000 });
      user = await loginAgent(app, u.username, u.password);
      await app.ctx.options.set('ModelRatio', JSON.stringify({ 'err-model': 1, 'ok-model': 1 }));
    });
    afterAll(async () => {
      await gw?.close();
      await telegram?.close();
      await upstream?.close();
      await feed?.close();
      await app?.close();
    });

    it('saves the chat link (admin) and the notice, and serves both', async () => {
      const saved = await admin.put('/api/option/').send({ key: 'ChatLink', value: ' https://chat.example.com/ ' });
      expect(saved.body).toMatchObject({ success: true });
      expect((await admin.put('/api/option/').send({ key: 'ChatLink2', value: 'https://chat2.example.com' })).body.success).toBe(true);
      const bad = await admin.put('/api/option/').send({ key: 'ChatLink', value: 'javascript:alert(1)' });
      expect(bad.body.success).toBe(false);
      const status = await app.http().get('/api/status');
      expect(status.body.data).toMatchObject({ chat_link: 'https://chat.example.com', chat_link2: 'https://chat2.example.com' });

      expect((await root.put('/api/option/').send({ key: 'Notice', value: '# 维护通知\n今晚 **22:00** 升级' })).body.success).toBe(true);
      const notice = await app.http().get('/api/notice');
      expect(notice.body).toMatchObject({ success: true, data: '# 维护通知\n今晚 **22:00** 升级' });
      // Users cannot change either.
      expect((await user.put('/api/option/').send({ key: 'ChatLink', value: 'https://evil.example.com' })).status).toBe(403);
    });

    it('a failed call leaves one scrubbed error log row (not one per retry); alerts Telegram on the auto-disable', async () => {
      await app.ctx.options.set('TelegramBotToken', '123456:TEST-bot-token');
      await app.ctx.options.set('TelegramAdminChatId', '-100200300');
      await app.ctx.options.set('AutomaticDisableChannelEnabled', 'true');
      await app.ctx.options.set('RetryTimes', '3');
      const bad = await seedChannel(app, { name: 'bad-channel', base_url: upstream.url, key: BAD_KEY, models: 'err-model', priority: 10 });
      const boom = await seedChannel(app, { name: 'boom-channel', base_url: upstream.url, key: BOOM_KEY, models: 'err-model', priority: 0 });
      const tok = await seedToken(app, user.uid, { name: 'err-token' });
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tok.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'err-model', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
      // Both channels were tried (the refused key, then the 500): still one row.
      expect(upstream.hits.filter((h) => h.path.endsWith('/chat/completions')).length).toBe(2);
      await until(async () => {
        await flushUsage(app);
        return (await app.knex('logs').where({ user_id: user.uid, type: 5 })).length > 0;
      });
      const rows = await app.knex('logs').where({ user_id: user.uid, type: 5 });
      expect(rows).toHaveLength(1);
      const row = rows[0];
      expect(row).toMatchObject({ model_name: 'err-model', token_name: 'err-token', quota: 0 });
      expect(Number(row.channel_id)).toBe(boom);
      expect(row.channel_name).toBe('boom-channel');
      expect(row.content).toContain('upstream exploded');
      for (const key of [BAD_KEY, BOOM_KEY, tok.key]) expect(`${row.content}${row.other}`).not.toContain(key.slice(3, 20));
      const other = JSON.parse(row.other);
      expect(other.status_code).toBe(res.status);
      expect(other.admin_info.use_channel).toEqual([bad, boom]);

      // The refused key disabled its channel (off the answer's path, so awaited here), and the
      // admins' Telegram chat heard of it.
      const statusOfBad = async () => Number((await app.knex('channels').where({ id: bad }).first()).status);
      await until(async () => (await statusOfBad()) === 3);
      expect(await statusOfBad()).toBe(3);
      expect(await until(() => telegram.hits.length > 0)).toBe(true);
      const sent = telegram.hits[0]!;
      expect(sent.method).toBe('POST');
      expect(sent.path).toBe('/bot123456%3ATEST-bot-token/sendMessage');
      const msg = JSON.parse(sent.body);
      expect(msg.chat_id).toBe('-100200300');
      expect(msg.text).toContain('bad-channel');
      expect(msg.text).toContain(`#${bad}`);

      // The usage log filters them: admins by type, the user sees own errors without the channel.
      const list = await admin.get('/api/log?type=5');
      expect(list.body.data.items).toHaveLength(1);
      expect(list.body.data.items[0]).toMatchObject({ type: 5, channel: boom });
      const mine = await user.get('/api/log/self?type=5');
      expect(mine.body.data.items).toHaveLength(1);
      expect(mine.body.data.items[0].channel_id).toBeUndefined();
      expect((await admin.get('/api/log?type=6')).body.success).toBe(false);

      // Switched off: failures leave no row; a successful call never writes one.
      await app.ctx.options.set('ErrorLogEnabled', 'false');
      await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tok.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'err-model', messages: [{ role: 'user', content: 'again' }] }),
      });
      await app.ctx.options.set('ErrorLogEnabled', 'true');
      await seedChannel(app, { name: 'good', base_url: upstream.url, key: 'sk-good-key-1234567890abcdef', models: 'ok-model' });
      const good = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tok.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'ok-model', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(good.status).toBe(200);
      await flushUsage(app);
      expect(await app.knex('logs').where({ user_id: user.uid, type: 5 })).toHaveLength(1);
      expect(await app.knex('logs').where({ user_id: user.uid, type: 2 })).toHaveLength(1);
    });

    it('"test all channels" records a per-channel summary', async () => {
      expect((await user.get('/api/channel/test/summary')).status).toBe(403);
      // Root's sweep (the mock upstream is on loopback, which only root's fetch rule allows).
      const started = await root.get('/api/channel/test');
      expect(started.body.success).toBe(true);
      let summary: any;
      expect(
        await until(async () => {
          summary = (await admin.get('/api/channel/test/summary')).body.data;
          return !!summary && !summary.running;
        }, 10_000),
      ).toBe(true);
      const enabled = await app.knex('channels').whereIn('status', [1, 3]).select('id', 'name');
      expect(summary.total).toBe(enabled.length);
      expect(summary.results).toHaveLength(enabled.length);
      expect(summary.succeeded + summary.failed).toBe(enabled.length);
      const byName = Object.fromEntries(summary.results.map((r: { name: string; success: boolean }) => [r.name, r.success]));
      expect(byName).toMatchObject({ good: true, 'boom-channel': false, 'bad-channel': false });
      const failed = summary.results.find((r: { name: string }) => r.name === 'boom-channel');
      expect(failed.message).not.toContain(BOOM_KEY.slice(3, 20));
      expect(summary.finished_at).toBeGreaterThanOrEqual(summary.started_at);
    });

    it('the dashboard honours DataExportInterval: data up to the last boundary, refreshed once per interval', async () => {
      // Its boundaries are on the wall clock: pinned (Date faked only) 100 s past a 5-minute boundary.
      const b5 = Math.floor(Date.now() / 300_000) * 300;
      const t = b5 + 100;
      fakeWallClock(t * 1000);
      try {
        const who = await makeUser(app);
        const base = { user_id: who.id, username: who.username, type: 2, model_name: 'dash-m', prompt_tokens: 1, completion_tokens: 1, content: '', other: '' };
        await app.knex('logs').insert([
          { ...base, quota: 100, created_at: b5 - 120 },
          { ...base, quota: 7, created_at: t }, // after the last boundary: not yet on the dashboard
        ]);
        const q = { start_timestamp: t - 3600, end_timestamp: t + 3600, default_time: 'hour', username: who.username };
        const sum = async () => {
          const res = await admin.agent.get('/api/data/').set('New-Api-User', String(admin.uid)).query(q);
          expect(res.body.success).toBe(true);
          return (res.body.data as Array<{ quota: number }>).reduce((s, r) => s + r.quota, 0);
        };
        expect(await sum()).toBe(100);
        // A row inside the range written after the dashboard was built waits for the next interval.
        await app.knex('logs').insert({ ...base, quota: 20, created_at: b5 - 60 });
        expect(await sum()).toBe(100);
        // A shorter interval: a new boundary (b5 + 60, the row at `t` is after it) and a fresh aggregate.
        await admin.put('/api/option/').send({ key: 'DataExportInterval', value: '1' });
        expect(await sum()).toBe(120);
        // The next minute's boundary takes in the row at `t`.
        jest.setSystemTime((b5 + 120) * 1000);
        expect(await sum()).toBe(127);
      } finally {
        jest.useRealTimers();
      }
    });

    it('checks for updates against the configured release feed only, cached', async () => {
      expect((await app.http().get('/api/status')).body.data.update_check).toBe(false);
      const off = await admin.get('/api/status/update');
      expect(off.body.success).toBe(false);
      expect(feed.hits).toHaveLength(0);
      // System option: root only.
      expect((await admin.put('/api/option/').send({ key: 'UpdateCheckUrl', value: `${feed.url}/releases` })).status).toBe(403);
      expect((await root.put('/api/option/').send({ key: 'UpdateCheckUrl', value: 'ftp://x' })).body.success).toBe(false);
      expect((await root.put('/api/option/').send({ key: 'UpdateCheckUrl', value: `${feed.url}/releases` })).body.success).toBe(true);
      expect((await app.http().get('/api/status')).body.data.update_check).toBe(true);
      const res = await admin.get('/api/status/update');
      expect(res.body).toMatchObject({
        success: true,
        data: { current: app.ctx.config.version, latest: 'v99.1.0', url: 'https://example.com/releases/v99.1.0', newer: true },
      });
      await admin.get('/api/status/update');
      expect(feed.hits).toHaveLength(1);
      expect(feed.hits[0]!.path).toBe('/releases');
      expect((await user.get('/api/status/update')).status).toBe(403);
    });
  },
);
