import http from 'node:http';
import OpenAI from 'openai';
import { describeEach, DB_TARGETS, makeUser, type TestApp } from '../helpers/app';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { flushUsage, listen, seedChannel, seedToken, setOptions, setUser } from '../mock-upstream/seed';
import { computeQuota, estimateQuota, priceFor } from '../../server/src/services/billing';
import { preConsume, refund, settle } from '../../server/src/ledger/balances';
import { startSmtp } from '../helpers/smtp';
import { fakeOnly, waitFor } from '../helpers/clock';
import { balanceView } from '../../server/src/ledger/balanceView';

const PRICING = {
  ModelRatio: JSON.stringify({ 'pause-model': 1, 'test-model': 2, 'drip-model': 1, 'cut-model': 1, 'fail-model': 1, 'junk-model': 1 }),
  CompletionRatio: JSON.stringify({ 'test-model': 3 }),
  CacheRatio: JSON.stringify({}),
  ModelPrice: JSON.stringify({ 'priced-model': 0.001 }),
  GroupRatio: JSON.stringify({ default: 1, vip: 2.5 }),
  PreConsumedQuota: '0',
};
const msg = [{ role: 'user' as const, content: 'x' }];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeEach(DB_TARGETS, 'relay billing', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let gw: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    gw = await listen(app.callback);
    await setOptions(app, PRICING);
    await seedChannel(app, { base_url: mock.url, models: 'test-model,priced-model' });
    await seedChannel(app, { base_url: mock.url, models: 'drip-model', key: 'sk-fault-drip' });
    await seedChannel(app, { base_url: mock.url, models: 'cut-model', key: 'sk-fault-cut' });
    await seedChannel(app, { base_url: mock.url, models: 'fail-model', key: 'sk-fault-500' });
    await seedChannel(app, { base_url: mock.url, models: 'junk-model', key: 'sk-fault-nonjson' });
    await seedChannel(app, { base_url: mock.url, models: 'pause-model', key: 'sk-fault-pause' });
  });
  afterAll(async () => {
    await gw?.close();
    await mock?.close();
  });
  beforeEach(() => mock.reset());

  const user = async (quota: number) => {
    const u = await makeUser(app, { quota });
    return u.id;
  };
  const quotaOf = async (id: number) => Number((await app.knex('users').where({ id }).first()).quota);
  const logsOf = async (id: number) => {
    await flushUsage(app);
    return app.knex('logs').where({ user_id: id, type: 2 }).orderBy('id');
  };
  const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

  test('formula units: ratios, cache ratio, fixed price, group ratio', () => {
    const p = priceFor(app.ctx, 'test-model', 'vip', false);
    expect(p).toMatchObject({ usePrice: false, modelRatio: 2, completionRatio: 3, cacheRatio: 1, groupRatio: 2.5 });
    // 2.5 × 2 × (100 + 10 × 3) = 650
    expect(computeQuota(app.ctx, p, { promptTokens: 100, completionTokens: 10 })).toBe(650);
    const fixed = priceFor(app.ctx, 'priced-model', 'vip', false);
    // 0.001 × 2.5 × 500000 = 1250
    expect(computeQuota(app.ctx, fixed, { promptTokens: 999, completionTokens: 999 })).toBe(1250);
    expect(estimateQuota(app.ctx, fixed, 10, 10)).toBe(1250);
    expect(() => priceFor(app.ctx, 'nobody-priced-this', 'default', false)).toThrow(/has no ratio or price/);
  });

  test('settle: extra cost is taken only as far as user and token reach, equally from both', async () => {
    const id = await user(1005);
    const t = await seedToken(app, id, { unlimited_quota: false, remain_quota: 15 });
    const payer = { userId: id, limitedTokenId: t.id };
    const tokenRemain = async () => Number((await app.knex('tokens').where({ id: t.id }).first()).remain_quota);
    expect(await preConsume(app.ctx, payer, 5)).toMatchObject({ userQuota: 1000, tokenRemain: 10 });
    const s1 = await settle(app.ctx, payer, 5, 50);
    expect(s1.taken).toBe(15);
    expect(await quotaOf(id)).toBe(990);
    expect(await tokenRemain()).toBe(0);
    await expect(preConsume(app.ctx, payer, 1)).rejects.toMatchObject({ status: 403 });
    expect(await quotaOf(id)).toBe(990); // the failed token part rolled the user part back

    const id2 = await user(20);
    const p2 = { userId: id2 };
    await preConsume(app.ctx, p2, 10);
    const s2 = await settle(app.ctx, p2, 10, 100);
    expect(s2.taken).toBe(20);
    expect(await quotaOf(id2)).toBe(0);
    await preConsume(app.ctx, p2, 0);
    expect((await settle(app.ctx, p2, 0, 0)).taken).toBe(0);
    await app.knex('users').where({ id: id2 }).update({ quota: 100 });
    await preConsume(app.ctx, p2, 60);
    expect((await settle(app.ctx, p2, 60, 25)).taken).toBe(25);
    expect(await quotaOf(id2)).toBe(75);
    await preConsume(app.ctx, p2, 30);
    await refund(app.ctx, p2, 30);
    expect(await quotaOf(id2)).toBe(75);
  });

  test('50 concurrent calls against a balance for 5 never overspend by more than one estimate', async () => {
    // cost per call 2 × (11 + 7×3) = 64; estimate with max_tokens 10: 2 × (ceil(1/2)+4 + 30) = 70
    const id = await user(5 * 64);
    const t = await seedToken(app, id);
    const c = sdk(t.key);
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, () => c.chat.completions.create({ model: 'test-model', messages: msg, max_tokens: 10 })),
    );
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    const refused = results.filter((r) => r.status === 'rejected');
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toMatchObject({ status: 403 });
    expect(ok).toBeGreaterThanOrEqual(1);
    expect(ok * 64).toBeLessThanOrEqual(5 * 64 + 70);
    const final = await quotaOf(id);
    expect(final).toBeGreaterThanOrEqual(0);
    const logs = await logsOf(id);
    expect(logs).toHaveLength(ok);
    expect(logs.reduce((s: number, l: { quota: number }) => s + Number(l.quota), 0)).toBe(5 * 64 - final);
  });

  // The gateway may send the upstream request while the reservation commits (SQLite, when its
  // balance view says the reservation fits: ledger/balanceView.ts). These hold on every database.
  test('a balance lowered behind the gateway: refused (403), nothing taken or logged, no further upstream calls', async () => {
    const id = await user(1_000_000);
    const t = await seedToken(app, id);
    const c = sdk(t.key);
    await c.chat.completions.create({ model: 'test-model', messages: msg, max_tokens: 10 }); // the gateway has seen this balance now
    await app.knex('users').where({ id }).update({ quota: 5 }); // an admin lowers it in the console
    mock.reset();
    const view = balanceView(app.ctx);
    const refusedBefore = view.stats.refused;
    await expect(c.chat.completions.create({ model: 'test-model', messages: msg, max_tokens: 10 })).rejects.toMatchObject({
      status: 403,
      error: { type: 'insufficient_quota' },
    });
    expect(await quotaOf(id)).toBe(5);
    const upstreamCalls = () => mock.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
    expect(upstreamCalls()).toBeLessThanOrEqual(1); // at most the one aborted when the refusal came in
    // That call did start early (the balance seen covered it, on PostgreSQL with its margin) and
    // was refused by the database.
    expect(view.stats.refused).toBe(refusedBefore + 1);
    const before = upstreamCalls();
    await expect(c.chat.completions.create({ model: 'test-model', messages: msg, max_tokens: 10, stream: true })).rejects.toMatchObject({ status: 403 });
    expect(upstreamCalls()).toBe(before); // the refusal reset the view: this one waited for the database
    expect(await quotaOf(id)).toBe(5);
    expect(await logsOf(id)).toHaveLength(1);
  });

  test('concurrent calls of a known balance: every upstream request made is a paid call', async () => {
    // cost 64 per call, estimate 70: after the warm-up 5 × 64 + 20 are left
    const id = await user(6 * 64 + 20);
    const t = await seedToken(app, id);
    const c = sdk(t.key);
    await c.chat.completions.create({ model: 'test-model', messages: msg, max_tokens: 10 });
    mock.reset();
    const overlappedBefore = balanceView(app.ctx).stats.overlapped;
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        c.chat.completions.create({ model: 'test-model', messages: msg, max_tokens: 10, stream: i % 2 === 1 }).then(async (r) => {
          if (Symbol.asyncIterator in (r as object)) for await (const _chunk of r as AsyncIterable<unknown>) void _chunk;
          return r;
        }),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ status: 403 });
    expect(ok).toBeGreaterThanOrEqual(4);
    // SQLite: the known balance covered four at once. PostgreSQL: it never covered ten times the
    // estimate (other nodes may spend it too), so every call waited for the database.
    if (app.ctx.db.kind === 'sqlite') expect(balanceView(app.ctx).stats.overlapped).toBeGreaterThanOrEqual(overlappedBefore + 4);
    else expect(balanceView(app.ctx).stats.overlapped).toBe(overlappedBefore);
    expect(mock.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(ok);
    const final = await quotaOf(id);
    expect(final).toBeGreaterThanOrEqual(0);
    const logs = await logsOf(id);
    expect(logs).toHaveLength(ok + 1);
    expect(logs.reduce((s: number, l: { quota: number }) => s + Number(l.quota), 0)).toBe(6 * 64 + 20 - final);
  });

  test('an ample balance seen just now starts the upstream request early; on PostgreSQL a stale one waits', async () => {
    const id = await user(1_000_000);
    const t = await seedToken(app, id);
    const c = sdk(t.key);
    const view = balanceView(app.ctx);
    await c.chat.completions.create({ model: 'test-model', messages: msg, max_tokens: 10 }); // waited: balance not seen yet
    const seen = view.stats.overlapped;
    await c.chat.completions.create({ model: 'test-model', messages: msg, max_tokens: 10 });
    expect(view.stats.overlapped).toBe(seen + 1);
    // Three seconds later another node may have spent it: PostgreSQL waits for the database again.
    const now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(now + 3000);
    try {
      await c.chat.completions.create({ model: 'test-model', messages: msg, max_tokens: 10 });
    } finally {
      clock.mockRestore();
    }
    expect(view.stats.overlapped).toBe(app.ctx.db.kind === 'postgres' ? seen + 1 : seen + 2);
    const logs = await logsOf(id);
    expect(logs).toHaveLength(3);
    expect(logs.reduce((s: number, l: { quota: number }) => s + Number(l.quota), 0)).toBe(1_000_000 - (await quotaOf(id)));
  });

  test('a limited token is charged like the user, atomically; sums of logs match both', async () => {
    const id = await user(1_000_000);
    const t = await seedToken(app, id, { unlimited_quota: false, remain_quota: 3 * 64 });
    const c = sdk(t.key);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => c.chat.completions.create({ model: 'test-model', messages: msg, max_tokens: 10 })),
    );
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    expect(ok).toBeGreaterThanOrEqual(1);
    expect(ok).toBeLessThanOrEqual(4);
    const tok = await app.knex('tokens').where({ id: t.id }).first();
    const spentUser = 1_000_000 - (await quotaOf(id));
    const spentToken = 3 * 64 - Number(tok.remain_quota);
    const logs = await logsOf(id);
    const sum = logs.reduce((s: number, l: { quota: number }) => s + Number(l.quota), 0);
    expect(sum).toBe(spentUser);
    expect(sum).toBe(spentToken);
    expect(Number(tok.remain_quota)).toBeGreaterThanOrEqual(0);
    const tokAfter = await app.knex('tokens').where({ id: t.id }).first();
    expect(Number(tokAfter.used_quota)).toBe(sum);
    expect(Number(tokAfter.request_count)).toBe(ok);
    const u = await app.knex('users').where({ id }).first();
    expect(Number(u.used_quota)).toBe(sum);
    expect(Number(u.request_count)).toBe(ok);
  });

  test('insufficient balance → 403 before any upstream call; failure refunds fully', async () => {
    await setOptions(app, { PreConsumedQuota: '500' });
    try {
      const poor = await user(100);
      const t = await seedToken(app, poor);
      const err = await sdk(t.key)
        .chat.completions.create({ model: 'test-model', messages: msg })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 403 });
      expect((err as { error: { type: string } }).error.type).toBe('insufficient_quota');
      expect(mock.requests).toHaveLength(0);
      expect(await quotaOf(poor)).toBe(100);
    } finally {
      await setOptions(app, { PreConsumedQuota: '0' });
    }
    const id = await user(10_000);
    const t2 = await seedToken(app, id);
    await expect(sdk(t2.key).chat.completions.create({ model: 'fail-model', messages: msg })).rejects.toMatchObject({ status: 500 });
    await expect(sdk(t2.key).chat.completions.create({ model: 'junk-model', messages: msg })).rejects.toMatchObject({ status: 502 });
    expect(await quotaOf(id)).toBe(10_000);
    expect(await logsOf(id)).toHaveLength(0);
  });

  test('client abort mid-stream: upstream aborted, delivered text billed, nothing left reserved', async () => {
    const id = await user(1_000_000);
    const t = await seedToken(app, id);
    const ac = new AbortController();
    const stream = await sdk(t.key).chat.completions.create({ model: 'drip-model', messages: msg, stream: true, max_tokens: 5000 }, { signal: ac.signal });
    let got = 0;
    try {
      for await (const c of stream) {
        if (c.choices[0]?.delta?.content) got++;
        if (got === 5) ac.abort();
      }
    } catch {
      /* aborted */
    }
    let logs: Array<{ quota: number; completion_tokens: number; prompt_tokens: number }> = [];
    for (let i = 0; i < 100 && !logs.length; i++) {
      await sleep(30);
      logs = await logsOf(id);
    }
    expect(logs).toHaveLength(1);
    const log = logs[0]!;
    expect(log.completion_tokens).toBeGreaterThanOrEqual(5); // "word " ≈ 1 token each
    expect(log.completion_tokens).toBeLessThan(150);
    expect(Number(log.quota)).toBe(log.prompt_tokens + log.completion_tokens);
    expect(1_000_000 - (await quotaOf(id))).toBe(Number(log.quota));
  });

  test('upstream cut mid-stream: client gets an error event, the delivered part is billed', async () => {
    const id = await user(1_000_000);
    const t = await seedToken(app, id);
    const stream = await sdk(t.key).chat.completions.create({ model: 'cut-model', messages: msg, stream: true });
    let text = '';
    const err = await (async () => {
      for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(text).toBe('Hello from');
    const logs = await logsOf(id);
    expect(logs).toHaveLength(1);
    expect(logs[0].completion_tokens).toBe(2);
    expect(1_000_000 - (await quotaOf(id))).toBe(Number(logs[0].quota));
  });

  test('LogConsumeEnabled=false: no log row, counters still move', async () => {
    await setOptions(app, { LogConsumeEnabled: 'false' });
    try {
      const id = await user(100_000);
      const t = await seedToken(app, id);
      await sdk(t.key).chat.completions.create({ model: 'test-model', messages: msg });
      expect(await logsOf(id)).toHaveLength(0);
      const u = await app.knex('users').where({ id }).first();
      expect(Number(u.used_quota)).toBe(64);
      expect(Number(u.request_count)).toBe(1);
      expect(Number(u.quota)).toBe(100_000 - 64);
    } finally {
      await setOptions(app, { LogConsumeEnabled: 'true' });
    }
  });

  test('quota warning: crossing the threshold posts the webhook once, with the bearer secret', async () => {
    const hits: Array<{ auth?: string; body: string }> = [];
    const hook = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        hits.push({ auth: req.headers.authorization, body });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    const port = (hook.address() as { port: number }).port;
    // The fetch guard refuses loopback webhooks unless root allow-lists the address (and its port).
    await setOptions(app, { 'fetch_setting.ip_allow_list': '127.0.0.1', 'fetch_setting.allowed_ports': '' });
    try {
      const id = await user(1000);
      await setUser(app, id, {
        setting: JSON.stringify({
          notify_type: 'webhook',
          webhook_url: `http://127.0.0.1:${port}/hook`,
          webhook_secret: 's3cret',
          quota_warning_threshold: 950,
        }),
      });
      const t = await seedToken(app, id);
      await sdk(t.key).chat.completions.create({ model: 'test-model', messages: msg }); // 1000 → 936
      await sdk(t.key).chat.completions.create({ model: 'test-model', messages: msg }); // 936 → 872 (already below)
      for (let i = 0; i < 100 && !hits.length; i++) await sleep(20);
      await sleep(100);
      expect(hits).toHaveLength(1);
      expect(hits[0]!.auth).toBe('Bearer s3cret');
      expect(JSON.parse(hits[0]!.body)).toMatchObject({ type: 'quota_exceed' });
    } finally {
      await setOptions(app, { 'fetch_setting.ip_allow_list': '', 'fetch_setting.allowed_ports': '80,443,8080,8443' });
      hook.close();
    }
  });

  test('quota warning by email (default QuotaRemindThreshold) when the user has no webhook', async () => {
    const smtp = await startSmtp();
    try {
      await setOptions(app, {
        SMTPServer: '127.0.0.1',
        SMTPPort: String(smtp.port),
        SMTPAccount: '',
        SMTPToken: '',
        SMTPFrom: 'noreply@test.local',
        SMTPSSLEnabled: 'false',
        QuotaRemindThreshold: '1000',
      });
      const id = await user(1030);
      await setUser(app, id, { email: 'poor@example.com' });
      const t = await seedToken(app, id);
      await sdk(t.key).chat.completions.create({ model: 'test-model', messages: msg }); // 1030 → 966
      const mail = await smtp.waitFor('poor@example.com');
      expect(mail.subject).toContain('额度');
      expect(mail.body).toContain('966');
    } finally {
      await setOptions(app, { QuotaRemindThreshold: '0' });
      await smtp.close();
    }
  });

  test('keep-alive pings while the upstream is silent (ping interval option); frt recorded', async () => {
    await setOptions(app, { 'general_setting.ping_interval_enabled': 'true', 'general_setting.ping_interval_seconds': '1' });
    // The upstream stays silent until released; the ping timer, its idle check and the call's
    // stopwatch run on fake timers (setTimeout, Date, hrtime; sockets and the database stay real).
    let answer = () => undefined as void;
    mock.options.pauseUntil = new Promise<void>((resolve) => (answer = resolve));
    fakeOnly(['setTimeout', 'clearTimeout', 'Date', 'hrtime']);
    try {
      const id = await user(100_000);
      const t = await seedToken(app, id);
      const started = Date.now();
      let headersAt = 0;
      const answered = fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'pause-model', messages: msg, stream: true }),
      }).then((res) => ((headersAt = Date.now()), res));
      await waitFor(() => mock.received('/v1/chat/completions').length === 1);
      // The gateway answers nothing (no headers either) until its first ping, after 1 s of silence:
      // the clock moves 100 ms at a time until then.
      await waitFor(async () => {
        await jest.advanceTimersByTimeAsync(100);
        return headersAt > 0;
      });
      expect(headersAt - started).toBeGreaterThanOrEqual(1000);
      // Silent for half a second more, then the answer: its first byte came after that silence.
      await jest.advanceTimersByTimeAsync(500);
      answer();
      const text = await (await answered).text();
      expect(text).toContain(': PING');
      expect(text).toContain('"content":"Hello"');
      const logs = await logsOf(id);
      expect(JSON.parse(logs[0].other).frt).toBeGreaterThan(1000);
    } finally {
      answer();
      jest.useRealTimers();
      await setOptions(app, { 'general_setting.ping_interval_enabled': 'false' });
    }
  });
});
