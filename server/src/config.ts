import crypto from 'node:crypto';
import path from 'node:path';

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
  /** Trust X-Forwarded-For for client IPs. */
  trustProxy: boolean;
  /** Per-IP limit on /api calls: `count` per `windowSeconds` (0 = off). */
  apiRateLimit: { count: number; windowSeconds: number };
  /**
   * This node's id for its quota reservations (NODE_ID; default host:port). Unique among live
   * nodes and stable across restarts, so a restarted node reconciles what it left (docs/billing.md).
   */
  nodeId?: string;
  /** Heartbeat period of a node (ms) and after how long without one its reservations are taken over. */
  ledgerHeartbeatMs?: number;
  ledgerStaleMs?: number;
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
    trustProxy: env.TRUST_PROXY === 'true',
    apiRateLimit: {
      count: Number(env.GLOBAL_API_RATE_LIMIT ?? 600),
      windowSeconds: Number(env.GLOBAL_API_RATE_LIMIT_DURATION ?? 60),
    },
    nodeId: env.NODE_ID || undefined,
    ledgerHeartbeatMs: env.LEDGER_HEARTBEAT_MS ? Number(env.LEDGER_HEARTBEAT_MS) : undefined,
    ledgerStaleMs: env.LEDGER_STALE_MS ? Number(env.LEDGER_STALE_MS) : undefined,
  };
}

function readVersion(): string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require(path.join(root, 'package.json')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}
