/**
 * Two gateway PROCESSES sharing one database (and Redis when configured), as a multi-node
 * deployment runs: a session ended on one node is refused by the other; the login lockout counts
 * guesses spread over both nodes as one count; and a circuit breaker opened by one node keeps the
 * other node's traffic away from the failing channel until a probe closes it on both
 * (docs/routing.md). The lockout and the breaker need the shared Redis: without it each node
 * counts and keeps its breakers alone, which README and docs/routing.md say — the SQLite variant
 * asserts that per-node breaker behaviour instead.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gatewayProcess';
import { startFaultUpstream, type FaultUpstream } from '../mock-upstream/faults';

interface Shared {
  name: string;
  env: Record<string, string>;
  /** Drops what the run created (PG schema, Redis keys are under a fresh prefix). */
  cleanup(): Promise<void>;
}

const pgUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;

function sqliteShared(): Shared {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-multinode-'));
  return {
    name: 'sqlite file, in-process cache',
    env: { DATABASE_URL: `sqlite:${path.join(dir, 'gw.db')}`, REDIS_URL: '' },
    cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

function pgShared(): Shared {
  const schema = `mn_${process.pid}_${crypto.randomBytes(3).toString('hex')}`;
  return {
    name: 'postgres + redis',
    env: { DATABASE_URL: pgUrl!, DATABASE_SCHEMA: schema, REDIS_URL: redisUrl!, REDIS_PREFIX: `mn:${schema}:` },
    cleanup: async () => {
      const k = knexFactory({ client: 'pg', connection: pgUrl });
      await k.raw(`drop schema if exists "${schema}" cascade`);
      await k.destroy();
    },
  };
}

/** A minimal console client: keeps the session cookies, sends New-Api-User once logged in. */
class Client {
  cookies = new Map<string, string>();
  uid = '';
  async call(base: string, method: string, p: string, body?: unknown): Promise<{ status: number; json: { success?: boolean; message?: string; data?: any } }> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (this.uid) headers['new-api-user'] = this.uid;
    const res = await fetch(base + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : {} };
  }
  async login(base: string, username: string, password: string) {
    const r = await this.call(base, 'POST', '/api/user/login', { username, password });
    if (r.json.success) this.uid = String(r.json.data.id);
    return r;
  }
  copy(): Client {
    const c = new Client();
    c.cookies = new Map(this.cookies);
    c.uid = this.uid;
    return c;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it holds or `deadline` (epoch ms) passes; whether it held. */
async function until(check: () => Promise<boolean>, deadline: number, everyMs = 50): Promise<boolean> {
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}

/**
 * The breaker state of channel `id` as the node at `base` holds it right now (its /metrics, which
 * reads the node's local copy — what its relay reads — without re-reading Redis): 0 closed, 1 open, 2 half-open.
 */
async function breakerOn(base: string, id: number): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = new RegExp(`^gateway_breaker_state\\{channel="${id}",key_index=""[^}]*\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** One chat completion through the node at `base`; its status. */
async function chat(base: string, key: string, model: string): Promise<number> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Breaker cool-down of the breaker test: long enough for propagation and several calls on a loaded machine. */
const COOLDOWN_S = 10;

const SHARED: Array<() => Shared> = [sqliteShared, ...(pgUrl && redisUrl ? [pgShared] : [])];

describe.each(SHARED.map((make) => [make().name, make] as const))('two gateway processes [%s]', (name, make) => {
  let shared: Shared;
  let n1: GatewayProcess | undefined;
  let n2: GatewayProcess | undefined;
  beforeAll(async () => {
    shared = make();
    // The first node creates the schema alone (migrations), then the second joins.
    n1 = await startGatewayProcess({ ...shared.env, SESSION_SECRET: 'multi-node-secret' });
    n2 = await startGatewayProcess({ ...shared.env, SESSION_SECRET: 'multi-node-secret' });
    const setup = await new Client().call(n1.base, 'POST', '/api/setup', { username: 'root', password: 'rootpass123', confirmPassword: 'rootpass123' });
    expect(setup.json.success).toBe(true);
  }, 90_000);
  afterAll(async () => {
    await n1?.kill();
    await n2?.kill();
    await shared?.cleanup();
  });

  it('a session ended on one node is refused on the other (logout everywhere, password change)', async () => {
    const a = new Client();
    expect((await a.login(n1!.base, 'root', 'rootpass123')).json.success).toBe(true);
    const stolen = a.copy();
    expect((await stolen.call(n2!.base, 'GET', '/api/user/self')).json.success).toBe(true);
    expect((await a.call(n2!.base, 'POST', '/api/user/logout_all')).json.success).toBe(true);
    expect((await stolen.call(n1!.base, 'GET', '/api/user/self')).status).toBe(401);
    expect((await stolen.call(n2!.base, 'GET', '/api/user/self')).status).toBe(401);

    const b = new Client();
    expect((await b.login(n2!.base, 'root', 'rootpass123')).json.success).toBe(true);
    const copyOfB = b.copy();
    const changed = await b.call(n2!.base, 'PUT', '/api/user/self', { password: 'rootpass456', original_password: 'rootpass123' });
    expect(changed.json.success).toBe(true);
    expect((await copyOfB.call(n1!.base, 'GET', '/api/user/self')).status).toBe(401);
    // The changing session goes on, under its re-issued cookie, on either node.
    expect((await b.call(n1!.base, 'GET', '/api/user/self')).json.success).toBe(true);
    expect((await new Client().login(n1!.base, 'root', 'rootpass456')).json.success).toBe(true);
  });

  it(
    name === 'postgres + redis'
      ? 'a breaker opened by one node keeps the other node off the failing channel; a probe closes it on both'
      : 'without Redis each node keeps its own breakers: the other node still tries the failing channel',
    async () => {
      let up: FaultUpstream | undefined;
      try {
        up = await startFaultUpstream();
        // Root's password is the one the session test changed it to (rootpass123 when run alone, e.g. with -t).
        const admin = new Client();
        if (!(await admin.login(n1!.base, 'root', 'rootpass456')).json.success) {
          expect((await admin.login(n1!.base, 'root', 'rootpass123')).json.success).toBe(true);
        }
        // Node 1 applies options at once; node 2 hears of them through Redis (without Redis it
        // keeps what it loaded at start — defaults: RetryTimes 0, 5 failures).
        const options = {
          RetryTimes: '1',
          AutomaticDisableChannelEnabled: 'false',
          RoutingBreakerEnabled: 'true',
          RoutingBreakerFailures: '2',
          RoutingBreakerWindowSeconds: '60',
          RoutingBreakerCooldownSeconds: String(COOLDOWN_S),
        };
        for (const [key, value] of Object.entries(options)) {
          expect((await admin.call(n1!.base, 'PUT', '/api/option/', { key, value })).json.success).toBe(true);
        }
        // Two channels for one (priced) model, both on the mock upstream, told apart by their key:
        // the failing one first (higher priority), so a node that does not know it is open calls it.
        const model = 'gpt-4o-mini';
        const channel = async (key: string, priority: number) => {
          const r = await admin.call(n1!.base, 'POST', '/api/channel/', {
            type: 1,
            name: key,
            key,
            base_url: up!.url,
            models: model,
            group: 'default',
            priority,
          });
          expect(r.json.success).toBe(true);
          return Number(r.json.data.id);
        };
        const bad = await channel('sk-mn-bad', 10);
        await channel('sk-mn-good', 0);
        const tok = await admin.call(n1!.base, 'POST', '/api/token/', { name: 'mn', unlimited_quota: true, remain_quota: 0, expired_time: -1 });
        expect(tok.json.success).toBe(true);
        const key = `sk-${tok.json.data.key}`;
        const badCount = () => up!.count('sk-mn-bad');
        const goodCount = () => up!.count('sk-mn-good');

        // Both nodes route the model (node 2's route table is warm before the breaker opens: it
        // must not need a reload to see it). Calls that fail before the relay reach no upstream.
        for (const n of [n1!, n2!]) expect(await until(async () => (await chat(n.base, key, model)) === 200, Date.now() + 30_000, 200)).toBe(true);
        expect(goodCount()).toBe(0);
        const warmed = badCount();
        expect(warmed).toBeGreaterThanOrEqual(2);

        // Node 1: failing calls (each retried on the healthy channel) until its breaker opens — 2 of them.
        up.set('sk-mn-bad', { mode: 'fail', status: 502 });
        for (let i = 0; i < 6 && (await breakerOn(n1!.base, bad)) !== 1; i++) expect(await chat(n1!.base, key, model)).toBe(200);
        expect(await breakerOn(n1!.base, bad)).toBe(1);
        expect(badCount()).toBe(warmed + 2);
        const onN1 = (await admin.call(n1!.base, 'GET', '/api/channel/health')).json.data.channels[bad];
        expect(onN1.breaker).toBe('open');
        // open_until is in seconds, rounded up: the real deadline is within the second before.
        const openUntilMs = onN1.open_until * 1000;
        const surelyOpen = openUntilMs - 1000 - 500;
        const badBefore = badCount();
        const goodBefore = goodCount();

        if (name !== 'postgres + redis') {
          // Per node, as documented: node 2 never heard of node 1's breaker and calls the failing channel.
          await chat(n2!.base, key, model);
          expect(badCount()).toBe(badBefore + 1);
          expect(await breakerOn(n2!.base, bad)).toBe(0);
          // Node 1 still leaves it alone.
          expect(Date.now()).toBeLessThan(surelyOpen);
          expect(await chat(n1!.base, key, model)).toBe(200);
          expect(badCount()).toBe(badBefore + 1);
          return;
        }

        // Node 2 hears of it through Redis: poll its own copy, with a deadline that leaves time for the calls.
        const heard = await until(async () => (await breakerOn(n2!.base, bad)) === 1, surelyOpen - 2500);
        expect(heard).toBe(true);
        const onN2 = (await admin.call(n2!.base, 'GET', '/api/channel/health')).json.data.channels[bad];
        expect(onN2.breaker).toBe('open');
        expect(onN2.open_until).toBe(onN1.open_until);
        // Calls through node 2 while it is surely open: none reaches the failing upstream.
        let made = 0;
        while (made < 6 && Date.now() < surelyOpen) {
          expect(await chat(n2!.base, key, model)).toBe(200);
          made++;
        }
        expect(made).toBeGreaterThanOrEqual(3);
        expect(badCount()).toBe(badBefore);
        expect(goodCount()).toBe(goodBefore + made);

        // Healed: after the cool-down node 2's next call is the probe; it passes and closes the breaker on both nodes.
        up.set('sk-mn-bad', { mode: 'ok' });
        await sleep(Math.max(0, openUntilMs + 200 - Date.now()));
        expect(await chat(n2!.base, key, model)).toBe(200);
        expect(badCount()).toBe(badBefore + 1);
        expect(await breakerOn(n2!.base, bad)).toBe(0);
        expect(await until(async () => (await breakerOn(n1!.base, bad)) === 0, Date.now() + 15_000)).toBe(true);
        expect((await admin.call(n1!.base, 'GET', '/api/channel/health')).json.data.channels[bad].breaker).toBe('closed');
        // Both nodes send its traffic to it again (it is the higher-priority channel).
        expect(await chat(n1!.base, key, model)).toBe(200);
        expect(await chat(n2!.base, key, model)).toBe(200);
        expect(badCount()).toBe(badBefore + 3);
        expect(goodCount()).toBe(goodBefore + made);
      } finally {
        await up?.close();
      }
    },
    120_000,
  );

  if (name === 'postgres + redis') {
    it('the login lockout counts guesses spread over both nodes as one count', async () => {
      const admin = new Client();
      expect((await admin.login(n1!.base, 'root', 'rootpass456')).json.success).toBe(true);
      const created = await admin.call(n1!.base, 'POST', '/api/user/', { username: 'victim', password: 'victimpass1', display_name: 'v' });
      expect(created.json.success).toBe(true);
      // 12 concurrent wrong guesses, alternating nodes: the account limit is 5 in all.
      const guesses = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          new Client().call(i % 2 ? n2!.base : n1!.base, 'POST', '/api/user/login', { username: 'victim', password: `wrong${i}` }),
        ),
      );
      const locked = guesses.filter((g) => g.status === 429).length;
      expect(guesses.every((g) => g.json.success !== true)).toBe(true);
      expect(locked).toBeGreaterThanOrEqual(7);
      // Locked on both nodes, the right password included.
      expect((await new Client().login(n1!.base, 'victim', 'victimpass1')).json.success).not.toBe(true);
      expect((await new Client().login(n2!.base, 'victim', 'victimpass1')).json.success).not.toBe(true);
    });
  }
});
