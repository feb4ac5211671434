import type { AppContext } from '../../context';
import { DEFAULT_HEARTBEAT_MS } from '../recovery';

/**
 * PostgreSQL: keeps the `reservations` table small and its statistics true.
 *
 * The table is a queue: every relayed call inserts a row, updates it at the settle and deletes it
 * with the usage batch, so it holds about a second of traffic and leaves a dead row per call. Left
 * to itself — autovacuum off, or not yet come round (it looks once a minute) — it only grows, and
 * every read of it (the take-over check, any plan that scans it) grows with it.
 *
 * So the node that deleted the rows vacuums and analyses the table after every `UPKEEP_EVERY`
 * deletions, and once per heartbeat period (ledgerHeartbeatMs) when it deleted fewer: the dead
 * rows' room is reused (the table stops growing) and the statistics stay true. The balance
 * batches do not depend on it for their plans (postgres/conn.ts, withBatchConn). `SKIP_LOCKED`: a
 * vacuum another node runs already does it; VACUUM never blocks the calls' writes.
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
