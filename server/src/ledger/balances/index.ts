import type { AppContext } from '../../context';
import { RelayError } from '../../relay/errors';
import { OP, type ReservationRow } from '../records';
import { sqliteBalances } from './sqlite';
import { postgresBalances } from './postgres';

/**
 * Balance moves: the atomic takes and adds of users' quota and limited tokens' remain_quota that
 * bill a relayed call, each with its reservation row in the same commit (ledger/records.ts).
 *
 * One interface, `Balances`, with an implementation per database, chosen once per app
 * (`balances(app)`): SQLite group-commits the moves of one event-loop turn (sqlite.ts), PostgreSQL
 * batches them per turn (postgres.ts). Either answers every move definitely — when a batch cannot
 * apply a move it runs it on its own path, inside the implementation. The rules of a call's money
 * (reserve, refund, settle to the real cost, clamped) are written once, below, on top of it.
 */

export interface Payer {
  userId: number;
  /** A limited token (remain_quota is charged too); undefined for unlimited tokens / playground. */
  limitedTokenId?: number;
}

export interface BalanceAfter {
  /** The user's quota after the move (undefined if unknown). */
  userQuota?: number;
  tokenRemain?: number;
  /** When the move ran, in this process's write order (SQLite: sqlite/statements.ts writeSeq; PostgreSQL: per batch). */
  seq?: number;
}

/** A take the user's (`'user'`) or the limited token's (`'token'`) balance did not cover: nothing was taken, no row written. */
export type MoveOutcome = BalanceAfter | 'user' | 'token';

/** One move queued for a batch (both implementations batch them: a group commit, a per-turn transaction). */
export interface QueuedMove {
  userId: number;
  /** A limited token charged with the user (undefined: unlimited token or playground). */
  tokenId: number | undefined;
  amount: number;
  /** true: conditional take; false: unconditional add (refund). */
  take: boolean;
  /** Set when its batch ran; on PostgreSQL left undefined when its row did not fit (then it runs on its own). */
  outcome: MoveOutcome | undefined;
  /** The call's reservation row, written with the move when it is applied (records.ts OP); op 0: none. */
  res: ReservationRow | undefined;
  op: number;
  /** PostgreSQL: the move's batch may or may not have applied it and nothing tells which: it fails with this. */
  failed: unknown;
}

export interface Balances {
  /**
   * Takes (`take`: only if both the user and the limited token `tokenId` cover it) or adds
   * `amount`, and writes `res`'s row as `op` says (records.ts OP; 0: none) in the same commit.
   * Amount 0 writes only the row. Resolves after the commit.
   */
  move(userId: number, tokenId: number | undefined, amount: number, take: boolean, res?: ReservationRow, op?: number): Promise<MoveOutcome>;
  /**
   * Takes `delta` as far as the balances reach (never below zero), in one transaction with the
   * row (`res.taken` = `reserved` + what was taken): the settle of a call whose extra cost was
   * refused.
   */
  takeUpTo(payer: Payer, reserved: number, delta: number, res: ReservationRow | undefined, op: number): Promise<BalanceAfter & { taken: number }>;
}

/** This app's balance moves (the implementation of its database, chosen at first use). */
export function balances(app: AppContext): Balances {
  return app.memo('ledger:balances', () => (app.db.kind === 'postgres' ? postgresBalances(app) : sqliteBalances(app)));
}

const insufficientUser = () => new RelayError(403, 'relay.user_quota_insufficient', 'insufficient_user_quota', 'insufficient_quota');
const insufficientToken = () => new RelayError(403, 'relay.token_quota_insufficient', 'insufficient_token_quota', 'insufficient_quota');

/**
 * Atomically takes `amount` from the user and (limited) token, or nothing: 403 when either lacks it.
 * With `res`, its reservation row is inserted (open) in the same commit as the take.
 */
export function preConsume(app: AppContext, payer: Payer, amount: number, res?: ReservationRow): Promise<BalanceAfter> {
  if (amount <= 0) return Promise.resolve({});
  // Not async: on the hot path each async layer is one more promise and microtask.
  return balances(app)
    .move(payer.userId, payer.limitedTokenId, amount, true, res, res ? OP.open : 0)
    .then((r) => {
      if (r === 'user') throw insufficientUser();
      if (r === 'token') throw insufficientToken();
      return r;
    });
}

/**
 * Gives a reservation back (failed request). With `res`, its row is written in the same commit:
 * deleted (`op` close, the default) or marked settled (a settle below the reserved amount).
 */
export function refund(app: AppContext, payer: Payer, amount: number, res?: ReservationRow, op: number = OP.close): Promise<BalanceAfter> {
  if (amount <= 0) return Promise.resolve({});
  // An add is never refused.
  return balances(app).move(payer.userId, payer.limitedTokenId, amount, false, res, res ? op : 0) as Promise<BalanceAfter>;
}

/**
 * Moves a reservation to the real cost. Extra cost is taken only as far as the balances reach
 * (never below zero: concurrent calls cannot overspend), so the result `taken` — what the log row
 * records — may be below `actual` when the balance ran out mid-call. With `res` (and `op`: settle,
 * or settleNew when nothing was reserved), its row is marked settled — `res.taken` is set before
 * the move is queued and corrected by the clamped take — in the same commit as the move.
 */
export function settle(
  app: AppContext,
  payer: Payer,
  reserved: number,
  actual: number,
  res?: ReservationRow,
  op = 0,
): Promise<BalanceAfter & { taken: number }> {
  const delta = actual - reserved;
  if (!res) op = 0;
  if (res) res.taken = actual;
  if (delta === 0) {
    if (op === 0) return Promise.resolve({ taken: actual });
    // Only the row changes: a move of amount 0.
    return balances(app)
      .move(payer.userId, payer.limitedTokenId, 0, false, res, op)
      .then((r) => Object.assign(r as BalanceAfter, { taken: actual }));
  }
  if (delta < 0) return refund(app, payer, -delta, res, op).then((after) => Object.assign(after, { taken: actual }));
  // The whole extra cost in one go; the clamped take only when a balance ran out (the refused
  // take wrote nothing).
  const b = balances(app);
  return b
    .move(payer.userId, payer.limitedTokenId, delta, true, res, op)
    .then((r) => (typeof r === 'string' ? b.takeUpTo(payer, reserved, delta, res, op) : Object.assign(r, { taken: actual })));
}
