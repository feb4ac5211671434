/**
 * Deployment (docs/deploy.md): the probes `/healthz` and `/readyz` (server/src/health.ts) on every
 * database and cache, with their failures (a database too slow or closed, Redis cut off) and a
 * draining node; the image's start command run from the files the Dockerfile copies (SQLite,
 * PostgreSQL + Redis), SIGTERM with SHUTDOWN_DELAY_MS, the MIGRATE_ONLY one-shot; and
 * docker-compose.yml's nodes and proxy. Docker itself does not run here: the image's layout is
 * rebuilt in a temporary directory from the Dockerfile's own COPY lines.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import request from 'supertest';
import YAML from 'yaml';
import { ENVIRONMENT, parseEnvironment } from '../../config/environment';
import { migrationSource } from '../../migrations';
import { READY_CHECK_TIMEOUT_MS, READY_REUSE_MS } from '../../server/src/health';
import { ALL_TARGETS, buildApp, type TestApp } from '../helpers/app';
import { waitFor } from '../helpers/clock';

const ROOT = path.resolve(__dirname, '../..');
const pgUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ProbeAnswer {
  status: number;
  body: { status?: string; checks?: Record<string, string> };
  text: string;
}

async function probe(app: TestApp, p: string): Promise<ProbeAnswer> {
  const res = await request(app.callback).get(p);
  return { status: res.status, body: res.body as ProbeAnswer['body'], text: res.text };
}

/** Counts the readiness round's queries on `app`'s database (the ledger and batchers run their own). */
function countProbeQueries(app: TestApp): { count: () => number; stop: () => void } {
  let n = 0;
  const onQuery = (q: { sql?: string }) => {
    const sql = (q.sql ?? '').toLowerCase();
    if (sql === 'select 1' || sql.includes('knex_migrations')) n++;
  };
  app.knex.on('query', onQuery);
  return { count: () => n, stop: () => void app.knex.off('query', onQuery) };
}

describe.each(ALL_TARGETS.map((t) => [t.name, t] as const))('probes [%s]', (_name, target) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await buildApp(target);
  });
  afterAll(async () => {
    await app?.close();
  });

  test('GET /healthz: 200 {"status":"ok"}; GET /readyz: 200 with the database, the migrations (and Redis) ok', async () => {
    const live = await probe(app, '/healthz');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    const ready = await probe(app, '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok', checks: { database: 'ok', migrations: 'ok', ...(target.redis ? { redis: 'ok' } : {}) } });
    const res = await request(app.callback).get('/readyz');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  test('HEAD answers without a body, other methods 405, a query string is ignored; other paths are not probes; /api/status unchanged', async () => {
    const head = await request(app.callback).head('/readyz');
    expect(head.status).toBe(200);
    expect(head.text ?? '').toBe('');
    const post = await request(app.callback).post('/healthz').send({});
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect((await probe(app, '/healthz?from=lb')).body).toEqual({ status: 'ok' });
    expect((await probe(app, '/readyz?x=1')).status).toBe(200);
    // Not a probe: the path goes on to Koa as before.
    expect((await probe(app, '/healthz/x')).body).not.toEqual({ status: 'ok' });
    const status = await request(app.callback).get('/api/status');
    expect(status.status).toBe(200);
    expect(status.body.success).toBe(true);
    expect(status.body.data.version).toBe(app.ctx.config.version);
  });

  test('probes at once share one round of checks, and a round is reused for READY_REUSE_MS: a flood costs no query per probe', async () => {
    await sleep(READY_REUSE_MS + 50);
    const queries = countProbeQueries(app);
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => probe(app, '/readyz')));
      expect(answers.every((a) => a.status === 200)).toBe(true);
      // One round: `select 1`, then the applied migrations.
      expect(queries.count()).toBe(2);
      await Promise.all(Array.from({ length: 20 }, () => probe(app, '/readyz')));
      expect(queries.count()).toBe(2);
    } finally {
      queries.stop();
    }
  });

  test('a database that does not answer in time: 503 {database: "timeout"} within the bound; ready again once it answers', async () => {
    await sleep(READY_REUSE_MS + 50);
    // Every connection of the pool held by an open transaction: `select 1` waits for one.
    const max = (app.knex.client as { pool?: { max?: number } }).pool?.max ?? 1;
    const held = await Promise.all(Array.from({ length: max }, () => app.knex.transaction()));
    let answer: ProbeAnswer;
    const t0 = Date.now();
    try {
      answer = await probe(app, '/readyz');
    } finally {
      await Promise.all(held.map((trx) => trx.rollback()));
    }
    expect(Date.now() - t0).toBeLessThan(READY_CHECK_TIMEOUT_MS + 1500);
    expect(answer.status).toBe(503);
    expect(answer.body).toEqual({ status: 'unavailable', checks: { database: 'timeout', migrations: 'unknown', ...(target.redis ? { redis: 'ok' } : {}) } });
    await waitFor(async () => (await probe(app, '/readyz')).status === 200, 10_000, 100);
  });

  test('a draining node: /readyz 503 {"status":"draining"} at once, without a check; /healthz and everything else still served', async () => {
    await sleep(READY_REUSE_MS + 50);
    const queries = countProbeQueries(app);
    try {
      app.startDraining();
      const t0 = Date.now();
      const ready = await probe(app, '/readyz');
      expect(Date.now() - t0).toBeLessThan(READY_CHECK_TIMEOUT_MS);
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'draining' });
      expect(queries.count()).toBe(0);
    } finally {
      queries.stop();
    }
    expect((await probe(app, '/healthz')).status).toBe(200);
    expect((await request(app.callback).get('/api/status')).body.success).toBe(true);
  });
});

