import type { Run } from './sqlite/statements';
import type { PgConn } from './postgres/conn';

/**
 * The reservation rows' writes (docs/billing.md, "Quota on a crash"). They never run on their own:
 * each rides on the balance move it belongs to — in the same SQLite group-commit unit
 * (balances/sqlite.ts) or the same PostgreSQL statement or transaction (balances/postgres.ts) —
 * so a balance never moves without its reservation row changing with it.
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

// SQLite statements; fixed values are written into them (fewer parameters to bind per call).
export const SQL_RES = {
  open: 'insert into "reservations" ("id", "node_id", "state", "user_id", "token_id", "limited", "model_name", "group", "reserved", "is_stream", "created_at") values (?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)',
  settleNew:
    'insert into "reservations" ("id", "node_id", "state", "user_id", "token_id", "limited", "model_name", "group", "reserved", "is_stream", "created_at", "taken", "channel_id", "prompt_tokens", "completion_tokens") values (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  settle: 'update "reservations" set "state" = 1, "taken" = ?, "channel_id" = ?, "prompt_tokens" = ?, "completion_tokens" = ? where "id" = ?',
  close: 'delete from "reservations" where "id" = ?',
  /** SQLite: the rows of a JSON array of ids (the usage batch). */
  closeMany: 'delete from "reservations" where "id" in (select "value" from json_each(?))',
} as const;

/** SQLite: parameters of SQL_RES.open (booleans as 1/0: better-sqlite3 binds no booleans). */
const openParams = (r: ReservationRow): unknown[] => [
  r.id,
  r.nodeId,
  r.userId,
  r.tokenId,
  r.limited ? 1 : 0,
  r.model,
  r.group,
  r.amount,
  r.stream ? 1 : 0,
  r.createdAt,
];
const settleNewParams = (r: ReservationRow): unknown[] => [...openParams(r), r.taken, r.channelId, r.promptTokens, r.completionTokens];

