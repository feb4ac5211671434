import type { Knex } from 'knex';
import { rollupUpsertSql } from './002_log_rollups';

/**
 * PostgreSQL: the usage batcher adds its own log rows to the rollups (aggregated in the gateway,
 * one upsert for the batch), as it does on SQLite, and tells the insert trigger so with the
 * transaction-local setting `gateway.rollups = 'batch'`. The trigger's join of every inserted row
 * with every dimension cost ≈ 110 µs of PostgreSQL CPU per log row at c=50, the largest cost of
 * a relayed call there. Every other writer (plain SQL included) still gets the trigger, so the
 * rollups stay exact whoever inserts.
 */
const isPg = (knex: Knex) => /^(pg|postgres)/.test(String(knex.client.config.client));

async function insertTrigger(knex: Knex, skippable: boolean): Promise<void> {
  const schema = String((await knex.raw('SELECT current_schema() AS s')).rows[0].s);
  const S = `"${schema.replace(/"/g, '""')}"`;
  const skip = skippable ? `IF current_setting('gateway.rollups', true) = 'batch' THEN RETURN NULL; END IF; ` : '';
  await knex.raw(
    `CREATE OR REPLACE FUNCTION ${S}.logs_rollup_ins() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN ${skip}` +
      `${rollupUpsertSql('(SELECT nr.*, 1 AS s FROM new_rows nr)', `${S}.log_rollups`, `${S}.log_rollup_dims`)}; RETURN NULL; END $fn$`,
  );
}

export async function up(knex: Knex): Promise<void> {
  if (isPg(knex)) await insertTrigger(knex, true);
}

export async function down(knex: Knex): Promise<void> {
  if (isPg(knex)) await insertTrigger(knex, false);
}
