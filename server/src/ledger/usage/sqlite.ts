import type { AppContext } from '../../context';
import { groupTx, requestCheckpoint } from '../sqlite/statements';
import { aggregateRollups, SQL_ROLLUP_ADD, SQL_ROLLUP_DIMS, type RollupDim } from '../../repositories/logRollups';
import { SQL_RES } from '../records';
import { LOG_COLUMNS, pushLogParams, type UsageWriter } from './rows';

/**
 * Log rows per INSERT: a statement per row cost ≈ 40 % more per row in instructions (the binding's
 * call, SQLite's step and reset, the autoincrement's sequence update and the answer object, each
 * per row). 50 rows bind 900 parameters, far below SQLite's limit (32 766).
 */
const LOG_ROWS_PER_INSERT = 50;
const SQL_LOG_HEAD = `insert into "logs" (${LOG_COLUMNS.map((c) => `"${c}"`).join(', ')}) values `;
const SQL_LOG_TUPLE = `(${LOG_COLUMNS.map(() => '?').join(', ')})`;
const sqlLogs: string[] = [];
/** The INSERT of `k` rows (one string per k, so the runner's statement cache finds it again). */
const sqlLogRows = (k: number): string => (sqlLogs[k] ??= SQL_LOG_HEAD + new Array<string>(k).fill(SQL_LOG_TUPLE).join(', '));
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
          // In order: the rows' ids follow the batch's order, as one insert per row gave them.
          for (let from = 0; from < logs.length; from += LOG_ROWS_PER_INSERT) {
            const to = Math.min(logs.length, from + LOG_ROWS_PER_INSERT);
            const params: unknown[] = [];
            for (let i = from; i < to; i++) pushLogParams(params, logs[i]!, logs[i]!.is_stream ? 1 : 0);
            run(sqlLogRows(to - from), params);
          }
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
