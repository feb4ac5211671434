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

/** Deadlock detected, serialization failure: the transaction was rolled back as a whole and may run again. */
const RETRYABLE = new Set(['40P01', '40001']);
const ATTEMPTS = 3;

/**
 * A pooled connection from knex's pool for `fn`; in one transaction when `tx`, rolled back if
 * `fn` throws. A deadlock or serialization failure runs `fn` again (up to three times): the
 * ledger's multi-row statements lock rows in id order, but the planner may visit them in another
 * order (and other nodes' batches and usage flushes lock the same rows), so PostgreSQL may break a
 * lock cycle by aborting one of them — which wrote nothing, so running it again is safe. `fn`
 * must therefore change nothing outside the database before its statements succeed.
 */
export async function withPgConn<T>(app: AppContext, tx: boolean, fn: (conn: PgConn) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await onPgConn(app, tx, fn);
    } catch (err) {
      if (attempt >= ATTEMPTS || !RETRYABLE.has((err as { code?: string }).code ?? '')) throw err;
      app.log.warn({ code: (err as { code: string }).code, attempt }, 'ledger transaction aborted by PostgreSQL; running it again');
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }
}

async function onPgConn<T>(app: AppContext, tx: boolean, fn: (conn: PgConn) => Promise<T>): Promise<T> {
  const client = app.knex.client as { acquireConnection(): Promise<PgConn>; releaseConnection(c: PgConn): Promise<unknown> };
  const raw = await client.acquireConnection();
  const conn: PgConn = { query: (q) => raw.query(q.values ? { ...q, values: q.values.map((v) => (Array.isArray(v) ? pgArray(v) : v)) } : q) };
  try {
    if (tx) await conn.query({ text: 'BEGIN' });
    const value = await fn(conn);
    if (tx) await conn.query({ text: 'COMMIT' });
    return value;
  } catch (err) {
    if (tx) await conn.query({ text: 'ROLLBACK' }).catch(() => undefined);
    throw err;
  } finally {
    await client.releaseConnection(raw);
  }
}

const ESCAPE = /[\\"]/;
const ESCAPES = /[\\"]/g;

/**
 * A one-dimensional PostgreSQL array literal (`{1,2}`, `{"a","b\"c"}`, NULL for null/undefined).
 * The ledger's statements take their rows as one array per column; node-postgres would quote and
 * escape every element, numbers too, with a regular expression each (≈ 5 % of a C2 call's CPU at
 * c=50). Numbers and booleans go as they are; strings are quoted, escaped only when they hold a
 * quote or a backslash. The statement's `$n::type[]` cast parses it, as it parsed node-postgres's.
 */
export function pgArray(values: readonly unknown[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i) out += ',';
    const v = values[i];
    if (v === null || v === undefined) out += 'NULL';
    else if (typeof v === 'number') out += String(v);
    else if (typeof v === 'boolean') out += v ? 't' : 'f';
    else {
      const str = String(v);
      out += '"' + (ESCAPE.test(str) ? str.replace(ESCAPES, '\\$&') : str) + '"';
    }
  }
  return out + '}';
}

/** The entries of `m` by ascending id: multi-row statements lock rows in one order everywhere. */
export function byId<V>(m: Map<number, V>): Array<[number, V]> {
  const entries = [...m];
  if (entries.length > 1) entries.sort((a, b) => a[0] - b[0]);
  return entries;
}

/** The one value (`… as v`) of the first row of `q`'s answer; undefined when no row. */
export async function pgValue(conn: PgConn, q: PgStatement, values: unknown[]): Promise<number | undefined> {
  const { rows } = await conn.query({ name: q.name, text: q.text, values });
  return rows.length ? Number(rows[0]!.v) : undefined;
}
