import os from 'node:os';
import Koa from 'koa';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import session from 'koa-session';
import type { AppConfig } from './config';
import type { AppContext } from './context';
import { createDb, releaseDbMemory, type Db } from './db/knex';
import { migrate } from './db/migrate';
import { createKV, RedisKV, type KV } from './cache/kv';
import { createLogger, type Logger } from './lib/logger';
import { nowSec } from './lib/time';
import { OptionService } from './services/options';
import { apiMiddleware } from './api';
import { relayHttpHandler, relayMiddleware } from './relay';
import { clientIp, trustsProxies } from './relay/ip';
import { releaseIdleUpstreams } from './relay/upstream';
import { relayCallsDone } from './relay/call';
import { metricsMiddleware } from './metrics';
import { serveConsole } from './static';
import { startLedger } from './ledger/recovery';
import { startTasks } from './tasks';
import { realtimeUpgradeHandler } from './relay/realtime';
import { createProbes } from './health';

export interface GatewayApp {
  koa: Koa;
  ctx: AppContext;
  /** Node request handler (for http.createServer / supertest). */
  callback: (req: IncomingMessage, res: ServerResponse) => Promise<void> | undefined;
  /** The HTTP server's `upgrade` listener (WebSocket: /v1/realtime). */
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Flushes batches, closes DB and Redis. */
  close(): Promise<void>;
  /** Waits (at most `timeoutMs`) until no relay call is in progress; false if some still are. */
  drain(timeoutMs: number): Promise<boolean>;
  /** The server went quiet after a burst: let go of per-burst resources (lib/idleGc.ts calls it). */
  releaseIdle(): Promise<void>;
  /** The node is stopping: `/readyz` answers 503 from now on (load balancers take it out); everything else is served as before. */
  startDraining(): void;
}

export interface CreateAppOptions {
  logger?: Logger;
  /** Skip serving the console (tests that only need the API). */
  serveConsole?: boolean;
}

/**
 * Builds the whole gateway (console API, relay, console files) without listening: opens the
 * database, migrates, seeds default options and loads them. Tests call it with their own config.
 */
export async function createApp(config: AppConfig, opts: CreateAppOptions = {}): Promise<GatewayApp> {
  const log = opts.logger ?? createLogger(config.logLevel);
  const db: Db = createDb(config.databaseUrl, {
    pgSchema: config.pgSchema,
    statementTimeoutMs: config.dbStatementTimeoutMs ?? 30_000,
    lockTimeoutMs: config.dbLockTimeoutMs ?? 5_000,
    acquireTimeoutMs: config.dbAcquireTimeoutMs,
    applicationName: `ai-gateway ${config.nodeId || `${os.hostname()}:${config.port}`}`.slice(0, 63),
  });
  await migrate(db.knex);
  const kv: KV = createKV(config.redisUrl, config.redisPrefix);
  if (kv instanceof RedisKV) kv.onSubscribeError = (err) => log.error({ err }, 'redis subscribe failed');
  const options = new OptionService(db.knex, kv);
  await options.load();

  const memos = new Map<string, unknown>();
  const closers: Array<() => Promise<void> | void> = [];
  const ctx: AppContext = {
    config,
    db,
    knex: db.knex,
    kv,
    log,
    options,
    startTime: nowSec(),
    memo<T>(key: string, factory: () => T): T {
      if (!memos.has(key)) memos.set(key, factory());
      return memos.get(key) as T;
    },
    onClose(fn) {
      closers.push(fn);
    },
  };

  // Quota reservations a crash left behind are settled or refunded before anything is served.
  await startLedger(ctx);
  // Unfinished asynchronous tasks are followed from the start (a restart resumes them).
  startTasks(ctx);

  // `proxy` makes Koa read X-Forwarded-Proto/Host; the client IP is set below by the same function
  // the relay uses (Koa's own takes the leftmost X-Forwarded-For entry, which the client chooses).
  const koa = new Koa({ proxy: trustsProxies(config.trustProxy) });
  koa.keys = [config.sessionSecret];
  koa.silent = true;
  koa.on('error', (err: Error & { code?: string }) => {
    // Client aborts surface here; they are not our failures.
    if (err.code === 'EPIPE' || err.code === 'ECONNRESET' || err.code === 'ERR_STREAM_PREMATURE_CLOSE') return;
    log.error({ err }, 'koa error');
  });

  const trust = config.trustProxy;
  if (trustsProxies(trust)) {
    koa.use((kctx, next) => {
      kctx.request.ip = clientIp(kctx.req.socket.remoteAddress, kctx.req.headers['x-forwarded-for'], trust);
      return next();
    });
  }
  koa.use(metricsMiddleware(ctx));
  koa.use(relayMiddleware(ctx));
  koa.use(
    session(
      {
        key: 'session',
        maxAge: 30 * 24 * 3600 * 1000,
        httpOnly: true,
        signed: true,
        sameSite: 'lax',
        renew: true,
      },
      koa,
    ),
  );
  for (const mw of apiMiddleware(ctx)) koa.use(mw);
  if (opts.serveConsole !== false) koa.use(serveConsole(config.adminDist));

  // Relay calls skip Koa (see relay/httpContext.ts); the console, the playground and /metrics use it.
  // The probes (/healthz, /readyz: health.ts) skip it too, asked only once the relay declined a path.
  const koaCallback = koa.callback();
  const relayHttp = relayHttpHandler(ctx);
  const probes = createProbes(ctx);
  const callback = (req: IncomingMessage, res: ServerResponse): Promise<void> | undefined =>
    relayHttp(req, res) || probes.handle(req, res) ? undefined : koaCallback(req, res);

  let closed = false;
  return {
    koa,
    ctx,
    callback,
    upgrade: realtimeUpgradeHandler(ctx),
    drain: (timeoutMs) => relayCallsDone(ctx, timeoutMs),
    startDraining: probes.startDraining,
    releaseIdle: async () => {
      await Promise.all([releaseIdleUpstreams(ctx), releaseDbMemory(db)]);
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const fn of closers.reverse()) {
        try {
          await fn();
        } catch (err) {
          log.error({ err }, 'error while closing');
        }
      }
      await kv.close();
      await db.knex.destroy();
    },
  };
}
