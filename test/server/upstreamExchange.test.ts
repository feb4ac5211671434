import http from 'node:http';
import net from 'node:net';
import type { AppContext } from '../../server/src/context';
import { splitUrl, UpstreamExchange, type BodyConsumer } from '../../server/src/relay/upstreamExchange';
import type { UpstreamError } from '../../server/src/relay/errors';

/** Just what the upstream agent needs of an app: per-app singletons, the timeout, close hooks. */
function fakeApp(upstreamTimeoutMs = 2000): AppContext & { close(): Promise<void> } {
  const memo = new Map<string, unknown>();
  const closers: Array<() => unknown> = [];
  return {
    memo<T>(key: string, factory: () => T): T {
      if (!memo.has(key)) memo.set(key, factory());
      return memo.get(key) as T;
    },
    config: { upstreamTimeoutMs },
    onClose(fn: () => unknown) {
      closers.push(fn);
    },
    async close() {
      for (const fn of closers) await fn();
    },
  } as unknown as AppContext & { close(): Promise<void> };
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function serve(handler: Handler): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, server };
}

const post = (url: string, body = '{}') => ({ url, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body });

describe('UpstreamExchange (relay upstream calls on undici dispatch)', () => {
  let app: ReturnType<typeof fakeApp>;
  const servers: http.Server[] = [];
  beforeEach(() => {
    app = fakeApp();
  });
  afterEach(async () => {
    await app.close();
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });
  const start = async (h: Handler) => {
    const s = await serve(h);
    servers.push(s.server);
    return s.url;
  };

  test('splitUrl: origin and path (with query) of absolute URLs', () => {
    expect(splitUrl('http://h:8080/v1/chat/completions?x=1')).toEqual({ origin: 'http://h:8080', path: '/v1/chat/completions?x=1' });
    expect(splitUrl('https://h')).toEqual({ origin: 'https://h', path: '/' });
    expect(splitUrl('https://h?key=1')).toEqual({ origin: 'https://h', path: '/?key=1' });
  });

  test('sends method, headers and body; status, headers (any case) and the whole body come back', async () => {
    let seen = { method: '', ctype: '', body: '' };
    const url = await start((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen = { method: req.method!, ctype: String(req.headers['content-type']), body };
        res.writeHead(201, { 'Content-Type': 'application/json', 'X-Trace': 'abc' });
        res.write('{"a":');
        setTimeout(() => res.end('1}'), 20);
      });
    });
    const up = UpstreamExchange.open(app, post(`${url}/v1/x`, '{"q":1}'));
    await up.ready;
    expect(up.statusCode).toBe(201);
    expect(up.header('content-type')).toBe('application/json');
    expect(up.header('x-trace')).toBe('abc');
    expect(up.header('x-missing')).toBe('');
    expect((await up.collect()).toString()).toBe('{"a":1}');
    expect(seen).toEqual({ method: 'POST', ctype: 'application/json', body: '{"q":1}' });
  });

  test('a body over the limit is refused (502) and the upstream request is stopped', async () => {
    let closed = false;
    const url = await start((req, res) => {
      res.on('close', () => (closed = true));
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const tick = () => {
        if (res.destroyed) return;
        res.write(Buffer.alloc(16 * 1024, 1));
        setTimeout(tick, 2);
      };
      tick();
    });
    const up = UpstreamExchange.open(app, post(url));
    await up.ready;
    await expect(up.collect(64 * 1024)).rejects.toMatchObject({ status: 502, message: "The upstream's answer is too large" });
    for (let i = 0; i < 100 && !closed; i++) await new Promise((r) => setTimeout(r, 20));
    expect(closed).toBe(true);
  });

  test('pipe: chunks that came before the consumer first, in order; a false return pauses the upstream until resume()', async () => {
    const CHUNK = Buffer.alloc(64 * 1024, 7);
    let written = 0;
    let finished = false;
    const url = await start((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('first;');
      // Writes as fast as the socket takes them: without backpressure all 200 chunks are written at once.
      let i = 0;
      const pump = () => {
        while (i < 200) {
          i++;
          written++;
          if (!res.write(CHUNK)) return res.once('drain', pump);
        }
        res.end('last;');
        finished = true;
      };
      setTimeout(pump, 30);
    });
    const up = UpstreamExchange.open(app, post(url));
    await up.ready;
    await new Promise((r) => setTimeout(r, 10)); // 'first;' arrives before anyone consumes
    let got = 0;
    let firstPart = '';
    let ended = false;
    const consumer: BodyConsumer = {
      data(chunk) {
        if (!firstPart) firstPart = chunk.subarray(0, 6).toString();
        got += chunk.length;
        return false; // slow client: pause after every chunk
      },
      end: () => (ended = true),
      error: (err) => {
        throw err;
      },
    };
    up.pipe(consumer);
    await new Promise((r) => setTimeout(r, 300));
    expect(firstPart).toBe('first;');
    // Paused: the server could not write everything (socket buffers are far below 200 × 64 KB).
    expect(finished).toBe(false);
    expect(written).toBeLessThan(200);
    while (!ended) {
      up.resume();
      await new Promise((r) => setTimeout(r, 1));
    }
    expect(got).toBe(6 + 200 * CHUNK.length + 5);
  });

  test('abort(): before the headers (the wait fails as client_gone) and mid-body (the consumer hears it, the server sees the close)', async () => {
    const url = await start(() => {
      /* never answers */
    });
    const early = UpstreamExchange.open(app, post(url));
    early.abort();
    await expect(early.ready).rejects.toMatchObject({ status: 0, upstreamCode: 'client_gone' });

    let serverSawClose = false;
    const url2 = await start((req, res) => {
      res.on('close', () => (serverSawClose = true));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n');
    });
    const up = UpstreamExchange.open(app, post(url2));
    await up.ready;
    const failure = new Promise<UpstreamError>((resolve) => up.pipe({ data: () => true, end: () => undefined, error: resolve }));
    up.abort();
    expect(await failure).toMatchObject({ upstreamCode: 'client_gone' });
    expect(up.aborted).toBe(true);
    for (let i = 0; i < 100 && !serverSawClose; i++) await new Promise((r) => setTimeout(r, 20));
    expect(serverSawClose).toBe(true);
  });

  test('failures in the relay words: refused connection, body cut off, no headers in time', async () => {
    // A port nothing listens on.
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((r) => probe.close(r));
    await expect(UpstreamExchange.open(app, post(`http://127.0.0.1:${port}`)).ready).rejects.toMatchObject({
      status: 0,
      message: 'The upstream request failed: ECONNREFUSED',
      upstreamCode: 'ECONNREFUSED',
    });

    const cutUrl = await start((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":');
      setTimeout(() => res.destroy(), 20);
    });
    const cut = UpstreamExchange.open(app, post(cutUrl));
    await cut.ready;
    await expect(cut.collect()).rejects.toMatchObject({ status: 0, message: expect.stringMatching(/^Failed to read the upstream's answer: /) });

    const slowApp = fakeApp(200);
    try {
      const silentUrl = await start(() => {
        /* never answers */
      });
      await expect(UpstreamExchange.open(slowApp, post(silentUrl)).ready).rejects.toMatchObject({
        status: 0,
        message: 'The upstream timed out',
        upstreamCode: 'UND_ERR_HEADERS_TIMEOUT',
      });
    } finally {
      await slowApp.close();
    }
  });
});
