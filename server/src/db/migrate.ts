import type { Knex } from 'knex';
import { migrationSource } from '../../../migrations';
import { seedOptions } from '../../../seeds';

/**
 * Brings the schema up to date and writes missing default options. Safe to run on every start,
 * and on several nodes starting at once: on PostgreSQL the whole of it runs under an advisory
 * lock of the database (one per schema), so the second node waits for the first and then finds
 * nothing to do. knex's own migration lock does not cover that case: on an empty database both
 * nodes create its tables and rows at once, and one fails (or both leave a lock row behind).
 */
export async function migrate(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'pg') return migrateNow(knex);
  const client = knex.client as { acquireConnection(): Promise<LockConn>; releaseConnection(c: LockConn): Promise<unknown> };
  const conn = await client.acquireConnection();
  // Per schema: the test suites and several gateways may share one database.
  const key = `ai-gateway:migrate:${(knex.client.config as { searchPath?: string[] }).searchPath?.[0] ?? 'public'}`;
  try {
    // The wait is as long as the other node's migrations take: no lock or statement timeout.
    await conn.query('set lock_timeout = 0; set statement_timeout = 0');
    await conn.query('select pg_advisory_lock(hashtext($1))', [key]);
    try {
      await migrateNow(knex);
    } finally {
      await conn.query('select pg_advisory_unlock(hashtext($1))', [key]);
    }
  } finally {
    await conn.query('reset lock_timeout; reset statement_timeout').catch(() => undefined);
    await client.releaseConnection(conn);
  }
}

interface LockConn {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

async function migrateNow(knex: Knex): Promise<void> {
  await knex.migrate.latest({ migrationSource });
  await seedOptions(knex);
}
