import type { Knex } from 'knex';
import { nowSec } from '../lib/time';
import { ROLE } from './users';

export async function setupRecorded(knex: Knex): Promise<boolean> {
  return Boolean(await knex('setups').first('id'));
}

/** The fixed id makes a concurrent second setup fail on the primary key. */
export async function recordSetup(trx: Knex.Transaction, version: string): Promise<void> {
  await trx('setups').insert({ id: 1, version, initialized_at: nowSec() });
}

export async function rootExists(knex: Knex | Knex.Transaction): Promise<boolean> {
  return Boolean(await knex('users').where({ role: ROLE.root }).first('id'));
}
