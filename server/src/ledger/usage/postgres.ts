import type { AppContext } from '../../context';
import { withPgConn } from '../postgres/conn';
import { LOG_COLUMNS, logParams, type UsageWriter } from './rows';

/**
 * PostgreSQL: the whole batch as one prepared statement per table, the rows passed as one array
 * per column (`unnest`), instead of knex building a 200-row INSERT with 3 600 bindings that the
 * server parses again each time. The statement-level rollup trigger sees one INSERT per batch.
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
const PG_RES_DEL = { name: 'gw_usage_reservations', text: 'delete from "reservations" where "id" = any($1::bigint[])' };

/** PostgreSQL: a usage batch in one transaction on a pooled connection (ledger/postgres/conn.ts). */
export function postgresUsage(app: AppContext): UsageWriter {
  return {
    write: (batch) =>
      withPgConn(app, true, async (conn) => {
        const { logs, now, resIds } = batch;
        if (logs.length) {
          const columns: unknown[][] = LOG_COLUMNS.map(() => new Array<unknown>(logs.length));
          for (let r = 0; r < logs.length; r++) {
            const params = logParams(logs[r]!, !!logs[r]!.is_stream);
            for (let c = 0; c < params.length; c++) columns[c]![r] = params[c];
          }
          await conn.query({ ...PG_LOG, values: columns });
        }
        for (const table of ['users', 'tokens', 'channels'] as const) {
          const m = batch[table];
          if (!m.size) continue;
          const values: unknown[] = [[...m.keys()], [...m.values()].map((c) => c.quota), [...m.values()].map((c) => c.count)];
          if (table === 'tokens') values.push(now);
          await conn.query({ ...PG_COUNTERS[table], values });
        }
        if (resIds.length) await conn.query({ ...PG_RES_DEL, values: [resIds] });
      }),
  };
}
