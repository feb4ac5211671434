import crypto from 'node:crypto';
import path from 'node:path';
import { ConfigError, parseEnvironment } from '../../config/environment';
import { parseProxyTrust, type ProxyTrust } from './relay/ip';

export { ConfigError } from '../../config/environment';

/** Everything the app needs from the outside world. Tests build their own. The variables: docs/configuration.md. */
export interface AppConfig {
  port: number;
  /** `sqlite:<path>`, `sqlite::memory:` or `postgres://…` */
  databaseUrl: string;
  /** PostgreSQL schema to use (tests get a fresh one per run). */
  pgSchema?: string;
  /** unset: in-process cache, limits and pub/sub (one node only). */
  redisUrl?: string;
  /** Prefix for every Redis key and channel, so apps sharing a Redis can be isolated (tests). */
  redisPrefix: string;
  sessionSecret: string;
  sessionSecretGenerated: boolean;
  logLevel: string;
  /** SERVER_LANGUAGE: notifications, stored log text and mails to users of unknown language (docs/i18n.md). */
  serverLanguage: 'zh' | 'en';
  /** Directory of the built console (served at `/`); absent → only the API. */
  adminDist?: string;
  /** Max body size for /api calls, bytes. */
  apiBodyLimit: number;
  /** Max body size for relay calls, bytes. */
  relayBodyLimit: number;
  /** Deadlines of a request's arrival (ms): its headers; the whole request (relay uploads); a console body. */
  httpHeadersTimeoutMs?: number;
  httpRequestTimeoutMs?: number;
  apiBodyTimeoutMs?: number;
  /** Upstream request timeout (ms) for relay calls. */
  upstreamTimeoutMs: number;
  version: string;
  /**
   * Which proxies may report the client address in X-Forwarded-For (TRUST_PROXY hops and/or
   * TRUST_PROXY_CIDRS); see relay/ip.ts clientIp.
   */
  trustProxy: ProxyTrust;
  /** Password login guard: attempts per account and per client IP in a window (0 = off). */
  loginLimit: { perAccount: number; perIp: number; windowSeconds: number };
  /** Per-IP limit on /api calls: `count` per `windowSeconds` (0 = off). */
  apiRateLimit: { count: number; windowSeconds: number };
  /** Bounds of the upstream call's phases (ms); unset: see upstreamBounds() in relay/upstream.ts. */
  upstreamConnectTimeoutMs?: number;
  /** How long an HTTP(S) proxy may take to answer CONNECT. */
  upstreamProxyTimeoutMs?: number;
  /** From the request written to the response headers. */
  upstreamHeadersTimeoutMs?: number;
  /** Longest silence between two chunks of a response body. */
  upstreamIdleTimeoutMs?: number;
  /** Largest single SSE event (or event-stream frame) read from an upstream, bytes. */
  maxSseEventBytes?: number;
  /** SIGTERM/SIGINT: how long in-flight calls may run before they are cut (ms). */
  shutdownTimeoutMs?: number;
  /**
   * This node's id for its quota reservations (NODE_ID; default host:port). Unique among live
   * nodes and stable across restarts, so a restarted node reconciles what it left (docs/billing.md).
   */
  nodeId?: string;
  /** Heartbeat period of a node (ms) and after how long without one its reservations are taken over. */
  ledgerHeartbeatMs?: number;
  ledgerStaleMs?: number;
  /** PostgreSQL: ledger commits wait for the disk flush (LEDGER_DURABLE_COMMIT=on); default: asynchronous commit. */
  ledgerDurableCommit?: boolean;
  /** PostgreSQL `statement_timeout` and `lock_timeout` of the pool's connections (ms; 0: none). */
  dbStatementTimeoutMs?: number;
  dbLockTimeoutMs?: number;
  /** PostgreSQL: longest wait for a pooled connection (ms). */
  dbAcquireTimeoutMs?: number;
  /** Poll period of unfinished asynchronous tasks (ms); 0: no poller (tests tick it by hand). */
  taskPollMs: number;
  /** `GET /metrics` needs `Authorization: Bearer <metricsToken>`; unset: loopback clients only. */
  metricsToken?: string;
  /** `/metrics` adds the process metrics (RSS, CPU, event-loop lag, GC). */
  processMetrics: boolean;
  /** Base of the Telegram Bot API (channel alerts); default https://api.telegram.org (tests point it at a mock). */
  telegramApiUrl?: string;
  /** Realtime: how long a session whose client left waits for the usage of the responses it cancelled (ms; default 5000; tests shorten it). */
  realtimeCancelWaitMs?: number;
}

