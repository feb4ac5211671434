import { DB_TARGETS, KV_TARGETS, buildApp, describeEach, makeUser, type TestApp } from '../helpers/app';
import { fakeOnly } from '../helpers/clock';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { flushUsage, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { recordRelay, metrics, metricsMiddleware, startTimer, formatOverhead, OVERHEAD_HEADER } from '../../server/src/metrics';

/** Value of one sample line `name{labels} value` in a Prometheus text exposition (labels in any order). */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{') && line !== name && !line.startsWith(name + ' ')) continue;
    const m = /^([^{\s]+)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const kv of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) got[kv[1]] = kv[2];
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describeEach(KV_TARGETS, 'metrics', (getApp) => {
  test('GET /metrics serves the Prometheus text format', async () => {
    const res = await getApp().http().get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toContain('# TYPE gateway_relay_requests_total counter');
    expect(res.text).toContain('# TYPE gateway_overhead_duration_seconds histogram');
  });

  test('recordRelay shows up in the scrape, per channel and model', async () => {
    const app = getApp();
    recordRelay(app.ctx, { channelId: 3, model: 'gpt-4o', status: 200, upstreamMs: 120, overheadMs: 0.4, quota: 150, promptTokens: 10, completionTokens: 20 });
    recordRelay(app.ctx, { channelId: 3, model: 'gpt-4o', status: 200, upstreamMs: 80, overheadMs: 3, quota: 50 });
    recordRelay(app.ctx, { channelId: 3, model: 'gpt-4o', status: 429 });
    recordRelay(app.ctx, { channelId: 7, model: 'claude-3', status: 200, upstreamMs: 2000, overheadMs: 0.2, quota: 1000 });

    const text = (await app.http().get('/metrics')).text;
    expect(sample(text, 'gateway_relay_requests_total', { channel: '3', model: 'gpt-4o', status: '200' })).toBe(2);
    expect(sample(text, 'gateway_relay_requests_total', { channel: '3', model: 'gpt-4o', status: '429' })).toBe(1);
    expect(sample(text, 'gateway_relay_requests_total', { channel: '7', model: 'claude-3', status: '200' })).toBe(1);
    expect(sample(text, 'gateway_quota_spent_total', { channel: '3', model: 'gpt-4o' })).toBe(200);
    expect(sample(text, 'gateway_quota_spent_total', { channel: '7', model: 'claude-3' })).toBe(1000);
    expect(sample(text, 'gateway_tokens_total', { channel: '3', model: 'gpt-4o', kind: 'completion' })).toBe(20);

    // Overhead histogram: 0.4 ms and 3 ms for channel 3 (the 429 recorded no timings).
    expect(sample(text, 'gateway_overhead_duration_seconds_count', { channel: '3', model: 'gpt-4o' })).toBe(2);
    expect(sample(text, 'gateway_overhead_duration_seconds_sum', { channel: '3', model: 'gpt-4o' })).toBeCloseTo(0.0034, 6);
    expect(sample(text, 'gateway_overhead_duration_seconds_bucket', { channel: '3', model: 'gpt-4o', le: '0.0005' })).toBe(1);
    expect(sample(text, 'gateway_overhead_duration_seconds_bucket', { channel: '3', model: 'gpt-4o', le: '0.005' })).toBe(2);
    // Upstream histogram in seconds.
    expect(sample(text, 'gateway_upstream_duration_seconds_sum', { channel: '3', model: 'gpt-4o' })).toBeCloseTo(0.2, 6);
    expect(sample(text, 'gateway_upstream_duration_seconds_bucket', { channel: '7', model: 'claude-3', le: '1' })).toBe(0);
    expect(sample(text, 'gateway_upstream_duration_seconds_bucket', { channel: '7', model: 'claude-3', le: '2.5' })).toBe(1);
  });

  test('other paths and methods are not taken by the metrics middleware', async () => {
    const res = await getApp().http().post('/metrics');
    expect(res.text).not.toContain('gateway_relay_requests_total');
  });
});

describe('metrics isolation and access', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await buildApp(KV_TARGETS[0]);
    b = await buildApp(KV_TARGETS[0]);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  test('each app has its own registry', async () => {
    recordRelay(a.ctx, { channelId: 1, model: 'm-a', status: 200, quota: 5 });
    expect(metrics(a.ctx)).toBe(metrics(a.ctx));
    expect(metrics(a.ctx).registry).not.toBe(metrics(b.ctx).registry);
    const textA = (await a.http().get('/metrics')).text;
    const textB = (await b.http().get('/metrics')).text;
    expect(sample(textA, 'gateway_quota_spent_total', { channel: '1', model: 'm-a' })).toBe(5);
    expect(sample(textB, 'gateway_quota_spent_total', { channel: '1', model: 'm-a' })).toBeUndefined();
  });

  test('METRICS_TOKEN requires a bearer token', async () => {
    const t = await buildApp(KV_TARGETS[0], { config: { metricsToken: 'scrape-secret' } });
    try {
      expect((await t.http().get('/metrics')).status).toBe(401);
      expect((await t.http().get('/metrics').set('Authorization', 'Bearer wrong')).status).toBe(401);
      const ok = await t.http().get('/metrics').set('Authorization', 'Bearer scrape-secret');
      expect(ok.status).toBe(200);
      expect(ok.text).toContain('gateway_relay_requests_total');
    } finally {
      await t.close();
    }
  });

  test('a non-loopback client is refused without a token', async () => {
    const fake = {
      path: '/metrics',
      method: 'GET',
      req: { socket: { remoteAddress: '203.0.113.9' } },
      get: () => '',
      set: () => undefined,
      status: 404,
      body: undefined as unknown,
    };
    let passed = false;
    await metricsMiddleware(a.ctx)(fake as never, async () => {
      passed = true;
    });
    expect(passed).toBe(false);
    expect(fake.status).toBe(403);
    expect(String(fake.body)).not.toContain('gateway_');
  });

  test('a spoofed X-Forwarded-For does not change loopback access', async () => {
    const res = await a.http().get('/metrics').set('X-Forwarded-For', '203.0.113.9');
    expect(res.status).toBe(200);
  });
});

describe('relay timer helpers', () => {
  test('overhead excludes the upstream interval', () => {
    // The stopwatch reads process.hrtime: faked (only it), so each interval is exact.
    fakeOnly(['hrtime']);
    try {
      const t = startTimer();
      jest.advanceTimersByTime(4); // bookkeeping before the upstream call
      t.upstreamStart();
      jest.advanceTimersByTime(20);
      expect(t.upstreamMs()).toBe(20); // still in flight
      expect(t.overheadMs()).toBe(4);
      jest.advanceTimersByTime(10);
      t.upstreamEnd();
      jest.advanceTimersByTime(3); // and after it
      expect(t.upstreamMs()).toBe(30);
      expect(t.totalMs()).toBe(37);
      // Total − upstream: what remains is the bookkeeping around the wait.
      expect(t.overheadMs()).toBe(7);
    } finally {
      jest.useRealTimers();
    }
  });

  test('formatOverhead never goes negative and keeps 3 decimals', () => {
    expect(formatOverhead(0.12345)).toBe('0.123');
    expect(formatOverhead(-1)).toBe('0.000');
    expect(OVERHEAD_HEADER).toBe('X-Gateway-Overhead-Ms');
  });
});

describeEach(DB_TARGETS, 'metrics: relay integration', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let key: string;
  let userId: number;
  let channelId: number;

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    await setOptions(app, { ModelRatio: JSON.stringify({ 'metrics-model': 2 }), CompletionRatio: JSON.stringify({ 'metrics-model': 3 }) });
    const u = await makeUser(app, { quota: 1_000_000 });
    userId = u.id;
    key = (await seedToken(app, userId)).key;
    channelId = await seedChannel(app, { base_url: mock.url, models: 'metrics-model', name: 'metrics' });
  });
  afterAll(async () => {
    await mock?.close();
  });

  const quotaOf = async () => Number((await app.knex('users').where({ id: userId }).first()).quota);
  const chat = (stream: boolean) =>
    app
      .http()
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${key}`)
      .send({ model: 'metrics-model', messages: [{ role: 'user', content: 'hi' }], stream });

  test('a relayed request is counted with its channel, model, status and charged quota; the overhead header is sent', async () => {
    const before = await quotaOf();
    const res = await chat(false);
    expect(res.status).toBe(200);
    const overhead = res.headers['x-gateway-overhead-ms'];
    expect(overhead).toMatch(/^\d+\.\d{3}$/);
    const streamed = await chat(true);
    expect(streamed.status).toBe(200);
    expect(streamed.headers['x-gateway-overhead-ms']).toMatch(/^\d+\.\d{3}$/);
    await flushUsage(app);
    const spent = before - (await quotaOf());
    expect(spent).toBeGreaterThan(0);

    const text = (await app.http().get('/metrics')).text;
    const labels = { channel: String(channelId), model: 'metrics-model' };
    expect(sample(text, 'gateway_relay_requests_total', { ...labels, status: '200' })).toBe(2);
    expect(sample(text, 'gateway_quota_spent_total', labels)).toBe(spent);
    expect(sample(text, 'gateway_overhead_duration_seconds_count', labels)).toBe(2);
    expect(sample(text, 'gateway_upstream_duration_seconds_count', labels)).toBe(2);
  });

  test('a call no channel answers is counted on the last channel tried, with the status the client got and no quota', async () => {
    await setOptions(app, { ModelRatio: JSON.stringify({ 'metrics-model': 2, 'metrics-down': 1 }) });
    const down = await seedChannel(app, { base_url: mock.url, models: 'metrics-down', name: 'metrics-down', key: 'sk-fault-502', auto_ban: 0 });
    const before = await quotaOf();
    const res = await app
      .http()
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${key}`)
      .send({ model: 'metrics-down', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(502);
    await flushUsage(app);
    expect(await quotaOf()).toBe(before); // the reservation was refunded
    const text = (await app.http().get('/metrics')).text;
    const labels = { channel: String(down), model: 'metrics-down' };
    expect(sample(text, 'gateway_relay_requests_total', { ...labels, status: '502' })).toBe(1);
    expect(sample(text, 'gateway_quota_spent_total', labels)).toBeUndefined();
  });

  test('a request refused before any channel is not billed to a channel', async () => {
    const res = await app
      .http()
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${key}`)
      .send({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBeGreaterThanOrEqual(400);
    const text = (await app.http().get('/metrics')).text;
    expect(sample(text, 'gateway_relay_requests_total', { channel: String(channelId), model: 'no-such-model' })).toBeUndefined();
  });
});
