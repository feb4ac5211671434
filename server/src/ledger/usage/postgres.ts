import type { AppContext } from '../../context';
import { byId, withPgConn } from '../postgres/conn';
import { reservationsUpkeep } from '../postgres/upkeep';
import { LOG_COLUMNS, pushLogParams, type UsageWriter } from './rows';
import { aggregateRollups, SQL_ROLLUP_DIMS, type RollupDim } from '../../repositories/logRollups';

/**
 * PostgreSQL: the whole batch as one prepared statement per table, the rows passed as one array
 * per column (`unnest`), instead of knex building a 200-row INSERT with 3 600 bindings that the
 * server parses again each time. The batch adds its rows to the rollups itself, aggregated here
 * (repositories/logRollups.ts, as on SQLite), in one upsert; the transaction-local setting
 * `gateway.rollups = 'batch'` tells the insert trigger to leave them (migrations/009).
 */
const PG_LOG_TYPE: Record<(typeof LOG_COLUMNS)[number], string> = {
  user_id: 'int',
  created_at: 'bigint',
  type: 'int',
  content: 'text',
  username: 'text',
  token_name: 'text',
  token_id: 'int',
  model_name: 'text',
  quota: 'bigint',
  prompt_tokens: 'int',
  completion_tokens: 'int',
  use_time: 'int',
  is_stream: 'boolean',
  channel_id: 'int',
  channel_name: 'text',
  group: 'text',
  ip: 'text',
  other: 'text',
};
const PG_LOG = {
  name: 'gw_usage_logs',
  text: `insert into "logs" (${LOG_COLUMNS.map((c) => `"${c}"`).join(', ')}) select ${LOG_COLUMNS.map((_, i) => `c${i}`).join(', ')} from unnest(${LOG_COLUMNS.map((c, i) => `$${i + 1}::${PG_LOG_TYPE[c]}[]`).join(', ')}) with ordinality as r(${LOG_COLUMNS.map((_, i) => `c${i}`).join(', ')}, ord) order by ord`,
};
const PG_COUNTERS = {
  users: {
    name: 'gw_usage_users',
    text: 'update "users" as u set "used_quota" = u."used_quota" + m.q, "request_count" = u."request_count" + m.n from unnest($1::int[], $2::bigint[], $3::int[]) as m(id, q, n) where u."id" = m.id',
  },
  tokens: {
    name: 'gw_usage_tokens',
    text: 'update "tokens" as t set "used_quota" = t."used_quota" + m.q, "request_count" = t."request_count" + m.n, "accessed_time" = $4 from unnest($1::int[], $2::bigint[], $3::int[]) as m(id, q, n) where t."id" = m.id',
  },
  channels: {
    name: 'gw_usage_channels',
    text: 'update "channels" as c set "used_quota" = c."used_quota" + m.q, "request_count" = c."request_count" + m.n from unnest($1::int[], $2::bigint[], $3::int[]) as m(id, q, n) where c."id" = m.id',
  },
} as const;
const PG_SKIP_TRIGGER = { name: 'gw_usage_rollups_flag', text: "select set_config('gateway.rollups', 'batch', true)" };
const PG_ROLLUPS = {
  name: 'gw_usage_rollups',
  text:
    'insert into "log_rollups" as r ("dim", "user_id", "username", "token_name", "model_name", "channel_id", "group", "bucket", "type", "n", "quota", "tokens") ' +
    // In key order, as the trigger upserts: concurrent writers lock shared keys in the same order (no deadlock).
    'select * from unnest($1::int[], $2::int[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::bigint[], $9::int[], $10::bigint[], $11::bigint[], $12::bigint[]) ' +
    'order by 1, 2, 3, 4, 5, 6, 7, 8, 9 ' +
    'on conflict ("dim", "user_id", "username", "token_name", "model_name", "channel_id", "group", "bucket", "type") do update set ' +
    '"n" = r."n" + excluded."n", "quota" = r."quota" + excluded."quota", "tokens" = r."tokens" + excluded."tokens"',
};
const PG_RES_DEL = { name: 'gw_usage_reservations', text: 'delete from "reservations" where "id" = any($1::bigint[])' };

/** PostgreSQL: a usage batch in one transaction on a pooled connection (ledger/postgres/conn.ts). */
export function postgresUsage(app: AppContext): UsageWriter {
  /** Rollup dimensions (log_rollup_dims), read on the first flush with rows. */
  let dims: RollupDim[] | undefined;
  const upkeep = reservationsUpkeep(app);
  return {
    write: async (batch) => {
      await withPgConn(app, true, async (conn) => {
        const { logs, now, resIds } = batch;
        if (logs.length) {
          dims ??= (await conn.query({ text: SQL_ROLLUP_DIMS })).rows.map((d) => ({ dim: Number(d.dim), secs: Number(d.secs) }));
          await conn.query(PG_SKIP_TRIGGER);
          const columns: unknown[][] = LOG_COLUMNS.map(() => new Array<unknown>(logs.length));
          // One row's values at a time in a reused array, scattered into the columns.
          const row: unknown[] = [];
          for (let r = 0; r < logs.length; r++) {
            row.length = 0;
            pushLogParams(row, logs[r]!, !!logs[r]!.is_stream);
            for (let c = 0; c < row.length; c++) columns[c]![r] = row[c];
          }
          await conn.query({ ...PG_LOG, values: columns });
          const sums = aggregateRollups(logs, dims);
          await conn.query({ ...PG_ROLLUPS, values: sums[0]!.map((_, c) => sums.map((row) => row[c])) });
        }
        if (resIds.length) await conn.query({ ...PG_RES_DEL, values: [resIds] });
        // The balance moves lock users, then limited tokens (ledger/balances/postgres.ts): the
        // counters take those row locks last, in the same order, so a settle waits at most for
        // these two statements and the COMMIT, never for the log insert or the deletes above.
        for (const table of ['channels', 'users', 'tokens'] as const) {
          const m = batch[table];
          if (!m.size) continue;
          const rows = byId(m);
          const values: unknown[] = [rows.map(([id]) => id), rows.map(([, c]) => c.quota), rows.map(([, c]) => c.count)];
          if (table === 'tokens') values.push(now);
          await conn.query({ ...PG_COUNTERS[table], values });
        }
      });
      if (batch.resIds.length) upkeep.deleted(batch.resIds.length);
    },
  };
}
