import http from 'node:http';
import net from 'node:net';
import { createGatewayServer, listenGateway } from '../../server/src/lib/httpServer';
import { nativeAcceptPending, type AcceptPending } from '../../server/src/lib/native';

/**
 * The gateway's listener (server/src/lib/httpServer.ts): libuv ≥ 1.45 accepts one connection per
 * event-loop round; with the native addon the listener takes the whole queue in that round.
 */

const N = 40;

/** Blocks the thread (no event loop) for `ms`: connections queue up in the kernel meanwhile. */
function blockFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

async function started(acceptPending?: AcceptPending | null): Promise<{ server: http.Server; port: number; accepted: () => number }> {
  const server = createGatewayServer((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end(`from ${req.socket.remoteAddress}`);
  });
  await listenGateway(server, { port: 0, host: '127.0.0.1', acceptPending });
  let count = 0;
  server.on('connection', () => count++);
  return { server, port: (server.address() as net.AddressInfo).port, accepted: () => count };
}

/** Opens `n` connections while the loop is blocked, then returns how many the server accepted in the first round that accepted any. */
async function burst(port: number, n: number, accepted: () => number): Promise<{ clients: net.Socket[]; inFirstRound: number }> {
  const clients = Array.from({ length: n }, () => net.connect(port, '127.0.0.1'));
  // net.connect issues connect() on the next tick: let those run, then keep the loop from polling
  // while the kernel completes the handshakes into the listen queue.
  await new Promise<void>((resolve) => process.nextTick(resolve));
  blockFor(100);
  // A round polls the listen socket once, then runs the check phase (setImmediate). The first check
  // may still belong to the round this code runs in: look until a round has accepted something.
  let inFirstRound = 0;
  for (let round = 0; round < 10 && !inFirstRound; round++) inFirstRound = await new Promise<number>((resolve) => setImmediate(() => resolve(accepted())));
  await Promise.all(clients.map((c) => (c.connecting ? new Promise((r) => c.once('connect', r)) : undefined)));
  return { clients, inFirstRound };
}

/** One GET on a raw socket; resolves with the whole response (head and body, by content-length). */
function get(socket: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      data += d;
      const end = data.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(data);
      if (end >= 0 && length && data.length >= end + 4 + Number(length[1])) resolve(data);
    });
    socket.once('error', reject);
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  });
}

describe('listenGateway', () => {
  test('the native addon can drain an accept queue (built by npm install on Linux)', () => {
    if (process.platform === 'linux') expect(typeof nativeAcceptPending()).toBe('function');
  });

  test('takes every waiting connection in the round Node accepts one, and serves each as its own', async () => {
    const { server, port, accepted } = await started();
    try {
      const { clients, inFirstRound } = await burst(port, N, accepted);
      expect(inFirstRound).toBe(N);
      const answers = await Promise.all(clients.map(get));
      for (const a of answers) {
        expect(a.startsWith('HTTP/1.1 200 OK')).toBe(true);
        expect(a).toContain('Keep-Alive: timeout=65'); // the gateway server's own keep-alive
        expect(a.endsWith('\r\n\r\nfrom 127.0.0.1')).toBe(true); // the adopted socket knows its peer
      }
      // Closing the server ends every connection, the adopted ones included.
      const closed = clients.map((c) => new Promise((r) => c.once('close', r)));
      server.close();
      server.closeAllConnections();
      await Promise.all(closed);
    } finally {
      server.close();
    }
  });

  test("without the addon it is Node's own accepting: fewer connections per round", async () => {
    const { server, port, accepted } = await started(null);
    try {
      const { clients, inFirstRound } = await burst(port, N, accepted);
      expect(inFirstRound).toBeLessThan(N);
      // All of them are still served, over the following rounds.
      const answers = await Promise.all(clients.map(get));
      expect(answers.every((a) => a.startsWith('HTTP/1.1 200 OK') && a.endsWith('from 127.0.0.1'))).toBe(true);
      expect(accepted()).toBe(N);
      server.closeAllConnections();
    } finally {
      server.close();
    }
  });

  test('a drain that returns a descriptor that is not a socket adopts nothing and keeps serving', async () => {
    // fd 987654 does not exist: wrapping it fails; the listener must not throw or stop accepting.
    let calls = 0;
    const { server, port, accepted } = await started((_fd, _max) => (calls++ === 0 ? [987654] : []));
    try {
      const { clients } = await burst(port, 3, accepted);
      const answers = await Promise.all(clients.map(get));
      expect(answers.every((a) => a.startsWith('HTTP/1.1 200 OK'))).toBe(true);
      expect(calls).toBeGreaterThan(0);
      server.closeAllConnections();
    } finally {
      server.close();
    }
  });

  test('after close() nothing is accepted any more', async () => {
    const { server, port } = await started();
    await new Promise((r) => server.close(r));
    const err = await new Promise<NodeJS.ErrnoException>((resolve) => net.connect(port, '127.0.0.1').once('error', resolve));
    expect(err.code).toBe('ECONNREFUSED');
  });

  test('a port in use rejects', async () => {
    const { server, port } = await started();
    try {
      const other = createGatewayServer(() => undefined);
      await expect(listenGateway(other, { port, host: '127.0.0.1' })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      server.close();
    }
  });
});
