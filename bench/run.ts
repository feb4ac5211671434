/**
 * Benchmark harness (`npm run bench`, `npm run bench -- --quick`). See bench/README.md.
 *
 * One mock upstream; targets A (direct), B (minimal proxy), C (gateway on SQLite), CM and CR (the
 * same gateway process through a protocol conversion: a Claude Messages client served by the OpenAI
 * channel, a Responses client served by the Claude channel), C2 (gateway on PostgreSQL + Redis, when
 * reachable), P (Portkey gateway), all running at once, all measured in the same run, interleaved
 * round by round. Targets are pinned to one core, the mock, the load
 * generator and this harness to the other. Each target runs in a child process started with an IPC
 * channel and `--import bench/probe.mjs`, which answers CPU-time / RSS probes.
 *
 * Options: --quick (short phases, ~2 min), --targets A,B,C,CM,CR,C2,P, --rounds N, --slices N
 *          (throughput and c=1 latency slices per round), --no-pin, --out <file>.
 * Env: BENCH_PG_URL, BENCH_REDIS_URL (defaults: local test instances).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { stats, type Job, type Target, type AutocannonResult, type LatencyResult, type PacedResult, type StreamsResult, type ClientProtocol } from './load';
import { expectedContent, MOCK_ANSWER, MOCK_CLAUDE_MODEL, MOCK_MODEL } from './mock';
import { describeFloors, measureRoundTrips, type MachineFloors } from './floors';

const ROOT = path.resolve(__dirname, '..');
const BENCH = __dirname;
const argv = process.argv.slice(2);
const flag = (n: string) => argv.includes(n);
const opt = (n: string) => {
  const i = argv.indexOf(n);
  return i >= 0 ? argv[i + 1] : undefined;
};

const QUICK = flag('--quick');
const ROUNDS = Number(opt('--rounds') ?? (QUICK ? 2 : 3));
const CFG = QUICK
  ? {
      warmSec: 1,
      thrSec: 1.5,
      thrSlices: 1,
      latSec: 1,
      maxSteps: 3,
      stepSec: 1,
      ttftStreams: 20,
      ttftChunks: 10,
      ttftInterval: 10,
      concLevels: [200, 2000],
      concChunks: 20,
      concInterval: 100,
      concRampMs: 500,
      settleMs: 2000,
    }
  : {
      warmSec: 5,
      thrSec: 10,
      thrSlices: 5,
      latSec: 5,
      maxSteps: 6,
      stepSec: 3,
      ttftStreams: 100,
      ttftChunks: 20,
      ttftInterval: 10,
      concLevels: [250, 500, 1000, 2000],
      concChunks: 40,
      concInterval: 100,
      concRampMs: 1000,
      settleMs: 10_000,
    };
if (opt('--slices')) CFG.thrSlices = Math.max(1, Math.floor(Number(opt('--slices'))) || 1);
/** c=1 latency slices per round: as many as the throughput's, each at least 1 s. */
const LAT_SLICES = Math.max(1, Math.min(CFG.thrSlices, Math.floor(CFG.latSec)));
const CONNECTIONS = 50;
/** The targets in the order of turn `k`: each turn starts one further on, so no target always follows the same one. */
const inTurn = <T>(list: T[], k: number): T[] => {
  const shift = k % list.length;
  return [...list.slice(shift), ...list.slice(0, shift)];
};
/** Targets served by a gateway process, which batches usage writes behind its answers. */
const GATEWAY_IDS = new Set<string>(['C', 'CM', 'CR', 'C2']);
/** The usage batcher's flush timer (1 s) plus a margin. */
const GATEWAY_SETTLE_MS = 1100;
const P99_BUDGET_MS = 10;
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const WANT = new Set((opt('--targets') ?? 'A,B,C,CM,CR,C2,P').split(',').map((s) => s.trim().toUpperCase()));

type TargetId = 'A' | 'B' | 'C' | 'CM' | 'CR' | 'C2' | 'P';
/** Conversion rows: served by C's process, judged by C's thresholds. */
const CONVERSIONS = ['CM', 'CR'] as const;
interface Bench {
  id: TargetId;
  name: string;
  target: Target;
  /** The completion and streaming request, in the target's client protocol. */
  bodies: Bodies;
  /** Process whose CPU/RSS is probed (A: the mock itself). */
  proc?: Child;
  /** Set when `proc` is another row's (CM, CR: C's gateway): idle/after RSS belong to that row. */
  sharesProcessOf?: TargetId;
  /** For a conversion row: client protocol → upstream protocol. */
  conversion?: string;
  available: boolean;
  skipped?: string;
  /** Set when the target answers completions but not streams: streaming phases skip it. */
  streamSkipped?: string;
}

const log = (...a: unknown[]) => console.log(...a); // eslint-disable-line no-console -- the harness's output
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};

// ---------------------------------------------------------------- processes and pinning

const cores = os.availableParallelism?.() ?? os.cpus().length;
const hasTaskset = (() => {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const PIN = !flag('--no-pin') && hasTaskset && cores >= 2;
const GATEWAY_CORE = '0';
const LOAD_CORE = '1';
/** `node` pinned to `core` (when pinning): the command and its leading arguments. */
const pinned = (core: string, args: string[]): [string, string[]] => (PIN ? ['taskset', ['-c', core, process.execPath, ...args]] : [process.execPath, args]);

class Child {
  proc: ChildProcess;
  out: string[] = [];
  private waiters = new Map<number, (m: Record<string, unknown>) => void>();
  private failers = new Map<number, (e: Error) => void>();
  private seq = 0;
  exited = false;
  constructor(
    public label: string,
    core: string | undefined,
    nodeArgs: string[],
  ) {
    const [cmd, args] = core !== undefined ? pinned(core, nodeArgs) : [process.execPath, nodeArgs];
    this.proc = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env: { ...process.env, NODE_ENV: 'production' } });
    const keep = (d: Buffer) => {
      this.out.push(d.toString());
      if (this.out.length > 200) this.out.shift();
    };
    this.proc.stdout?.on('data', keep);
    this.proc.stderr?.on('data', keep);
    this.proc.on('exit', () => {
      this.exited = true;
      for (const fail of this.failers.values()) fail(new Error(`${this.label} exited`));
    });
    this.proc.on('error', () => undefined); // a send on a closed channel; ask() reports it
    this.proc.on('message', (m: Record<string, unknown>) => {
      const id = Number(m.probe ?? m.id);
      const w = this.waiters.get(id);
      if (w) {
        this.waiters.delete(id);
        w(m);
      }
    });
  }
  /** Sends a message carrying a fresh id under `key` and waits for the answer with that id. */
  ask(key: 'probe' | 'id', payload: Record<string, unknown> = {}, timeoutMs = 5000): Promise<Record<string, unknown>> {
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      if (this.exited || !this.proc.connected) return reject(new Error(`${this.label} is not running`));
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(id);
        this.failers.delete(id);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.label}: no answer in ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(id, (m) => {
        done();
        resolve(m);
      });
      this.failers.set(id, (e) => {
        done();
        reject(e);
      });
      this.proc.send({ [key]: id, ...payload }, (err) => {
        if (err) this.failers.get(id)?.(err);
      });
    });
  }
  async probe(): Promise<{ cpuUs: number; rss: number }> {
    const m = await this.ask('probe', {}, 3000);
    return { cpuUs: Number(m.cpuUs), rss: Number(m.rss) };
  }
  /** probe() that reports a dead or hung target as undefined instead of failing the run. */
  async tryProbe(): Promise<{ cpuUs: number; rss: number } | undefined> {
    if (this.exited) return undefined;
    try {
      return await this.probe();
    } catch {
      return undefined;
    }
  }
  tail() {
    return this.out.join('').split('\n').slice(-15).join('\n');
  }
  kill() {
    if (!this.exited) this.proc.kill('SIGTERM');
  }
}

