import crypto from 'node:crypto';
import path from 'node:path';
import { parseProxyTrust, type ProxyTrust } from './relay/ip';

/** Everything the app needs from the outside world. Tests build their own. */
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
  /** Directory of the built console (served at `/`); absent → only the API. */
  adminDist?: string;
  /** Max body size for /api calls, bytes. */
  apiBodyLimit: number;
  /** Max body size for relay calls, bytes. */
  relayBodyLimit: number;
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
}

/** A positive number from the environment, or undefined when unset/invalid (the default applies). */
function envMs(v: string | undefined): number | undefined {
  const n = Number(v);
  return v !== undefined && v !== '' && Number.isFinite(n) && n > 0 ? n : undefined;
}

const root = path.resolve(__dirname, '../..');

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const secret = env.SESSION_SECRET;
  return {
    port: Number(env.PORT ?? 3000),
    databaseUrl: env.DATABASE_URL ?? `sqlite:${path.join(root, 'data', 'gateway.db')}`,
    pgSchema: env.DATABASE_SCHEMA || undefined,
    redisUrl: env.REDIS_URL || undefined,
    redisPrefix: env.REDIS_PREFIX ?? 'gw:',
    sessionSecret: secret ?? crypto.randomBytes(32).toString('hex'),
    sessionSecretGenerated: !secret,
    logLevel: env.LOG_LEVEL ?? 'info',
    adminDist: env.ADMIN_DIST ?? path.join(root, 'admin', 'dist'),
    apiBodyLimit: Number(env.API_BODY_LIMIT ?? 1024 * 1024),
    relayBodyLimit: Number(env.RELAY_BODY_LIMIT ?? 32 * 1024 * 1024),
    upstreamTimeoutMs: Number(env.UPSTREAM_TIMEOUT_MS ?? 300_000),
    version: env.APP_VERSION ?? readVersion(),
    trustProxy: parseProxyTrust(env.TRUST_PROXY, env.TRUST_PROXY_CIDRS),
    loginLimit: {
      perAccount: wholeNumber(env, 'LOGIN_FAIL_LIMIT_ACCOUNT', 5),
      perIp: wholeNumber(env, 'LOGIN_FAIL_LIMIT_IP', 20),
      windowSeconds: Math.max(1, wholeNumber(env, 'LOGIN_FAIL_WINDOW_SECONDS', 900)),
    },
    apiRateLimit: {
      count: Number(env.GLOBAL_API_RATE_LIMIT ?? 600),
      windowSeconds: Number(env.GLOBAL_API_RATE_LIMIT_DURATION ?? 60),
    },
    upstreamConnectTimeoutMs: envMs(env.UPSTREAM_CONNECT_TIMEOUT_MS),
    upstreamProxyTimeoutMs: envMs(env.UPSTREAM_PROXY_TIMEOUT_MS),
    upstreamHeadersTimeoutMs: envMs(env.UPSTREAM_HEADERS_TIMEOUT_MS),
    upstreamIdleTimeoutMs: envMs(env.UPSTREAM_IDLE_TIMEOUT_MS),
    maxSseEventBytes: envMs(env.RELAY_MAX_SSE_EVENT_BYTES),
    shutdownTimeoutMs: envMs(env.SHUTDOWN_TIMEOUT_MS),
    nodeId: env.NODE_ID || undefined,
    ledgerHeartbeatMs: envMs(env.LEDGER_HEARTBEAT_MS),
    ledgerStaleMs: envMs(env.LEDGER_STALE_MS),
  };
}

/** A whole number ≥ 0 from the environment; a typo fails the start instead of turning a guard off. */
function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a whole number ≥ 0, not "${raw}"`);
  return n;
}

function readVersion(): string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require(path.join(root, 'package.json')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}
