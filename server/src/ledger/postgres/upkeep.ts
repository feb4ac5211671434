import type { AppContext } from '../../context';
import { DEFAULT_HEARTBEAT_MS } from '../recovery';

/**
 * PostgreSQL: keeps the `reservations` table small and its statistics true.
 *
 * The table is a queue: every relayed call inserts a row, updates it at the settle and deletes it
 * with the usage batch, so it holds about a second of traffic and leaves a dead row per call. Left
 * to itself — autovacuum off, or not yet come round (it looks once a minute) — it only grows, and
 * its never-analysed statistics say "ten pages": the balance batch's prepared statement then
 * keeps a plan that reads the whole table for every settle and refund (measured at c=50: 2.0 ms
 * per batch statement, against 0.5 ms with the primary key used, and the gateway idle a quarter of
 * the time waiting for it).
 *
 * So the node that deleted the rows vacuums and analyses the table after every `EVERY` deletions,
 * and once per heartbeat period (ledgerHeartbeatMs) when it deleted fewer: the dead rows' room is reused (the table stops
 * growing), and the true page count invalidates the cached plans, which then look rows up by
 * primary key once the table is larger than a few pages. `SKIP_LOCKED`: a vacuum another node runs
 * already does it; VACUUM never blocks the inserts, updates and deletes of the calls.
 */
export const UPKEEP_EVERY = 10_000;

export interface ReservationsUpkeep {
  /** `n` reservation rows were deleted (committed). */
  deleted(n: number): void;
  /** The vacuum running, if any (tests; close). */
  readonly running: Promise<void> | undefined;
}

export function reservationsUpkeep(app: AppContext): ReservationsUpkeep {
  return app.memo('ledger:pg-upkeep', () => {
    let since = 0;
    let running: Promise<void> | undefined;
    let failed = false;
    const vacuum = async () => {
      try {
        await app.knex.raw('vacuum (analyze, skip_locked) "reservations"');
      } catch (err) {
        // The table is then autovacuum's (a user not its owner gets only PostgreSQL's warning).
        if (!failed) app.log.warn({ err }, 'vacuum of the reservations table failed; it is left to autovacuum');
        failed = true;
      } finally {
        running = undefined;
      }
    };
    const start = () => {
      if (running || failed) return;
      since = 0;
      running = vacuum();
    };
    const timer = setInterval(() => {
      if (since > 0) start();
    }, app.config.ledgerHeartbeatMs ?? DEFAULT_HEARTBEAT_MS);
    timer.unref();
    app.onClose(async () => {
      clearInterval(timer);
      await running;
    });
    return {
      deleted(n) {
        since += n;
        if (since >= UPKEEP_EVERY) start();
      },
      get running() {
        return running;
      },
    };
  });
}
