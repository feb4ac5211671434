import type { AppContext } from '../../context';
import { byId, lostConnection, noop, pgValue, withBatchConn, withPgConn, type PgConn } from '../postgres/conn';
import { OP, ROW, PG_USERS_WITH_RECORDS, pgRecordValues, pgRecordsWritten, recordPg, type ReservationRow } from '../records';
import { reservationsUpkeep } from '../postgres/upkeep';
import type { BalanceAfter, Balances, MoveOutcome, Payer, QueuedMove } from './index';

/**
 * Balance moves on PostgreSQL, batched per event-loop turn: the counterpart of sqlite.ts (SQLite
 * group commit).
 *
 * Every relayed call moves a balance twice (the reservation, then the settle or refund). One
 * statement per move means one commit per move — a WAL flush each — and all the calls of one key
 * queue on the same row lock, one commit at a time: measured, one key at c=50 did ≈ 1 350 req/s.
 * So the moves asked for in one turn run together, per user as ONE conditional statement per
 * balance row, exactly as on SQLite:
 *
 *   quota = quota − (takes − adds)   where quota + adds ≥ takes
 *
 * i.e. all the adds (refunds) first, then every take (a serial order of concurrent moves). The
 * users of the batch are updated in one statement (`unnest` of the per-user sums), their limited
 * tokens in a second one, and a user whose token refused gets that token's part back in a third,
 * all in one transaction. A move whose row does not fit the batch (a balance nearly spent) is then
 * run on its own (`one`), refused or taken alone — concurrent single statements, in no set order:
 * unlike SQLite's serial fallback, a refund asked for in the same turn may land after a take — so
 * the batching never refuses what moves one at a time would let through.
 * Every caller is answered after the COMMIT; if the batch fails, every move of it is rejected with
 * the error and nothing of it was written. A batch whose connection is lost before its commit runs
 * again on a fresh one (postgres/conn.ts); one whose connection is lost while the commit was on its
 * way is resolved from its reservation rows (`resolveUnknown`).
 */

type Move = QueuedMove;

interface PgBatch {
  moves: Move[];
  done: Promise<void>;
}

/** Net change of one balance row over the batch: the adds, the takes, and the moves behind them. */
interface RowSum {
  adds: number;
  takes: number;
  moves: Move[];
}

const SQL = {
  users: {
    name: 'gw_moves_users',
    text: 'update "users" as u set "quota" = u."quota" - (m.takes - m.adds) from unnest($1::int[], $2::bigint[], $3::bigint[]) as m(id, adds, takes) where u."id" = m.id and (m.takes = 0 or u."quota" + m.adds >= m.takes) returning u."id" as id, u."quota" as v',
  },
  tokens: {
    name: 'gw_moves_tokens',
    text: 'update "tokens" as t set "remain_quota" = t."remain_quota" - (m.takes - m.adds) from unnest($1::int[], $2::bigint[], $3::bigint[]) as m(id, adds, takes) where t."id" = m.id and (m.takes = 0 or t."remain_quota" + m.adds >= m.takes) returning t."id" as id, t."remain_quota" as v',
  },
  /** A user's share of the tokens that refused, given back. */
  usersBack: {
    name: 'gw_moves_users_back',
    text: 'update "users" as u set "quota" = u."quota" + m.back from unnest($1::int[], $2::bigint[]) as m(id, back) where u."id" = m.id returning u."id" as id, u."quota" as v',
  },
} as const;

/** One move on its own (single statements; with a limited token or a row, one transaction). */
const ONE = {
  usersTake: { name: 'gw_one_users_take', text: 'update "users" set "quota" = "quota" - $1 where "id" = $2 and "quota" >= $3 returning "quota" as v' },
  tokensTake: {
    name: 'gw_one_tokens_take',
    text: 'update "tokens" set "remain_quota" = "remain_quota" - $1 where "id" = $2 and "remain_quota" >= $3 returning "remain_quota" as v',
  },
  usersAdd: { name: 'gw_one_users_add', text: 'update "users" set "quota" = "quota" + $1 where "id" = $2 returning "quota" as v' },
  tokensAdd: { name: 'gw_one_tokens_add', text: 'update "tokens" set "remain_quota" = "remain_quota" + $1 where "id" = $2 returning "remain_quota" as v' },
  usersLocked: { name: 'gw_one_users_locked', text: 'select "quota" as v from "users" where "id" = $1 for update' },
  tokensLocked: { name: 'gw_one_tokens_locked', text: 'select "remain_quota" as v from "tokens" where "id" = $1 for update' },
} as const;

