/**
 * Circuit breakers and health-aware choice (docs/routing.md) against an upstream with scheduled
 * faults per key: traffic leaves a slow channel, an open breaker gets nothing until its one
 * probe, a healed channel gets its traffic back, Retry-After is honoured, and two nodes on one
 * Redis see the same breaker state.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ALL_TARGETS, buildApp, DB_TARGETS, describeEach, KV_TARGETS, loginAgent, makeUser, setupRoot, type Target, type TestApp } from '../helpers/app';
import { startFaultUpstream, type FaultUpstream } from '../mock-upstream/faults';
import { listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { ROLE } from '../../server/src/repositories/users';
import { failureKind, healthBoard, retryAfterMs } from '../../server/src/routing/board';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const BASE_OPTIONS = {
  ModelRatio: JSON.stringify({}),
  GroupRatio: JSON.stringify({ default: 1 }),
  PreConsumedQuota: '0',
  RetryTimes: '1',
  AutomaticDisableChannelEnabled: 'false',
  RoutingBreakerEnabled: 'true',
  RoutingHealthAwareEnabled: 'true',
  RoutingBreakerFailures: '3',
  RoutingBreakerWindowSeconds: '60',
  RoutingBreakerCooldownSeconds: '1',
  RoutingBreakerMaxCooldownSeconds: '600',
};

interface Rig {
  app: TestApp;
  up: FaultUpstream;
  gw: { url: string; close(): Promise<void> };
  key: string;
}

async function rig(app: TestApp, up: FaultUpstream): Promise<Rig> {
  const gw = await listen(app.callback);
  await setOptions(app, BASE_OPTIONS);
  const u = await makeUser(app, { quota: 100_000_000 });
  await app
    .knex('users')
    .where({ id: u.id })
    .update({ setting: JSON.stringify({ accept_unset_model_ratio_model: true }) });
  const t = await seedToken(app, u.id);
  return { app, up, gw, key: t.key };
}

async function chat(r: Rig, model: string): Promise<number> {
  const res = await fetch(`${r.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${r.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

let n = 0;
const fresh = () => `h-model-${process.pid}-${++n}`;

describeEach(DB_TARGETS, 'routing: breakers and health-aware choice', (getApp) => {
  let r: Rig;
  beforeAll(async () => {
    r = await rig(getApp(), await startFaultUpstream());
  });
  afterAll(async () => {
    await r.gw.close();
    await r.up.close();
  });
  beforeEach(async () => {
    r.up.reset();
    await setOptions(r.app, BASE_OPTIONS);
  });

  test('traffic shifts away from a slow channel within a bounded number of requests', async () => {
    const model = fresh();
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-slow-a' });
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-fast-a' });
    r.up.set('sk-slow-a', { mode: 'slow', delayMs: 300 });
    const seq: string[] = [];
    for (let i = 0; i < 30; i++) {
      expect(await chat(r, model)).toBe(200);
      seq.push(r.up.requests[r.up.requests.length - 1]!.key);
    }
    const slow = seq.filter((k) => k === 'sk-slow-a').length;
    // Equal weights: blind to latency, the slow one would get about 15 of 30.
    expect(slow).toBeGreaterThanOrEqual(1);
    expect(slow).toBeLessThanOrEqual(9);
    // Once both have been measured, the slow one gets a small share only.
    expect(seq.slice(15).filter((k) => k === 'sk-slow-a').length).toBeLessThanOrEqual(5);
    // The console sees the latency of each.
    const root = await rootOf(r.app);
    const health = (await root.get('/api/channel/health')).body.data;
    const byKey = await channelIdsByKey(r.app, ['sk-slow-a', 'sk-fast-a']);
    expect(health.channels[byKey['sk-slow-a']!].ttfb_ms).toBeGreaterThan(200);
    expect(health.channels[byKey['sk-fast-a']!].ttfb_ms).toBeLessThan(150);
  });

  test('with health-aware routing off the choice is by weight only', async () => {
    const model = fresh();
    await setOptions(r.app, { RoutingHealthAwareEnabled: 'false' });
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-slow-b' });
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-fast-b' });
    r.up.set('sk-slow-b', { mode: 'slow', delayMs: 80 });
    for (let i = 0; i < 24; i++) expect(await chat(r, model)).toBe(200);
    // Binomial(24, ½): fewer than 5 has a probability below 0.1 %.
    expect(r.up.count('sk-slow-b')).toBeGreaterThanOrEqual(5);
    expect(r.up.count('sk-fast-b')).toBeGreaterThanOrEqual(5);
  });

  test('an open breaker sends no traffic until its one probe; a failed probe re-opens it with back-off', async () => {
    const model = fresh();
    const bad = await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-down-c', priority: 10 });
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-ok-c', priority: 0 });
    r.up.set('sk-down-c', { mode: 'fail', status: 502 });
    // Three failures (each call then retried on the other channel) open the breaker.
    for (let i = 0; i < 3; i++) expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-down-c')).toBe(3);
    for (let i = 0; i < 10; i++) expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-down-c')).toBe(3);
    const root = await rootOf(r.app);
    let health = (await root.get('/api/channel/health')).body.data;
    expect(health.channels[bad].breaker).toBe('open');
    expect(health.channels[bad].last_failure).toContain('502');
    expect(health.open.map((o: { id: number }) => o.id)).toContain(bad);
    // After the cool-down (1 s) one call is the probe; it fails: open again, now for 2 s.
    await sleep(1100);
    expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-down-c')).toBe(4);
    for (let i = 0; i < 5; i++) expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-down-c')).toBe(4);
    await sleep(1100);
    expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-down-c')).toBe(4); // back-off: 2 s this time
    health = (await root.get('/api/channel/health')).body.data;
    expect(health.channels[bad].open_until - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(2);
    const metrics = await r.app.http().get('/metrics');
    expect(metrics.text).toMatch(/gateway_breaker_transitions_total\{scope="channel",to="open",app="gateway"\} [1-9]/);
    expect(metrics.text).toMatch(new RegExp(`gateway_breaker_state\\{channel="${bad}",key_index="",app="gateway"\\} 1`));
    expect(metrics.text).toMatch(new RegExp(`gateway_upstream_failures_total\\{channel="${bad}",key_index="",kind="server",app="gateway"\\} 4`));
    expect(metrics.text).toMatch(/gateway_relay_retries_total\{app="gateway"\} [1-9]/);
  });

  test('a healed channel gets its traffic back after a passing probe', async () => {
    const model = fresh();
    const flaky = await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-heal-d', priority: 10 });
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-ok-d', priority: 0 });
    r.up.set('sk-heal-d', { mode: 'failN', n: 3 });
    for (let i = 0; i < 6; i++) expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-heal-d')).toBe(3);
    await sleep(1100);
    for (let i = 0; i < 6; i++) expect(await chat(r, model)).toBe(200);
    // The probe passed and closed it: every call since went to the (higher-priority) healed channel.
    expect(r.up.count('sk-heal-d')).toBe(9);
    expect(r.up.count('sk-ok-d')).toBe(6);
    const root = await rootOf(r.app);
    expect((await root.get('/api/channel/health')).body.data.channels[flaky].breaker).toBe('closed');
  });

  test('a 429 with Retry-After rests the channel for that long at once', async () => {
    const model = fresh();
    const limited = await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-rate-e', priority: 10 });
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-ok-e', priority: 0 });
    r.up.set('sk-rate-e', { mode: 'rate', retryAfter: 2 });
    expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-rate-e')).toBe(1);
    const root = await rootOf(r.app);
    const h = (await root.get('/api/channel/health')).body.data.channels[limited];
    expect(h.breaker).toBe('open');
    expect(h.open_until - Date.now() / 1000).toBeGreaterThan(1);
    for (let i = 0; i < 4; i++) expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-rate-e')).toBe(1);
    r.up.set('sk-rate-e', { mode: 'ok' });
    await sleep(2100);
    for (let i = 0; i < 3; i++) expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-rate-e')).toBe(4);
  });

  test('an auth error opens the breaker at once; when every channel rests the call gets 503', async () => {
    const model = fresh();
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-auth-f' });
    r.up.set('sk-auth-f', { mode: 'auth' });
    expect(await chat(r, model)).toBe(401);
    const res = await fetch(`${r.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${r.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('channels_cooling_down');
    expect(r.up.count('sk-auth-f')).toBe(1);
  });

  test('breakers off: a failing channel keeps getting its share', async () => {
    const model = fresh();
    await setOptions(r.app, { RoutingBreakerEnabled: 'false' });
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-down-g', priority: 10 });
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-ok-g', priority: 0 });
    r.up.set('sk-down-g', { mode: 'fail' });
    for (let i = 0; i < 6; i++) expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-down-g')).toBe(6);
  });

  test('the health view is for admins only', async () => {
    const user = await makeUser(r.app);
    const plain = await loginAgent(r.app, user.username, user.password);
    expect((await plain.get('/api/channel/health')).status).toBe(403);
    const admin = await makeUser(r.app, { role: ROLE.admin });
    const a = await loginAgent(r.app, admin.username, admin.password);
    const res = await a.get('/api/channel/health');
    expect(res.body.success).toBe(true);
    expect(Array.isArray(res.body.data.disabled)).toBe(true);
  });
});

const rootCreds: WeakMap<TestApp, { username: string; password: string }> = new WeakMap();
async function rootOf(app: TestApp) {
  let c = rootCreds.get(app);
  if (!c) {
    c = await setupRoot(app);
    rootCreds.set(app, c);
  }
  return loginAgent(app, c.username, c.password);
}

async function channelIdsByKey(app: TestApp, keys: string[]): Promise<Record<string, number>> {
  const rows: Array<{ id: number; key: string }> = await app.knex('channels').whereIn('key', keys).select('id', 'key');
  return Object.fromEntries(rows.map((x) => [x.key, Number(x.id)]));
}

/** Two nodes sharing the database and Redis: a breaker opened on one is open on the other. */
const SHARED: Target[] = [...KV_TARGETS, ...ALL_TARGETS].filter((t, i, all) => t.redis && all.findIndex((x) => x.name === t.name) === i);
if (SHARED.length) {
  describe.each(SHARED.map((t) => [t.name, t] as const))('routing: breaker state across nodes [%s]', (_name, target) => {
    test('a breaker opened on node A is open on node B, and closed on both after a probe', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-brk-'));
      const config = target.db === 'sqlite' ? { databaseUrl: `sqlite:${path.join(dir, 'db.sqlite')}` } : undefined;
      const a = await buildApp(target, { config });
      const b = await buildApp(target, { shareWith: a, config });
      const up = await startFaultUpstream();
      const ra = await rig(a, up);
      const gwB = await listen(b.callback);
      const rb: Rig = { app: b, up, gw: gwB, key: ra.key };
      try {
        await setOptions(a, { RoutingBreakerCooldownSeconds: '2' });
        // Options and channels reach node B through the shared database and cache invalidation.
        for (let i = 0; i < 100 && b.ctx.options.get('RoutingBreakerCooldownSeconds') !== '2'; i++) await sleep(50);
        const model = fresh();
        const bad = await seedChannel(a, { base_url: up.url, models: model, key: 'sk-auth-x', priority: 10 });
        await seedChannel(a, { base_url: up.url, models: model, key: 'sk-ok-x', priority: 0 });
        up.set('sk-auth-x', { mode: 'auth' });
        // Node B warms its route table first (it must not need a reload to see the breaker).
        up.set('sk-auth-x', { mode: 'ok' });
        expect(await chat(rb, model)).toBe(200);
        expect(up.count('sk-auth-x')).toBe(1);
        up.set('sk-auth-x', { mode: 'auth' });
        expect(await chat(ra, model)).toBe(200); // 401 on A opens it at once, retried on the other channel
        expect(up.count('sk-auth-x')).toBe(2);
        const onB = healthBoard(b.ctx).target(bad);
        for (let i = 0; i < 100 && onB.state !== 1; i++) await sleep(20);
        expect(onB.state).toBe(1);
        for (let i = 0; i < 5; i++) expect(await chat(rb, model)).toBe(200);
        expect(up.count('sk-auth-x')).toBe(2);
        // B's probe after the cool-down passes and closes it on A too.
        up.set('sk-auth-x', { mode: 'ok' });
        await sleep(2100);
        expect(await chat(rb, model)).toBe(200);
        expect(up.count('sk-auth-x')).toBe(3);
        const onA = healthBoard(a.ctx).target(bad);
        for (let i = 0; i < 100 && onA.state !== 0; i++) await sleep(20);
        expect(onA.state).toBe(0);
        expect(await chat(ra, model)).toBe(200);
        expect(up.count('sk-auth-x')).toBe(4);
      } finally {
        await gwB.close();
        await ra.gw.close();
        await up.close();
        await b.close();
        await a.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

describe('routing: failure kinds, Retry-After, health score', () => {
  test('what counts for a breaker', () => {
    expect([0, 500, 502, 503, 408, 429, 401, 403, 400, 404, 413].map(failureKind)).toEqual([
      'connect',
      'server',
      'server',
      'server',
      'server',
      'rate_limit',
      'auth',
      'auth',
      undefined,
      undefined,
      undefined,
    ]);
  });
  test('Retry-After in seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('7', now)).toBe(7000);
    expect(retryAfterMs('1.5', now)).toBe(1500);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('soon', now)).toBe(0);
    expect(retryAfterMs(undefined, now)).toBe(0);
  });
});
