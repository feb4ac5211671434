import type { AppContext } from '../../context';
import { balanceView, type BalanceView } from '../../ledger/balanceView';
import { Reservation } from '../../ledger/reservation';
import type { BalanceAfter, Payer } from '../../ledger/balances';
import type { CallPlan } from './plan';
import type { RelayCall } from './relayCall';
import { ignore } from './relayCall';

/**
 * The money of one call: its reservation (each move also writes the durable reservation row,
 * ledger/reservation.ts) and when it is taken.
 *
 * The reservation is committed while the first upstream request is already on its way when this
 * process's balance view says it fits (balanceView.ts): the commit then costs the call nothing.
 * It is started right after that request is handed to the HTTP client (`start`, called by
 * attemptChannel): undici writes a request on a reused keep-alive connection from a setImmediate,
 * and the group commit also runs from one — queued first, the commit would delay the upstream
 * request by its own duration. The commit is awaited before anything reaches the client, is
 * billed, retried or refunded; a refusal aborts the upstream request and answers the 403.
 */
export class CallMoney {
  readonly res: Reservation;
  readonly view: BalanceView | undefined;
  readonly payer: Payer;
  readonly reserved: number;
  /** Balances right after the reservation was taken. */
  pre: BalanceAfter = {};
  /** The reservation is known to be taken (up front, or once the early commit answered). */
  taken = true;
  /** The early commit: armed (`early`), then started once (`gate`). */
  private early = false;
  private gate: Promise<BalanceAfter> | undefined = undefined;

  constructor(app: AppContext, call: RelayCall, plan: CallPlan) {
    const { principal } = call;
    this.payer = plan.payer;
    this.reserved = plan.reserved;
    this.res = new Reservation(app, plan.payer, plan.reserved, {
      tokenId: principal.token?.id ?? 0,
      model: call.model,
      group: principal.group,
      stream: call.stream,
    });
    this.view = plan.reserved > 0 ? balanceView(app) : undefined;
  }

  /**
   * Arms the early commit when the balance view allows it (undefined), else opens the reservation
   * now: the caller awaits that and passes the result to `opened`.
   */
  begin(): Promise<BalanceAfter> | undefined {
    if (this.view?.tryReserve(this.payer, this.reserved)) {
      this.early = true;
      this.taken = false;
      return undefined;
    }
    return this.res.open();
  }

  opened(after: BalanceAfter): void {
    this.pre = after;
    this.view?.note(this.payer, after);
  }

  /** Starts the early commit (once); its promise, undefined when the reservation was opened up front. Await it before using an answer. */
  start(): Promise<BalanceAfter> | undefined {
    if (!this.early || this.gate) return this.gate;
    const view = this.view!;
    this.gate = this.res.open().then(
      (after) => {
        view.settleReserve(this.payer, this.reserved, after);
        this.pre = after;
        this.taken = true;
        return after;
      },
      (err: unknown) => {
        view.settleReserve(this.payer, this.reserved, undefined);
        throw err;
      },
    );
    this.gate.catch(ignore); // awaited by the call; this only keeps it from counting as unhandled meanwhile
    return this.gate;
  }

  /** Gives the reservation back (no channel answered). */
  async refund(): Promise<void> {
    const after = await this.res.refund();
    this.view?.note(this.payer, after);
  }

  /** The call failed: waits for an early commit, then refunds whatever was taken (a refusal took nothing). */
  async abandon(): Promise<void> {
    const gate = this.start();
    if (!this.taken && gate) await gate.then(ignore, ignore);
    if (this.taken) await this.refund();
  }
}
