import type { AppContext } from '../context';
import { nodeId, reconcileOne, type KnownOutcome } from './recovery';
import type { ReservationRow } from './records';

/**
 * Reservations whose own write failed on a live node (the database was lost, a statement timed
 * out): the reservation row may still be open, holding the estimate, and before this the node
 * that kept running never let go of it — only a restart refunded it, in full, so a delivered
 * answer went free. Each is reconciled here, while the node runs, as a restart would reconcile it
 * but with what the node knows: settled at the call's cost when the client had the answer,
 * refunded when it did not (recovery.ts reconcileOne, one transaction that starts by deleting the
 * row, so a repair applies once however often it is tried, and not at all when the write that
 * failed had committed after all and the row moved on).
 *
 * Tried at once, then with growing waits (up to a minute) until the database answers; at
 * shutdown, once more. A node that dies first leaves the row to its restart (refund in full).
 */
export interface LedgerRepairs {
  /** Reconcile `res` with `known` (charge 0: refund). A second call for the same row updates what is known. */
  add(res: ReservationRow, known: KnownOutcome): void;
  /** Rows waiting for their repair. */
  readonly pending: number;
  /** Runs the pending repairs now (tests; shutdown). */
  runNow(): Promise<void>;
}

const FIRST_WAIT_MS = 500;
/** A long outage under load fails many calls: past this many, the rest waits for a restart (refund in full). */
const MAX_PENDING = 100_000;
const MAX_WAIT_MS = 60_000;

export function ledgerRepairs(app: AppContext): LedgerRepairs {
  return app.memo('ledger:repairs', () => {
    const queue = new Map<number, { res: ReservationRow; known: KnownOutcome }>();
    let wait = FIRST_WAIT_MS;
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> | undefined;
    let closed = false;

    const runOnce = async (): Promise<void> => {
      for (const [id, item] of [...queue]) {
        try {
          await reconcileOne(app, id, item.res.nodeId, undefined, item.known);
          queue.delete(id);
          app.log.warn({ reservation: id, charge: item.known.charge }, 'reservation reconciled after its write failed');
        } catch (err) {
          app.log.warn({ err, reservation: id }, 'reservation repair failed; trying again later');
          return; // the database is still away: the rest waits too
        }
      }
    };
    const run = (): Promise<void> =>
      (running ??= runOnce().finally(() => {
        running = undefined;
        if (queue.size && !closed) schedule((wait = Math.min(MAX_WAIT_MS, wait * 2)));
        else wait = FIRST_WAIT_MS;
      }));
    const schedule = (ms: number) => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = undefined;
        void run();
      }, ms);
      timer.unref();
    };
    app.onClose(async () => {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
      if (queue.size) await runOnce();
      if (queue.size) app.log.error({ reservations: queue.size }, 'reservations left for the next start to reconcile');
    });
    return {
      add(res, known) {
        if (res.nodeId !== nodeId(app) || (queue.size >= MAX_PENDING && !queue.has(res.id))) return;
        queue.set(res.id, { res, known });
        schedule(wait);
      },
      get pending() {
        return queue.size;
      },
      runNow: () => run(),
    };
  });
}
