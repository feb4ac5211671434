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
export function withPgConn<T>(app: AppContext, tx: boolean, fn: (conn: PgConn) => Promise<T>): Promise<T> {
  return retrying(app, () => onPooledConn(app, tx, fn));
}

/**
 * As withPgConn, on the balance batches' own connection (ledger/balances/postgres.ts runs one
 * batch at a time per process). It is held rather than taken from the pool per batch, and set
 * `enable_seqscan = off`: each of its statements reaches its rows by primary key, and without the
 * setting PostgreSQL plans the settles and refunds of the `reservations` queue as a read of the
 * whole table whenever its statistics say the table is small (new, or just vacuumed) — and keeps
 * that generic plan for as long as the connection lives, while the table fills with dead rows
 * (ledger/postgres/upkeep.ts). Calls made while another runs wait for it; after the app began
 * closing, a pooled connection is used.
 */
export function withBatchConn<T>(app: AppContext, tx: boolean, fn: (conn: PgConn) => Promise<T>): Promise<T> {
  const h = heldConn(app);
  if (h.closed) return withPgConn(app, tx, fn);
  const run = h.queue.then(() => retrying(app, () => onHeldConn(app, h, tx, fn)));
  h.queue = run.then(noop, noop);
  return run;
}

async function retrying<T>(app: AppContext, attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (n >= ATTEMPTS || !RETRYABLE.has((err as { code?: string }).code ?? '')) throw err;
      app.log.warn({ code: (err as { code: string }).code, attempt: n }, 'ledger transaction aborted by PostgreSQL; running it again');
      await new Promise((r) => setTimeout(r, Math.random() * 20 * n));
    }
  }
}

interface PoolClient {
  acquireConnection(): Promise<PgConn>;
  releaseConnection(c: PgConn): Promise<unknown>;
}
const poolOf = (app: AppContext) => app.knex.client as PoolClient;
export const noop = (): undefined => undefined;

async function onPooledConn<T>(app: AppContext, tx: boolean, fn: (conn: PgConn) => Promise<T>): Promise<T> {
  const raw = await poolOf(app).acquireConnection();
  try {
    return await inTransaction(raw, tx, fn);
  } finally {
    await poolOf(app).releaseConnection(raw);
  }
}

interface HeldConn {
  raw: PgConn | undefined;
  /** The last call's end: calls run one after the other. */
  queue: Promise<void>;
  closed: boolean;
}

function heldConn(app: AppContext): HeldConn {
  return app.memo('ledger:pg-batch-conn', () => {
    const h: HeldConn = { raw: undefined, queue: Promise.resolve(), closed: false };
    app.onClose(async () => {
      h.closed = true;
      await h.queue;
      const raw = h.raw;
      h.raw = undefined;
      if (raw) await releaseHeld(app, raw);
    });
    return h;
  });
}

async function onHeldConn<T>(app: AppContext, h: HeldConn, tx: boolean, fn: (conn: PgConn) => Promise<T>): Promise<T> {
  if (!h.raw) {
    const raw = await poolOf(app).acquireConnection();
    try {
      await raw.query({ text: 'set enable_seqscan = off' });
    } catch (err) {
      await poolOf(app).releaseConnection(raw);
      throw err;
    }
    h.raw = raw;
  }
  const raw = h.raw;
  try {
    return await inTransaction(raw, tx, fn);
  } catch (err) {
    // Whatever failed, the connection goes back (knex destroys it if it broke) and the next
    // batch takes another: errors are rare (a refused move is an answer, not an error).
    h.raw = undefined;
    await releaseHeld(app, raw);
    throw err;
  }
}

/** Back to the pool as it came: other users of the pool plan as usual. */
async function releaseHeld(app: AppContext, raw: PgConn): Promise<void> {
  await raw.query({ text: 'reset enable_seqscan' }).catch(noop);
  await poolOf(app).releaseConnection(raw).catch(noop);
}

/** `fn` on `raw`, in one transaction when `tx` (rolled back if `fn` throws). */
async function inTransaction<T>(raw: PgConn, tx: boolean, fn: (conn: PgConn) => Promise<T>): Promise<T> {
  const conn: PgConn = { query: (q) => raw.query(q.values ? { ...q, values: q.values.map((v) => (Array.isArray(v) ? pgArray(v) : v)) } : q) };
  if (tx) await conn.query({ text: 'BEGIN' });
  try {
    const value = await fn(conn);
    if (tx) await conn.query({ text: 'COMMIT' });
    return value;
  } catch (err) {
    if (tx) await conn.query({ text: 'ROLLBACK' }).catch(noop);
    throw err;
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
