import type { Knex } from 'knex';

/** Writes options (insert or overwrite); callers reload them on every node afterwards. */
export async function upsertOptions(knex: Knex | Knex.Transaction, entries: Record<string, string>): Promise<void> {
  for (const [key, value] of Object.entries(entries)) {
    await knex('options').insert({ key, value }).onConflict('key').merge();
  }
}
