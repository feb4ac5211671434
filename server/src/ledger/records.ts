import type { Knex } from 'knex';
import type { Run } from '../relay/sqliteFast';
import type { PgConn } from '../relay/pgFast';

/**
 * The reservation rows' writes (docs/billing.md, "Quota on a crash"). They never run on their own:
 * each rides on the balance move it belongs to — in the same SQLite group-commit unit
 * (relay/balanceMoves.ts), the same PostgreSQL batch transaction (relay/pgBalanceMoves.ts) or the
 * same knex transaction (the one-move paths of services/billing.ts) — so a balance never moves
 * without its reservation row changing with it.
 */

/** What a move does to its reservation row. */
export const OP = {
  none: 0,
  /** The reservation was taken: insert the row, open. */
  open: 1,
  /** The call was billed: mark the row settled with what was taken (the log row is still to come). */
  settle: 2,
  /** Billed without an open row (nothing was reserved, extra cost taken): insert it settled. */
  settleNew: 3,
  /** The reservation was given back: delete the row. */
  close: 4,
} as const;

/** Where a reservation's row stands (set by the writers below, inside the commit that writes it). */
export const ROW = { none: 0, open: 1, settled: 2, closed: 3 } as const;

/** The fields of a reservation row (ledger/reservation.ts fills them). */
export interface ReservationRow {
  /** The request id: run id × 2³² + counter. */
  readonly id: number;
  readonly nodeId: string;
  readonly userId: number;
  /** The call's token id (0: playground). */
  readonly tokenId: number;
  /** Whether the token's remain_quota moves with the user's quota. */
  readonly limited: boolean;
  readonly model: string;
  readonly group: string;
  readonly amount: number;
  readonly stream: boolean;
  readonly createdAt: number;
  channelId: number;
  taken: number;
  promptTokens: number;
  completionTokens: number;
  /** ROW: what the last committed write left. */
  row: number;
}

// Fixed values are written into the statements (fewer parameters to bind per call).
export const SQL_RES = {
  open: 'insert into "reservations" ("id", "node_id", "state", "user_id", "token_id", "limited", "model_name", "group", "reserved", "is_stream", "created_at") values (?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)',
  settleNew:
    'insert into "reservations" ("id", "node_id", "state", "user_id", "token_id", "limited", "model_name", "group", "reserved", "is_stream", "created_at", "taken", "channel_id", "prompt_tokens", "completion_tokens") values (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  settle: 'update "reservations" set "state" = 1, "taken" = ?, "channel_id" = ?, "prompt_tokens" = ?, "completion_tokens" = ? where "id" = ?',
  close: 'delete from "reservations" where "id" = ?',
  /** SQLite: the rows of a JSON array of ids (the usage batch). */
  closeMany: 'delete from "reservations" where "id" in (select "value" from json_each(?))',
} as const;

/** Parameters of SQL_RES.open (booleans as 1/0: better-sqlite3 binds no booleans). */
const openParams = (r: ReservationRow, pg: boolean): unknown[] => [r.id, r.nodeId, r.userId, r.tokenId, pg ? r.limited : r.limited ? 1 : 0, r.model, r.group, r.amount, pg ? r.stream : r.stream ? 1 : 0, r.createdAt];
const settleNewParams = (r: ReservationRow, pg: boolean): unknown[] => [...openParams(r, pg), r.taken, r.channelId, r.promptTokens, r.completionTokens];

/** SQLite: the row's write inside the group-commit unit of its move. */
export function recordSqlite(run: Run, r: ReservationRow, op: number): void {
  if (op === OP.open) {
    run(SQL_RES.open, openParams(r, false));
    r.row = ROW.open;
  } else if (op === OP.settle) {
    run(SQL_RES.settle, [r.taken, r.channelId, r.promptTokens, r.completionTokens, r.id]);
    r.row = ROW.settled;
  } else if (op === OP.settleNew) {
    run(SQL_RES.settleNew, settleNewParams(r, false));
    r.row = ROW.settled;
  } else if (op === OP.close) {
    run(SQL_RES.close, [r.id]);
    r.row = ROW.closed;
  }
}

/**
 * SQLite, the rows a group commit opens or settles: one multi-row statement each (a statement's
 * own cost — the call into the addon, its result object — is paid once per group, not per call).
 */
const MAX_ROWS = 50;
const OPEN_HEAD = SQL_RES.open.slice(0, SQL_RES.open.indexOf(' values ') + 8);
const OPEN_TUPLE = SQL_RES.open.slice(SQL_RES.open.indexOf(' values ') + 8);
const openSql: string[] = [];
const settleSql: string[] = [];
const openManySql = (k: number) =>
  (openSql[k] ??= OPEN_HEAD + new Array<string>(k).fill(OPEN_TUPLE).join(', '));
