import type { AppContext } from '../../context';
import { groupTx, writeSeq, type Run, type RowUpdate } from '../sqlite/statements';
import { OP, recordManySqlite, recordSqlite, type ReservationRow } from '../records';
import type { BalanceAfter, Balances, MoveOutcome, Payer, QueuedMove } from './index';

/**
 * Balance moves on SQLite, aggregated per payer within one group commit (sqlite/statements.ts).
 *
 * Every relayed call moves a balance twice (the reservation, then the settle or refund), and
 * under load many calls of the same key land in the same group commit. Instead of two
 * statements per call, the moves of one payer (user, or user + limited token) in one group
 * become ONE conditional statement per balance row:
 *
 *   quota = quota − (takes − adds)   where quota + adds ≥ takes
 *
 * which is exactly "all the adds (refunds) first, then every take (reservations, extra cost)":
 * a serial order of concurrent moves, and the only one in which no take is refused that another
 * order would let through. When that statement does not fit (a balance is nearly spent) the
 * group's moves of that payer run one by one instead — adds first, then each take on its own,
 * refused alone — so the outcome never depends on the batching. Each move gets the balance
 * after it in that order and its own write order (`writeSeq`), as if it had run alone.
 */

type Move = QueuedMove;

const balanceUpdate = (table: 'users' | 'tokens', column: 'quota' | 'remain_quota', set: string, cond = ''): RowUpdate => ({
  update: `update "${table}" set "${column}" = "${column}" ${set} where "id" = ?${cond}`,
  read: `select "${column}" from "${table}" where "id" = ?`,
  idAt: 1,
});
/** Take `?` only if the balance covers it: (amount, id, amount). */
const DEC = {
  users: balanceUpdate('users', 'quota', '- ?', ' and "quota" >= ?'),
  tokens: balanceUpdate('tokens', 'remain_quota', '- ?', ' and "remain_quota" >= ?'),
};
/** Add `?` (negative: take, unconditionally): (amount, id). */
const ADD = {
  users: balanceUpdate('users', 'quota', '+ ?'),
  tokens: balanceUpdate('tokens', 'remain_quota', '+ ?'),
};
/** A payer's net move: (takes − adds, id, adds, takes). */
const NET = {
  users: balanceUpdate('users', 'quota', '- ?', ' and "quota" + ? >= ?'),
  tokens: balanceUpdate('tokens', 'remain_quota', '- ?', ' and "remain_quota" + ? >= ?'),
};
const READ = { users: ADD.users.read, tokens: ADD.tokens.read };

const num = (v: unknown): number | undefined => (v === undefined || v === null ? undefined : Number(v));

interface PendingBatch {
  moves: Move[];
  /** Resolves after the COMMIT of the group the batch ran in. */
  done: Promise<unknown>;
}

export function sqliteBalances(app: AppContext): Balances {
  const st = { batch: undefined as PendingBatch | undefined };
  return {
    move(userId, tokenId, amount, take, res, op = 0) {
      let batch = st.batch;
      if (!batch) {
        const moves: Move[] = [];
        const created: PendingBatch = {
          moves,
          // One unit of work for all the moves queued until it runs; its SAVEPOINT undoes them all
          // if a statement fails unexpectedly (every move of the batch is then rejected with that error).
          done: groupTx(app, (run) => {
            if (st.batch === created) st.batch = undefined;
            applyMoves(app, run, moves);
          }).then(undefined, (err: unknown) => {
            if (st.batch === created) st.batch = undefined; // never ran: the next move starts afresh
            throw err;
          }),
        };
        batch = st.batch = created;
      }
      const move: Move = { userId, tokenId, amount, take, outcome: undefined, res, op, failed: undefined };
      batch.moves.push(move);
      return batch.done.then(() => move.outcome!);
    },

    takeUpTo(payer, reserved, delta, res, op) {
      return groupTx(app, (run) => takeUpTo(app, run, payer, reserved, delta, res, op)) as Promise<BalanceAfter & { taken: number }>;
    },
  };
}

function takeUpTo(
  app: AppContext,
  run: Run,
  payer: Payer,
  reserved: number,
  delta: number,
  res: ReservationRow | undefined,
  op: number,
): BalanceAfter & { taken: number } {
  const { userId, limitedTokenId: tokenId } = payer;
  let extra = delta;
  let userQuota = num(run.update(DEC.users, [delta, userId, delta]));
  if (userQuota === undefined) {
    const have = Number(run.value(READ.users, [userId]) ?? 0);
    extra = Math.min(delta, Math.max(0, have));
    userQuota = extra > 0 ? num(run.update(ADD.users, [-extra, userId])) : have;
  }
  let tokenRemain: number | undefined;
  if (tokenId && extra > 0) {
    tokenRemain = num(run.update(DEC.tokens, [extra, tokenId, extra]));
    if (tokenRemain === undefined) {
      const have = Number(run.value(READ.tokens, [tokenId]) ?? 0);
      const tokExtra = Math.min(extra, Math.max(0, have));
      if (tokExtra < extra) userQuota = num(run.update(ADD.users, [extra - tokExtra, userId]));
      extra = tokExtra;
      tokenRemain = extra > 0 ? num(run.update(ADD.tokens, [-extra, tokenId])) : have;
    }
  }
  if (res && op !== 0) {
    res.taken = reserved + extra;
    recordSqlite(run, res, op);
  }
  return { userQuota, tokenRemain, taken: reserved + extra, seq: writeSeq(app) };
}

