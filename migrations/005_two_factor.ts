import type { Knex } from 'knex';

/**
 * Second factors (docs/security.md, "Two-factor login, passkeys, re-verification"):
 * - `user_two_factor`: one TOTP enrolment per user (pending until confirmed with a code);
 *   `last_step` is the last accepted RFC 6238 time step, so a code is accepted once.
 * - `user_backup_codes`: ten one-time codes per enrolment, stored as scrypt hashes.
 * - `user_passkeys`: WebAuthn credentials, several per user, each with a name.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('user_two_factor', (t) => {
    t.integer('user_id').primary();
    t.string('secret', 128).notNullable();
    t.boolean('enabled').notNullable().defaultTo(false);
    t.string('backup_salt', 64).notNullable();
    t.bigInteger('last_step').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('enabled_at').nullable();
  });
  await knex.schema.createTable('user_backup_codes', (t) => {
    t.increments('id').primary();
    t.integer('user_id').notNullable().index();
    t.string('code_hash', 128).notNullable();
    t.bigInteger('used_at').nullable();
  });
  await knex.schema.createTable('user_passkeys', (t) => {
    t.increments('id').primary();
    t.integer('user_id').notNullable().index();
    t.string('credential_id', 512).notNullable().unique();
    t.text('public_key').notNullable();
    t.bigInteger('counter').notNullable().defaultTo(0);
    t.string('transports', 255).notNullable().defaultTo('');
    t.string('webauthn_user_id', 128).notNullable();
    t.string('name', 64).notNullable();
    t.string('device_type', 32).notNullable().defaultTo('');
    t.boolean('backed_up').notNullable().defaultTo(false);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_used_at').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('user_passkeys');
  await knex.schema.dropTableIfExists('user_backup_codes');
  await knex.schema.dropTableIfExists('user_two_factor');
}