export function postgresBalances(app: AppContext): Balances {
  // `batch` collects the moves asked for; `running` is the batch being applied. One batch at a
  // time per process (a group commit): the moves asked for while one commits wait for it and
  // go together in the next. Batches in flight side by side would queue on the same row locks
  // (a busy key's user row), each waiting for the other's commit — measured at c=50 on one key,
  // ≈ 300 commits/s of 4 moves each and most of the statement time spent waiting for locks.
  const st = { batch: undefined as PgBatch | undefined, running: undefined as Promise<void> | undefined };
  const upkeep = reservationsUpkeep(app);
  return {
    move(userId, tokenId, amount, take, res, op = 0) {
      let batch = st.batch;
      if (!batch) {
        const moves: Move[] = [];
        // Nothing committing: the moves of this event-loop turn go together.
        const gate = st.running ?? new Promise<void>((resolve) => setImmediate(resolve));
        const created: PgBatch = {
          moves,
          done: gate.then(() => {
            if (st.batch === created) st.batch = undefined;
            return applyBatch(app, moves).catch((err: unknown) => {
              if (lostConnection(err) !== 'unknown') throw err;
              return resolveUnknown(app, moves, err);
            });
          }),
        };
        const running = created.done.then(noop, noop);
        st.running = running;
        void running.then(() => {
          if (st.running === running) st.running = undefined;
        });
        batch = st.batch = created;
      }
      const move: Move = { userId, tokenId, amount, take, outcome: undefined, res, op, failed: undefined };
      batch.moves.push(move);
      const outcome = batch.done.then(() => {
        if (move.failed !== undefined) throw move.failed;
        return move.outcome ?? one(app, move);
      });
      // A refund deletes its reservation row (the settled ones go with the usage batch).
      if (op === OP.close) void outcome.then(() => upkeep.deleted(1), noop);
      return outcome;
    },
    takeUpTo: (payer, reserved, delta, res, op) => takeUpTo(app, payer, reserved, delta, res, op),
  };
}

/**
 * Write order of this process's moves, for its balance view (ledger/balanceView.ts): one number per
 * batch (batches commit one at a time), one per move run on its own. Moves of other nodes are not
 * ordered against them; the view allows for that with its margin.
 */
const pgSeq = (app: AppContext) => app.memo('ledger:pgSeq', () => ({ n: 0 }));
export const lastPgWriteSeq = (app: AppContext): number => pgSeq(app).n;

class TokenRefused extends Error {}

/** A move the batch could not apply, alone: a take refused alone answers 'user' or 'token' (nothing written). */
function one(app: AppContext, m: Move): Promise<MoveOutcome> {
  const tx = m.tokenId !== undefined || m.op !== 0;
  return withPgConn(app, tx, async (conn): Promise<MoveOutcome> => {
    const userQuota = await pgValue(conn, m.take ? ONE.usersTake : ONE.usersAdd, m.take ? [m.amount, m.userId, m.amount] : [m.amount, m.userId]);
    if (userQuota === undefined && m.take) return 'user';
    let tokenRemain: number | undefined;
    if (m.tokenId !== undefined) {
      tokenRemain = await pgValue(conn, m.take ? ONE.tokensTake : ONE.tokensAdd, m.take ? [m.amount, m.tokenId, m.amount] : [m.amount, m.tokenId]);
      // Rolls the user's part back with the transaction.
      if (tokenRemain === undefined && m.take) throw new TokenRefused();
    }
    if (m.op !== 0) await recordPg(conn, [m.res!], [m.op]);
    return m.tokenId !== undefined ? { userQuota, tokenRemain } : { userQuota };
  })
    .then((out) => {
      if (typeof out === 'object') out.seq = ++pgSeq(app).n;
      return out;
    })
    .catch((err: unknown) => {
      if (err instanceof TokenRefused) return 'token';
      throw err;
    });
}

