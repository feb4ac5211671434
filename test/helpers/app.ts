import crypto from 'node:crypto';
import request from 'supertest';
import knexFactory from 'knex';
import Redis from 'ioredis';
import { createApp, type GatewayApp } from '../../server/src/app';
import { loadConfig, type AppConfig } from '../../server/src/config';
import { createLogger } from '../../server/src/lib/logger';
import { createAccount } from '../../server/src/services/accounts';
import { ROLE } from '../../server/src/repositories/users';

/**
 * Test targets. Every DB test runs on SQLite, and on PostgreSQL when TEST_DATABASE_URL is set
 * (a fresh schema per app). Cache/limit tests run in-process, and on Redis when TEST_REDIS_URL is set.
 */
export interface Target {
  name: string;
  db: 'sqlite' | 'postgres';
  redis: boolean;
}

export const DB_TARGETS: Target[] = [
  { name: 'sqlite', db: 'sqlite', redis: false },
  ...(process.env.TEST_DATABASE_URL ? [{ name: 'postgres', db: 'postgres' as const, redis: false }] : []),
];

export const KV_TARGETS: Target[] = [
  { name: 'sqlite+memory', db: 'sqlite', redis: false },
  ...(process.env.TEST_REDIS_URL ? [{ name: 'sqlite+redis', db: 'sqlite' as const, redis: true }] : []),
];

/** DB × cache: every DB, plus Redis on the last DB when configured. */
export const ALL_TARGETS: Target[] = [
  ...DB_TARGETS,
  ...(process.env.TEST_REDIS_URL
    ? [
        {
          name: `${process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite'}+redis`,
          db: (process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite') as 'postgres' | 'sqlite',
          redis: true,
        },
      ]
    : []),
];

export interface TestApp extends GatewayApp {
  target: Target;
  knex: GatewayApp['ctx']['knex'];
  /**
   * Supertest against the app (no cookies kept), speaking as the Chinese console
   * (`Accept-Language: zh`): the wording most tests check is the zh catalogue's. A test of
   * another language sets its own header; `request(app.callback)` sends none.
   */
  http(): request.Agent;
  /** The app's PostgreSQL schema (drop on close), if any. */
  schema?: string;
}

export interface TestAppOptions {
  /** Share the database/Redis namespace of another app (multi-node tests). */
  shareWith?: TestApp;
  config?: Partial<AppConfig>;
}

const quietLogger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

export async function buildApp(target: Target, opts: TestAppOptions = {}): Promise<TestApp> {
  const base = loadConfig({});
  const share = opts.shareWith;
  const schema = target.db === 'postgres' ? (share?.schema ?? `t_${process.pid}_${crypto.randomBytes(4).toString('hex')}`) : undefined;
  let databaseUrl: string;
  if (target.db === 'postgres') databaseUrl = process.env.TEST_DATABASE_URL!;
  else if (share) databaseUrl = share.ctx.config.databaseUrl;
  else databaseUrl = 'sqlite::memory:';
  if (share && target.db === 'sqlite' && databaseUrl === 'sqlite::memory:') {
    throw new Error('shareWith on SQLite needs a file database: pass config.databaseUrl');
  }
  const config: AppConfig = {
    ...base,
    databaseUrl,
    pgSchema: schema,
    redisUrl: target.redis ? process.env.TEST_REDIS_URL : undefined,
    redisPrefix: share?.ctx.config.redisPrefix ?? `test:${crypto.randomBytes(6).toString('hex')}:`,
    sessionSecret: share?.ctx.config.sessionSecret ?? 'test-session-secret',
    sessionSecretGenerated: false,
    adminDist: undefined,
    // Suites fire many calls from one IP; tests of the limit set their own.
    apiRateLimit: { count: 0, windowSeconds: 60 },
    // Apps sharing a database are distinct nodes (their quota reservations: ledger/recovery.ts).
    nodeId: `test-${crypto.randomBytes(4).toString('hex')}`,
    ...opts.config,
  };
  const gateway = await createApp(config, { logger: quietLogger, serveConsole: false });
  const app: TestApp = {
    ...gateway,
    target,
    knex: gateway.ctx.knex,
    schema,
    http: () => request.agent(gateway.callback).set('Accept-Language', 'zh'),
    close: async () => {
      await gateway.close();
      if (schema && !share) await dropSchema(schema);
      if (target.redis && !share) await clearRedisPrefix(config.redisPrefix);
    },
  };
  return app;
}

async function dropSchema(schema: string) {
  const k = knexFactory({ client: 'pg', connection: process.env.TEST_DATABASE_URL });
  try {
    await k.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await k.destroy();
  }
}

async function clearRedisPrefix(prefix: string) {
  const r = new Redis(process.env.TEST_REDIS_URL!);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) await r.del(...keys);
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}

/** Runs `fn` once per target as a describe block with a fresh app in beforeAll. */
export function describeEach(targets: Target[], title: string, fn: (get: () => TestApp) => void): void {
  describe.each(targets.map((t) => [t.name, t] as const))(`${title} [%s]`, (_name, target) => {
    let app: TestApp | undefined;
    beforeAll(async () => {
      app = await buildApp(target);
    });
    afterAll(async () => {
      await app?.close();
    });
    fn(() => {
      if (!app) throw new Error('app not built');
      return app;
    });
  });
}

/** Completes setup with a root user; returns its credentials. */
export async function setupRoot(app: TestApp, username = 'root', password = 'rootpass123') {
  const res = await app.http().post('/api/setup').send({ username, password, confirmPassword: password });
  if (!res.body.success) throw new Error(`setup failed: ${res.body.message}`);
  const user = await app.knex('users').where({ username }).first();
  return { id: user.id as number, username, password };
}

/** Creates a user straight in the DB (bypassing the API) with optional role/quota. */
export async function makeUser(app: TestApp, fields: { username?: string; password?: string; role?: number; quota?: number; group?: string } = {}) {
  const username = fields.username ?? `u${crypto.randomBytes(4).toString('hex')}`.slice(0, 12);
  const password = fields.password ?? 'password123';
  const u = await createAccount(app.ctx, { username, password, role: fields.role ?? ROLE.user, group: fields.group });
  if (fields.quota !== undefined) await app.knex('users').where({ id: u.id }).update({ quota: fields.quota });
  return { id: u.id, username, password };
}

/**
 * Logs in through the API and returns an agent that keeps the session cookie and sends the
 * `New-Api-User` and `Accept-Language: zh` headers on every call, as the (Chinese) console does.
 */
export async function loginAgent(app: TestApp, username: string, password: string) {
  const agent = app.http();
  const res = await agent.post('/api/user/login').send({ username, password });
  if (!res.body.success) throw new Error(`login failed: ${res.body.message}`);
  const uid = String(res.body.data.id);
  // The Chinese console: the product's wording these tests check is the zh catalogue's.
  const wrap = (m: 'get' | 'post' | 'put' | 'delete') => (url: string) => agent[m](url).set('New-Api-User', uid).set('Accept-Language', 'zh');
  return { agent, uid: Number(uid), get: wrap('get'), post: wrap('post'), put: wrap('put'), del: wrap('delete') };
}
export type LoggedIn = Awaited<ReturnType<typeof loginAgent>>;
