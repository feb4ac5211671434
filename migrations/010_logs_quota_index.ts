import type { Knex } from 'knex';

/**
 * PostgreSQL: the consumption index (type, created_at, id) also carries `quota`, so the usage
 * figure's raw edge pieces (repositories/logs.ts: the partial hours at either end of a range that
 * the rollups do not cover) sum from the index alone. Without it every row of an edge is a heap
 * page read: half an hour of a busy gateway's logs a day ago measured 17 k rows, 16 k pages and
 * ≈ 0.2–2 s (bench:logs, admin stat over the last 24 h). The index has the same key, so it serves
 * the same lists; a log insert still writes the same number of b-trees.
 * SQLite keeps its index: its rows are read from the table b-tree in rowid order.
 */
const isPg = (knex: Knex) => /^(pg|postgres)/.test(String(knex.client.config.client));

async function rebuild(knex: Knex, include: boolean): Promise<void> {
  await knex.raw(`CREATE INDEX idx_logs_type_created_new ON logs (type, created_at, id)${include ? ' INCLUDE (quota)' : ''}`);
  await knex.raw('DROP INDEX idx_logs_type_created');
  await knex.raw('ALTER INDEX idx_logs_type_created_new RENAME TO idx_logs_type_created');
}

export async function up(knex: Knex): Promise<void> {
  if (isPg(knex)) await rebuild(knex, true);
}

export async function down(knex: Knex): Promise<void> {
  if (isPg(knex)) await rebuild(knex, false);
}
