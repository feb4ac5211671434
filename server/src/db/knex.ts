import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type pgModule from 'pg';

/** The pg driver, loaded only for PostgreSQL (SQLite deployments never load it). */
function loadPg(): typeof pgModule {
  const pg = require('pg') as typeof pgModule; // eslint-disable-line @typescript-eslint/no-require-imports -- loaded only for PostgreSQL (memory)
  // BIGINT (quota) and NUMERIC come back as strings by default; every value we keep fits a JS number.
  pg.types.setTypeParser(20, (v) => Number(v));
  pg.types.setTypeParser(1700, (v) => Number(v));
  return pg;
}

export type DbKind = 'sqlite' | 'postgres';

export interface Db {
  knex: Knex;
  kind: DbKind;
}

/** Opens the database named by a `sqlite:` or `postgres://` URL. */
export interface DbOptions {
  pgSchema?: string;
  /** PostgreSQL: `statement_timeout` and `lock_timeout` of every connection (ms; 0 or unset: none). */
  statementTimeoutMs?: number;
  lockTimeoutMs?: number;
  /** PostgreSQL: longest wait for a pooled connection (ms; default 10 s). */
  acquireTimeoutMs?: number;
  /** PostgreSQL: `application_name` of the connections (pg_stat_activity shows which node holds which). */
  applicationName?: string;
}

/**
 * Lifts the pool's statement and lock timeouts for the rest of transaction `trx` (PostgreSQL;
 * nothing on SQLite): for the few long jobs an operator starts on purpose — migrations, a purge of
 * millions of log rows.
 */
export async function withoutTimeouts(trx: Knex | Knex.Transaction): Promise<void> {
  if (trx.client.config.client === 'pg') await trx.raw('set local statement_timeout = 0; set local lock_timeout = 0');
}

/** A transaction left open this long (a stuck caller holding row locks) is ended by PostgreSQL. */
const IDLE_IN_TRANSACTION_MS = 60_000;

export function createDb(url: string, opts: DbOptions = {}): Db {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length) || ':memory:';
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const knex = knexFactory({
      client: 'better-sqlite3',
      connection: { filename: file },
      useNullAsDefault: true,
      // One connection: SQLite has a single writer, and an in-memory DB lives in its connection.
      pool: {
        min: 1,
        max: 1,
        idleTimeoutMillis: Number.MAX_SAFE_INTEGER,
        afterCreate: (conn: { pragma: (s: string) => unknown }, done: (err: Error | null, conn: unknown) => void) => {
          conn.pragma('journal_mode = WAL');
          conn.pragma('synchronous = NORMAL');
          conn.pragma('busy_timeout = 5000');
          conn.pragma('foreign_keys = ON');
          // Page cache 4 MB (SQLite's own default is 2, better-sqlite3 builds in 16): the hot pages
          // (balances, the right edges of the log indexes) fit, the rest is in the OS's file cache
          // anyway. Measured at c=50 against 16 MB: ≈ 15 MB less RSS, no lower throughput.
          conn.pragma('cache_size = -4000');
          // The WAL is checkpointed after usage flushes (ledger/sqlite/statements.ts requestCheckpoint), so
          // that its stall falls on calls the flush already delays; SQLite's own checkpoint at 4 000
          // pages is only the safety net.
          conn.pragma('wal_autocheckpoint = 4000');
          done(null, conn);
        },
      },
    });
    return { knex, kind: 'sqlite' };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const schema = opts.pgSchema;
    loadPg();
    const knex = knexFactory({
      client: 'pg',
      // Sent in the start-up message (no round trip): a table lock held elsewhere or a runaway
      // query makes calls fail clearly, in their caller's format, instead of hanging with it
      // (docs/security.md, "The database path"). Migrations lift both (migrations/index.ts).
      connection: {
        connectionString: url,
        application_name: opts.applicationName,
        statement_timeout: opts.statementTimeoutMs || undefined,
        // node-postgres' own options (knex's connection type lists fewer).
        ...({ lock_timeout: opts.lockTimeoutMs || undefined, idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS } as object),
      },
      searchPath: schema ? [schema] : undefined,
      acquireConnectionTimeout: opts.acquireTimeoutMs ?? 10_000,
      pool: {
        min: 0,
        max: 20,
        afterCreate: (conn: { query: (s: string, cb: (e: Error | null) => void) => void }, done: (err: Error | null, conn: unknown) => void) => {
          if (!schema) return done(null, conn);
          // Two nodes creating it at once: one of them gets a unique violation (23505) although
          // `if not exists` — the schema is there either way.
          conn.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replace(/"/g, '')}"`, (err) =>
            done(err && (err as { code?: string }).code !== '23505' && (err as { code?: string }).code !== '42P06' ? err : null, conn),
          );
        },
      },
    });
    return { knex, kind: 'postgres' };
  }
  throw new Error(`DATABASE_URL must start with sqlite: or postgres:// (got ${url.split(':')[0]}:)`);
}

/**
 * Lets go of the memory a burst left in the database driver (the server went idle, lib/idleGc.ts).
 * SQLite keeps every page a burst wrote in its page cache, up to its `cache_size` (4 MB, above);
 * `PRAGMA shrink_memory` frees the unused ones. The next reads come from the OS's file cache.
 * Nothing to do on PostgreSQL.
 */
export async function releaseDbMemory(db: Db): Promise<void> {
  if (db.kind === 'sqlite') await db.knex.raw('PRAGMA shrink_memory');
}

/** Rows of a raw `… returning` statement on either dialect (pg: result.rows; better-sqlite3: the array). */
export function rowsOf(res: unknown): Array<Record<string, unknown>> {
  if (Array.isArray(res)) return res as Array<Record<string, unknown>>;
  const rows = (res as { rows?: unknown })?.rows;
  return Array.isArray(rows) ? (rows as Array<Record<string, unknown>>) : [];
}
