/**
 * Circuit breakers and health-aware choice (docs/routing.md) against an upstream with scheduled
 * faults per key: traffic leaves a slow channel, an open breaker gets nothing until its one
 * probe, a healed channel gets its traffic back, Retry-After is honoured, and two nodes on one
 * Redis see the same breaker state.
 *
 * The cool-downs are on the wall clock (`Date.now()` against a stored `openUntil`): the tests fake
 * `Date` only (helpers/clock.ts) and move it to the breaker's deadline instead of sleeping through it.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ALL_TARGETS, buildApp, describeEach, KV_TARGETS, loginAgent, makeUser, setupRoot, type Target, type TestApp } from '../helpers/app';
import { fakeWallClock, waitFor } from '../helpers/clock';
import { startFaultUpstream, type FaultUpstream } from '../mock-upstream/faults';
import { listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { ROLE } from '../../server/src/repositories/users';
import { BREAKER, failureKind, healthBoard, retryAfterMs, type TargetHealth } from '../../server/src/channels/healthBoard';
import { channelEntry, pickChannel, type ChannelEntry, type Tier } from '../../server/src/channels/routeTable';
import type { ChannelRow } from '../../server/src/repositories/channels';

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

/** `n` calls on the (fake, standing) clock's last millisecond of `h`'s cool-down. */
async function callsWhileOpen(r: Rig, model: string, h: TargetHealth, n: number): Promise<void> {
  jest.setSystemTime(h.openUntil - 1);
  for (let i = 0; i < n; i++) expect(await chat(r, model)).toBe(200);
}

/** Moves the clock to the end of `h`'s cool-down: the next call may be its probe. */
const untilCooled = (h: TargetHealth) => jest.setSystemTime(Math.max(Date.now(), h.openUntil));