const settleManySql = (k: number) =>
  (settleSql[k] ??=
    'update "reservations" set "state" = 1, "taken" = v.column2, "channel_id" = v.column3, "prompt_tokens" = v.column4, "completion_tokens" = v.column5 from (values ' +
    new Array<string>(k).fill('(?, ?, ?, ?, ?)').join(', ') +
    ') as v where "reservations"."id" = v.column1');

export function recordManySqlite(run: Run, rows: ReservationRow[], op: number): void {
  if (rows.length === 1) return recordSqlite(run, rows[0]!, op);
  for (let from = 0; from < rows.length; from += MAX_ROWS) {
    const to = Math.min(rows.length, from + MAX_ROWS);
    const params: unknown[] = [];
    for (let i = from; i < to; i++) {
      const r = rows[i]!;
      if (op === OP.open) params.push(r.id, r.nodeId, r.userId, r.tokenId, r.limited ? 1 : 0, r.model, r.group, r.amount, r.stream ? 1 : 0, r.createdAt);
      else params.push(r.id, r.taken, r.channelId, r.promptTokens, r.completionTokens);
    }
    run(op === OP.open ? openManySql(to - from) : settleManySql(to - from), params);
    for (let i = from; i < to; i++) rows[i]!.row = op === OP.open ? ROW.open : ROW.settled;
  }
}

/** Any dialect, through knex (the one-move paths; inside their transaction). */
export async function recordKnex(trx: Knex | Knex.Transaction, pg: boolean, r: ReservationRow, op: number): Promise<void> {
  if (op === OP.open) await trx.raw(SQL_RES.open, openParams(r, pg) as Knex.RawBinding[]);
  else if (op === OP.settle) await trx.raw(SQL_RES.settle, [r.taken, r.channelId, r.promptTokens, r.completionTokens, r.id]);
  else if (op === OP.settleNew) await trx.raw(SQL_RES.settleNew, settleNewParams(r, pg) as Knex.RawBinding[]);
  else if (op === OP.close) await trx.raw(SQL_RES.close, [r.id]);
  else return;
  r.row = op === OP.open ? ROW.open : op === OP.close ? ROW.closed : ROW.settled;
}

/**
 * PostgreSQL: every reservation write of one batch as ONE statement (three data-modifying CTEs
 * over `unnest` arrays: inserts, settles, deletes; empty arrays do nothing). One batch never holds
 * two writes of the same reservation: a call asks for its next move only after the last one
 * was answered.
 */
const PG_RECORDS = {
  name: 'gw_reservations',
  text:
    'with ins as (insert into "reservations" ("id", "node_id", "state", "user_id", "token_id", "limited", "channel_id", "model_name", "group", "reserved", "taken", "prompt_tokens", "completion_tokens", "is_stream", "created_at") select * from unnest($1::bigint[], $2::text[], $3::int[], $4::int[], $5::int[], $6::boolean[], $7::int[], $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::int[], $13::int[], $14::boolean[], $15::bigint[])), ' +
    'upd as (update "reservations" as r set "state" = 1, "taken" = s.taken, "channel_id" = s.ch, "prompt_tokens" = s.p, "completion_tokens" = s.c ' +
    'from unnest($16::bigint[], $17::bigint[], $18::int[], $19::int[], $20::int[]) as s(id, taken, ch, p, c) where r."id" = s.id), ' +
    'del as (delete from "reservations" where "id" = any($21::bigint[])) select 1',
};

export async function recordPg(conn: PgConn, rows: ReservationRow[], ops: number[]): Promise<void> {
  const ins: unknown[][] = Array.from({ length: 15 }, () => []);
  const upd: unknown[][] = [[], [], [], [], []];
  const del: number[] = [];
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const op = ops[i]!;
    if (op === OP.open || op === OP.settleNew) {
      const settled = op === OP.settleNew;
      const p = [r.id, r.nodeId, settled ? 1 : 0, r.userId, r.tokenId, r.limited, settled ? r.channelId : 0, r.model, r.group, r.amount, settled ? r.taken : 0, settled ? r.promptTokens : 0, settled ? r.completionTokens : 0, r.stream, r.createdAt];
      for (let c = 0; c < 15; c++) ins[c]!.push(p[c]);
    } else if (op === OP.settle) {
      upd[0]!.push(r.id);
      upd[1]!.push(r.taken);
      upd[2]!.push(r.channelId);
      upd[3]!.push(r.promptTokens);
      upd[4]!.push(r.completionTokens);
    } else if (op === OP.close) del.push(r.id);
  }
  await conn.query({ ...PG_RECORDS, values: [...ins, ...upd, del] });
  for (let i = 0; i < rows.length; i++) {
    const op = ops[i]!;
    rows[i]!.row = op === OP.open ? ROW.open : op === OP.close ? ROW.closed : ROW.settled;
  }
}