describe.each(ALL_TARGETS.map((t) => [t.name, t] as const))('readiness of a closed app [%s]', (_name, target) => {
  test('database (and Redis) closed: 503 naming each failed check, and nothing of the URLs or driver messages', async () => {
    const app = await buildApp(target);
    expect((await probe(app, '/readyz')).status).toBe(200);
    await app.close();
    await sleep(READY_REUSE_MS + 50);
    const answer = await probe(app, '/readyz');
    expect(answer.status).toBe(503);
    expect(answer.body).toEqual({ status: 'unavailable', checks: { database: 'error', migrations: 'unknown', ...(target.redis ? { redis: 'error' } : {}) } });
    // Fixed words only: no URL, host, port, user or error text.
    expect(answer.text).toMatch(/^[{}a-z":,]+$/);
    expect((await probe(app, '/healthz')).status).toBe(200);
  });
});

/** A TCP relay in front of `target` that can be cut (connections destroyed, port closed) and restored on the same port. */
async function cuttableRelay(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    async cut() {
      await new Promise<void>((r) => {
        server.close(() => r());
        for (const s of sockets) s.destroy();
      });
    },
    async restore() {
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    },
    async close() {
      for (const s of sockets) s.destroy();
      if (server.listening) await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const REDIS_TARGETS = ALL_TARGETS.filter((t) => t.redis);

// Redis targets only (TEST_REDIS_URL): without Redis there is nothing to cut.
if (REDIS_TARGETS.length)
  describe.each(REDIS_TARGETS.map((t) => [t.name, t] as const))('readiness with Redis cut off [%s]', (_name, target) => {
    test('Redis unreachable: 503 {redis: "error"} while the database is fine; 200 again once Redis is back', async () => {
      const url = new URL(redisUrl!);
      const relay = await cuttableRelay({ host: url.hostname, port: Number(url.port || 6379) });
      const app = await buildApp(target, { config: { redisUrl: `redis://127.0.0.1:${relay.port}` } });
      try {
        expect((await probe(app, '/readyz')).status).toBe(200);
        await relay.cut();
        let answer: ProbeAnswer | undefined;
        await waitFor(
          async () => {
            answer = await probe(app, '/readyz');
            return answer.status === 503;
          },
          10_000,
          100,
        );
        expect(answer!.body).toEqual({ status: 'unavailable', checks: { database: 'ok', migrations: 'ok', redis: 'error' } });
        expect(answer!.text).not.toContain(String(relay.port));
        expect((await probe(app, '/healthz')).status).toBe(200);
        await relay.restore();
        await waitFor(async () => (await probe(app, '/readyz')).status === 200, 15_000, 100);
      } finally {
        await app.close();
        await relay.close();
      }
    });
  });

// ---------------------------------------------------------------------------------------------
// The image: its layout rebuilt from the Dockerfile, its CMD run as a process.

const DOCKERFILE = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const ROOT_PACKAGE = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; scripts: Record<string, string> };

/** The Dockerfile's instructions (continuation lines joined, comments dropped), per stage. */
function dockerStages(): Array<{ from: string; lines: string[] }> {
  const joined = DOCKERFILE.replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: Array<{ from: string; lines: string[] }> = [];
  for (const line of joined) {
    if (/^FROM\s/i.test(line)) stages.push({ from: line, lines: [] });
    else stages.at(-1)?.lines.push(line);
  }
  return stages;
}

const runtimeStage = () => dockerStages().at(-1)!;
const instruction = (name: string) => runtimeStage().lines.filter((l) => l.toUpperCase().startsWith(`${name} `));

/** The runtime stage's CMD (exec form). */
function dockerCmd(): string[] {
  const cmd = instruction('CMD');
  expect(cmd).toHaveLength(1);
  return JSON.parse(cmd[0]!.slice(4)) as string[];
}

/**
 * Lays out in `dir` what the runtime stage's COPY lines put in /app: the server bundle built
 * from the sources now (the build stage's `npm run build` does the same), the console as built
 * by `npm install`, the addon as built here, the root package.json; node_modules is linked to the
 * repository's (the deps stage installs the server's production dependencies only: the bundle
 * test below checks that it needs nothing else).
 */
function layOutImage(dir: string): void {
  for (const line of instruction('COPY')) {
    const parts = line.split(/\s+/).slice(1);
    const from = parts[0]!.startsWith('--from=') ? parts.shift()!.slice('--from='.length) : 'context';
    const [src, dst] = parts as [string, string];
    const out = path.join(dir, dst);
    const key = `${from} ${src.replace(/^\/app\//, '')}`;
    fs.mkdirSync(path.dirname(out), { recursive: true });
    switch (key) {
      case 'deps node_modules':
        fs.symlinkSync(path.join(ROOT, 'node_modules'), out, 'dir');
        break;
      case 'deps server/native/addon':
        fs.cpSync(path.join(ROOT, 'server/native/addon'), out, { recursive: true });
        break;
      case 'build server/dist': {
        const built = spawnSync(process.execPath, ['server/build.mjs', 'server/src/index.ts', path.join(out, 'index.cjs')], { cwd: ROOT, encoding: 'utf8' });
        if (built.status !== 0) throw new Error(`bundle: ${built.stderr}`);
        break;
      }
      case 'build admin/dist':
        // Built by `npm install` (postinstall); absent, the gateway serves the API only.
        if (fs.existsSync(path.join(ROOT, 'admin/dist'))) fs.cpSync(path.join(ROOT, 'admin/dist'), out, { recursive: true });
        break;
      case 'context package.json':
        fs.copyFileSync(path.join(ROOT, 'package.json'), dst.endsWith('/') ? path.join(out, 'package.json') : out);
        break;
      default:
        throw new Error(`this test does not know how to lay out "${line}": teach layOutImage`);
    }
  }
}

interface ImageProcess {
  child: ChildProcess;
  base: string;
  output(): string;
  exited: Promise<number | null>;
  kill(): Promise<void>;
}

/**
 * Runs the image's CMD in `dir` (node is this test's node) with only `env` (as in a container:
 * nothing inherited but PATH); resolves once it logs that it listens, or, with `listens: false`,
 * right away.
 */
async function runImage(dir: string, env: Record<string, string>, listens = true): Promise<ImageProcess> {
  const [node, ...args] = dockerCmd();
  expect(node).toBe('node');
  const child = spawn(process.execPath, args, {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const proc: ImageProcess = {
    child,
    base: '',
    output: () => out,
    exited,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  if (!listens) return proc;
  const t0 = Date.now();
  for (;;) {
    const line = out.split('\n').find((l) => l.includes('"gateway listening"'));
    if (line) {
      proc.base = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
      return proc;
    }
    if (child.exitCode !== null || Date.now() - t0 > 40_000) {
      await proc.kill();
      throw new Error(`the image's command did not start:\n${out.slice(-3000)}`);
    }
    await sleep(50);
  }
}

async function getJson(base: string, p: string): Promise<{ status: number; body: { status?: string; checks?: Record<string, string> } }> {
  const res = await fetch(base + p);
  return { status: res.status, body: (await res.json()) as { status?: string } };
}

describe('the image', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-image-'));
    layOutImage(dir);
  });
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("CMD is the root start script's command (same node flags), run as a non-root user, with a HEALTHCHECK on /healthz", () => {
    // `npm start` = prestart (bundle) + this command; the image bundles in its build stage.
    expect(dockerCmd()).toEqual(ROOT_PACKAGE.scripts.start!.split(/\s+/));
    expect(ROOT_PACKAGE.scripts.prestart).toBe('node server/build.mjs');
    const user = instruction('USER');
    expect(user).toHaveLength(1);
    expect(user[0]).not.toMatch(/^USER\s+(root|0)(:|$)/);
    expect(instruction('HEALTHCHECK').join('\n')).toContain('/healthz');
    expect(instruction('EXPOSE')).toEqual([`EXPOSE ${ENVIRONMENT.PORT.schema.parse(undefined)}`]);
    // The build stage runs what the README's `npm install && npm start` does, minus the start.
    const build = dockerStages().find((s) => / AS build$/i.test(s.from))!;
    expect(build.lines.join('\n')).toMatch(/npm install --no-audit --no-fund && npm run build/);
  });

  test("the bundle requires only Node's modules and the server's production dependencies", () => {
    const bundle = fs.readFileSync(path.join(dir, 'server/dist/index.cjs'), 'utf8');
    const server = JSON.parse(fs.readFileSync(path.join(ROOT, 'server/package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    const allowed = new Set([...Object.keys(server.dependencies), ...Object.keys(server.optionalDependencies ?? {})]);
    const specifiers = new Set([...bundle.matchAll(/\b(?:require|import)\("([^"./][^"]*)"\)/g)].map((m) => m[1]!));
    expect(specifiers.size).toBeGreaterThan(10);
    const packageOf = (s: string) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!);
    const outside = [...specifiers].filter((s) => !s.startsWith('node:') && !builtinModules.includes(s) && !allowed.has(packageOf(s)));
    expect(outside).toEqual([]);
  });

  test('SQLite (the image default, data/gateway.db): probes answer; SIGTERM: /readyz 503 at once, /healthz 200 and calls served for SHUTDOWN_DELAY_MS, then exit 0', async () => {
    const gw = await runImage(dir, { SESSION_SECRET: 'image-test', SHUTDOWN_DELAY_MS: '2000' });
    try {
      expect(fs.existsSync(path.join(dir, 'data/gateway.db'))).toBe(true);
      expect(await getJson(gw.base, '/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
      expect(await getJson(gw.base, '/readyz')).toEqual({ status: 200, body: { status: 'ok', checks: { database: 'ok', migrations: 'ok' } } });
      const status = (await (await fetch(`${gw.base}/api/status`)).json()) as { data: { version: string } };
      expect(status.data.version).toBe(ROOT_PACKAGE.version);
      if (fs.existsSync(path.join(dir, 'admin/dist/index.html'))) {
        const page = await fetch(`${gw.base}/`);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toContain('text/html');
      }

      const t0 = Date.now();
      gw.child.kill('SIGTERM');
      await waitFor(() => gw.output().includes('"shutting down"'), 5000);
      expect(await getJson(gw.base, '/readyz')).toEqual({ status: 503, body: { status: 'draining' } });
      expect(await getJson(gw.base, '/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
      expect((await fetch(`${gw.base}/api/status`)).status).toBe(200);
      expect(await gw.exited).toBe(0);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
      expect(gw.output()).toContain('"shut down"');
    } finally {
      await gw.kill();
    }
  }, 60_000);

  test('MIGRATE_ONLY=true on a new SQLite file: migrates, seeds and exits 0 without listening', async () => {
    const file = path.join(dir, 'one-shot.db');
    const run = await runImage(dir, { DATABASE_URL: `sqlite:${file}`, MIGRATE_ONLY: 'true' }, false);
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain('"migrations done"');
    expect(run.output()).not.toContain('"gateway listening"');
    const k = knexFactory({ client: 'better-sqlite3', connection: { filename: file }, useNullAsDefault: true });
    try {
      const names = (await k('knex_migrations').select('name')).map((r: { name: string }) => r.name);
      expect(names).toEqual(await migrationSource.getMigrations([]));
      expect(Number((await k('options').count({ n: '*' }))[0]!.n)).toBeGreaterThan(0);
    } finally {
      await k.destroy();
    }
  }, 60_000);

  // PostgreSQL + Redis: what docker-compose.yml runs. Both are needed (the test matrix's variables).
  const pgRedis = pgUrl && redisUrl ? [['postgres + redis'] as const] : [];
  if (pgRedis.length)
    describe.each(pgRedis)('%s', () => {
      const schema = `deploy_${process.pid}_${crypto.randomBytes(3).toString('hex')}`;
      const env = { DATABASE_URL: pgUrl!, DATABASE_SCHEMA: schema, REDIS_URL: redisUrl!, REDIS_PREFIX: `deploy:${schema}:`, SESSION_SECRET: 'image-test' };
      afterAll(async () => {
        const k = knexFactory({ client: 'pg', connection: pgUrl });
        await k.raw(`drop schema if exists "${schema}" cascade`);
        await k.destroy();
      });

      test('MIGRATE_ONLY one-shot on a new database, then two nodes started at the same moment: both ready (Redis checked), both drain on SIGTERM', async () => {
        const run = await runImage(dir, { ...env, MIGRATE_ONLY: 'true' }, false);
        expect(await run.exited).toBe(0);
        expect(run.output()).toContain('"migrations done"');

        const nodes = await Promise.all([
          runImage(dir, { ...env, NODE_ID: 'node-a', SHUTDOWN_DELAY_MS: '1500' }),
          runImage(dir, { ...env, NODE_ID: 'node-b', SHUTDOWN_DELAY_MS: '1500' }),
        ]);
        try {
          for (const gw of nodes) {
            expect(await getJson(gw.base, '/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
            expect(await getJson(gw.base, '/readyz')).toEqual({
              status: 200,
              body: { status: 'ok', checks: { database: 'ok', migrations: 'ok', redis: 'ok' } },
            });
          }
          const [a, b] = nodes as [ImageProcess, ImageProcess];
          a.child.kill('SIGTERM');
          await waitFor(() => a.output().includes('"shutting down"'), 5000);
          expect(await getJson(a.base, '/readyz')).toEqual({ status: 503, body: { status: 'draining' } });
          expect((await getJson(a.base, '/healthz')).status).toBe(200);
          // The other node is unaffected.
          expect((await getJson(b.base, '/readyz')).status).toBe(200);
          expect(await a.exited).toBe(0);
          b.child.kill('SIGTERM');
          expect(await b.exited).toBe(0);
        } finally {
          await Promise.all(nodes.map((n) => n.kill()));
        }
      }, 90_000);
    });
});

// ---------------------------------------------------------------------------------------------
// docker-compose.yml and the proxy's configuration.

interface ComposeService {
  build?: unknown;
  image?: string;
  environment?: Record<string, string>;
  /** A map with conditions, or a plain list of names. */
  depends_on?: Record<string, { condition?: string }> | string[];
  ports?: unknown[];
  volumes?: string[];
  stop_grace_period?: string;
}

describe('docker-compose.yml', () => {
  // `merge`: the nodes share their settings through a YAML anchor (`<<:`), as Compose reads it.
  const compose = YAML.parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
  const services = Object.entries(compose.services);
  const built = services.filter(([, s]) => s.build === '.' || s.image === 'ai-gateway');
  const gateways = built.filter(([, s]) => s.environment?.MIGRATE_ONLY !== 'true');
  const migrate = built.filter(([, s]) => s.environment?.MIGRATE_ONLY === 'true');

  test('two gateway nodes with distinct NODE_IDs and the same SESSION_SECRET, taken from the environment (no secret in the file)', () => {
    expect(gateways.length).toBeGreaterThanOrEqual(2);
    const ids = gateways.map(([, s]) => s.environment?.NODE_ID);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(gateways.length);
    const secrets = new Set(gateways.map(([, s]) => s.environment?.SESSION_SECRET));
    expect(secrets.size).toBe(1);
    // `${VAR:?message}`: Compose refuses to start without the variable.
    expect([...secrets][0]).toMatch(/^\$\{SESSION_SECRET:\?[^}]+\}$/);
  });

  test('the nodes share PostgreSQL and Redis, trust one proxy and publish no port of their own', () => {
    for (const [, s] of gateways) {
      const env = s.environment!;
      expect(env.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
      expect(env.REDIS_URL).toBe('redis://redis:6379');
      // TRUST_PROXY=1 is only right when nothing but the proxy reaches the node.
      expect(env.TRUST_PROXY).toBe('1');
      expect(s.ports).toBeUndefined();
      expect(new Set(gateways.map(([, g]) => g.environment!.DATABASE_URL)).size).toBe(1);
    }
    expect(compose.services.postgres).toBeDefined();
    expect(compose.services.redis).toBeDefined();
  });

  test('every variable the nodes set is declared and parses (placeholders for the ${…} values)', () => {
    for (const [, s] of [...gateways, ...migrate]) {
      const env = Object.fromEntries(Object.entries(s.environment!).map(([k, v]) => [k, v.replace(/\$\{[^}]+\}/g, 'x')]));
      expect(Object.keys(env).filter((k) => !(k in ENVIRONMENT))).toEqual([]);
      expect(() => parseEnvironment(env)).not.toThrow();
    }
  });

  test('migrations run once, by a one-shot service, before any node starts; Docker waits long enough for a node to drain', () => {
    expect(migrate).toHaveLength(1);
    const [migrateName, migrateService] = migrate[0]!;
    expect(migrateService.environment!.DATABASE_URL).toBe(gateways[0]![1].environment!.DATABASE_URL);
    for (const [, s] of gateways) {
      expect((s.depends_on as Record<string, { condition?: string }>)[migrateName]?.condition).toBe('service_completed_successfully');
      const env = parseEnvironment(Object.fromEntries(Object.entries(s.environment!).map(([k, v]) => [k, v.replace(/\$\{[^}]+\}/g, 'x')])));
      const grace = /^(\d+)s$/.exec(s.stop_grace_period ?? '');
      expect(grace).not.toBeNull();
      const drainMs = env.SHUTDOWN_DELAY_MS + (env.SHUTDOWN_TIMEOUT_MS ?? 30_000);
      expect(Number(grace![1]) * 1000).toBeGreaterThanOrEqual(drainMs + 10_000);
      expect(env.SHUTDOWN_DELAY_MS).toBeGreaterThan(0);
    }
  });

  test('the proxy (deploy/Caddyfile) spreads over every node, checks /readyz, streams SSE unbuffered and takes bodies above RELAY_BODY_LIMIT', () => {
    const proxy = services.find(([, s]) => (s.volumes ?? []).some((v) => v.startsWith('./deploy/Caddyfile:')));
    expect(proxy).toBeDefined();
    const caddy = fs.readFileSync(path.join(ROOT, 'deploy/Caddyfile'), 'utf8').replace(/#.*$/gm, '');
    const upstreams = /reverse_proxy\s+([^{\n]+)\{/.exec(caddy)![1]!.trim().split(/\s+/);
    expect(upstreams.sort()).toEqual(gateways.map(([name]) => `${name}:${ENVIRONMENT.PORT.schema.parse(undefined)}`).sort());
    expect(caddy).toMatch(/health_uri\s+\/readyz\b/);
    expect(caddy).toMatch(/flush_interval\s+-1\b/);
    const maxSize = /max_size\s+(\d+)MB\b/.exec(caddy);
    expect(Number(maxSize![1]) * 1e6).toBeGreaterThan(ENVIRONMENT.RELAY_BODY_LIMIT.schema.parse(undefined));
    const proxyDeps = proxy![1].depends_on ?? [];
    for (const [name] of gateways) expect(Array.isArray(proxyDeps) ? proxyDeps : Object.keys(proxyDeps)).toContain(name);
  });
});
