import crypto from 'node:crypto';
import type { AppContext } from '../context';
import { preConsume, refund, settle, type BalanceAfter, type Payer } from '../services/billing';
import { OP, type ReservationRow } from './records';
import { nodeId } from './recovery';

/** Where a reservation's row stands. */
const enum State {
  /** Nothing taken, no row. */
  none,
  /** Taken; the row is open. */
  open,
  /** Billed; the row says settled until the usage batch writes the log row and deletes it. */
  settled,
  /** Refunded (row deleted) or handed over to the usage batch. */
  closed,
}

/** Per app: a random prefix and a counter (request ids unique across nodes and restarts without a round trip). */
function idSource(app: AppContext): { prefix: string; n: number } {
  return app.memo('ledger:ids', () => ({ prefix: `${crypto.randomBytes(6).toString('base64url')}.`, n: 0 }));
}

export interface ReservationInfo {
  /** The call's token id (0: playground). */
  tokenId: number;
  model: string;
  group: string;
  stream: boolean;
}

/**
 * The money of one relayed call: `open` takes the estimate (the row is inserted in the same commit),
 * `settle` moves it to the real cost (the row is marked settled with what was taken, same commit),
 * `refund` gives it back (the row is deleted, same commit); the usage batch deletes a settled row
 * in the transaction that writes its log row (`handOver`). Each step runs at most once: a second
 * call returns the first one's promise. The database differences (SQLite group commit, PostgreSQL
 * batches, the one-move fallbacks) are below, in services/billing.ts and relay/balanceMoves.ts.
 */
export class Reservation implements ReservationRow {
  readonly id: string;
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
  private state = State.none;
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
    const ids = idSource(app);
    this.id = ids.prefix + (++ids.n).toString(36);
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
    return (this.opening ??= preConsume(this.app, this.payer, this.amount, this).then((after) => {
      if (this.amount > 0) this.state = State.open;
      return after;
    }));
  }

  /** Gives the reserved amount back (only if it was taken and not settled). */
  refund(): Promise<BalanceAfter> {
    if (this.refunding) return this.refunding;
    if (this.state !== State.open) return Promise.resolve({});
    return (this.refunding = refund(this.app, this.payer, this.amount, this).then((after) => {
      this.state = State.closed;
      return after;
    }));
  }

  /** Moves the reservation to the real cost `actual` (as far as the balances reach: `taken`). */
  settle(actual: number, channelId: number, promptTokens: number, completionTokens: number): Promise<BalanceAfter & { taken: number }> {
    if (this.settling) return this.settling;
    this.channelId = channelId;
    this.promptTokens = promptTokens;
    this.completionTokens = completionTokens;
    const op = this.state === State.open ? OP.settle : actual > 0 ? OP.settleNew : OP.none;
    const reserved = this.state === State.open ? this.amount : 0;
    return (this.settling = settle(this.app, this.payer, reserved, actual, this, op).then((s) => {
      if (op !== OP.none) this.state = State.settled;
      return s;
    }));
  }

  /**
   * The id of the settled row for the usage batch, which deletes it with the log row; undefined
   * when there is no row. Once only.
   */
  handOver(): string | undefined {
    if (this.state !== State.settled) return undefined;
    this.state = State.closed;
    return this.id;
  }
}
