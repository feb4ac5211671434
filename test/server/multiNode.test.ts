/**
 * Two gateway PROCESSES sharing one database (and Redis when configured), as a multi-node
 * deployment runs: a session ended on one node is refused by the other, and the login lockout
 * counts guesses spread over both nodes as one count (that needs the shared Redis: without it each
 * node counts alone, which README says — one node only).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gatewayProcess';

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
