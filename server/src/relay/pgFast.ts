import type { AppContext } from '../context';

/**
 * PostgreSQL hot paths, the counterpart of sqliteFast.ts: statements run on a connection taken
 * straight from knex's pool, as named prepared statements, without knex's query building.
 */

export interface PgConn {
  query(q: { name?: string; text: string; values?: unknown[] }): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/**
 * A pooled connection from knex's pool for `fn`, which runs named prepared statements on it
 * (parsed once per connection, no knex query building); in one transaction when `tx`, rolled back
 * if `fn` throws. The PostgreSQL hot paths (pgFast, relay/pgBalanceMoves.ts, the usage batcher).
 */
export async function withPgConn<T>(app: AppContext, tx: boolean, fn: (conn: PgConn) => Promise<T>): Promise<T> {
  const client = app.knex.client as { acquireConnection(): Promise<PgConn>; releaseConnection(c: PgConn): Promise<unknown> };
  const conn = await client.acquireConnection();
  try {
    if (tx) await conn.query({ text: 'BEGIN' });
    const value = await fn(conn);
    if (tx) await conn.query({ text: 'COMMIT' });
    return value;
  } catch (err) {
    if (tx) await conn.query({ text: 'ROLLBACK' }).catch(() => undefined);
    throw err;
  } finally {
    await client.releaseConnection(conn);
  }
}

/**
 * PostgreSQL fast path for one statement outside a transaction: a pooled connection and a named
 * prepared statement (withPgConn). `?` placeholders are turned into `$n`.
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
  const { name, text } = q;
  return withPgConn(app, false, async (conn) => (await conn.query({ name, text, values: params })).rows);
}