const children: Child[] = [];
function start(label: string, core: string | undefined, nodeArgs: string[]): Child {
  const c = new Child(label, core, nodeArgs);
  children.push(c);
  return c;
}
const TSX = ['--import', 'tsx', '--import', path.join(BENCH, 'probe.mjs')];
const PROBE = ['--import', path.join(BENCH, 'probe.mjs')];

/** The V8/node flags `npm start` gives the gateway (root package.json), so C runs as deployed. */
function startFlags(): string[] {
  const start = String((JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts?.start ?? '');
  return start.split(/\s+/).filter((a) => a.startsWith('--') && a !== '--enable-source-maps');
}
const GATEWAY_FLAGS = startFlags();

/**
 * B and C run as production does (`npm start`): bundled by server/build.mjs and started with plain
 * `node`, no TypeScript loader in the measured process.
 */
const built = new Map<string, string>();
function bundle(entry: string): string {
  // Once per run: C and C2 run the same bundle, and rebuilding it while C is starting rewrote the
  // file (and its source map) under a starting process.
  let out = built.get(entry);
  if (!out) {
    out = path.join(BENCH, 'tmp', `${path.basename(entry, '.ts')}.cjs`);
    execFileSync(process.execPath, [path.join(ROOT, 'server', 'build.mjs'), path.join(BENCH, entry), out], { stdio: 'inherit' });
    built.set(entry, out);
  }
  return out;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

async function waitHttp(origin: string, child: Child, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (child.exited) throw new Error(`${child.label} exited:\n${child.tail()}`);
    try {
      const r = await request(origin + '/', { method: 'GET', headersTimeout: 1000 });
      await r.body.dump();
      return;
    } catch {
      await sleep(200);
    }
  }
  throw new Error(`${child.label} did not listen within ${timeoutMs} ms:\n${child.tail()}`);
}

// ---------------------------------------------------------------- load worker

let loader: Child;
async function run<T>(job: Job, timeoutMs = 120_000): Promise<T> {
  const m = await loader.ask('id', { job }, timeoutMs);
  if (m.error) throw new Error(String(m.error));
  return m.result as T;
}

interface Bodies {
  chat: string;
  stream: string;
}
const PROMPT = [{ role: 'user', content: 'Say hello' }];
/** Request bodies per client protocol. The Responses client asks for the Claude channel's model. */
const BODIES: Record<ClientProtocol, Bodies> = {
  openai: {
    chat: JSON.stringify({ model: MOCK_MODEL, messages: PROMPT, max_tokens: 16 }),
    stream: JSON.stringify({ model: MOCK_MODEL, messages: PROMPT, max_tokens: 64, stream: true, stream_options: { include_usage: true } }),
  },
  claude: {
    chat: JSON.stringify({ model: MOCK_MODEL, max_tokens: 16, messages: PROMPT }),
    stream: JSON.stringify({ model: MOCK_MODEL, max_tokens: 64, messages: PROMPT, stream: true }),
  },
  responses: {
    chat: JSON.stringify({ model: MOCK_CLAUDE_MODEL, input: 'Say hello', max_output_tokens: 16 }),
    stream: JSON.stringify({ model: MOCK_CLAUDE_MODEL, input: 'Say hello', max_output_tokens: 64, stream: true }),
  },
};

async function mockShape(mockOrigin: string, chunks: number, intervalMs: number) {
  const r = await request(mockOrigin + '/__config', { method: 'POST', body: JSON.stringify({ chunks, intervalMs }) });
  await r.body.dump();
}
async function mockStats(mockOrigin: string): Promise<{ requests: number; cpuUs: number }> {
  const r = await request(mockOrigin + '/__stats');
  return (await r.body.json()) as { requests: number; cpuUs: number };
}

/** Checks a target answers one chat completion correctly; returns why not. */
async function sanityChat(b: Bench): Promise<string | undefined> {
  try {
    const r = await request(b.target.origin + b.target.path, { method: 'POST', headers: b.target.headers, body: b.bodies.chat, headersTimeout: 10_000 });
    const text = await r.body.text();
    if (r.statusCode !== 200 || !text.includes(MOCK_ANSWER)) return `HTTP ${r.statusCode} ${text.slice(0, 200)}`;
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Checks a target relays one SSE stream intact; returns why not. */
async function sanityStream(b: Bench, mockOrigin: string): Promise<string | undefined> {
  try {
    await mockShape(mockOrigin, 5, 1);
    const s = await run<StreamsResult>({
      kind: 'streams',
      target: b.target,
      body: b.bodies.stream,
      concurrency: 1,
      total: 1,
      expectContent: expectedContent(5),
      stallMs: 5000,
      timeoutMs: 10_000,
    });
    return s.ok === 1 ? undefined : (s.firstError ?? 'stalled');
  } catch (err) {
    return (err as Error).message;
  }
}

// ---------------------------------------------------------------- the machine's own floors

/**
 * Round trips between the two cores and PostgreSQL's commit time, before anything else starts
 * (bench/floors.ts says what each means). A failure leaves that floor out; the run goes on.
 */
async function machineFloors(): Promise<MachineFloors> {
  const floors: MachineFloors = {};
  const script = path.join(BENCH, 'floors.ts');
  const [cmd, args] = pinned(GATEWAY_CORE, ['--import', 'tsx', script, 'echo']);
  const echo = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      echo.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
      echo.once('exit', () => reject(new Error('echo server exited')));
    });
    floors.roundTripMs = await measureRoundTrips(port);
  } catch (err) {
    log(`  machine floors: round trips not measured (${(err as Error).message})`);
  } finally {
    echo.kill();
  }
  if (WANT.has('C2') && (await pgReachable())) {
    try {
      const [pcmd, pargs] = pinned(GATEWAY_CORE, ['--import', 'tsx', script, 'pg', PG_URL]);
      floors.pgCommitMs = JSON.parse(execFileSync(pcmd, pargs, { cwd: ROOT, encoding: 'utf8' })) as MachineFloors['pgCommitMs'];
    } catch (err) {
      log(`  machine floors: PostgreSQL commits not measured (${(err as Error).message.split('\n')[0]})`);
    }
  }
  return floors;
}

