import type { Knex } from 'knex';

/**
 * Multi-key channels (docs/routing.md): `channels.channel_info` holds the channel's key facts as
 * JSON text (new-api's shape): `is_multi_key`, `multi_key_size`, `multi_key_mode` (random|polling),
 * `multi_key_status_list` (key index → status, a missing index meaning enabled),
 * `multi_key_disabled_reason` and `multi_key_disabled_time` (key index → text / epoch seconds).
 * Empty for single-key channels. No secret is kept here: keys stay in `key`, one per line.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('channels', (t) => {
    t.text('channel_info').notNullable().defaultTo('');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('channels', (t) => {
    t.dropColumn('channel_info');
  });
}
