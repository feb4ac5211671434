import type { Knex } from 'knex';
import { withoutTimeouts } from '../server/src/db/knex';
import * as m001 from './001_initial';
import * as m002 from './002_log_rollups';
import * as m003 from './003_user_sessions';
import * as m004 from './004_reservations';
import * as m005 from './005_two_factor';
import * as m006 from './006_channel_info';
import * as m007 from './007_task_polling';
import * as m009 from './009_pg_batch_rollups';
import * as m010 from './010_logs_quota_index';

/** Ordered list of migrations; a custom source so they run the same from tsx, jest and tsc builds. */
const migrations: Record<string, Knex.Migration> = {
  '001_initial': m001,
  '002_log_rollups': m002,
  '003_user_sessions': m003,
  '004_reservations': m004,
  '005_two_factor': m005,
  '006_channel_info': m006,
  '007_task_polling': m007,
  '009_pg_batch_rollups': m009,
  '010_logs_quota_index': m010,
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => unbounded(migrations[name]!),
};

/**
 * A migration without the pool's statement and lock timeouts (DATABASE_STATEMENT_TIMEOUT_MS,
 * DATABASE_LOCK_TIMEOUT_MS): building an index over millions of log rows takes longer than a
 * call may, and waits for the locks it needs. `SET LOCAL` lasts for the migration's transaction.
 */
function unbounded(m: Knex.Migration): Knex.Migration {
  return {
    ...m,
    up: async (knex) => {
      await withoutTimeouts(knex);
      return m.up(knex);
    },
  };
}
