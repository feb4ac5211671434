import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { buildApp, DB_TARGETS, makeUser, type TestApp } from '../helpers/app';
import { seedToken } from '../mock-upstream/seed';
import { createGatewayServer, listenGateway } from '../../server/src/lib/httpServer';

/**
 * Slow bodies (docs/security.md, "Slow requests"): a client that announces a body and sends it
 * slowly or never gets a deadline — the console's bodies a short one, the relay's uploads a
 * generous one — and so does one that never finishes its headers. A slow but honest client meets
 * them, and an answer (a stream) may take as long as it needs.
 */

interface RawAnswer {
  /** The status line, if an answer came. */
  status: string;
  body: string;
  /** When the server closed the connection (ms after the request began). */
  closedAfterMs: number;
}

/** Sends `head` (and `chunks`, `gapMs` apart) on a raw socket; resolves when the server closes it. */
function rawRequest(port: number, head: string, chunks: string[] = [], gapMs = 0): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    s.on('data', (d) => (got += d.toString()));
    s.on('error', reject);
    s.on('close', () => {
      const [statusLine = '', ...rest] = got.split('\r\n');
      resolve({ status: statusLine, body: rest.join('\r\n'), closedAfterMs: Date.now() - t0 });
    });
    s.write(head);
    chunks.forEach((c, i) => setTimeout(() => !s.destroyed && s.write(c), gapMs * (i + 1)));
  });
}

describe.each(DB_TARGETS.slice(0, 1).map((t) => [t.name, t] as const))('deadlines for a request to arrive [%s]', (_n, target) => {
  let app: TestApp;
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    app = await buildApp(target, { config: { apiBodyTimeoutMs: 400 } });
    server = createGatewayServer(app.callback, { headersMs: 1000, requestMs: 2000 });
    await listenGateway(server, { port: 0, host: '127.0.0.1', acceptPending: null });
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await app.close();
  });

  test('a console body announced and never sent: 408 in the console envelope at its deadline, connection closed', async () => {
    const a = await rawRequest(port, 'POST /api/user/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n');
    expect(a.status).toBe('HTTP/1.1 408 Request Timeout');
    expect(a.body).toContain('"success":false');
    expect(a.closedAfterMs).toBeGreaterThanOrEqual(350);
    expect(a.closedAfterMs).toBeLessThan(1000);
  });

  test('a relay body announced and never sent: 408 at the whole-request deadline, connection closed', async () => {
    const u = await makeUser(app, { quota: 1000 });
    const tok = await seedToken(app, u.id);
    const a = await rawRequest(
      port,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tok.key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`,
    );
    expect(a.status).toBe('HTTP/1.1 408 Request Timeout');
    expect(a.closedAfterMs).toBeGreaterThanOrEqual(1900);
    expect(a.closedAfterMs).toBeLessThan(4000);
  });

  test('headers that never end: the connection is closed at the headers deadline', async () => {
    const a = await rawRequest(port, 'GET /api/status HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    expect(a.closedAfterMs).toBeGreaterThanOrEqual(900);
    expect(a.closedAfterMs).toBeLessThan(2500);
    expect(a.status === '' || a.status.includes('408')).toBe(true);
  });

  test('a slow but honest client meets them; stalled connections do not keep others from being served', async () => {
    const stalled = Array.from({ length: 40 }, () => {
      const s = net.connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      s.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n');
      return s;
    });
    try {
      const status = await fetch(`http://127.0.0.1:${port}/api/status`);
      expect(status.status).toBe(200);
      // A console body in four pieces over 300 ms (< 400): answered as usual (wrong password).
      const body = JSON.stringify({ username: 'nobody', password: 'wrong-password' });
      const parts = [body.slice(0, 10), body.slice(10, 20), body.slice(20, 30), body.slice(30)];
      const a = await rawRequest(
        port,
        `POST /api/user/login HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
        parts,
        75,
      );
      expect(a.status).toBe('HTTP/1.1 200 OK');
      expect(a.body).toContain('"success":false');
    } finally {
      for (const s of stalled) s.destroy();
    }
  });
});
