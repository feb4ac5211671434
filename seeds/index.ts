import type { Knex } from 'knex';
import { DEFAULT_OPTIONS } from './defaultOptions';

/** Writes every default option that is not stored yet; never overwrites an operator's value. */
export async function seedOptions(knex: Knex): Promise<number> {
  const existing = new Set((await knex('options').select('key')).map((r: { key: string }) => r.key));
  const missing = Object.entries(DEFAULT_OPTIONS)
    .filter(([key]) => !existing.has(key))
    .map(([key, value]) => ({ key, value }));
  if (missing.length) await knex('options').insert(missing).onConflict('key').ignore();
  return missing.length;
}