const root = path.resolve(__dirname, '../..');

/**
 * The app's configuration from the environment. Parsing, validation and defaults live in
 * config/environment.ts (one table, also the source of docs/configuration.md); this adds the
 * defaults computed at start (paths under the repository root, a random session secret, the
 * package version). Throws a ConfigError naming every invalid variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const e = parseEnvironment(env);
  let trustProxy: ProxyTrust;
  try {
    trustProxy = parseProxyTrust(e.TRUST_PROXY, e.TRUST_PROXY_CIDRS);
  } catch (err) {
    throw new ConfigError([(err as Error).message]);
  }
  return {
    port: e.PORT,
    databaseUrl: e.DATABASE_URL ?? `sqlite:${path.join(root, 'data', 'gateway.db')}`,
    pgSchema: e.DATABASE_SCHEMA,
    redisUrl: e.REDIS_URL,
    redisPrefix: e.REDIS_PREFIX,
    sessionSecret: e.SESSION_SECRET ?? crypto.randomBytes(32).toString('hex'),
    sessionSecretGenerated: !e.SESSION_SECRET,
    logLevel: e.LOG_LEVEL,
    serverLanguage: e.SERVER_LANGUAGE,
    adminDist: e.ADMIN_DIST ?? path.join(root, 'admin', 'dist'),
    apiBodyLimit: e.API_BODY_LIMIT,
    relayBodyLimit: e.RELAY_BODY_LIMIT,
    httpHeadersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
    httpRequestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
    apiBodyTimeoutMs: e.API_BODY_TIMEOUT_MS,
    upstreamTimeoutMs: e.UPSTREAM_TIMEOUT_MS,
    version: e.APP_VERSION ?? readVersion(),
    trustProxy,
    loginLimit: {
      perAccount: e.LOGIN_FAIL_LIMIT_ACCOUNT,
      perIp: e.LOGIN_FAIL_LIMIT_IP,
      windowSeconds: Math.max(1, e.LOGIN_FAIL_WINDOW_SECONDS),
    },
    apiRateLimit: { count: e.GLOBAL_API_RATE_LIMIT, windowSeconds: e.GLOBAL_API_RATE_LIMIT_DURATION },
    upstreamConnectTimeoutMs: e.UPSTREAM_CONNECT_TIMEOUT_MS,
    upstreamProxyTimeoutMs: e.UPSTREAM_PROXY_TIMEOUT_MS,
    upstreamHeadersTimeoutMs: e.UPSTREAM_HEADERS_TIMEOUT_MS,
    upstreamIdleTimeoutMs: e.UPSTREAM_IDLE_TIMEOUT_MS,
    maxSseEventBytes: e.RELAY_MAX_SSE_EVENT_BYTES,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    nodeId: e.NODE_ID,
    ledgerHeartbeatMs: e.LEDGER_HEARTBEAT_MS,
    ledgerStaleMs: e.LEDGER_STALE_MS,
    ledgerDurableCommit: e.LEDGER_DURABLE_COMMIT === 'on',
    dbStatementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
    dbLockTimeoutMs: e.DATABASE_LOCK_TIMEOUT_MS,
    dbAcquireTimeoutMs: e.DATABASE_ACQUIRE_TIMEOUT_MS,
    taskPollMs: e.TASK_POLL_MS,
    metricsToken: e.METRICS_TOKEN,
    processMetrics: e.GATEWAY_PROCESS_METRICS === 'true',
  };
}

function readVersion(): string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a file found at run time (the bundle and the sources sit at the same depth), not a module to bundle
    return (require(path.join(root, 'package.json')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}
