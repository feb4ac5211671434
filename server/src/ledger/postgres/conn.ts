import type { AppContext } from '../../context';
import { isLostConnectionMessage } from '../../db/errors';

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
/** A lost connection is tried on a fresh one this many times, the waits growing up to ≈ 1.5 s in all. */
const RECONNECT_ATTEMPTS = 5;

/**
 * How a failed attempt left the database, when its connection was lost:
 * - `unsent`: nothing of it committed — the connection was already unusable, it broke before the
 *   COMMIT was sent, or the server said it ended the session in the middle of a statement
 *   (SQLSTATE 57P01–57P03: a terminated backend rolls its transaction back);
 * - `unknown`: the connection broke while the COMMIT (or a statement that commits on its own) was
 *   on its way: it may have committed. Only the rows can tell (balances/postgres.ts resolves it
 *   from the reservation rows).
 */
export type LostConnection = 'unsent' | 'unknown';

/** The error of an attempt whose connection broke, with how it left the database. */
export function lostConnection(err: unknown): LostConnection | undefined {
  return (err as { ledgerLost?: LostConnection } | null)?.ledgerLost;
}

const SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNREFUSED', 'EHOSTUNREACH']);

/** The connection died under `err` (the session is gone); undefined for an error within a live session. */
function classifyLost(err: unknown, committing: boolean): LostConnection | undefined {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : '';
  // The server ended the session in the middle of our statement: it rolled the transaction back.
  if (code === '57P01' || code === '57P02' || code === '57P03' || code.startsWith('08')) return 'unsent';
  if (/not queryable/i.test(message)) return 'unsent'; // refused before anything was sent
  if (SOCKET_CODES.has(code) || isLostConnectionMessage(message)) return committing ? 'unknown' : 'unsent';
  return undefined;
}

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

/**
 * Runs `attempt` until it succeeds: again after a deadlock or serialization failure (up to three
 * times), and on a fresh connection after a lost one that left nothing committed (up to five
 * times, backing off: a database restarting, connections terminated). A connection lost while
 * the commit was on its way is not run again — it may have committed — and is thrown marked
 * `unknown` for the caller to resolve.
 */
async function retrying<T>(app: AppContext, attempt: () => Promise<T>): Promise<T> {
  let deadlocks = 0;
  let lost = 0;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      const how = lostConnection(err);
      if (RETRYABLE.has(code) && ++deadlocks < ATTEMPTS) {
        app.log.warn({ code, attempt: deadlocks }, 'ledger transaction aborted by PostgreSQL; running it again');
        await new Promise((r) => setTimeout(r, Math.random() * 20 * deadlocks));
      } else if (how === 'unsent' && ++lost < RECONNECT_ATTEMPTS) {
        app.log.warn({ code, attempt: lost }, 'ledger connection lost before its commit; running the transaction again on a fresh one');
        await new Promise((r) => setTimeout(r, 25 * 2 ** lost * (0.5 + Math.random())));
      } else throw err;
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
  let raw: PgConn;
  try {
    raw = await poolOf(app).acquireConnection();
  } catch (err) {
    throw markLost(err, false);
  }
  try {
    return await inTransaction(raw, tx, fn, asyncCommit(app));
  } finally {
    await poolOf(app).releaseConnection(raw);
  }
}

/** Tags `err` with how a lost connection left the database (see LostConnection). */
function markLost(err: unknown, committing: boolean): unknown {
  const how = classifyLost(err, committing);
  if (how && err && typeof err === 'object') (err as { ledgerLost?: LostConnection }).ledgerLost = how;
  return err;
}

/**
 * Ledger transactions commit asynchronously unless LEDGER_DURABLE_COMMIT=on: SQLite's durability
 * class (docs/billing.md, "Durability"). A commit is in the server's memory and WAL buffers when
 * it answers, so it survives a crash of any gateway node; a crash of the database host may lose
 * its last few hundred milliseconds of ledger transactions, each whole.
 */
const asyncCommit = (app: AppContext): boolean => !app.config.ledgerDurableCommit;

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
    let raw: PgConn;
    try {
      raw = await poolOf(app).acquireConnection();
    } catch (err) {
      throw markLost(err, false);
    }
    try {
      // Its statements commit on their own (a users-only batch is one statement): the session's
      // setting is the batches' commit mode.
      await raw.query({ text: asyncCommit(app) ? 'set enable_seqscan = off; set synchronous_commit = off' : 'set enable_seqscan = off' });
    } catch (err) {
      await poolOf(app).releaseConnection(raw);
      throw markLost(err, false);
    }
    h.raw = raw;
  }
  const raw = h.raw;
  try {
    return await inTransaction(raw, tx, fn, false);
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
  await raw.query({ text: 'reset enable_seqscan; reset synchronous_commit' }).catch(noop);
  await poolOf(app).releaseConnection(raw).catch(noop);
}

const BEGIN = { text: 'BEGIN' };
/** One round trip as before: the simple protocol takes both statements in one message. */
const BEGIN_ASYNC = { text: 'BEGIN; SET LOCAL synchronous_commit = off' };
const COMMIT = { text: 'COMMIT' };

/**
 * `fn` on `raw`, in one transaction when `tx` (rolled back if `fn` throws; committed
 * asynchronously when `async`). A lost connection's error is tagged with how it left the database:
 * the COMMIT — or, outside a transaction, any statement, each committing on its own — may have
 * committed when the connection broke under it.
 */
async function inTransaction<T>(raw: PgConn, tx: boolean, fn: (conn: PgConn) => Promise<T>, async: boolean): Promise<T> {
  const conn: PgConn = { query: (q) => raw.query(q.values ? { ...q, values: q.values.map((v) => (Array.isArray(v) ? pgArray(v) : v)) } : q) };
  let committing = !tx;
  try {
    if (tx) await conn.query(async ? BEGIN_ASYNC : BEGIN);
    const value = await fn(conn);
    if (tx) {
      committing = true;
      await conn.query(COMMIT);
    }
    return value;
  } catch (err) {
    if (tx && !committing) await conn.query({ text: 'ROLLBACK' }).catch(noop);
    throw markLost(err, committing);
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