/** Takes the extra cost `delta` as far as the balances reach, in one transaction (with the reservation row). */
function takeUpTo(
  app: AppContext,
  payer: Payer,
  reserved: number,
  delta: number,
  res: ReservationRow | undefined,
  op: number,
): Promise<BalanceAfter & { taken: number }> {
  const { userId, limitedTokenId: tokenId } = payer;
  return withPgConn(app, true, async (conn) => {
    let extra = delta;
    let userQuota = await pgValue(conn, ONE.usersTake, [delta, userId, delta]);
    if (userQuota === undefined) {
      const have = (await pgValue(conn, ONE.usersLocked, [userId])) ?? 0;
      extra = Math.min(delta, Math.max(0, have));
      userQuota = extra > 0 ? await pgValue(conn, ONE.usersAdd, [-extra, userId]) : have;
    }
    let tokenRemain: number | undefined;
    if (tokenId && extra > 0) {
      tokenRemain = await pgValue(conn, ONE.tokensTake, [extra, tokenId, extra]);
      if (tokenRemain === undefined) {
        const have = (await pgValue(conn, ONE.tokensLocked, [tokenId])) ?? 0;
        const tokExtra = Math.min(extra, Math.max(0, have));
        if (tokExtra < extra) userQuota = await pgValue(conn, ONE.usersAdd, [extra - tokExtra, userId]);
        extra = tokExtra;
        tokenRemain = extra > 0 ? await pgValue(conn, ONE.tokensAdd, [-extra, tokenId]) : have;
      }
    }
    if (res && op !== 0) {
      res.taken = reserved + extra;
      await recordPg(conn, [res], [op]);
    }
    return { userQuota, tokenRemain, taken: reserved + extra, seq: ++pgSeq(app).n };
  });
}

const RESERVATION_STATES = { name: 'gw_reservation_states', text: 'select "id", "state" from "reservations" where "id" = any($1::bigint[])' };

/**
 * A batch whose connection broke while its commit was on the way: it committed whole or not at
 * all, and its reservation rows say which (a batch writes each applied move's row in the same
 * statement or transaction as the balances). Read on a fresh connection:
 * - a move whose row shows its write (opened: present; settled: state 1; closed: gone) was
 *   applied, and so was the whole batch: it is answered as applied (its balances after are not
 *   known, so the balance view learns nothing from it);
 * - a move whose row does not, and every move of a batch that did not commit, runs on its own as
 *   a move the batch refused would (a refused move wrote nothing);
 * - a move without a row (op 0: a task's refund) is answered only when the rows prove it: applied
 *   with its user's (and token's) row, or run on its own when the batch cannot have committed (a
 *   move that is always applied shows nothing). Otherwise it fails with the batch's error.
 */
async function resolveUnknown(app: AppContext, moves: Move[], err: unknown): Promise<void> {
  const withRows = moves.filter((m) => m.op !== 0);
  const states = new Map<number, number>();
  if (withRows.length) {
    await withPgConn(app, false, async (conn) => {
      const { rows } = await conn.query({ ...RESERVATION_STATES, values: [withRows.map((m) => m.res!.id)] });
      for (const r of rows) states.set(Number(r.id), Number(r.state));
    });
  }
  const wrote = (m: Move): boolean => {
    const state = states.get(m.res!.id);
    if (m.op === OP.open || m.op === OP.settleNew) return state !== undefined;
    if (m.op === OP.settle) return state === 1;
    return state === undefined; // OP.close
  };
  // Rows whose whole batch sum took effect (only moves that change a balance say so).
  const users = new Set<number>();
  const tokens = new Set<number>();
  let committed = false;
  for (const m of withRows) {
    if (!wrote(m)) continue;
    committed = true;
    if (m.amount === 0) continue;
    users.add(m.userId);
    if (m.tokenId !== undefined) tokens.add(m.tokenId);
  }
  // Did not commit, for sure: a move that would have been applied whatever the balances shows nothing.
  const takingUsers = new Set<number>();
  const takingTokens = new Set<number>();
  for (const m of moves) {
    if (!m.take) continue;
    takingUsers.add(m.userId);
    if (m.tokenId !== undefined) takingTokens.add(m.tokenId);
  }
  const alwaysApplied = (m: Move) => m.amount === 0 || (!takingUsers.has(m.userId) && (m.tokenId === undefined || !takingTokens.has(m.tokenId)));
  const notCommitted = !committed && withRows.some(alwaysApplied);
  const seq = committed ? ++pgSeq(app).n : 0;
  app.log.warn({ moves: moves.length, committed, notCommitted }, 'ledger batch lost its connection during the commit; resolved from its reservation rows');
  for (const m of moves) {
    if (m.op !== 0) {
      if (!wrote(m)) continue;
      m.outcome = { seq };
      m.res!.row = m.op === OP.open ? ROW.open : m.op === OP.close ? ROW.closed : ROW.settled;
    } else if (committed && users.has(m.userId) && (m.tokenId === undefined || tokens.has(m.tokenId))) m.outcome = { seq };
    else if (!notCommitted) m.failed = err;
  }
}

