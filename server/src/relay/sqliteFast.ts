import type { AppContext } from '../context';

/**
 * SQLite fast path: hot statements (balances, usage batches) run as cached prepared statements
 * straight on the better-sqlite3 connection (synchronous, so atomic), skipping knex's per-query work. Only when the
 * connection is not inside a transaction: otherwise the statement would join someone else's
 * transaction, so it goes through knex and waits its turn.
 */
interface SqliteStatement {
  reader: boolean;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): unknown;
}
interface SqliteConn {
  open: boolean;
  inTransaction: boolean;
  prepare(sql: string): SqliteStatement;
  transaction<T>(fn: () => T): () => T;
}

function sqliteState(app: AppContext) {
  return app.memo('billing:sqlite', () => ({ conn: undefined as SqliteConn | undefined, stmts: new Map<string, SqliteStatement>() }));
}

async function sqliteConn(app: AppContext): Promise<SqliteConn | undefined> {
  if (app.db.kind !== 'sqlite') return undefined;
  const st = sqliteState(app);
  if (st.conn?.open) return st.conn;
  const client = app.knex.client as { acquireConnection(): Promise<SqliteConn>; releaseConnection(c: SqliteConn): Promise<unknown> };
  const conn = await client.acquireConnection();
  await client.releaseConnection(conn);
  if (typeof conn?.prepare !== 'function' || typeof conn.inTransaction !== 'boolean') return undefined;
  st.conn = conn;
  st.stmts.clear();
  return conn;
}

export async function runFast(app: AppContext, sql: string, params: unknown[]): Promise<Array<Record<string, unknown>> | undefined> {
  const conn = await sqliteConn(app);
  if (!conn || !conn.open || conn.inTransaction) return undefined;
  const st = sqliteState(app);
  let stmt = st.stmts.get(sql);
  if (!stmt) {
    stmt = conn.prepare(sql);
    st.stmts.set(sql, stmt);
  }
  return stmt.all(...params) as Array<Record<string, unknown>>;
}

export class Rollback extends Error {}

/**
 * Runs `fn` as one synchronous SQLite transaction on the direct connection (nothing can interleave).
 * `run(sql, params)` executes a cached statement. Throwing `Rollback` undoes it and returns
 * undefined, as does an unavailable fast path (PostgreSQL, or a knex transaction in progress).
 */
export async function fastTx<T>(app: AppContext, fn: (run: (sql: string, params: unknown[]) => Array<Record<string, unknown>>) => T): Promise<T | undefined> {
  const conn = await sqliteConn(app);
  if (!conn || !conn.open || conn.inTransaction) return undefined;
  const st = sqliteState(app);
  const run = (sql: string, params: unknown[]) => {
    let stmt = st.stmts.get(sql);
    if (!stmt) {
      stmt = conn.prepare(sql);
      st.stmts.set(sql, stmt);
    }
    if (!stmt.reader) {
      stmt.run(...params);
      return [];
    }
    return stmt.all(...params) as Array<Record<string, unknown>>;
  };
  try {
    return conn.transaction(() => fn(run))();
  } catch (err) {
    if (err instanceof Rollback) return undefined;
    throw err;
  }
}


interface PgConn {
  query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/**
 * PostgreSQL fast path for one statement outside a transaction: a pooled connection from knex's
 * pool and a named prepared statement (parsed once per connection), skipping knex's query
 * building. `?` placeholders are turned into `$n`.
 */
export async function pgFast(app: AppContext, sql: string, params: unknown[]): Promise<Array<Record<string, unknown>> | undefined> {
  if (app.db.kind !== 'postgres') return undefined;
  const names = app.memo('pgFast:names', () => new Map<string, { name: string; text: string }>());
  let q = names.get(sql);
  if (!q) {
    let n = 0;
    q = { name: `gw_fast_${names.size + 1}`, text: sql.replace(/\?/g, () => `$${++n}`) };
    names.set(sql, q);
  }
  const client = app.knex.client as { acquireConnection(): Promise<PgConn>; releaseConnection(c: PgConn): Promise<unknown> };
  const conn = await client.acquireConnection();
  try {
    return (await conn.query({ name: q.name, text: q.text, values: params })).rows;
  } finally {
    await client.releaseConnection(conn);
  }
}
