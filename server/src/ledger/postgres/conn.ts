import type { AppContext } from '../../context';

/**
 * PostgreSQL: the hot statements run on a connection taken straight from knex's pool, as named
 * prepared statements (parsed once per connection), without knex's query building.
 */

export interface PgConn {
  query(q: { name?: string; text: string; values?: unknown[] }): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/** A named prepared statement (`$n` placeholders). */
export interface PgStatement {
  name: string;
  text: string;
}

/**
 * A pooled connection from knex's pool for `fn`; in one transaction when `tx`, rolled back if
 * `fn` throws.
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

/** The one value (`… as v`) of the first row of `q`'s answer; undefined when no row. */
export async function pgValue(conn: PgConn, q: PgStatement, values: unknown[]): Promise<number | undefined> {
  const { rows } = await conn.query({ name: q.name, text: q.text, values });
  return rows.length ? Number(rows[0]!.v) : undefined;
}