function addTo(s: RowSum, m: Move): void {
  if (m.take) s.takes += m.amount;
  else s.adds += m.amount;
  s.moves.push(m);
}

async function applyBatch(app: AppContext, moves: Move[]): Promise<void> {
  const users = new Map<number, RowSum>();
  const tokens = new Map<number, RowSum & { userId: number }>();
  let records = false;
  for (const m of moves) {
    if (m.op !== 0) records = true;
    // Amount 0: only its reservation row is written (a settle at exactly the reserved amount).
    if (m.amount === 0) continue;
    let u = users.get(m.userId);
    if (!u) users.set(m.userId, (u = { adds: 0, takes: 0, moves: [] }));
    addTo(u, m);
    if (m.tokenId !== undefined) {
      let t = tokens.get(m.tokenId);
      if (!t) tokens.set(m.tokenId, (t = { adds: 0, takes: 0, moves: [], userId: m.userId }));
      addTo(t, m);
    }
  }
  // Users only: one statement, no transaction needed (the reservation rows ride in it). With
  // limited tokens: one transaction, the rows written last for the moves found applied.
  if (!tokens.size) {
    const userAfter = await withBatchConn(app, false, (conn) => (records ? usersWithRecords(conn, users, moves) : update(conn, SQL.users, users)));
    settleOutcomes(users, tokens, userAfter, new Map(), ++pgSeq(app).n);
    for (const m of moves) if (m.amount === 0) m.outcome = {};
    return;
  }
  const { userAfter, tokenAfter } = await withBatchConn(app, true, async (conn) => {
    const userAfter = await update(conn, SQL.users, users);
    const tokenAfter = new Map<number, number>();
    if (tokens.size) await updateTokens(conn, tokens, userAfter, tokenAfter);
    if (records) await writeRecords(conn, moves, userAfter, tokenAfter);
    return { userAfter, tokenAfter };
  });
  settleOutcomes(users, tokens, userAfter, tokenAfter, ++pgSeq(app).n);
  for (const m of moves) if (m.amount === 0) m.outcome = {};
}

/** Applied: its user's row (and its limited token's, if any) took the batch's part; amount 0 always. */
const isApplied = (m: Move, userAfter: Map<number, number>, tokenAfter: Map<number, number>) =>
  m.amount === 0 || (userAfter.has(m.userId) && (m.tokenId === undefined || tokenAfter.has(m.tokenId)));

/** A users-only batch with reservation rows: moves and rows in one statement (records.ts). */
async function usersWithRecords(conn: PgConn, users: Map<number, RowSum>, moves: Move[]): Promise<Map<number, number>> {
  const rows: ReservationRow[] = [];
  const ops: number[] = [];
  const always: boolean[] = [];
  for (const m of moves) {
    if (m.op === 0) continue;
    rows.push(m.res!);
    ops.push(m.op);
    always.push(m.amount === 0);
  }
  const ids: number[] = [];
  const adds: number[] = [];
  const takes: number[] = [];
  for (const [id, s] of byId(users)) {
    ids.push(id);
    adds.push(s.adds);
    takes.push(s.takes);
  }
  const res = await conn.query({ ...PG_USERS_WITH_RECORDS, values: [ids, adds, takes, ...pgRecordValues(rows, ops, always)] });
  const after = new Map<number, number>();
  for (const r of res.rows) after.set(Number(r.id), Number(r.v));
  pgRecordsWritten(rows, ops, (i) => always[i]! || after.has(rows[i]!.userId));
  return after;
}

