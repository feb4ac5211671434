import type { AppContext } from '../context';
import type { Move, MoveOutcome } from './balanceMoves';
import { withPgConn, type PgConn } from './pgFast';
import { PG_USERS_WITH_RECORDS, pgRecordValues, pgRecordsWritten, recordPg, type ReservationRow } from '../ledger/records';

/**
 * Balance moves on PostgreSQL, batched per event-loop turn: the PostgreSQL counterpart of
 * balanceMoves.ts (SQLite group commit).
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
 * all in one transaction. A move whose row does not fit the batch (a balance nearly spent) gets
 * `undefined`: its caller then takes the one-move-at-a-time path (services/billing.ts), which
 * refuses or clamps it alone (concurrent single statements, in no set order: unlike SQLite's
 * serial fallback, a refund asked for in the same turn may land after a take) — so the batching
 * never refuses what that path would let through.
 * Every caller is answered after the COMMIT; if the batch fails, every move of it is rejected with
 * the error and nothing of it was written.
 */

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

function pending(app: AppContext): { batch: PgBatch | undefined } {
  return app.memo('billing:pgMoves', () => ({ batch: undefined as PgBatch | undefined }));
}

/** Queues a move for this turn's batch; resolves once it is committed (undefined: not applied, see above). */
export function pgMove(app: AppContext, userId: number, tokenId: number | undefined, amount: number, take: boolean, res?: ReservationRow, op = 0): Promise<MoveOutcome | undefined> {
  const st = pending(app);
  let batch = st.batch;
  if (!batch) {
    const moves: Move[] = [];
    const created: PgBatch = {
      moves,
      done: new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        if (st.batch === created) st.batch = undefined;
        return applyBatch(app, moves);
      }),
    };
    batch = st.batch = created;
  }
  const move: Move = { userId, tokenId, amount, take, outcome: undefined, res, op };
  batch.moves.push(move);
  return batch.done.then(() => move.outcome);
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
    const userAfter = await withPgConn(app, false, (conn) => (records ? usersWithRecords(conn, users, moves) : update(conn, SQL.users, users)));
    settleOutcomes(users, tokens, userAfter, new Map());
    for (const m of moves) if (m.amount === 0) m.outcome = {};
    return;
  }
  const { userAfter, tokenAfter } = await withPgConn(app, true, async (conn) => {
    const userAfter = await update(conn, SQL.users, users);
    const tokenAfter = new Map<number, number>();
    if (tokens.size) await updateTokens(conn, tokens, userAfter, tokenAfter);
    if (records) await writeRecords(conn, moves, userAfter, tokenAfter);
    return { userAfter, tokenAfter };
  });
  settleOutcomes(users, tokens, userAfter, tokenAfter);
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
  for (const [id, s] of users) {
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

/** The reservation rows of the applied moves (the others' callers write theirs on their own path). */
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
async function updateTokens(conn: PgConn, tokens: Map<number, RowSum & { userId: number }>, userAfter: Map<number, number>, tokenAfter: Map<number, number>): Promise<void> {
  // Only the tokens whose user's row took its part.
  const tried = new Map([...tokens].filter(([, t]) => userAfter.has(t.userId)));
  for (const [id, v] of await update(conn, SQL.tokens, tried)) tokenAfter.set(id, v);
  // A token that refused: its moves are left to their callers, so its part goes back to its user.
  const back = new Map<number, number>();
  for (const [id, t] of tried) if (!tokenAfter.has(id)) back.set(t.userId, (back.get(t.userId) ?? 0) + (t.takes - t.adds));
  if (back.size) {
    const rows = await conn.query({ ...SQL.usersBack, values: [[...back.keys()], [...back.values()]] });
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
  for (const [id, s] of sums) {
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
function settleOutcomes(users: Map<number, RowSum>, tokens: Map<number, RowSum & { userId: number }>, userAfter: Map<number, number>, tokenAfter: Map<number, number>): void {
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
      m.outcome = m.tokenId === undefined ? { userQuota: userQuota.get(m) } : { userQuota: userQuota.get(m), tokenRemain: tokenRemain.get(m) };
    }
  }
}