// Every database, and Redis on top (breaker changes are then published: a node's own must not disturb it).
describeEach(ALL_TARGETS, 'routing: breakers and health-aware choice', (getApp) => {
  let r: Rig;
  beforeAll(async () => {
    r = await rig(getApp(), await startFaultUpstream());
  });
  afterAll(async () => {
    await r.gw.close();
    await r.up.close();
  });
  beforeEach(async () => {
    fakeWallClock();
    r.up.reset();
    await setOptions(r.app, BASE_OPTIONS);
  });
  afterEach(() => jest.useRealTimers());

  test('traffic shifts away from a slow channel within a bounded number of requests', async () => {
    const model = fresh();
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-slow-a' });
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-fast-a' });
    r.up.set('sk-slow-a', { mode: 'slow', delayMs: 600 });
    // Until both have answered once, an unmeasured channel scores as well as the best one (it must
    // be tried to be known): that phase is a coin toss per call, so it is not what is counted.
    const seen = new Set<string>();
    let before = 0;
    while (seen.size < 2) {
      expect(++before).toBeLessThanOrEqual(30); // 2^-30 by chance
      expect(await chat(r, model)).toBe(200);
      seen.add(r.up.requests[r.up.requests.length - 1]!.key);
    }
    // Once both are measured the slow one keeps a small share: ((best + 100) / (600 + 100))², about
    // 2-5 % of 30 calls (a mean of 1-1.5) as the fast one's own latency varies. Blind to latency it
    // would get half: 7 or fewer then has a probability below 0.1 %.
    let slow = 0;
    for (let i = 0; i < 30; i++) {
      expect(await chat(r, model)).toBe(200);
      if (r.up.requests[r.up.requests.length - 1]!.key === 'sk-slow-a') slow++;
    }
    expect(slow).toBeLessThanOrEqual(7);
    // The console sees the latency of each.
    const root = await rootOf(r.app);
    const health = (await root.get('/api/channel/health')).body.data;
    const byKey = await channelIdsByKey(r.app, ['sk-slow-a', 'sk-fast-a']);
    expect(health.channels[byKey['sk-slow-a']!].ttfb_ms).toBeGreaterThan(500);
    expect(health.channels[byKey['sk-slow-a']!].ttfb_ms).toBeGreaterThan(health.channels[byKey['sk-fast-a']!].ttfb_ms + 300);
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
    const h = healthBoard(r.app.ctx).target(bad);
    // Three failures (each call then retried on the other channel) open the breaker.
    for (let i = 0; i < 3; i++) expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-down-c')).toBe(3);
    expect(h.state).toBe(BREAKER.open);
    expect(h.openUntil - h.lastFailureAt).toBe(1000);
    await callsWhileOpen(r, model, h, 10);
    expect(r.up.count('sk-down-c')).toBe(3);
    const root = await rootOf(r.app);
    let health = (await root.get('/api/channel/health')).body.data;
    expect(health.channels[bad].breaker).toBe('open');
    expect(health.channels[bad].last_failure).toContain('502');
    expect(health.open.map((o: { id: number }) => o.id)).toContain(bad);
    // After the cool-down (1 s) one call is the probe; it fails: open again, now for 2 s.
    untilCooled(h);
    expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-down-c')).toBe(4);
    expect(h.state).toBe(BREAKER.open);
    expect(h.openUntil - h.lastFailureAt).toBe(2000);
    await callsWhileOpen(r, model, h, 5);
    expect(r.up.count('sk-down-c')).toBe(4);
    health = (await root.get('/api/channel/health')).body.data;
    expect(health.channels[bad].open_until).toBe(Math.ceil(h.openUntil / 1000));
    // The next probe fails too: 4 s.
    untilCooled(h);
    expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-down-c')).toBe(5);
    expect(h.openUntil - h.lastFailureAt).toBe(4000);
    const metrics = await r.app.http().get('/metrics');
    expect(metrics.text).toMatch(/gateway_breaker_transitions_total\{scope="channel",to="open",app="gateway"\} [1-9]/);
    expect(metrics.text).toMatch(new RegExp(`gateway_breaker_state\\{channel="${bad}",key_index="",app="gateway"\\} 1`));
    expect(metrics.text).toMatch(new RegExp(`gateway_upstream_failures_total\\{channel="${bad}",key_index="",kind="server",app="gateway"\\} 5`));
    expect(metrics.text).toMatch(/gateway_relay_retries_total\{app="gateway"\} [1-9]/);
  });

  test('a healed channel gets its traffic back after a passing probe', async () => {
    const model = fresh();
    const flaky = await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-heal-d', priority: 10 });
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-ok-d', priority: 0 });
    const h = healthBoard(r.app.ctx).target(flaky);
    r.up.set('sk-heal-d', { mode: 'failN', n: 3 });
    for (let i = 0; i < 3; i++) expect(await chat(r, model)).toBe(200);
    const resting = 3;
    await callsWhileOpen(r, model, h, resting);
    expect(r.up.count('sk-heal-d')).toBe(3);
    expect(r.up.count('sk-ok-d')).toBe(3 + resting);
    untilCooled(h);
    for (let i = 0; i < 6; i++) expect(await chat(r, model)).toBe(200);
    // The probe passed and closed it: every call since went to the (higher-priority) healed channel.
    expect(r.up.count('sk-heal-d')).toBe(9);
    expect(r.up.count('sk-ok-d')).toBe(3 + resting);
    const root = await rootOf(r.app);
    expect((await root.get('/api/channel/health')).body.data.channels[flaky].breaker).toBe('closed');
  });

  test('after the cool-down exactly one call is the probe, however many arrive at once; it passes and the channel is back', async () => {
    const model = fresh();
    const bad = await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-probe-k', priority: 10 });
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-ok-k', priority: 0 });
    r.up.set('sk-probe-k', { mode: 'fail', status: 503 });
    for (let i = 0; i < 3; i++) expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-probe-k')).toBe(3);
    // Healed, but held by the upstream: the probe is still out while the others arrive.
    let answer = () => undefined as void;
    r.up.set('sk-probe-k', { mode: 'hold', until: new Promise<void>((resolve) => (answer = resolve)) });
    untilCooled(healthBoard(r.app.ctx).target(bad));
    const calls = Promise.all(Array.from({ length: 8 }, () => chat(r, model)));
    try {
      await waitFor(() => r.up.requests.length === 3 + 3 + 8);
    } finally {
      answer();
    }
    expect(await calls).toEqual(Array(8).fill(200));
    expect(r.up.count('sk-probe-k')).toBe(4);
    expect(r.up.count('sk-ok-k')).toBe(3 + 7);
    expect(healthBoard(r.app.ctx).target(bad).state).toBe(BREAKER.closed);
    for (let i = 0; i < 3; i++) expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-probe-k')).toBe(7);
  });

  test('a flaky channel (every other call fails) gets less traffic before its breaker would open', async () => {
    const model = fresh();
    // A breaker that never opens here: only the error rate in the health score moves traffic.
    await setOptions(r.app, { RoutingBreakerFailures: '1000' });
    const flaky = await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-flaky-l' });
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-steady-l' });
    r.up.set('sk-flaky-l', { mode: 'flaky', every: 2, status: 500 });
    for (let i = 0; i < 150; i++) expect(await chat(r, model)).toBe(200);
    // Blind to errors it would get about 75 of 150 first attempts; with an error rate near ½ its
    // score is about ¼, so about 30 (every request to it is a first attempt: a retry moves on).
    const toFlaky = r.up.count('sk-flaky-l');
    expect(toFlaky).toBeGreaterThanOrEqual(2);
    expect(toFlaky).toBeLessThanOrEqual(55);
    // Its failures (the 1st, 3rd … of its calls) were retried on the steady one.
    expect(r.up.count('sk-steady-l')).toBe(150 - Math.floor(toFlaky / 2));
    expect(healthBoard(r.app.ctx).target(flaky).state).toBe(BREAKER.closed);
    const root = await rootOf(r.app);
    expect((await root.get('/api/channel/health')).body.data.channels[flaky].error_rate).toBeGreaterThan(0.2);
  });

  test('connect errors count: a channel nobody listens for is opened and left alone', async () => {
    const model = fresh();
    const port = await closedPort();
    const dead = await seedChannel(r.app, { base_url: `http://127.0.0.1:${port}`, models: model, key: 'sk-conn-m', priority: 10 });
    await seedChannel(r.app, { base_url: r.up.url, models: model, key: 'sk-ok-m', priority: 0 });
    for (let i = 0; i < 6; i++) expect(await chat(r, model)).toBe(200);
    expect(r.up.count('sk-ok-m')).toBe(6);
    expect(healthBoard(r.app.ctx).target(dead).state).toBe(BREAKER.open);
    const metrics = await r.app.http().get('/metrics');
    expect(metrics.text).toMatch(new RegExp(`gateway_upstream_failures_total\\{channel="${dead}",key_index="",kind="connect",app="gateway"\\} 3\\n`));
  });

  test('breaker rules on the board: the window, back-off doubling up to the cap, a stuck probe, Retry-After capped', () => {
    const board = healthBoard(r.app.ctx);
    const h = board.target(900_000 + ++n);
    const t0 = 2_000_000_000_000;
    board.failure(h, 'server', t0, 'x');
    board.failure(h, 'server', t0 + 30_000, 'x');
    board.failure(h, 'server', t0 + 70_000, 'x'); // the first is out of the 60 s window by now
    expect(h.state).toBe(BREAKER.closed);
    board.failure(h, 'server', t0 + 80_000, 'x');
    expect(h.state).toBe(BREAKER.open);
    expect(h.openUntil).toBe(t0 + 81_000);
    expect(board.available(h, t0 + 80_999)).toBe(false);
    // Failed probes: cool-down × 2^k (1 s here), capped at 600 s.
    let now = h.openUntil;
    const rests: number[] = [];
    for (let k = 0; k < 12; k++) {
      expect(board.available(h, now)).toBe(true);
      board.claim(h, now);
      expect(h.state).toBe(BREAKER.halfOpen);
      expect(board.available(h, now + 1)).toBe(false); // one probe at a time
      board.failure(h, 'server', now + 10, 'x');
      expect(h.state).toBe(BREAKER.open);
      rests.push(h.openUntil - (now + 10));
      now = h.openUntil;
    }
    expect(rests).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 512, 600, 600, 600].map((s) => s * 1000));
    // A probe whose outcome never came back frees its slot after two minutes.
    board.claim(h, now);
    expect(board.available(h, now + 119_000)).toBe(false);
    expect(board.available(h, now + 121_000)).toBe(true);
    board.success(h, 20, now + 121_000);
    expect(h.state).toBe(BREAKER.closed);
    expect(h.reopens).toBe(0);
    expect(h.err).toBe(0);
    // A 429 with an hour of Retry-After rests it for the longest cool-down only; without one it counts like a 5xx.
    board.failure(h, 'rate_limit', now, 'x', 3_600_000);
    expect(h.openUntil - now).toBe(600_000);
    board.reset(h);
    board.failure(h, 'rate_limit', now, 'x');
    expect(h.state).toBe(BREAKER.closed);
    board.reset(h);
    board.targets.delete(h.id);
  });

  test('weight × health score: shares of the draw', async () => {
    const board = healthBoard(r.app.ctx);
    const entry = (weight: number): ChannelEntry =>
      channelEntry({ id: 900_000 + ++n, type: 1, name: 'x', key: 'k', weight, priority: 0, status: 1 } as unknown as ChannelRow, board);
    const share = (a: ChannelEntry, b: ChannelEntry, weights: number[]) => {
      const tier: Tier = { priority: 0, channels: [a, b], weights, total: weights[0]! + weights[1]! };
      let hits = 0;
      for (let i = 0; i < 20_000; i++) if (pickChannel([tier], 0, new Set(), undefined, { board, now: Date.now() }) === a) hits++;
      return hits / 20_000;
    };
    let a = entry(1);
    let b = entry(1);
    expect(share(a, b, [1, 1])).toBeCloseTo(0.5, 1);
    // Error rate ½: score ¼, so a fifth of the draws.
    a.health!.err = 0.5;
    expect(share(a, b, [1, 1])).toBeGreaterThan(0.17);
    expect(share(a, b, [1, 1])).toBeLessThan(0.23);
    // 300 ms next to 5 ms: ((5 + 100) / (300 + 100))² ≈ 0.069, so about 6.4 %.
    a = entry(1);
    b = entry(1);
    Object.assign(a.health!, { ttfb: 300, samples: 5 });
    Object.assign(b.health!, { ttfb: 5, samples: 5 });
    const slow = share(a, b, [1, 1]);
    expect(slow).toBeGreaterThan(0.045);
    expect(slow).toBeLessThan(0.085);
    // The weights still count: 3 : 1 among equally healthy channels.
    a = entry(3);
    b = entry(1);
    expect(share(a, b, [3, 1])).toBeCloseTo(0.75, 1);
    // Health-aware off: pure weight, whatever the health.
    a = entry(1);
    b = entry(1);
    Object.assign(a.health!, { ttfb: 300, samples: 5, err: 0.9 });
    await setOptions(r.app, { RoutingHealthAwareEnabled: 'false' });
    expect(share(a, b, [1, 1])).toBeCloseTo(0.5, 1);
    for (const id of [...board.targets.keys()]) if (Number(id.slice(1)) > 900_000) board.targets.delete(id);
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
    const bh = healthBoard(r.app.ctx).target(limited);
    expect(bh.openUntil - bh.lastFailureAt).toBe(2000);
    await callsWhileOpen(r, model, bh, 4);
    expect(r.up.count('sk-rate-e')).toBe(1);
    r.up.set('sk-rate-e', { mode: 'ok' });
    untilCooled(bh);
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

/** A local port nothing listens on (connection refused). */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

async function channelIdsByKey(app: TestApp, keys: string[]): Promise<Record<string, number>> {
  const rows: Array<{ id: number; key: string }> = await app.knex('channels').whereIn('key', keys).select('id', 'key');
  return Object.fromEntries(rows.map((x) => [x.key, Number(x.id)]));
}

/**
 * Two nodes (two apps in this process) sharing the database and Redis: a breaker opened on one is
 * open on the other. The same with two gateway processes: multiNode.test.ts.
 */
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
      fakeWallClock();
      try {
        await setOptions(a, { RoutingBreakerCooldownSeconds: '2' });
        // Options and channels reach node B through the shared database and cache invalidation.
        await waitFor(() => b.ctx.options.get('RoutingBreakerCooldownSeconds') === '2');
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
        await waitFor(() => onB.state === 1);
        expect(onB.openUntil).toBe(healthBoard(a.ctx).target(bad).openUntil);
        await callsWhileOpen(rb, model, onB, 5);
        expect(up.count('sk-auth-x')).toBe(2);
        // B's probe after the cool-down passes and closes it on A too.
        up.set('sk-auth-x', { mode: 'ok' });
        untilCooled(onB);
        expect(await chat(rb, model)).toBe(200);
        expect(up.count('sk-auth-x')).toBe(3);
        const onA = healthBoard(a.ctx).target(bad);
        await waitFor(() => onA.state === 0);
        expect(await chat(ra, model)).toBe(200);
        expect(up.count('sk-auth-x')).toBe(4);
      } finally {
        jest.useRealTimers();
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