/** The reservation rows of the applied moves (the others write theirs when run on their own). */
async function writeRecords(conn: PgConn, moves: Move[], userAfter: Map<number, number>, tokenAfter: Map<number, number>): Promise<void> {
  const rows: ReservationRow[] = [];
  const ops: number[] = [];
  for (const m of moves) {
    if (m.op === 0 || !isApplied(m, userAfter, tokenAfter)) continue;
    rows.push(m.res!);
    ops.push(m.op);
  }
  if (rows.length) await recordPg(conn, rows, ops);
}

/** The batch's limited tokens; a token that refused gives its user's part back (same transaction). */
async function updateTokens(
  conn: PgConn,
  tokens: Map<number, RowSum & { userId: number }>,
  userAfter: Map<number, number>,
  tokenAfter: Map<number, number>,
): Promise<void> {
  // Only the tokens whose user's row took its part.
  const tried = new Map([...tokens].filter(([, t]) => userAfter.has(t.userId)));
  for (const [id, v] of await update(conn, SQL.tokens, tried)) tokenAfter.set(id, v);
  // A token that refused: its moves run on their own afterwards, so its part goes back to its user.
  const back = new Map<number, number>();
  for (const [id, t] of tried) if (!tokenAfter.has(id)) back.set(t.userId, (back.get(t.userId) ?? 0) + (t.takes - t.adds));
  if (back.size) {
    const sorted = byId(back);
    const rows = await conn.query({ ...SQL.usersBack, values: [sorted.map(([id]) => id), sorted.map(([, v]) => v)] });
    for (const r of rows.rows) userAfter.set(Number(r.id), Number(r.v));
  }
}

/** One statement for all the rows of `sums`; the balance after it of every row that took its part. */
async function update(conn: PgConn, q: { name: string; text: string }, sums: Map<number, RowSum>): Promise<Map<number, number>> {
  const after = new Map<number, number>();
  if (!sums.size) return after;
  const ids: number[] = [];
  const adds: number[] = [];
  const takes: number[] = [];
  for (const [id, s] of byId(sums)) {
    ids.push(id);
    adds.push(s.adds);
    takes.push(s.takes);
  }
  const res = await conn.query({ name: q.name, text: q.text, values: [ids, adds, takes] });
  for (const r of res.rows) after.set(Number(r.id), Number(r.v));
  return after;
}

/**
 * Each applied move gets the balances it leaves in the serial order the statements stand for:
 * per row, the adds, then the takes, in the order they were asked for. A move is applied when its
 * user's row (and its limited token's, if any) took the batch's part.
 */
function settleOutcomes(
  users: Map<number, RowSum>,
  tokens: Map<number, RowSum & { userId: number }>,
  userAfter: Map<number, number>,
  tokenAfter: Map<number, number>,
  seq: number,
): void {
  const applied = (m: Move) => userAfter.has(m.userId) && (m.tokenId === undefined || tokenAfter.has(m.tokenId));
  const userQuota = new Map<Move, number>();
  const tokenRemain = new Map<Move, number>();
  const walk = (sums: Map<number, RowSum>, after: Map<number, number>, into: Map<Move, number>) => {
    for (const [id, s] of sums) {
      const end = after.get(id);
      if (end === undefined) continue;
      const mine = s.moves.filter(applied);
      // Start from the balance before the applied moves: the final one plus what they took net.
      let v = end;
      for (const m of mine) v += m.take ? m.amount : -m.amount;
      for (const m of mine) if (!m.take) into.set(m, (v += m.amount));
      for (const m of mine) if (m.take) into.set(m, (v -= m.amount));
    }
  };
  walk(users, userAfter, userQuota);
  walk(tokens, tokenAfter, tokenRemain);
  for (const s of users.values()) {
    for (const m of s.moves) {
      if (!applied(m)) continue;
      m.outcome = m.tokenId === undefined ? { userQuota: userQuota.get(m), seq } : { userQuota: userQuota.get(m), tokenRemain: tokenRemain.get(m), seq };
    }
  }
}