function applyMoves(app: AppContext, run: Run, moves: Move[]): void {
  applyMoney(app, run, moves);
  // The reservation rows of the applied moves, in the same unit (its SAVEPOINT undoes both):
  // opens and settles as one statement each.
  let opens: ReservationRow[] | undefined;
  let settles: ReservationRow[] | undefined;
  for (let i = 0; i < moves.length; i++) {
    const m = moves[i]!;
    if (m.op === 0 || typeof m.outcome !== 'object') continue;
    if (m.op === OP.open) (opens ??= []).push(m.res!);
    else if (m.op === OP.settle) (settles ??= []).push(m.res!);
    else recordSqlite(run, m.res!, m.op);
  }
  if (opens) recordManySqlite(run, opens, OP.open);
  if (settles) recordManySqlite(run, settles, OP.settle);
}

function applyMoney(app: AppContext, run: Run, moves: Move[]): void {
  // A move of amount 0 only writes its reservation row (a settle at exactly the reserved amount):
  // applied, no balance touched. (A fresh object: callers add to their outcome.)
  if (moves.length === 1) {
    if (moves[0]!.amount === 0) moves[0]!.outcome = {};
    else serial(app, run, moves);
    return;
  }
  // Per payer, in the order payers first appear (a Map keeps insertion order).
  const byPayer = new Map<number | string, Move[]>();
  for (const m of moves) {
    if (m.amount === 0) {
      m.outcome = {};
      continue;
    }
    const key = m.tokenId === undefined ? m.userId : `${m.userId}:${m.tokenId}`;
    const list = byPayer.get(key);
    if (list) list.push(m);
    else byPayer.set(key, [m]);
  }
  for (const list of byPayer.values()) {
    if (list.length === 1 || !aggregated(app, run, list)) serial(app, run, list);
  }
}

/** All moves of one payer in one statement per balance row; false (nothing written) when it does not fit. */
function aggregated(app: AppContext, run: Run, list: Move[]): boolean {
  const { userId, tokenId } = list[0]!;
  let adds = 0;
  let takes = 0;
  for (const m of list) {
    if (m.take) takes += m.amount;
    else adds += m.amount;
  }
  const net = takes - adds;
  let user: number | undefined;
  let token: number | undefined;
  if (takes === 0) {
    user = num(run.update(ADD.users, [adds, userId]));
    if (tokenId !== undefined) token = num(run.update(ADD.tokens, [adds, tokenId]));
  } else {
    if (tokenId !== undefined) run('SAVEPOINT gw_moves', []);
    user = num(run.update(NET.users, [net, userId, adds, takes]));
    if (user === undefined) {
      if (tokenId !== undefined) run('RELEASE gw_moves', []);
      return false;
    }
    if (tokenId !== undefined) {
      token = num(run.update(NET.tokens, [net, tokenId, adds, takes]));
      if (token === undefined) {
        run('ROLLBACK TO gw_moves', []);
        run('RELEASE gw_moves', []);
        return false;
      }
      run('RELEASE gw_moves', []);
    }
  }
  // The balance each move leaves, in the serial order the statement stands for: adds, then takes.
  let u = user === undefined ? undefined : user + net;
  let t = token === undefined ? undefined : token + net;
  const leave = (m: Move, d: number) => {
    if (u !== undefined) u += d;
    if (t !== undefined) t += d;
    m.outcome = tokenId === undefined ? { userQuota: u, seq: writeSeq(app) } : { userQuota: u, tokenRemain: t, seq: writeSeq(app) };
  };
  for (const m of list) if (!m.take) leave(m, m.amount);
  for (const m of list) if (m.take) leave(m, -m.amount);
  return true;
}

/** The payer's moves one at a time: adds first, then each take conditional on its own. */
function serial(app: AppContext, run: Run, list: Move[]): void {
  for (const m of list) if (!m.take) m.outcome = addOne(app, run, m);
  for (const m of list) if (m.take) m.outcome = takeOne(app, run, m);
}

function addOne(app: AppContext, run: Run, m: Move): MoveOutcome {
  const userQuota = num(run.update(ADD.users, [m.amount, m.userId]));
  if (m.tokenId === undefined) return { userQuota, seq: writeSeq(app) };
  return { userQuota, tokenRemain: num(run.update(ADD.tokens, [m.amount, m.tokenId])), seq: writeSeq(app) };
}

function takeOne(app: AppContext, run: Run, m: Move): MoveOutcome {
  if (m.tokenId === undefined) {
    // One conditional statement: a refusal wrote nothing.
    const userQuota = num(run.update(DEC.users, [m.amount, m.userId, m.amount]));
    return userQuota === undefined ? 'user' : { userQuota, seq: writeSeq(app) };
  }
  run('SAVEPOINT gw_move', []);
  const userQuota = num(run.update(DEC.users, [m.amount, m.userId, m.amount]));
  const tokenRemain = userQuota === undefined ? undefined : num(run.update(DEC.tokens, [m.amount, m.tokenId, m.amount]));
  if (tokenRemain === undefined) {
    // The user's part (if any) is given back with the token's refusal.
    run('ROLLBACK TO gw_move', []);
    run('RELEASE gw_move', []);
    return userQuota === undefined ? 'user' : 'token';
  }
  run('RELEASE gw_move', []);
  return { userQuota, tokenRemain, seq: writeSeq(app) };
}
