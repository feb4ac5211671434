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
  get(...params: unknown[]): unknown;
  run(...params: unknown[]): { changes: number };
  pluck(on?: boolean): SqliteStatement;
}
interface SqliteConn {
  open: boolean;
  inTransaction: boolean;
  prepare(sql: string): SqliteStatement;
}

function sqliteState(app: AppContext) {
  return app.memo('billing:sqlite', () => ({
    conn: undefined as SqliteConn | undefined,
    /** The runner of `conn` (one per connection: a new closure per group would be optimized anew by V8). */
    run: undefined as Run | undefined,
    tx: undefined as { conn: SqliteConn; begin: SqliteStatement; commit: SqliteStatement; rollback: SqliteStatement; savepoint: SqliteStatement; release: SqliteStatement; rollbackTo: SqliteStatement; checkpoint: SqliteStatement } | undefined,
    stmts: new Map<string, SqliteStatement>(),
    splits: new Map<string, SplitStatement | null>(),
  }));
}

/** The connection once known (the hot path: no await), else undefined. */
function knownConn(app: AppContext): SqliteConn | undefined {
  if (app.db.kind !== 'sqlite') return undefined;
  const conn = sqliteState(app).conn;
  return conn?.open ? conn : undefined;
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
  st.run = undefined;
  st.stmts.clear();
  st.splits.clear();
  return conn;
}

/** Runs a cached statement inside the group transaction. */
export interface Run {
  /** Its rows (none for a write). */
  (sql: string, params: unknown[]): Array<Record<string, unknown>>;
  /**
   * The one value of a `… returning "c" as v` write (or of a one-column read): undefined when no
   * row matched. No row objects are built for it.
   */
  value(sql: string, params: unknown[]): unknown;
}

interface PendingWrite {
  /** Runs inside the group transaction; `savepoint` wraps it so a failure undoes only its own work. */
  fn: (run: Run) => unknown;
  savepoint: boolean;
  resolve(v: unknown): void;
  reject(err: unknown): void;
}

/**
 * SQLite evaluates RETURNING through a temporary table: ≈ 10 µs on top of a ≈ 2 µs UPDATE. Inside
 * our synchronous transaction nothing can run in between, so a hot
 * `update "T" set … where "id" = ? … returning "c" as v` runs as the UPDATE and then a primary-key
 * SELECT of `c` — the same result for a fifth of the cost. Other statements run as written.
 */
const RETURNING_BY_ID = /^(update "(\w+)" set (.+?) where "id" = \?.*?) returning "(\w+)" as v$/i;

interface SplitStatement {
  update: SqliteStatement;
  select: SqliteStatement;
  idIndex: number;
}

function runner(app: AppContext, conn: SqliteConn): Run {
  const st = sqliteState(app);
  if (st.run && st.conn === conn) return st.run;
  const prepared = (sql: string) => {
    let stmt = st.stmts.get(sql);
    if (!stmt) {
      stmt = conn.prepare(sql);
      st.stmts.set(sql, stmt);
    }
    return stmt;
  };
  const splitOf = (sql: string) => {
    let split = st.splits.get(sql);
    if (split === undefined) {
      const m = RETURNING_BY_ID.exec(sql);
      split = m
        ? { update: prepared(m[1]!), select: conn.prepare(`select "${m[4]}" as v from "${m[2]}" where "id" = ?`).pluck(), idIndex: (m[3]!.match(/\?/g) ?? []).length }
        : null;
      st.splits.set(sql, split);
    }
    return split;
  };
  const run = ((sql: string, params: unknown[]) => {
    const split = splitOf(sql);
    if (split) {
      if (split.update.run(...params).changes === 0) return [];
      return [{ v: split.select.get(params[split.idIndex]) }];
    }
    const stmt = prepared(sql);
    if (!stmt.reader) {
      stmt.run(...params);
      return [];
    }
    return stmt.all(...params) as Array<Record<string, unknown>>;
  }) as Run;
  run.value = (sql, params) => {
    const split = splitOf(sql);
    if (split) return split.update.run(...params).changes === 0 ? undefined : split.select.get(params[split.idIndex]);
    const row = prepared(sql).get(...params) as Record<string, unknown> | undefined;
    return row === undefined ? undefined : row[Object.keys(row)[0]!];
  };
  st.run = run;
  return run;
}

function groupState(app: AppContext) {
  return app.memo('billing:sqliteGroup', () => ({ queue: [] as PendingWrite[], scheduled: false, seq: 0, commits: 0, checkpointDue: false }));
}

/**
 * Order of execution of hot writes: a unit calls it while it runs (inside the group
 * transaction, where units run one after the other), so a larger number is a later state of the
 * database. Callers are answered in order too, but through different numbers of promise hops, so
 * results may be *noticed* out of order (relay/balanceView.ts uses this to keep the newest).
 */
export function writeSeq(app: AppContext): number {
  return ++groupState(app).seq;
}

/** The last number handed out by writeSeq (0 before any). */
export function lastWriteSeq(app: AppContext): number {
  return groupState(app).seq;
}

/**
 * Group commit. A SQLite commit costs ≈ 25–35 µs (the WAL frame write), far more than a balance
 * UPDATE on a cached page (≈ 3 µs). Hot writes are therefore queued and run together, once per
 * event-loop turn, in ONE transaction: each caller's statements keep their own atomicity (a
 * single statement is atomic; multi-statement work runs under its own SAVEPOINT) and every caller
 * is answered only after the COMMIT, so nothing is acknowledged before it is durable — exactly as
 * with one transaction per call, for a fraction of the cost under load.
 */
