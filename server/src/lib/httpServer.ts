import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { nativeAcceptPending, type AcceptPending } from './native';

/**
 * Accept-queue depth for the gateway's listener. Node's default (511) overflows when thousands of
 * streams open within a second while the event loop is busy relaying: the kernel then drops
 * connections and clients wait for TCP's retransmission timer (1 s, then 3 s, 7 s).
 * `net.core.somaxconn` caps it (4096 on current kernels).
 */
export const LISTEN_BACKLOG = 4096;

/**
 * Most connections taken from the queue in one round; the rest waits for the next. Each one
 * adopted adds its request's work to the coming rounds, which delays the frames of the streams
 * already open: measured with 2 000 streams opened in a second on one busy core, 16 per round left
 * the last first frames at 4–5 s (frame gaps ≤ 0.7 s), 256 at 1.5–1.8 s (gaps ≤ 0.75 s), 512 at
 * 1.5–2.2 s with gaps up to 0.94 s.
 */
const DRAIN_MAX = 256;

export interface ArrivalDeadlines {
  /** A request's headers must arrive within this (ms). */
  headersMs?: number;
  /** The whole request, body included, must arrive within this (ms): the relay's uploads. */
  requestMs?: number;
}

/**
 * The gateway's HTTP server with the timeouts a relay needs: keep-alive longer than common load
 * balancers' idle timeout (60 s) so they close first (Node does not apply the headers deadline to
 * an idle keep-alive connection), and deadlines for a request's arrival — its headers (20 s), the
 * whole request (5 min: generous for uploads) — so a client that announces a body and sends it
 * slowly or never cannot hold connections forever (docs/security.md). Both count only while the
 * request arrives: an answer (a stream) may run for as long as it needs. Node checks them every
 * `connectionsCheckingInterval`, a quarter of the shorter one here (no per-request timer).
 */
export function createGatewayServer(callback: http.RequestListener, deadlines: ArrivalDeadlines = {}): http.Server {
  const headersMs = deadlines.headersMs ?? 20_000;
  const requestMs = Math.max(headersMs, deadlines.requestMs ?? 300_000);
  const server = http.createServer({ connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(headersMs / 4))) }, callback);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = headersMs;
  server.requestTimeout = requestMs;
  trackConnections(server);
  return server;
}

const openConnections = new WeakMap<http.Server, Set<net.Socket>>();

/**
 * Counts the server's open connections, the ones Node accepted and the ones listenGateway adopted
 * alike (both arrive as 'connection'), so that a shutdown can wait for them and close what is
 * left. Per connection, not per request: nothing on a request's path.
 */
function trackConnections(server: http.Server): Set<net.Socket> {
  const known = openConnections.get(server);
  if (known) return known;
  const conns = new Set<net.Socket>();
  openConnections.set(server, conns);
  server.on('connection', (socket: net.Socket) => {
    conns.add(socket);
    socket.once('close', () => conns.delete(socket));
  });
  return conns;
}

/** The server's open connections (createGatewayServer tracks them). */
export function gatewayConnections(server: http.Server): ReadonlySet<net.Socket> {
  return trackConnections(server);
}

export interface DrainResult {
  /** Connections still busy at the deadline, destroyed. */
  cut: number;
}

/**
 * Graceful stop of the HTTP side: stop accepting (also ends the accept4 draining, which checks
 * `listening`), close idle keep-alive connections at once and each busy one as soon as its
 * response is done (answers from now on say `Connection: close`), and at `timeoutMs` destroy
 * whatever is still open: the calls on them see their client gone and settle or refund as any
 * abandoned call does.
 */
export async function drainGateway(server: http.Server, timeoutMs: number, pollMs = 50): Promise<DrainResult> {
  const conns = trackConnections(server);
  server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!res.headersSent) res.setHeader('connection', 'close');
  });
  if (server.listening) server.close();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // A connection between two requests (or before its first) counts as idle.
    server.closeIdleConnections();
    if (!conns.size) return { cut: 0 };
    const left = deadline - Date.now();
    if (left <= 0) break;
    await new Promise((r) => setTimeout(r, Math.min(pollMs, left)));
  }
  const cut = conns.size;
  for (const s of conns) s.destroy();
  return { cut };
}

export interface ListenOptions {
  port: number;
  host?: string;
  /** Drains the accept queue each time Node accepts; default: the native addon's, when it loaded. null: Node's own accepting only. */
  acceptPending?: AcceptPending | null;
}

/**
 * Listens with a deep backlog and, with the native addon (Linux), takes every waiting connection
 * each time the event loop accepts one.
 *
 * Why: since libuv 1.45 (Node 20) a listen handle accepts ONE connection per event-loop round
 * (libuv/libuv#3696). While thousands of streams are relayed, a round handles hundreds of socket
 * events and lasts tens of milliseconds, so a burst of new connections drains at a few dozen a
 * second and waits seconds in the kernel's queue although the process could serve them: in the
 * benchmark's 2 000 streams opened within a second, the median connection waited 2 s to be
 * accepted and the first frames of the last ones came after 5–8 s. Taking the whole queue per round
 * (what libuv did before) brought that wait to a round. The extra connections are wrapped as
 * sockets and handed to the HTTP server as if it had accepted them itself.
 *
 * Resolves once listening; the server's own close() stops both (no 'connection' event, no drain).
 */
export function listenGateway(server: http.Server, opts: ListenOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen({ port: opts.port, host: opts.host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', onError);
      const acceptPending = opts.acceptPending === undefined ? nativeAcceptPending() : opts.acceptPending;
      const fd = (server as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
      if (acceptPending && typeof fd === 'number' && fd >= 0) drainOnAccept(server, fd, acceptPending);
      resolve();
    });
  });
}

function drainOnAccept(server: http.Server, listenFd: number, acceptPending: AcceptPending): void {
  let draining = false;
  // Runs before the HTTP server's own listener for the connection Node accepted; the ones handed
  // over below emit 'connection' too, hence the guard.
  server.prependListener('connection', () => {
    if (draining || !server.listening) return;
    draining = true;
    try {
      for (const conn of acceptPending(listenFd, DRAIN_MAX)) adopt(server, conn);
    } finally {
      draining = false;
    }
  });
}

function adopt(server: http.Server, conn: number): void {
  let socket: net.Socket;
  try {
    // The options the HTTP server gives the sockets it accepts (allowHalfOpen, no Nagle).
    socket = new net.Socket({ fd: conn, readable: true, writable: true, allowHalfOpen: true });
  } catch {
    try {
      fs.closeSync(conn);
    } catch {
      /* already gone */
    }
    return;
  }
  socket.setNoDelay(true);
  server.emit('connection', socket);
}