// ---------------------------------------------------------------- PostgreSQL / Redis for C2

async function pgReachable(): Promise<boolean> {
  const { Client } = await import('pg');
  const c = new Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    await c.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}
async function redisReachable(): Promise<boolean> {
  const Redis = (await import('ioredis')).Redis;
  const r = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}
async function cleanupPg(schema: string) {
  const { Client } = await import('pg');
  const c = new Client({ connectionString: PG_URL });
  try {
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } catch {
    /* best effort */
  } finally {
    await c.end().catch(() => undefined);
  }
}
async function cleanupRedis(prefix: string) {
  const Redis = (await import('ioredis')).Redis;
  const r = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await r.del(...keys);
    } while (cursor !== '0');
  } catch {
    /* best effort */
  } finally {
    r.disconnect();
  }
}

function portkeyEntry(): string | undefined {
  for (const dir of [path.join(BENCH, 'node_modules'), path.join(ROOT, 'node_modules')]) {
    const p = path.join(dir, '@portkey-ai', 'gateway', 'build', 'start-server.js');
    if (fs.existsSync(p)) return p;
  }
  return undefined;
}

// ---------------------------------------------------------------- measurements

interface Row {
  rps: number[];
  /** Throughput of every slice, in order: entry i of every target is from the same turn of the targets. */
  sliceRps: number[];
  cpuPerReq: number[];
  rssLoad: number;
  lat: { p50: number[]; p99: number[]; overhead: number[] };
  maxRps?: number;
  ttft: { p50: number[]; p99: number[] };
  ttftBurst: { p50: number[] };
  gap: { p99: number[] };
  streams?: {
    sustained: number;
    levels: Array<{
      level: number;
      peakActive: number;
      ok: number;
      lost: number;
      stalled: number;
      errors: number;
      maxGapMs: number;
      ttftP99: number;
      rssMB: number;
      firstError?: string;
    }>;
  };
  rssIdle?: number;
  rssAfter?: number;
  errors: string[];
}

async function withRssSampling<T>(b: Bench, fn: () => Promise<T>): Promise<{ value: T; rssMax: number }> {
  let rssMax = 0;
  let on = true;
  const sampler = (async () => {
    while (on && b.proc) {
      rssMax = Math.max(rssMax, (await b.proc.tryProbe())?.rss ?? 0);
      await sleep(250);
    }
  })();
  try {
    const value = await fn();
    return { value, rssMax };
  } finally {
    on = false;
    await sampler;
  }
}

