import type { Knex } from 'knex';

/**
 * Server-side records of console login sessions (docs/accounts.md, "Sessions"). The signed cookie
 * carries the user id and a random session id; a cookie is honoured only while its record exists,
 * so logout, "log out everywhere", password changes, disabling and deleting end sessions on every
 * node. `id` is the SHA-256 of the cookie's session id (a copy of this table logs nobody in).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('user_sessions', (t) => {
    t.string('id', 64).primary();
    t.integer('user_id').notNullable().index();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable().index();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('user_sessions');
}
