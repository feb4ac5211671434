import type { AppContext } from '../context';
import type { BalanceAfter, Payer } from './balances';
import { lastWriteSeq } from './sqlite/statements';
import { lastPgWriteSeq } from './balances/postgres';

/**
 * This process's view of the balances it moves, so a call can send its upstream request while its
 * reservation is still being committed (relay/call/money.ts). The reservation itself is still taken by the
 * database's conditional UPDATE; the view only decides whether it is safe to start the upstream
 * request before that answer is in: when the last balance this process saw, minus the reservations
 * it has in flight, covers the new one. Concurrent calls of one user therefore count against each
 * other, and a user cannot fan out upstream calls that will not be paid for.
 *
 * SQLite: this process is the database's one writer, so the view drifts only when an admin or a
 * payment changes a balance in the console (a lowered balance costs at most the calls in flight at
 * that moment one aborted upstream request each; the refusal resets the view).
 *
 * PostgreSQL: other gateway nodes move the same balances, so the view is trusted only with a
 * margin — the balance seen must cover PG_MARGIN times the reservation — and only while fresh
 * (seen within PG_FRESH_MS): another node would have to spend nine reservations' worth of this
 * user's balance within that time for an early request to be refused (and aborted, unbilled).
 * A balance near its end always waits for the database.
 */
const PG_MARGIN = 10;
const PG_FRESH_MS = 2000;

interface Entry {
  /** Balance after the newest move this process saw; undefined = not known (wait for the database). */
  known: number | undefined;
  /**
   * Write order of that move (SQLite: sqlite/statements.ts writeSeq, one per move; PostgreSQL: one
   * per batch, balances/postgres.ts): answers noticed later but run earlier are older news.
   */
  seq: number;
  /** When `known` was set (ms; PostgreSQL's freshness). */
  at: number;
  /** Reservations sent to the database but not answered yet. */
  inflight: number;
}

export interface BalanceView {
  /** True (and the reservation counted as in flight) when the upstream request may start before the reservation is committed. */
  tryReserve(payer: Payer, amount: number): boolean;
  /** The reservation counted by `tryReserve` was answered: `after` when taken, undefined when refused. */
  settleReserve(payer: Payer, amount: number, after: BalanceAfter | undefined): void;
  /** A balance move finished (pre-consume, settle, refund) with these balances after it. */
  note(payer: Payer, after: BalanceAfter): void;
  /** Reservations started early, and those of them the database then refused. */
  readonly stats: { overlapped: number; refused: number };
}

const MAX_ENTRIES = 100_000;

export function balanceView(app: AppContext): BalanceView {
  return app.memo('ledger:balanceView', () => {
    const pg = app.db.kind === 'postgres';
    const margin = pg ? PG_MARGIN : 1;
    const lastSeq = pg ? () => lastPgWriteSeq(app) : () => lastWriteSeq(app);
    const users = new Map<number, Entry>();
    const tokens = new Map<number, Entry>();
    const entry = (m: Map<number, Entry>, id: number) => {
      let e = m.get(id);
      if (!e) {
        if (m.size >= MAX_ENTRIES) m.clear(); // a bound, not a cache policy: unknown only means "wait"
        e = { known: undefined, seq: 0, at: 0, inflight: 0 };
        m.set(id, e);
      }
      return e;
    };
    const fits = (e: Entry | undefined, amount: number) =>
      !!e && e.known !== undefined && e.known - e.inflight >= amount * margin && (!pg || Date.now() - e.at <= PG_FRESH_MS);
    // Only answers that carry their write order count, and only when newer than what is known.
    // Moves of one PostgreSQL batch share a number: of those, the lowest balance (the batch's
    // last take, or below the final balance when it only added) — never more than there is.
    const set = (m: Map<number, Entry>, id: number | undefined, v: number | undefined, seq: number | undefined) => {
      if (id === undefined || v === undefined || seq === undefined) return;
      const e = entry(m, id);
      if (seq < e.seq || (seq === e.seq && (e.known === undefined || v >= e.known))) return;
      e.known = v;
      e.seq = seq;
      if (pg) e.at = Date.now();
    };
    const stats = { overlapped: 0, refused: 0 };
    return {
      stats,
      tryReserve(payer, amount) {
        const u = users.get(payer.userId);
        if (!fits(u, amount)) return false;
        const t = payer.limitedTokenId ? tokens.get(payer.limitedTokenId) : undefined;
        if (payer.limitedTokenId && !fits(t, amount)) return false;
        u!.inflight += amount;
        if (t) t.inflight += amount;
        stats.overlapped++;
        return true;
      },
      settleReserve(payer, amount, after) {
        const u = entry(users, payer.userId);
        u.inflight = Math.max(0, u.inflight - amount);
        const t = payer.limitedTokenId ? entry(tokens, payer.limitedTokenId) : undefined;
        if (t) t.inflight = Math.max(0, t.inflight - amount);
        if (after) {
          set(users, payer.userId, after.userQuota, after.seq);
          set(tokens, payer.limitedTokenId, after.tokenRemain, after.seq);
        } else {
          // Refused although the view said it fits: the balance changed behind our back. Forget
          // it, and everything written so far: only moves that run from now on tell it again.
          stats.refused++;
          const now = lastSeq();
          u.known = undefined;
          u.seq = now;
          if (t) {
            t.known = undefined;
            t.seq = now;
          }
        }
      },
      note(payer, after) {
        set(users, payer.userId, after.userQuota, after.seq);
        set(tokens, payer.limitedTokenId, after.tokenRemain, after.seq);
      },
    };
  });
}
