import type { AppContext } from '../../context';
import { groupTx, requestCheckpoint } from '../sqlite/statements';
import { aggregateRollups, SQL_ROLLUP_ADD, SQL_ROLLUP_DIMS, type RollupDim } from '../../repositories/logRollups';
import { SQL_RES } from '../records';
import { LOG_COLUMNS, pushLogParams, type UsageWriter } from './rows';

/**
 * Log rows per INSERT: a statement per row cost ≈ 40 % more per row in instructions (the binding's
 * call, SQLite's step and reset, the autoincrement's sequence update and the answer object, each
 * per row). A batch goes in statements of 50 rows (900 parameters, far below SQLite's 32 766), the
 * rest by 10 and by 1: three prepared statements in all, where one per row count up to 50 held
 * ≈ 2.5 MB more (each a program for its k × 18 parameters).
 */
const LOG_INSERT_SIZES = [50, 10, 1] as const;
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
          let from = 0;
          for (const k of LOG_INSERT_SIZES) {
            for (; logs.length - from >= k; from += k) {
              const params: unknown[] = [];
              for (let i = from; i < from + k; i++) pushLogParams(params, logs[i]!, logs[i]!.is_stream ? 1 : 0);
              run(sqlLogRows(k), params);
            }
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
