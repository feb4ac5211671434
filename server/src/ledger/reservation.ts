import type { AppContext } from '../context';
import { preConsume, refund, settle, type BalanceAfter, type Payer } from './balances';
import { OP, ROW, type ReservationRow } from './records';
import { nodeId, runIds } from './recovery';
import { ledgerRepairs } from './repair';
import { RelayError } from '../relay/errors';

export interface ReservationInfo {
  /** The call's token id (0: playground). */
  tokenId: number;
  model: string;
  group: string;
  stream: boolean;
}

/**
 * The money of one relayed call: `open` takes the estimate (its row is inserted in the same commit),
 * `settle` moves it to the real cost (the row is marked settled with what was taken, same commit),
 * `refund` gives it back (the row is deleted, same commit); the usage batch deletes a settled row
 * in the transaction that writes the call's log row (`handOver`). Each step runs at most once: a
 * second call returns the first one's promise. The database differences (SQLite group commit,
 * PostgreSQL batches, a move that does not fit its batch) are below it, in ledger/balances/; the
 * row's state (`row`) is set by the writer that commits it, so no step adds a promise of its own.
 */
export class Reservation implements ReservationRow {
  readonly id: number;
  readonly nodeId: string;
  readonly userId: number;
  readonly tokenId: number;
  readonly limited: boolean;
  readonly model: string;
  readonly group: string;
  readonly stream: boolean;
  readonly createdAt: number;
  channelId = 0;
  taken = 0;
  promptTokens = 0;
  completionTokens = 0;
  row: number = ROW.none;
  private opening: Promise<BalanceAfter> | undefined;
  private settling: Promise<BalanceAfter & { taken: number }> | undefined;
  private refunding: Promise<BalanceAfter> | undefined;

  constructor(
    private readonly app: AppContext,
    readonly payer: Payer,
    /** The amount reserved. */
    readonly amount: number,
    info: ReservationInfo,
  ) {
    const ids = runIds(app);
    this.id = ids.base + ++ids.n;
    this.nodeId = nodeId(app);
    this.userId = payer.userId;
    this.tokenId = info.tokenId;
    this.limited = payer.limitedTokenId !== undefined;
    this.model = info.model;
    this.group = info.group;
    this.stream = info.stream;
    this.createdAt = Date.now();
  }

  /** Takes the reserved amount (403 when the user or the limited token lacks it: nothing taken). */
  open(): Promise<BalanceAfter> {
    return (this.opening ??= preConsume(this.app, this.payer, this.amount, this).catch((err: unknown) => this.failed(err, 0)));
  }

  /** Gives the reserved amount back (only if it was taken and not settled). */
  refund(): Promise<BalanceAfter> {
    if (this.refunding) return this.refunding;
    if (this.row !== ROW.open) return Promise.resolve({});
    return (this.refunding = refund(this.app, this.payer, this.amount, this).catch((err: unknown) => this.failed(err, 0)));
  }

  /**
   * A move failed for another reason than a refusal (a 403 is an answer: nothing was taken): the
   * row may be left open, so the node reconciles it while it runs (ledger/repair.ts) — at
   * `charge` (0: refunded) — and this reservation moves no more.
   */
  private failed(err: unknown, charge: number): never {
    if (!(err instanceof RelayError)) {
      ledgerRepairs(this.app).add(this, { charge, channelId: this.channelId, promptTokens: this.promptTokens, completionTokens: this.completionTokens });
      this.row = ROW.closed;
    }
    throw err;
  }

  /**
   * After a settle failed: the client did not get the answer, so its repair refunds the
   * reservation instead of charging the cost.
   */
  notDelivered(): void {
    ledgerRepairs(this.app).add(this, { charge: 0, channelId: this.channelId, promptTokens: 0, completionTokens: 0 });
  }

  /** Moves the reservation to the real cost `actual` (as far as the balances reach: `taken`). */
  settle(actual: number, channelId: number, promptTokens: number, completionTokens: number): Promise<BalanceAfter & { taken: number }> {
    if (this.settling) return this.settling;
    this.channelId = channelId;
    this.promptTokens = promptTokens;
    this.completionTokens = completionTokens;
    const open = this.row === ROW.open;
    // Nothing reserved (amount 0) but a cost: the row is inserted settled with the extra take.
    const op = open ? OP.settle : actual > 0 ? OP.settleNew : OP.none;
    return (this.settling = settle(this.app, this.payer, open ? this.amount : 0, actual, this, op).catch((err: unknown) => this.failed(err, actual)));
  }

  /**
   * The id of the settled row, for the usage batch, which deletes it with the log row; undefined
   * when there is no row. Once only.
   */
  handOver(): number | undefined {
    if (this.row !== ROW.settled) return undefined;
    this.row = ROW.closed;
    return this.id;
  }
}
