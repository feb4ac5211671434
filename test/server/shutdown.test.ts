/**
 * Graceful shutdown: the HTTP side drains (idle connections at once, busy ones when done, the rest
 * cut at the deadline; adopted connections too), and a real gateway process stopped with SIGTERM
 * lets a stream finish, cuts one that outlives the deadline, settles both, flushes and exits 0.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { createGatewayServer, drainGateway, gatewayConnections, listenGateway } from '../../server/src/lib/httpServer';
import { nativeAcceptPending } from '../../server/src/lib/native';
import { buildApp, DB_TARGETS, makeUser } from '../helpers/app';
import { fakeOnly, waitFor } from '../helpers/clock';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gatewayProcess';
import { seedChannel, seedToken, setOptions } from '../mock-upstream/seed';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One keep-alive GET on a raw socket; resolves once the whole answer (by content-length) is in. */
function get(socket: net.Socket, p = '/'): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    const onData = (d: Buffer) => {
      data += d.toString('utf8');
      const end = data.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(data);
      if (end >= 0 && length && data.length >= end + 4 + Number(length[1])) {
        socket.off('data', onData);
        resolve(data);
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(`GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

const closed = (s: net.Socket) => (s.destroyed ? Promise.resolve() : new Promise<void>((r) => s.once('close', () => r())));

describe('drainGateway', () => {
  test('idle keep-alive connections (adopted ones included) close at once; a busy one when its answer is done', async () => {
    let release: (() => void) | undefined;
    const server = createGatewayServer((req, res) => {
      if (req.url === '/slow') {
        release = () => res.end('slow done');
        return;
      }
      res.setHeader('content-length', '2');
      res.end('ok');
    });
    await listenGateway(server, { port: 0, host: '127.0.0.1' });
    const port = (server.address() as net.AddressInfo).port;
    // A burst while the loop is blocked: with the native addon most are adopted through accept4.
    const clients = Array.from({ length: 30 }, () => net.connect(port, '127.0.0.1'));
    await new Promise<void>((r) => process.nextTick(r));
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    await Promise.all(clients.map((c) => get(c)));
    const busy = net.connect(port, '127.0.0.1');
    busy.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(() => release !== undefined);
    expect(gatewayConnections(server).size).toBe(31);

    const t0 = Date.now();
    const drained = drainGateway(server, 5000, 20);
    await Promise.all(clients.map(closed));
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(busy.destroyed).toBe(false);
    // No new connections.
    await expect(new Promise((resolve, reject) => net.connect(port, '127.0.0.1').once('connect', resolve).once('error', reject))).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
    let answer = '';
    busy.on('data', (d: Buffer) => (answer += d.toString()));
    release!();
    await closed(busy);
    expect(answer).toContain('slow done');
    expect(await drained).toEqual({ cut: 0 });
    expect(gatewayConnections(server).size).toBe(0);
  });

  const acceptPending = nativeAcceptPending();
  (acceptPending ? test : test.skip)('connections adopted through the native accept loop are counted and closed by the drain', async () => {
    let adopted = 0;
    const server = createGatewayServer((_req, res) => {
      res.setHeader('content-length', '2');
      res.end('ok');
    });
    await listenGateway(server, {
      port: 0,
      host: '127.0.0.1',
      acceptPending: (fd, max) => {
        const fds = acceptPending!(fd, max);
        adopted += fds.length;
        return fds;
      },
    });
    const port = (server.address() as net.AddressInfo).port;
    // Connections queue while the loop is blocked; the first accept then takes the rest.
    const clients = Array.from({ length: 20 }, () => net.connect(port, '127.0.0.1'));
    await new Promise<void>((r) => process.nextTick(r));
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    await Promise.all(clients.map((c) => get(c)));
    expect(adopted).toBeGreaterThan(0);
    expect(gatewayConnections(server).size).toBe(20);
    expect(await drainGateway(server, 2000, 20)).toEqual({ cut: 0 });
    await Promise.all(clients.map(closed));
    expect(gatewayConnections(server).size).toBe(0);
  });

  test('a connection still busy at the deadline is cut', async () => {
    let requests = 0;
    const server = createGatewayServer(() => void requests++); // never answers
    await listenGateway(server, { port: 0, host: '127.0.0.1' });
    const port = (server.address() as net.AddressInfo).port;
    const c = net.connect(port, '127.0.0.1');
    c.on('error', () => undefined);
    c.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(() => requests === 1);
    // The drain's deadline and polls on a fake clock (Date and setTimeout; the sockets stay real).
    fakeOnly(['Date', 'setTimeout', 'clearTimeout']);
    try {
      let result: unknown;
      void drainGateway(server, 300, 20).then((r) => (result = r));
      await jest.advanceTimersByTimeAsync(299);
      expect(result).toBeUndefined(); // still waiting for the busy one
      await jest.advanceTimersByTimeAsync(1);
      expect(result).toEqual({ cut: 1 });
    } finally {
      jest.useRealTimers();
      server.closeAllConnections(); // what a failed drain left open
    }
    await closed(c);
  });
});

// ---- a real gateway process ----

const PRICING = {
  ModelRatio: JSON.stringify({ 'm-short': 1, 'm-long': 1 }),
  CompletionRatio: JSON.stringify({}),
  GroupRatio: JSON.stringify({ default: 1 }),
  PreConsumedQuota: '500',
};
const INITIAL = 1_000_000;

/** Streams `n` chunks `gap` ms apart, usage last when asked (the gateway asks). */
function slowUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      const j = JSON.parse(body) as { model: string; stream_options?: { include_usage?: boolean } };
      const n = j.model === 'm-short' ? 5 : 400;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < n && !res.destroyed; i++) {
        res.write(
          `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"word${i} "},"finish_reason":null}]}\n\n`,
        );
        await sleep(120);
      }
      if (res.destroyed) return;
      if (j.stream_options?.include_usage)
        res.write(
          `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":${n},"total_tokens":${7 + n}}}\n\n`,
        );
      res.end('data: [DONE]\n\n');
    });
  });
  return new Promise((resolve) =>
    srv.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`,
        close: () =>
          new Promise<void>((r) => {
            srv.closeAllConnections();
            srv.close(() => r());
          }),
      }),
    ),
  );
}

describe('SIGTERM on a gateway process', () => {
  let dir: string;
  let upstream: Awaited<ReturnType<typeof slowUpstream>>;
  let gw: GatewayProcess | undefined;
  afterAll(async () => {
    await gw?.kill();
    await upstream?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a stream that ends before the deadline completes, a longer one is cut; both settled, rows flushed, exit 0', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-shutdown-'));
    const dbFile = path.join(dir, 'gw.db');
    upstream = await slowUpstream();
    const seedApp = await buildApp(DB_TARGETS[0]!, { config: { databaseUrl: `sqlite:${dbFile}` } });
    await setOptions(seedApp, PRICING);
    await seedChannel(seedApp, { base_url: upstream.url, models: 'm-short,m-long' });
    const userId = (await makeUser(seedApp, { quota: INITIAL })).id;
    const key = (await seedToken(seedApp, userId)).key;
    await seedApp.close();

    gw = await startGatewayProcess({ DATABASE_URL: `sqlite:${dbFile}`, REDIS_URL: '', SESSION_SECRET: 'x', SHUTDOWN_TIMEOUT_MS: '1500' });
    const { port, child, exited } = gw;

    const stream = (model: string) => {
      const st = { text: '', firstChunk: undefined as unknown as Promise<void>, done: undefined as unknown as Promise<{ complete: boolean }> };
      let first: () => void = () => undefined;
      st.firstChunk = new Promise<void>((r) => (first = r));
      st.done = new Promise((resolve) => {
        const req = http.request(
          `http://127.0.0.1:${port}/v1/chat/completions`,
          { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } },
          (res) => {
            res.on('data', (d: Buffer) => {
              st.text += d.toString();
              first();
            });
            res.on('end', () => resolve({ complete: true }));
            res.on('error', () => resolve({ complete: false }));
            res.on('aborted', () => resolve({ complete: false }));
          },
        );
        req.on('error', () => resolve({ complete: false }));
        req.end(JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }));
      });
      return st;
    };
    const short = stream('m-short');
    const long = stream('m-long');
    await Promise.all([short.firstChunk, long.firstChunk]);
    // An idle keep-alive connection (one answered request).
    const idle = net.connect(port, '127.0.0.1');
    await get(idle, '/api/status');

    const tStop = Date.now();
    child.kill('SIGTERM');
    await closed(idle);
    expect(Date.now() - tStop).toBeLessThan(1000);

    const [s] = await Promise.all([short.done, long.done]);
    expect(s.complete).toBe(true);
    expect(short.text).toContain('word4');
    expect(short.text.trim().endsWith('data: [DONE]')).toBe(true);
    expect(long.text).not.toContain('[DONE]');
    const code = await exited;
    expect(Date.now() - tStop).toBeLessThan(10_000);
    expect(code).toBe(0);
    expect(gw.output()).toContain('shut down');

    const db = knexFactory({ client: 'better-sqlite3', connection: { filename: dbFile }, useNullAsDefault: true });
    try {
      const rows = (await db('logs').where({ user_id: userId, type: 2 }).orderBy('model_name').select('model_name', 'quota', 'completion_tokens')) as Array<{
        model_name: string;
        quota: number;
        completion_tokens: number;
      }>;
      expect(rows.map((r) => r.model_name)).toEqual(['m-long', 'm-short']);
      expect(Number(rows[1]!.completion_tokens)).toBe(5); // the upstream's usage: a complete stream
      expect(Number(rows[0]!.completion_tokens)).toBeGreaterThan(0); // the cut one: what was delivered
      const quota = Number((await db('users').where({ id: userId }).first()).quota);
      expect(quota).toBe(INITIAL - rows.reduce((a, r) => a + Number(r.quota), 0));
    } finally {
      await db.destroy();
    }
  }, 60_000);
});