function enqueue(app: AppContext, conn: SqliteConn, fn: (run: Run) => unknown, savepoint: boolean): Promise<unknown> {
  const g = groupState(app);
  return new Promise((resolve, reject) => {
    g.queue.push({ fn, savepoint, resolve, reject });
    if (!g.scheduled) {
      g.scheduled = true;
      setImmediate(() => flushGroup(app, conn));
    }
  });
}

/** BEGIN/COMMIT/SAVEPOINT statements of `conn`, prepared once (better-sqlite3's `transaction()` builds four wrapper functions per call: ≈ 4 KB of garbage per group). */
function txStatements(app: AppContext, conn: SqliteConn) {
  const st = sqliteState(app);
  if (st.tx?.conn !== conn) {
    st.tx = {
      conn,
      begin: conn.prepare('BEGIN'),
      commit: conn.prepare('COMMIT'),
      rollback: conn.prepare('ROLLBACK'),
      savepoint: conn.prepare('SAVEPOINT gw_unit'),
      release: conn.prepare('RELEASE gw_unit'),
      rollbackTo: conn.prepare('ROLLBACK TO gw_unit'),
      checkpoint: conn.prepare('PRAGMA wal_checkpoint(PASSIVE)'),
    };
  }
  return st.tx;
}

const FAILED = Symbol('failed');

/**
 * WAL checkpoints. SQLite runs one inside the commit that grows the WAL past its threshold, and
 * its copy and fsync (ms on a slow disk) then delay whichever call that commit carries: with the
 * reservation rows every call writes one more page per commit, and at one connection those stalls
 * reached the p99. Instead the usage flush asks for one (requestCheckpoint), run right after the
 * flush's own commit once ≈ CHECKPOINT_AFTER_COMMITS commits (≈ 500–1 000 pages) have accumulated.
 */
const CHECKPOINT_AFTER_COMMITS = 250;

/** The next group commit checkpoints the WAL once enough commits have accumulated (see above). */
export function requestCheckpoint(app: AppContext): void {
  if (app.db.kind === 'sqlite') groupState(app).checkpointDue = true;
}

function flushGroup(app: AppContext, conn: SqliteConn): void {
  const g = groupState(app);
  g.scheduled = false;
  const items = g.queue;
  g.queue = [];
  // A knex transaction holds the (single) connection: our statements would join it. Callers then
  // take their knex path, which waits for the connection like any other query.
  if (!conn.open || conn.inTransaction) {
    for (const it of items) it.resolve(undefined);
    return;
  }
  const run = runner(app, conn);
  const tx = txStatements(app, conn);
  // values[i]: the unit's result; errors[i] (sparse): why it failed (values[i] is then FAILED).
  const values: unknown[] = new Array(items.length);
  let errors: unknown[] | undefined;
  try {
    tx.begin.run();
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      if (it.savepoint) tx.savepoint.run();
      try {
        values[i] = it.fn(run);
        if (it.savepoint) tx.release.run();
      } catch (err) {
        // An error that ended the transaction (SQLite rolled it all back): the whole group failed.
        if (!conn.inTransaction) throw err;
        // The unit's own work is undone (SAVEPOINT), the group goes on.
        if (it.savepoint) {
          tx.rollbackTo.run();
          tx.release.run();
        }
        if (err instanceof Rollback) values[i] = undefined;
        else {
          values[i] = FAILED;
          (errors ??= [])[i] = err;
        }
      }
    }
    tx.commit.run();
    if (++g.commits >= CHECKPOINT_AFTER_COMMITS && g.checkpointDue) {
      // Before the callers are answered: the checkpoint's copy and fsync delay the calls this
      // group (a usage flush) already delays, not the next ones.
      g.commits = 0;
      g.checkpointDue = false;
      try {
        tx.checkpoint.get();
      } catch {
        /* a busy or failed checkpoint is retried at the next flush, or by SQLite's own at 4 000 pages */
      }
    }
  } catch (err) {
    // BEGIN, a SAVEPOINT or the COMMIT itself failed: nothing of the group was written.
    if (conn.inTransaction) tx.rollback.run();
    for (const it of items) it.reject(err);
    return;
  }
  for (let i = 0; i < items.length; i++) {
    const v = values[i];
    if (v === FAILED) items[i]!.reject(errors![i]);
    else items[i]!.resolve(v);
  }
}

/**
 * Like fastTx for work that is atomic without a SAVEPOINT (one statement, or a read after it).
 * Undefined when the fast path is unavailable (PostgreSQL, or a knex transaction holds the
 * connection): the caller then uses knex.
 */
export function fastUnit<T>(app: AppContext, fn: (run: Run) => T): Promise<T | undefined> {
  return submit(app, fn, false);
}

export class Rollback extends Error {}

/**
 * Runs `fn` atomically on SQLite (synchronous, nothing interleaves; group-committed with other
 * hot writes under its own SAVEPOINT). `run(sql, params)` executes a cached statement. Throwing
 * `Rollback` undoes `fn`'s work and returns undefined, as does an unavailable fast path
 * (PostgreSQL, or a knex transaction in progress) — callers tell the two apart themselves.
 */
export function fastTx<T>(app: AppContext, fn: (run: Run) => T): Promise<T | undefined> {
  return submit(app, fn, true);
}

/**
 * Queues `fn` for the next group commit. Not async, and no await once the connection is known:
 * each async layer is a promise and a microtask per call on the hottest path.
 */
function submit<T>(app: AppContext, fn: (run: Run) => T, savepoint: boolean): Promise<T | undefined> {
  const known = knownConn(app);
  if (known) return enqueue(app, known, fn, savepoint) as Promise<T | undefined>;
  if (app.db.kind !== 'sqlite') return Promise.resolve(undefined);
  return sqliteConn(app).then((conn) => (conn?.open ? (enqueue(app, conn, fn, savepoint) as Promise<T | undefined>) : undefined));
}