/** SQLite: the row's write inside the group-commit unit of its move. */
export function recordSqlite(run: Run, r: ReservationRow, op: number): void {
  if (op === OP.open) {
    run(SQL_RES.open, openParams(r));
    r.row = ROW.open;
  } else if (op === OP.settle) {
    run(SQL_RES.settle, [r.taken, r.channelId, r.promptTokens, r.completionTokens, r.id]);
    r.row = ROW.settled;
  } else if (op === OP.settleNew) {
    run(SQL_RES.settleNew, settleNewParams(r));
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
const openManySql = (k: number) => (openSql[k] ??= OPEN_HEAD + new Array<string>(k).fill(OPEN_TUPLE).join(', '));
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

/**
 * PostgreSQL: every reservation write of one batch in ONE statement — three data-modifying CTEs
 * over `unnest` arrays (inserts, settles, deletes; empty arrays do nothing), each row written only
 * if its user is in `applied`. One batch never holds two writes of the same reservation: a call
 * asks for its next move only after its last one was answered.
 *
 * `applied` is either the batch's users UPDATE itself (`… returning id`: a users-only batch is then
 * one statement, moves and rows together, as it was one statement before the rows existed), or,
 * after the token statements, the users of the moves found applied (pgRecordsAfter).
 */
const INS_TYPES = ['bigint', 'text', 'int', 'int', 'int', 'boolean', 'int', 'text', 'text', 'bigint', 'bigint', 'int', 'int', 'boolean', 'bigint'];
/** Parameters the CTEs take, from `$first` on: 15 insert columns, 7 settle columns, 2 delete columns. */
const RECORD_PARAMS = 24;
function recordCtes(first: number): string {
  let n = first;
  const ins = INS_TYPES.map((t) => `$${n++}::${t}[]`).join(', ');
  const upd = ['bigint', 'bigint', 'int', 'int', 'int', 'int', 'boolean'].map((t) => `$${n++}::${t}[]`).join(', ');
  const del = ['bigint', 'int'].map((t) => `$${n++}::${t}[]`).join(', ');
  return (
    'ins as (insert into "reservations" ("id", "node_id", "state", "user_id", "token_id", "limited", "channel_id", "model_name", "group", "reserved", "taken", "prompt_tokens", "completion_tokens", "is_stream", "created_at") ' +
    `select * from unnest(${ins}) as r(c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15) where r.c4 in (select id from applied)), ` +
    'upd as (update "reservations" as r set "state" = 1, "taken" = s.taken, "channel_id" = s.ch, "prompt_tokens" = s.p, "completion_tokens" = s.c ' +
    `from unnest(${upd}) as s(id, taken, ch, p, c, uid, always) where r."id" = s.id and (s.always or s.uid in (select id from applied))), ` +
    `del as (delete from "reservations" where "id" in (select d.id from unnest(${del}) as d(id, uid) where d.uid in (select id from applied)))`
  );
}

/** After the token statements: the rows of the moves found applied (their users listed as `applied`). */
const PG_RECORDS_AFTER = { name: 'gw_reservations', text: `with applied as (select unnest($1::int[]) as id), ${recordCtes(2)} select 1` };

/** A users-only batch: the users UPDATE (as balances/postgres.ts' SQL.users) and the rows in one statement. */
export const PG_USERS_WITH_RECORDS = {
  name: 'gw_moves_users_res',
  text:
    'with applied as (update "users" as u set "quota" = u."quota" - (m.takes - m.adds) from unnest($1::int[], $2::bigint[], $3::bigint[]) as m(id, adds, takes) ' +
    'where u."id" = m.id and (m.takes = 0 or u."quota" + m.adds >= m.takes) returning u."id" as id, u."quota" as v), ' +
    `${recordCtes(4)} select id, v from applied`,
};

/**
 * The CTEs' parameters for `rows` (`always[i]`: written whatever its user's row did — a move of
 * amount 0, which changes no balance). Sets each row's state: the caller's statement commits it.
 */
export function pgRecordValues(rows: ReservationRow[], ops: number[], always: boolean[]): unknown[][] {
  const v: unknown[][] = Array.from({ length: RECORD_PARAMS }, () => []);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const op = ops[i]!;
    if (op === OP.open || op === OP.settleNew) {
      const settled = op === OP.settleNew;
      const p = [
        r.id,
        r.nodeId,
        settled ? 1 : 0,
        r.userId,
        r.tokenId,
        r.limited,
        settled ? r.channelId : 0,
        r.model,
        r.group,
        r.amount,
        settled ? r.taken : 0,
        settled ? r.promptTokens : 0,
        settled ? r.completionTokens : 0,
        r.stream,
        r.createdAt,
      ];
      for (let c = 0; c < 15; c++) v[c]!.push(p[c]);
    } else if (op === OP.settle) {
      const p = [r.id, r.taken, r.channelId, r.promptTokens, r.completionTokens, r.userId, always[i]];
      for (let c = 0; c < 7; c++) v[15 + c]!.push(p[c]);
    } else if (op === OP.close) {
      v[22]!.push(r.id);
      v[23]!.push(r.userId);
    }
  }
  return v;
}

/** Marks the rows as the committed statement left them (only those it wrote: `written[i]`). */
export function pgRecordsWritten(rows: ReservationRow[], ops: number[], written: (i: number) => boolean): void {
  for (let i = 0; i < rows.length; i++) {
    if (!written(i)) continue;
    const op = ops[i]!;
    rows[i]!.row = op === OP.open ? ROW.open : op === OP.close ? ROW.closed : ROW.settled;
  }
}

/** The rows of moves already known applied (after the token statements of a batch; a one-move transaction). */
export async function recordPg(conn: PgConn, rows: ReservationRow[], ops: number[]): Promise<void> {
  const always = rows.map(() => true);
  await conn.query({ ...PG_RECORDS_AFTER, values: [rows.map((r) => r.userId), ...pgRecordValues(rows, ops, always)] });
  pgRecordsWritten(rows, ops, () => true);
}