async function main() {
  const t0 = Date.now();
  const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(0)} s`;
  if (PIN) execFileSync('taskset', ['-a', '-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
  log(
    `bench: ${QUICK ? 'QUICK (numbers are indicative only)' : 'full'} run, ${ROUNDS} rounds, ${cores} cores, pinning ${PIN ? `gateway→cpu${GATEWAY_CORE}, mock+load→cpu${LOAD_CORE}` : 'OFF'}`,
  );
  fs.mkdirSync(path.join(BENCH, 'tmp'), { recursive: true });
  fs.mkdirSync(path.join(BENCH, 'results'), { recursive: true });

  // Before anything else runs: what the machine itself costs (read the TTFT and C2 rows against it).
  const floors = await machineFloors();
  if (floors.roundTripMs || floors.pgCommitMs) log(`machine floors: ${describeFloors(floors)}`);

  // Mock + load worker on the load core.
  const mockPort = await freePort();
  const mockOrigin = `http://127.0.0.1:${mockPort}`;
  const mock = start('mock', LOAD_CORE, [...TSX, path.join(BENCH, 'mock.ts'), '--port', String(mockPort)]);
  loader = start('load', LOAD_CORE, ['--import', 'tsx', path.join(BENCH, 'load.ts')]);
  await waitHttp(mockOrigin, mock);

  const benches: Bench[] = [];
  const openaiHeaders = (key: string): Record<string, string> => ({ 'content-type': 'application/json', authorization: `Bearer ${key}` });
  const CHAT = '/v1/chat/completions';
  if (WANT.has('A'))
    benches.push({
      id: 'A',
      name: 'direct to mock',
      target: { origin: mockOrigin, path: CHAT, headers: openaiHeaders('sk-mock') },
      bodies: BODIES.openai,
      proc: mock,
      available: true,
    });

  const starting: Array<Promise<void>> = [];
  /** Starts a target process; `listed` false: started only to serve other rows (CM, CR without C). */
  const launch = async (id: TargetId, name: string, mk: (port: number) => { child: Child; headers: Record<string, string> }, listed = true) => {
    const port = await freePort();
    const { child, headers } = mk(port);
    const b: Bench = {
      id,
      name,
      target: { origin: `http://127.0.0.1:${port}`, path: CHAT, headers },
      bodies: BODIES.openai,
      proc: child,
      available: false,
    };
    if (listed) benches.push(b);
    starting.push(
      waitHttp(b.target.origin, child).then(
        () => {
          b.available = true;
        },
        (err: Error) => {
          b.skipped = `did not start: ${err.message.split('\n')[0]}`;
          log(`  ${id}: ${err.message}`);
        },
      ),
    );
    return b;
  };

  if (WANT.has('B'))
    await launch('B', 'minimal proxy (node:http + undici)', (port) => ({
      child: start('proxy', GATEWAY_CORE, [...PROBE, bundle('proxy.ts'), '--port', String(port), '--upstream', mockOrigin]),
      headers: openaiHeaders('sk-mock'),
    }));

  const runId = `${Date.now().toString(36)}${crypto.randomBytes(3).toString('hex')}`;
  const sqliteFile = path.join(BENCH, 'tmp', `gateway-${runId}.db`);
  /** The conversion rows and the gateway row whose process serves them. */
  const conversionRows: Array<{ b: Bench; host: Bench }> = [];
  if (WANT.has('C') || CONVERSIONS.some((id) => WANT.has(id))) {
    const key = crypto.randomBytes(24).toString('hex');
    const gateway = await launch(
      'C',
      'gateway, SQLite',
      (port) => ({
        child: start('gateway-sqlite', GATEWAY_CORE, [
          ...GATEWAY_FLAGS,
          ...PROBE,
          bundle('gateway.ts'),
          '--port',
          String(port),
          '--upstream',
          mockOrigin,
          '--key',
          key,
          '--db',
          `sqlite:${sqliteFile}`,
        ]),
        headers: openaiHeaders(`sk-${key}`),
      }),
      WANT.has('C'),
    );
    // Same process, same key: only the client's protocol and the channel it reaches differ from C.
    const conversion = (id: TargetId, name: string, conv: string, path: string, protocol: ClientProtocol, headers: Record<string, string>) => {
      if (!WANT.has(id)) return;
      const b: Bench = {
        id,
        name,
        conversion: conv,
        target: { origin: gateway.target.origin, path, headers, protocol },
        bodies: BODIES[protocol],
        proc: gateway.proc,
        sharesProcessOf: 'C',
        available: false,
      };
      benches.push(b);
      conversionRows.push({ b, host: gateway });
    };
    conversion('CM', 'gateway, Claude client → OpenAI channel', 'Claude Messages → OpenAI Chat', '/v1/messages', 'claude', {
      'content-type': 'application/json',
      'x-api-key': `sk-${key}`,
      'anthropic-version': '2023-06-01',
    });
    conversion(
      'CR',
      'gateway, Responses client → Claude channel',
      'OpenAI Responses → Claude Messages',
      '/v1/responses',
      'responses',
      openaiHeaders(`sk-${key}`),
    );
  }
  const pgSchema = `bench_${runId}`;
  const redisPrefix = `bench:${runId}:`;
  let usedPg = false;
  if (WANT.has('C2')) {
    const [pgOk, redisOk] = await Promise.all([pgReachable(), redisReachable()]);
    if (pgOk && redisOk) {
      usedPg = true;
      const key = crypto.randomBytes(24).toString('hex');
      await launch('C2', 'gateway, PostgreSQL + Redis', (port) => ({
        child: start('gateway-pg', GATEWAY_CORE, [
          ...GATEWAY_FLAGS,
          ...PROBE,
          bundle('gateway.ts'),
          '--port',
          String(port),
          '--upstream',
          mockOrigin,
          '--key',
          key,
          '--db',
          PG_URL,
          '--schema',
          pgSchema,
          '--redis',
          REDIS_URL,
          '--redis-prefix',
          redisPrefix,
        ]),
        headers: openaiHeaders(`sk-${key}`),
      }));
    } else {
      benches.push({
        id: 'C2',
        name: 'gateway, PostgreSQL + Redis',
        target: { origin: '', path: CHAT, headers: {} },
        bodies: BODIES.openai,
        available: false,
        skipped: `unreachable: postgres ${pgOk ? 'ok' : 'down'}, redis ${redisOk ? 'ok' : 'down'}`,
      });
    }
  }
  if (WANT.has('P')) {
    const entry = portkeyEntry();
    if (entry) {
      await launch('P', 'Portkey gateway 1.15.2', (port) => ({
        child: start('portkey', GATEWAY_CORE, ['--import', path.join(BENCH, 'probe.mjs'), entry, `--port=${port}`, '--headless']),
        headers: {
          'content-type': 'application/json',
          authorization: 'Bearer sk-mock',
          'x-portkey-provider': 'openai',
          'x-portkey-custom-host': `${mockOrigin}/v1`,
        },
      }));
    } else {
      benches.push({
        id: 'P',
        name: 'Portkey gateway',
        target: { origin: '', path: CHAT, headers: {} },
        bodies: BODIES.openai,
        available: false,
        skipped: 'not installed (npm install -w bench)',
      });
    }
  }
  cleanups.push(async () => {
    if (usedPg) await Promise.all([cleanupPg(pgSchema), cleanupRedis(redisPrefix)]);
    for (const ext of ['', '-wal', '-shm']) fs.rmSync(sqliteFile + ext, { force: true });
  });
  await Promise.all(starting);
  for (const { b, host } of conversionRows) {
    b.available = host.available;
    if (!host.available) b.skipped = `C's gateway process ${host.skipped ?? 'did not start'}`;
  }
  const order: TargetId[] = ['A', 'B', 'C', 'CM', 'CR', 'C2', 'P'];
  benches.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));

  // Sanity: every target must answer a completion and a stream correctly, or it is skipped.
  for (const b of benches.filter((x) => x.available)) {
    const why = await sanityChat(b);
    if (why) {
      b.available = false;
      b.skipped = `failed the sanity request: ${why}`;
      continue;
    }
    const whyStream = await sanityStream(b, mockOrigin);
    if (whyStream) b.streamSkipped = `failed the sanity stream: ${whyStream}`;
  }
  for (const b of benches) {
    log(
      `  ${b.id.padEnd(2)} ${b.name.padEnd(42)} ${b.available ? b.target.origin : `SKIPPED (${b.skipped})`}${b.streamSkipped ? `  streaming phases SKIPPED (${b.streamSkipped})` : ''}`,
    );
  }
  const live = benches.filter((b) => b.available);
  const liveStreams = live.filter((b) => !b.streamSkipped);
  const rows = new Map<TargetId, Row>(
    benches.map((b) => [
      b.id,
      {
        rps: [],
        sliceRps: [],
        cpuPerReq: [],
        rssLoad: 0,
        lat: { p50: [], p99: [], overhead: [] },
        ttft: { p50: [], p99: [] },
        ttftBurst: { p50: [] },
        gap: { p99: [] },
        errors: [],
      },
    ]),
  );
  const row = (b: Bench) => rows.get(b.id)!;
  for (const b of live) if (b.proc && !b.sharesProcessOf) row(b).rssIdle = (await b.proc.tryProbe())?.rss;

  // 1. Throughput, c=50 (autocannon). Warm-up discarded, then rounds interleaved across targets,
  // each round in short slices (see "Throughput in slices" in bench/HISTORY.md): every target gets
  // the same share of the same minutes, so a host that speeds up or slows down under us (A moved
  // 2 × between the 10 s rounds of one run) moves every target alike and the ratios keep still.
  const sliceSec = CFG.thrSec / CFG.thrSlices;
  log(
    `\n(${elapsed()}) [1/5] throughput at c=${CONNECTIONS}: warm-up ${CFG.warmSec}s, ${ROUNDS} × ${CFG.thrSec}s per target, each round in ${CFG.thrSlices} slice(s) of ${sliceSec}s per target, targets in turn`,
  );
  for (const b of live)
    await run<AutocannonResult>({ kind: 'autocannon', target: b.target, body: b.bodies.chat, connections: CONNECTIONS, durationSec: CFG.warmSec });
  let mockCpuPerReq: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const acc = new Map(live.map((b) => [b.id, { ok: 0, sec: 0, cpuUs: 0, cpuReqs: 0, p99: 0, errors: 0, non2xx: 0 }]));
    for (let s = 0; s < CFG.thrSlices; s++) {
      for (const b of inTurn(live, r * CFG.thrSlices + s)) {
        const before = await b.proc?.tryProbe();
        const ms0 = await mockStats(mockOrigin);
        const { value: res, rssMax } = await withRssSampling(b, () =>
          run<AutocannonResult>({ kind: 'autocannon', target: b.target, body: b.bodies.chat, connections: CONNECTIONS, durationSec: sliceSec }),
        );
        const after = await b.proc?.tryProbe();
        const ms1 = await mockStats(mockOrigin);
        const a = acc.get(b.id)!;
        a.ok += res.total;
        a.sec += res.durationSec;
        a.p99 = Math.max(a.p99, res.p99);
        a.errors += res.errors;
        a.non2xx += res.non2xx;
        if (before && after && res.total) {
          a.cpuUs += after.cpuUs - before.cpuUs;
          a.cpuReqs += res.total;
        }
        const rw = row(b);
        rw.sliceRps.push(res.rps);
        rw.rssLoad = Math.max(rw.rssLoad, rssMax);
        if (ms1.requests > ms0.requests) mockCpuPerReq.push((ms1.cpuUs - ms0.cpuUs) / (ms1.requests - ms0.requests));
        // The gateway writes the slice's last usage batch up to a second later (its flush timer):
        // that work is its own, so it must not land in the next target's slice on the same core.
        if (GATEWAY_IDS.has(b.id)) await sleep(GATEWAY_SETTLE_MS);
      }
    }
    for (const b of live) {
      const a = acc.get(b.id)!;
      const rw = row(b);
      const rps = a.sec > 0 ? a.ok / a.sec : 0;
      rw.rps.push(rps);
      if (a.errors || a.non2xx) rw.errors.push(`throughput round ${r + 1}: ${a.errors} errors, ${a.non2xx} non-2xx`);
      if (a.cpuReqs) rw.cpuPerReq.push(a.cpuUs / a.cpuReqs);
      log(
        `  round ${r + 1} ${b.id.padEnd(2)} ${rps.toFixed(0).padStart(7)} req/s  p99 ≤ ${a.p99} ms${a.errors || a.non2xx ? `  (${a.errors} errors, ${a.non2xx} non-2xx)` : ''}`,
      );
    }
  }
  mockCpuPerReq = mockCpuPerReq.filter((x) => x > 0);

  // 2. Added latency at c=1 (own client, µs resolution). Sliced like the throughput phase: each
  // round's seconds per target run as short slices, the targets in turn, and a round's figures are
  // the percentiles of its slices' pooled samples. A stretch of slow host (one target's 5 s piece
  // once read twice its other rounds while the others did not move) then reaches every target.
  const latSliceSec = CFG.latSec / LAT_SLICES;
  log(
    `\n(${elapsed()}) [2/5] latency at c=1: ${ROUNDS} × ${CFG.latSec}s per target, each round in ${LAT_SLICES} slice(s) of ${latSliceSec}s per target, targets in turn`,
  );
  for (let r = 0; r < ROUNDS; r++) {
    const pooled = new Map(live.map((b) => [b.id, { lat: [] as number[], overhead: [] as number[], errors: 0 }]));
    for (let s = 0; s < LAT_SLICES; s++) {
      for (const b of inTurn(live, r * LAT_SLICES + s)) {
        const res = await run<LatencyResult>({
          kind: 'latency',
          target: b.target,
          body: b.bodies.chat,
          connections: 1,
          durationSec: latSliceSec,
          keepSamples: true,
        });
        const p = pooled.get(b.id)!;
        for (const x of res.samples ?? []) p.lat.push(x);
        for (const x of res.overheadSamples ?? []) p.overhead.push(x);
        p.errors += res.errors;
        // As after a throughput slice: the slice's last usage rows are written on its own time.
        if (GATEWAY_IDS.has(b.id) && LAT_SLICES > 1) await sleep(GATEWAY_SETTLE_MS);
      }
    }
    for (const b of live) {
      const p = pooled.get(b.id)!;
      const res = stats(p.lat);
      const rw = row(b);
      rw.lat.p50.push(res.p50);
      rw.lat.p99.push(res.p99);
      if (p.overhead.length) rw.lat.overhead.push(stats(p.overhead).p50);
      if (p.errors) rw.errors.push(`latency round ${r + 1}: ${p.errors} errors`);
      log(`  round ${r + 1} ${b.id.padEnd(2)} p50 ${res.p50.toFixed(3)} ms  p99 ${res.p99.toFixed(3)} ms  (${res.count} requests)`);
    }
  }

  // 3. Max RPS with p99 under 10 ms: bisection on an open-loop paced load, steps interleaved.
  // Not for the conversion rows: its ≈ 20 s per target would take the full run past 12 minutes, and
  // the conversion targets are judged on throughput, latency and TTFT only.
  const paced = live.filter((b) => !b.conversion);
  log(
    `\n(${elapsed()}) [3/5] max req/s with p99 < ${P99_BUDGET_MS} ms: ${CFG.maxSteps} bisection steps × ${CFG.stepSec}s per target${paced.length < live.length ? ' (not for the conversion rows)' : ''}`,
  );
  const search = new Map<TargetId, { lo: number; hi: number }>();
  for (const b of paced) search.set(b.id, { lo: 0, hi: Math.max(200, Math.ceil(median(row(b).rps) * 1.2)) });
  for (let s = 0; s < CFG.maxSteps; s++) {
    for (const b of paced) {
      const w = search.get(b.id)!;
      const rate = s === 0 ? Math.round(w.hi * 0.6) : Math.round((w.lo + w.hi) / 2);
      const res = await run<PacedResult>({ kind: 'paced', target: b.target, body: b.bodies.chat, rate, durationSec: CFG.stepSec, maxConnections: 256 });
      const pass = res.errors === 0 && res.p99 < P99_BUDGET_MS && res.achievedRps >= rate * 0.95;
      if (pass) w.lo = Math.max(w.lo, rate);
      else w.hi = rate;
      log(
        `  step ${s + 1} ${b.id.padEnd(2)} ${String(rate).padStart(6)} req/s → p99 ${res.p99.toFixed(2)} ms, achieved ${res.achievedRps.toFixed(0)}${res.errors ? `, ${res.errors} errors` : ''} ${pass ? 'ok' : 'over'}`,
      );
    }
  }
  for (const b of paced) row(b).maxRps = search.get(b.id)!.lo;

  // 4. Streaming: time to first frame and inter-frame gaps. Ten streams at a time, in two shapes:
  //  - spread (the target figure): the ten workers start one stream length / 10 apart, so streams
  //    begin and end at independent moments, as independent users' streams do;
  //  - burst (reported, no target): all ten start in the same millisecond, and because every stream
  //    lasts the same time they keep ending and restarting together; the tenth first frame then
  //    waits for nine stream starts and nine stream ends before it — a measure of per-stream CPU
  //    at a burst, not of the time one stream's first token spends in the target.
  const streamMs = CFG.ttftChunks * CFG.ttftInterval;
  log(
    `\n(${elapsed()}) [4/5] streaming: ${ROUNDS} × ${CFG.ttftStreams} streams (c=10, ${CFG.ttftChunks} deltas every ${CFG.ttftInterval} ms; spread: starts ${streamMs / 10} ms apart, then burst: all ten at once)`,
  );
  await mockShape(mockOrigin, CFG.ttftChunks, CFG.ttftInterval);
  for (let r = 0; r < ROUNDS; r++) {
    for (const b of liveStreams) {
      const rw = row(b);
      for (const shape of ['spread', 'burst'] as const) {
        const res = await run<StreamsResult>({
          kind: 'streams',
          target: b.target,
          body: b.bodies.stream,
          concurrency: 10,
          total: CFG.ttftStreams,
          expectContent: expectedContent(CFG.ttftChunks),
          stallMs: 1000,
          timeoutMs: 30_000,
          rampMs: shape === 'spread' ? streamMs : undefined,
        });
        if (shape === 'spread') {
          rw.ttft.p50.push(res.ttft.p50);
          rw.ttft.p99.push(res.ttft.p99);
          rw.gap.p99.push(res.gap.p99);
        } else rw.ttftBurst.p50.push(res.ttft.p50);
        if (res.lost || res.stalled)
          rw.errors.push(`streaming (${shape}) round ${r + 1}: ${res.lost} lost, ${res.stalled} stalled${res.firstError ? ` (${res.firstError})` : ''}`);
        log(
          `  round ${r + 1} ${b.id.padEnd(2)} ${shape.padEnd(6)} TTFT p50 ${res.ttft.p50.toFixed(3)} ms p99 ${res.ttft.p99.toFixed(3)} ms, gap p99 ${res.gap.p99.toFixed(3)} ms, ${res.ok}/${res.total} ok`,
        );
      }
    }
  }

  // 5. Concurrent streams: all opened at once; a level passes with zero lost and zero stalled.
  const stallMs = Math.max(1000, 10 * CFG.concInterval);
  const firstFrameMs = 5000;
  log(
    `\n(${elapsed()}) [5/5] concurrent streams: levels ${CFG.concLevels.join(', ')} (${CFG.concChunks} deltas every ${CFG.concInterval} ms, opened over ${CFG.concRampMs} ms, stalled = gap > ${stallMs} ms or first frame > ${firstFrameMs} ms)`,
  );
  await mockShape(mockOrigin, CFG.concChunks, CFG.concInterval);
  const failed = new Set<TargetId>();
  for (const level of CFG.concLevels) {
    for (const b of liveStreams) {
      if (failed.has(b.id)) continue;
      const { value: res, rssMax } = await withRssSampling(b, () =>
        run<StreamsResult>(
          {
            kind: 'streams',
            target: b.target,
            body: b.bodies.stream,
            concurrency: level,
            total: level,
            expectContent: expectedContent(CFG.concChunks),
            stallMs,
            firstFrameMs,
            rampMs: CFG.concRampMs,
            timeoutMs: 60_000,
          },
          300_000,
        ),
      );
      const rw = row(b);
      rw.streams ??= { sustained: 0, levels: [] };
      rw.streams.levels.push({
        level,
        peakActive: res.peakActive,
        ok: res.ok,
        lost: res.lost,
        stalled: res.stalled,
        errors: res.errors,
        maxGapMs: res.maxGap,
        ttftP99: res.ttft.p99,
        rssMB: rssMax / 2 ** 20,
        firstError: res.firstError,
      });
      // All complete and intact, and (nearly) all of them open at the same moment.
      const pass = res.ok === level && res.peakActive >= level * 0.95;
      if (pass) rw.streams.sustained = level;
      else {
        failed.add(b.id);
        if (res.lost || res.errors) rw.errors.push(`${level} streams: ${res.lost} lost, ${res.errors} errors${res.firstError ? ` (${res.firstError})` : ''}`);
      }
      log(
        `  ${String(level).padStart(5)} ${b.id.padEnd(2)} peak open ${res.peakActive}, ok ${res.ok}, lost ${res.lost}, stalled ${res.stalled}, max gap ${res.maxGap.toFixed(0)} ms, first frame p99 ${res.ttft.p99.toFixed(0)} ms, RSS ${(rssMax / 2 ** 20).toFixed(0)} MB${res.firstError ? ` (${res.firstError})` : ''}`,
      );
      // Let sockets close before the next target is measured.
      await sleep(500);
    }
  }

  // RSS after: load stopped, a settle period, no forced GC.
  await sleep(CFG.settleMs);
  for (const b of live) if (b.proc && !b.sharesProcessOf) row(b).rssAfter = (await b.proc.tryProbe())?.rss;

  // ---------------------------------------------------------------- report
  const mockCeilingPerCore = mockCpuPerReq.length ? 1e6 / median(mockCpuPerReq) : NaN;
  const summary: Record<string, Record<string, unknown>> = {};
  const A = live.find((b) => b.id === 'A');
  const aRow = A ? row(A) : undefined;
  const base = {
    lat50: aRow ? median(aRow.lat.p50) : NaN,
    lat99: aRow ? median(aRow.lat.p99) : NaN,
    ttft: aRow ? median(aRow.ttft.p50) : NaN,
    ttftBurst: aRow ? median(aRow.ttftBurst.p50) : NaN,
    gap99: aRow ? median(aRow.gap.p99) : NaN,
    rps: aRow ? median(aRow.rps) : NaN,
  };
  const MB = (x?: number) => (x === undefined ? NaN : x / 2 ** 20);
  for (const b of benches) {
    const what = b.conversion ? { conversion: b.conversion, path: b.target.path, sharesProcessOf: b.sharesProcessOf } : {};
    if (!b.available) {
      summary[b.id] = { name: b.name, ...what, skipped: b.skipped };
      continue;
    }
    const rw = row(b);
    const rps = median(rw.rps);
    summary[b.id] = {
      name: b.name,
      ...what,
      streamSkipped: b.streamSkipped,
      throughputRps: rps,
      throughputRounds: rw.rps,
      throughputSlices: rw.sliceRps,
      nearCeiling: b.id !== 'A' && Number.isFinite(base.rps) && rps >= 0.9 * base.rps,
      cpuUsPerRequest: median(rw.cpuPerReq),
      latencyP50Ms: median(rw.lat.p50),
      latencyP99Ms: median(rw.lat.p99),
      addedLatencyP50Ms: median(rw.lat.p50) - base.lat50,
      addedLatencyP99Ms: median(rw.lat.p99) - base.lat99,
      overheadHeaderP50Ms: rw.lat.overhead.length ? median(rw.lat.overhead) : undefined,
      maxRpsP99Under10ms: rw.maxRps,
      ttftP50Ms: median(rw.ttft.p50),
      addedTtftMs: median(rw.ttft.p50) - base.ttft,
      ttftBurstP50Ms: median(rw.ttftBurst.p50),
      addedTtftBurstMs: median(rw.ttftBurst.p50) - base.ttftBurst,
      interChunkP99Ms: median(rw.gap.p99),
      addedInterChunkP99Ms: median(rw.gap.p99) - base.gap99,
      concurrentStreams: rw.streams,
      rssIdleMB: MB(rw.rssIdle),
      rssLoadMB: MB(rw.rssLoad),
      rssAfterMB: MB(rw.rssAfter),
      errors: rw.errors,
    };
  }
  const thr = (id: TargetId) => (summary[id]?.throughputRps as number | undefined) ?? NaN;
  const pairs: Array<[TargetId, TargetId]> = [
    ['C', 'B'],
    ['C', 'A'],
    ['C', 'P'],
    ['C2', 'C'],
  ];
  // A conversion row against the ceiling (B) and against the same gateway without conversion (C).
  for (const id of CONVERSIONS) if (benches.some((b) => b.id === id)) pairs.push([id, 'B'], [id, 'C']);
  // Each ratio is the median of the per-turn ratios: the two targets' slices of the same turn ran
  // seconds apart, so the host's speed, which moves by the second here, cancels out of each pair
  // (see "Throughput in slices" in bench/HISTORY.md). The ratio of the medians is kept beside it.
  const ratios: Record<string, number> = {};
  const ratiosOfMedians: Record<string, number> = {};
  const ratioSamples: Record<string, number[]> = {};
  for (const [x, y] of pairs) {
    const key = `${x}/${y}`;
    ratiosOfMedians[key] = thr(x) / thr(y);
    const sx = rows.get(x)?.sliceRps ?? [];
    const sy = rows.get(y)?.sliceRps ?? [];
    const n = Math.min(sx.length, sy.length);
    const samples = Array.from({ length: n }, (_, i) => sx[i]! / sy[i]!).filter((v) => Number.isFinite(v));
    ratioSamples[key] = samples;
    ratios[key] = samples.length ? median(samples) : NaN;
  }

  const f = (x: unknown, d = 0) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(d) : '–');
  const cols = [
    'target',
    'req/s c=50',
    'CPU µs/req',
    'c=1 p50',
    'c=1 p99',
    '+p50',
    '+p99',
    'hdr p50',
    'max req/s p99<10ms',
    'TTFT',
    '+TTFT',
    '+TTFT burst',
    '+gap p99',
    'streams',
    'RSS idle/load/after MB',
  ];
  const lines: string[][] = [cols];
  for (const b of benches) {
    const s = summary[b.id];
    if (!b.available) {
      lines.push([b.id, `skipped: ${b.skipped}`]);
      continue;
    }
    lines.push([
      b.id + (s.nearCeiling ? ' ⚠' : ''),
      f(s.throughputRps),
      f(s.cpuUsPerRequest),
      f(s.latencyP50Ms, 3),
      f(s.latencyP99Ms, 3),
      b.id === 'A' ? '' : f(s.addedLatencyP50Ms, 3),
      b.id === 'A' ? '' : f(s.addedLatencyP99Ms, 3),
      s.overheadHeaderP50Ms === undefined ? '' : f(s.overheadHeaderP50Ms, 3),
      f(s.maxRpsP99Under10ms),
      f(s.ttftP50Ms, 3),
      b.id === 'A' ? '' : f(s.addedTtftMs, 3),
      b.id === 'A' ? '' : f(s.addedTtftBurstMs, 3),
      b.id === 'A' ? '' : f(s.addedInterChunkP99Ms, 3),
      String((s.concurrentStreams as Row['streams'])?.sustained ?? '–'),
      `${f(s.rssIdleMB)}/${f(s.rssLoadMB)}/${f(s.rssAfterMB)}`,
    ]);
  }
  const widths = cols.map((_, i) => Math.max(...lines.filter((l) => l.length > 2 || i === 0).map((l) => (l[i] ?? '').length)));
  log(
    '\n' +
      lines
        .map((l) =>
          l.length === 2 && l[1].startsWith('skipped')
            ? `${l[0].padEnd(widths[0])}  ${l[1]}`
            : l.map((c, i) => c.padStart(i ? widths[i] : 0).padEnd(i ? 0 : widths[0])).join('  '),
        )
        .join('\n'),
  );
  for (const b of benches.filter((x) => x.available && x.streamSkipped)) log(`${b.id}: streaming not measured: ${b.streamSkipped}`);
  for (const b of live) {
    const errs = row(b).errors;
    if (!errs.length) continue;
    log(`${b.id}: ${errs.length} phase(s) with errors: ${errs.slice(0, 3).join('; ')}`);
    const tail = b.proc && b.proc !== mock ? b.proc.tail().trim() : '';
    if (tail) log(`  last output of ${b.proc!.label}:\n${tail.replace(/^/gm, '    ')}`);
  }
  log(
    `\nratios (throughput at c=${CONNECTIONS}, median of the ${Object.values(ratioSamples)[0]?.length ?? 0} turns' ratios): ${Object.entries(ratios)
      .map(([k, v]) => `${k} ${f(v, 2)}`)
      .join('   ')}\n(ratio of the medians: ${Object.entries(ratiosOfMedians)
      .map(([k, v]) => `${k} ${f(v, 2)}`)
      .join('   ')})`,
  );
  log(
    `mock ceiling: ${f(mockCeilingPerCore)} req/s per core of mock CPU (${f(median(mockCpuPerReq), 1)} µs/req); load-side ceiling (A, mock + load generator on one core): ${f(base.rps)} req/s. ⚠ = within 10 % of it: that target's throughput is a lower bound.`,
  );

  // Targets from the issue (README): judged on C.
  const c = summary.C;
  const checks: Array<[string, boolean | undefined]> =
    c && !c.skipped
      ? [
          ['C throughput ≥ 0.7 × B', Number.isFinite(ratios['C/B']) ? ratios['C/B'] >= 0.7 : undefined],
          ['C throughput ≥ 2 × P', Number.isFinite(ratios['C/P']) ? ratios['C/P'] >= 2 : undefined],
          ['added latency c=1 p50 ≤ 0.5 ms', Number.isFinite(c.addedLatencyP50Ms as number) ? (c.addedLatencyP50Ms as number) <= 0.5 : undefined],
          ['added latency c=1 p99 ≤ 2 ms', Number.isFinite(c.addedLatencyP99Ms as number) ? (c.addedLatencyP99Ms as number) <= 2 : undefined],
          ['streaming added TTFT ≤ 1 ms', Number.isFinite(c.addedTtftMs as number) ? (c.addedTtftMs as number) <= 1 : undefined],
          ['2 000 concurrent streams, no lost frame', ((c.concurrentStreams as Row['streams'])?.sustained ?? 0) >= 2000],
          ['RSS ≤ 150 MB under load', Number.isFinite(c.rssLoadMB as number) ? (c.rssLoadMB as number) <= 150 : undefined],
          [
            'RSS after ≤ idle + 30 MB',
            Number.isFinite(c.rssAfterMB as number) && Number.isFinite(c.rssIdleMB as number)
              ? (c.rssAfterMB as number) <= (c.rssIdleMB as number) + 30
              : undefined,
          ],
        ]
      : [];
  // The conversion rows: the same thresholds for throughput, added latency and TTFT. A row that was
  // skipped (e.g. a conversion the gateway does not serve yet) gets one n/a line saying so.
  const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
  for (const b of benches.filter((x) => x.conversion)) {
    const s = summary[b.id];
    const label = `${b.id} (conversion: ${b.conversion})`;
    if (s.skipped) {
      checks.push([`${label}: skipped`, undefined]);
      continue;
    }
    const ratio = ratios[`${b.id}/B`];
    checks.push(
      [`${label} throughput ≥ 0.7 × B`, isNum(ratio) ? ratio >= 0.7 : undefined],
      [`${label} added latency c=1 p50 ≤ 0.5 ms`, isNum(s.addedLatencyP50Ms) ? s.addedLatencyP50Ms <= 0.5 : undefined],
      [`${label} added latency c=1 p99 ≤ 2 ms`, isNum(s.addedLatencyP99Ms) ? s.addedLatencyP99Ms <= 2 : undefined],
      [`${label} streaming added TTFT ≤ 1 ms`, isNum(s.addedTtftMs) ? s.addedTtftMs <= 1 : undefined],
    );
  }
  // The multi-node set-up (PostgreSQL + Redis), against C of the same run.
  const c2 = summary.C2;
  if (c2 && !c2.skipped && benches.some((b) => b.id === 'C2' && b.available)) {
    checks.push(
      ['C2 (PostgreSQL + Redis) throughput ≥ 0.8 × C', isNum(ratios['C2/C']) ? ratios['C2/C'] >= 0.8 : undefined],
      ['C2 added latency c=1 p50 ≤ 0.5 ms', isNum(c2.addedLatencyP50Ms) ? c2.addedLatencyP50Ms <= 0.5 : undefined],
      ['C2 added latency c=1 p99 ≤ 2 ms', isNum(c2.addedLatencyP99Ms) ? c2.addedLatencyP99Ms <= 2 : undefined],
      ['C2 streaming added TTFT ≤ 1 ms', isNum(c2.addedTtftMs) ? c2.addedTtftMs <= 1 : undefined],
    );
  }
  if (checks.length)
    log(
      `\ntargets (gateway C${benches.some((b) => b.conversion) ? '; CM, CR: its conversion paths, same thresholds' : ''}; C2: the same on PostgreSQL + Redis):\n` +
        checks.map(([k, v]) => `  ${v === undefined ? '   n/a' : v ? '  PASS' : '  FAIL'}  ${k}`).join('\n'),
    );
  if (QUICK) log('\n(quick run: short phases, numbers are indicative only)');

  const stamp = new Date()
    .toISOString()
    .replace(/[:]/g, '-')
    .replace(/\.\d+Z$/, 'Z');
  const out = opt('--out') ?? path.join(BENCH, 'results', `${stamp}${QUICK ? '-quick' : ''}.json`);
  const result = {
    date: new Date().toISOString(),
    quick: QUICK,
    rounds: ROUNDS,
    config: { ...CFG, latSlices: LAT_SLICES, connections: CONNECTIONS, p99BudgetMs: P99_BUDGET_MS, gatewayNodeFlags: GATEWAY_FLAGS },
    machine: { cpus: os.cpus().map((c) => c.model)[0], cores, pinned: PIN, node: process.version, platform: `${os.platform()} ${os.release()}`, floors },
    mock: { cpuUsPerRequest: median(mockCpuPerReq), ceilingRpsPerCore: mockCeilingPerCore, loadSideCeilingRps: base.rps },
    targets: summary,
    ratios,
    ratiosOfMedians,
    ratioSamples,
    checks: Object.fromEntries(checks.map(([k, v]) => [k, v ?? null])),
    elapsedSec: (Date.now() - t0) / 1000,
  };
  fs.writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
  log(`\nwrote ${path.relative(ROOT, out)} in ${result.elapsedSec.toFixed(0)} s`);

  await shutdown();
}

/** Extra cleanup (PostgreSQL schema, Redis prefix, SQLite file) registered by main(). */
const cleanups: Array<() => Promise<void> | void> = [];

async function shutdown() {
  for (const c of children) c.kill();
  await sleep(300);
  for (const c of children) if (!c.exited) c.proc.kill('SIGKILL');
  for (const fn of cleanups.splice(0)) await Promise.resolve(fn()).catch(() => undefined);
}

let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    interrupted = true;
    log(`\n${sig}: stopping targets and cleaning up…`);
    void shutdown().then(() => process.exit(130));
  });
}

main().catch(async (err) => {
  if (interrupted) return; // the signal handler is cleaning up and will exit
  // eslint-disable-next-line no-console -- a command-line tool's output
  console.error(err);
  await shutdown();
  process.exit(1);
});
