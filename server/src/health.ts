import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Knex } from 'knex';
import type { AppContext } from './context';
import { migrationSource } from '../../migrations';

/**
 * Liveness and readiness probes for load balancers and orchestrators (docs/deploy.md):
 *
 * - `GET /healthz`: the process serves — 200 `{"status":"ok"}`, nothing checked, also while the
 *   node drains.
 * - `GET /readyz`: this node should get traffic — 200 when the database answers `select 1`, every
 *   migration of this build is applied and Redis (when configured) answers PING, each within
 *   {@link READY_CHECK_TIMEOUT_MS}; else 503 naming the check that failed. A draining node
 *   (SIGTERM, server/src/index.ts) answers 503 `{"status":"draining"}` at once, without checks.
 *
 * Both are answered straight from `node:http` (app.ts hands them over after the relay declined a
 * path, so a relayed call pays nothing for them), need no session, and say nothing secret: the
 * answer names checks and fixed states only, never a URL, host or driver message (those go to
 * the log, once per change of state).
 */

/** Longest one readiness round may take: within the 1 s a Kubernetes probe waits by default. */
export const READY_CHECK_TIMEOUT_MS = 750;

/**
 * A readiness answer is reused this long, and concurrent probes share one round: a flood of
 * `/readyz` costs at most one round of checks per period, not a query per request.
 */
export const READY_REUSE_MS = 1000;

/** The table knex records applied migrations in (db/migrate.ts runs knex's default). */
const MIGRATIONS_TABLE = 'knex_migrations';

export type DatabaseState = 'ok' | 'error' | 'timeout';
/** `pending`: a migration of this build is not applied; `unknown`: the database did not answer. */
export type MigrationsState = 'ok' | 'pending' | 'unknown' | 'timeout' | 'error';
export type RedisState = 'ok' | 'error' | 'timeout';

export interface Readiness {
  ready: boolean;
  checks: { database: DatabaseState; migrations: MigrationsState; redis?: RedisState };
}

export interface Probes {
  /** Answers `/healthz` and `/readyz` (any query string); false for every other path. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** From now on `/readyz` answers 503 `draining`; `/healthz` is unchanged. */
  startDraining(): void;
  readonly draining: boolean;
  /** One readiness round (or the one in progress, or the last one within {@link READY_REUSE_MS}). */
  readiness(): Promise<Readiness>;
}

export interface ProbeOptions {
  timeoutMs?: number;
  reuseMs?: number;
}

const TIMED_OUT = Symbol('timed out');

/** `p`, or TIMED_OUT after `ms`; a later rejection of `p` is handled (race attached to it). */
function bounded<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

const message = (err: unknown) => String((err as Error)?.message ?? err).slice(0, 300);

export function createProbes(ctx: Pick<AppContext, 'knex' | 'kv' | 'log'>, opts: ProbeOptions = {}): Probes {
  const timeoutMs = opts.timeoutMs ?? READY_CHECK_TIMEOUT_MS;
  const reuseMs = opts.reuseMs ?? READY_REUSE_MS;
  let draining = false;
  let inflight: Promise<Readiness> | undefined;
  let last: { at: number; value: Readiness } | undefined;
  let wasReady = true;
  let expected: Promise<string[]> | undefined;

  /** The database answers, then holds every migration of this build: one deadline for both. */
  async function checkDatabase(problems: Record<string, string>): Promise<Pick<Readiness['checks'], 'database' | 'migrations'>> {
    expected ??= migrationSource.getMigrations([]);
    const progress = { answered: false };
    const run = async (knex: Knex): Promise<MigrationsState> => {
      await knex.raw('select 1');
      progress.answered = true;
      const names = await expected!;
      const done = new Set((await knex(MIGRATIONS_TABLE).select('name')).map((r: { name: string }) => r.name));
      const missing = names.filter((n) => !done.has(n));
      if (missing.length) problems.migrations = `not applied: ${missing.join(', ')}`;
      return missing.length ? 'pending' : 'ok';
    };
    let migrations: MigrationsState | typeof TIMED_OUT;
    try {
      migrations = await bounded(run(ctx.knex), timeoutMs);
    } catch (err) {
      problems[progress.answered ? 'migrations' : 'database'] = message(err);
      return progress.answered ? { database: 'ok', migrations: 'error' } : { database: 'error', migrations: 'unknown' };
    }
    if (migrations !== TIMED_OUT) return { database: 'ok', migrations };
    problems[progress.answered ? 'migrations' : 'database'] = `no answer within ${timeoutMs} ms`;
    return progress.answered ? { database: 'ok', migrations: 'timeout' } : { database: 'timeout', migrations: 'unknown' };
  }

  async function checkRedis(problems: Record<string, string>): Promise<RedisState | undefined> {
    const redis = ctx.kv.redis;
    if (!redis) return undefined;
    // Not connected (down, reconnecting, closed): no command queued behind the reconnection.
    if (redis.status !== 'ready') {
      problems.redis = `connection ${redis.status}`;
      return 'error';
    }
    try {
      const pong = await bounded(redis.ping(), timeoutMs);
      if (pong !== TIMED_OUT) return 'ok';
      problems.redis = `no answer within ${timeoutMs} ms`;
      return 'timeout';
    } catch (err) {
      problems.redis = message(err);
      return 'error';
    }
  }

  async function round(): Promise<Readiness> {
    const problems: Record<string, string> = {};
    const [db, redis] = await Promise.all([checkDatabase(problems), checkRedis(problems)]);
    const checks: Readiness['checks'] = { ...db, ...(redis ? { redis } : {}) };
    const ready = db.database === 'ok' && db.migrations === 'ok' && (redis === undefined || redis === 'ok');
    if (ready !== wasReady) {
      if (ready) ctx.log.info({ checks }, 'ready again');
      else ctx.log.warn({ checks, problems }, 'not ready');
      wasReady = ready;
    }
    return { ready, checks };
  }

  function readiness(): Promise<Readiness> {
    if (last && Date.now() - last.at < reuseMs) return Promise.resolve(last.value);
    inflight ??= round()
      .then((value) => {
        last = { at: Date.now(), value };
        return value;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  }

  function send(req: IncomingMessage, res: ServerResponse, status: number, body: object): void {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      'cache-control': 'no-store',
    });
    res.end(req.method === 'HEAD' ? undefined : text);
  }

  function handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (path !== '/healthz' && path !== '/readyz') return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-length': 0 });
      res.end();
    } else if (path === '/healthz') {
      send(req, res, 200, { status: 'ok' });
    } else if (draining) {
      send(req, res, 503, { status: 'draining' });
    } else {
      readiness().then(
        (r) => {
          // A node that began draining while the checks ran says so.
          if (draining) send(req, res, 503, { status: 'draining' });
          else send(req, res, r.ready ? 200 : 503, { status: r.ready ? 'ok' : 'unavailable', checks: r.checks });
        },
        (err: unknown) => {
          ctx.log.error({ err }, 'readiness check failed');
          send(req, res, 503, { status: 'unavailable' });
        },
      );
    }
    return true;
  }

  return {
    handle,
    startDraining: () => {
      draining = true;
    },
    get draining() {
      return draining;
    },
    readiness,
  };
}
