import type { Knex } from 'knex';
import { migrationSource } from '../../../migrations';
import { seedOptions } from '../../../seeds';

/** Brings the schema up to date and writes missing default options. Safe to run on every start. */
export async function migrate(knex: Knex): Promise<void> {
  await knex.migrate.latest({ migrationSource });
  await seedOptions(knex);
}
