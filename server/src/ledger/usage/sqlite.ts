import type { AppContext } from '../../context';
import { groupTx, requestCheckpoint } from '../sqlite/statements';
import { aggregateRollups, SQL_ROLLUP_ADD, SQL_ROLLUP_DIMS, type RollupDim } from '../../repositories/logRollups';
import { SQL_RES } from '../records';
import { LOG_COLUMNS, logParams, type UsageWriter } from './rows';

const SQL_LOG = `insert into "logs" (${LOG_COLUMNS.map((c) => `"${c}"`).join(', ')}) values (${LOG_COLUMNS.map(() => '?').join(', ')})`;
const SQL_USER = 'update "users" set "used_quota" = "used_quota" + ?, "request_count" = "request_count" + ? where "id" = ?';
const SQL_TOKEN = 'update "tokens" set "used_quota" = "used_quota" + ?, "request_count" = "request_count" + ?, "accessed_time" = ? where "id" = ?';
const SQL_CHANNEL = 'update "channels" set "used_quota" = "used_quota" + ?, "request_count" = "request_count" + ? where "id" = ?';

/**
 * SQLite: a usage batch is one unit of the group commit (sqlite/statements.ts), cached
 * statements, synchronous. SQLite has no insert trigger for the rollups (repositories/logRollups.ts):
 * the batch adds itself, one upsert per key. The flush asks for the WAL checkpoint to follow its
 * commit (requestCheckpoint).
 */
export function sqliteUsage(app: AppContext): UsageWriter {
  /** Rollup dimensions (log_rollup_dims), read on the first flush with rows. */
  let dims: RollupDim[] | undefined;
  return {
    async write({ logs, users, tokens, channels, now, resIds }) {
      requestCheckpoint(app);
      await groupTx(app, (run) => {
        if (logs.length) {
          dims ??= run(SQL_ROLLUP_DIMS, []).map((d) => ({ dim: Number(d.dim), secs: Number(d.secs) }));
          for (const l of logs) run(SQL_LOG, logParams(l, l.is_stream ? 1 : 0));
          for (const params of aggregateRollups(logs, dims)) run(SQL_ROLLUP_ADD, params);
        }
        for (const [id, c] of users) run(SQL_USER, [c.quota, c.count, id]);
        for (const [id, c] of tokens) run(SQL_TOKEN, [c.quota, c.count, now, id]);
        for (const [id, c] of channels) run(SQL_CHANNEL, [c.quota, c.count, id]);
        // One statement for the batch's rows (half the cost of one delete per row).
        if (resIds.length) run(SQL_RES.closeMany, [JSON.stringify(resIds)]);
      });
    },
  };
}
