import type { AppContext } from '../../context';

/**
 * SQLite: the hot statements (balance moves, reservation rows, usage batches) run as cached
 * prepared statements straight on the better-sqlite3 connection (synchronous, so atomic), without
 * knex's per-query work, and are group-committed (below).
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
interface Pool {
  acquireConnection(): Promise<SqliteConn>;
  releaseConnection(c: SqliteConn): Promise<unknown>;
}

/**
 * An UPDATE of one row by its primary key, and the read of the column it changed. SQLite
 * evaluates RETURNING through a temporary table (≈ 10 µs on top of a ≈ 2 µs UPDATE); inside our
 * synchronous transaction nothing runs in between, so the UPDATE followed by a primary-key SELECT
 * gives the same answer for a fifth of the cost.
 */
export interface RowUpdate {
  /** `update "T" set … where "id" = ? …` */
  update: string;
  /** `select "c" from "T" where "id" = ?` */
  read: string;
  /** Index of the id among the UPDATE's parameters. */
  idAt: number;
}

/** Runs a cached statement inside the group transaction. */
export interface Run {
  /** Its rows (none for a write). */
  (sql: string, params: unknown[]): Array<Record<string, unknown>>;
  /** The first column of the first row of a read; undefined when there is none. */
  value(sql: string, params: unknown[]): unknown;
  /** The changed column after `u` (undefined when no row matched: nothing was written). */
  update(u: RowUpdate, params: unknown[]): unknown;
}

function sqliteState(app: AppContext) {
  return app.memo('ledger:sqlite', () => ({
    conn: undefined as SqliteConn | undefined,
    /** The runner of `conn` (one per connection: a new closure per group would be optimized anew by V8). */
    run: undefined as Run | undefined,
    tx: undefined as
      | {
          conn: SqliteConn;
          begin: SqliteStatement;
          commit: SqliteStatement;
          rollback: SqliteStatement;
          savepoint: SqliteStatement;
          release: SqliteStatement;
          rollbackTo: SqliteStatement;
          checkpoint: SqliteStatement;
        }
      | undefined,
    stmts: new Map<string, SqliteStatement>(),
    updates: new Map<RowUpdate, { update: SqliteStatement; read: SqliteStatement }>(),
  }));
}

const pool = (app: AppContext) => app.knex.client as Pool;

/** The connection once known (the hot path: no await), else undefined. */
function knownConn(app: AppContext): SqliteConn | undefined {
  const conn = sqliteState(app).conn;
  return conn?.open ? conn : undefined;
}

/** knex's one connection (the pool holds exactly one: SQLite has a single writer). */
async function sqliteConn(app: AppContext): Promise<SqliteConn> {
  const st = sqliteState(app);
  if (st.conn?.open) return st.conn;
  const conn = await pool(app).acquireConnection();
  await pool(app).releaseConnection(conn);
  if (typeof conn?.prepare !== 'function' || typeof conn.inTransaction !== 'boolean') throw new Error('not a better-sqlite3 connection');
  st.conn = conn;
  st.run = undefined;
  st.stmts.clear();
  st.updates.clear();
  return conn;
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
  const run = ((sql: string, params: unknown[]) => {
    const stmt = prepared(sql);
    if (!stmt.reader) {
      stmt.run(...params);
      return [];
    }
    return stmt.all(...params) as Array<Record<string, unknown>>;
  }) as Run;
  run.value = (sql, params) => {
    const row = prepared(sql).get(...params) as Record<string, unknown> | undefined;
    return row === undefined ? undefined : row[Object.keys(row)[0]!];
  };
  run.update = (u, params) => {
    let s = st.updates.get(u);
    if (!s) st.updates.set(u, (s = { update: prepared(u.update), read: conn.prepare(u.read).pluck() }));
    return s.update.run(...params).changes === 0 ? undefined : s.read.get(params[u.idAt]);
  };
  st.run = run;
  return run;
}

interface PendingWrite {
  /** Runs inside the group transaction; `savepoint` wraps it so a failure undoes only its own work. */
  fn: (run: Run) => unknown;
  savepoint: boolean;
  resolve(v: unknown): void;
  reject(err: unknown): void;
}

function groupState(app: AppContext) {
  return app.memo('ledger:sqliteGroup', () => ({ queue: [] as PendingWrite[], scheduled: false, seq: 0, commits: 0, checkpointDue: false }));
}

/**
 * Order of execution of hot writes: a unit calls it while it runs (inside the group
 * transaction, where units run one after the other), so a larger number is a later state of the
 * database. Callers are answered in order too, but through different numbers of promise hops, so
 * results may be *noticed* out of order (ledger/balanceView.ts uses this to keep the newest).
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
function enqueue(app: AppContext, fn: (run: Run) => unknown, savepoint: boolean): Promise<unknown> {
  const g = groupState(app);
  return new Promise((resolve, reject) => {
    g.queue.push({ fn, savepoint, resolve, reject });
    if (!g.scheduled) {
      g.scheduled = true;
      setImmediate(() => flushGroup(app));
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
  groupState(app).checkpointDue = true;
}

function rejectQueue(app: AppContext, err: unknown): void {
  const g = groupState(app);
  g.scheduled = false;
  const items = g.queue;
  g.queue = [];
  for (const it of items) it.reject(err);
}

function flushGroup(app: AppContext): void {
  const conn = sqliteState(app).conn!;
  if (!conn.open) return rejectQueue(app, new Error('the database connection is closed'));
  if (conn.inTransaction) {
    // A knex transaction holds the (single) connection: our statements would join it. The group
    // waits for the pool to hand the connection over (as a knex query would), gathering the writes
    // queued meanwhile, and runs while it holds it.
    const p = pool(app);
    p.acquireConnection().then(
      (c) => {
        try {
          if (c !== conn || c.inTransaction) rejectQueue(app, new Error('the database connection changed under the group commit'));
          else runGroup(app, conn);
        } finally {
          void p.releaseConnection(c);
        }
      },
      (err: unknown) => rejectQueue(app, err),
    );
    return;
  }
  runGroup(app, conn);
}

function runGroup(app: AppContext, conn: SqliteConn): void {
  const g = groupState(app);
  g.scheduled = false;
  const items = g.queue;
  g.queue = [];
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

/** Thrown by a `groupTx` unit: undoes its work; the unit then resolves with undefined. */
export class Rollback extends Error {}

/**
 * Runs `fn` in the next group commit, for work that is atomic without a SAVEPOINT (one
 * statement, or reads after it). Resolves with its result after the COMMIT.
 */
export function groupUnit<T>(app: AppContext, fn: (run: Run) => T): Promise<T> {
  return submit(app, fn, false) as Promise<T>;
}

/**
 * Runs `fn` atomically in the next group commit (synchronous, nothing interleaves; under its own
 * SAVEPOINT, so a failure undoes only its work). Throwing `Rollback` undoes it and resolves with
 * undefined; any other error undoes it and rejects.
 */
export function groupTx<T>(app: AppContext, fn: (run: Run) => T): Promise<T | undefined> {
  return submit(app, fn, true) as Promise<T | undefined>;
}

/**
 * Queues `fn` for the next group commit. Not async, and no await once the connection is known:
 * each async layer is a promise and a microtask per call on the hottest path.
 */
function submit(app: AppContext, fn: (run: Run) => unknown, savepoint: boolean): Promise<unknown> {
  if (knownConn(app)) return enqueue(app, fn, savepoint);
  return sqliteConn(app).then(() => enqueue(app, fn, savepoint));
}
