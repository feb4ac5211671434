import type { Knex } from 'knex';

/**
 * Asynchronous tasks (server/src/tasks/, docs/tasks.md): the drawing (`midjourneys`) and creative
 * task (`tasks`) tables gain what the submit and the poller need.
 *
 * - `token_id`, `model_name` (the price key, e.g. `mj_imagine`), `group` (drawings only; tasks
 *   had it): who pays and what, for the refund of a failed task.
 * - `key_index`: which of the channel's keys (one per line) accepted it, so it is polled with it.
 * - `active` 1 while the task is unfinished; `next_poll_at` (epoch ms) when it is due next;
 *   `poll_errors` consecutive upstream errors (back-off).
 * - `lease_owner` / `lease_until` (epoch ms): the node polling it right now; another node takes
 *   it only once the lease has run out.
 * - `refunded`: set by the one conditional update that wins the refund of a failed task.
 * - `notify_hook` (drawings): the client's callback URL, when MjNotifyEnabled.
 */
const COMMON = (t: Knex.AlterTableBuilder) => {
  t.integer('token_id').notNullable().defaultTo(0);
  t.string('model_name', 191).notNullable().defaultTo('');
  t.integer('key_index').notNullable().defaultTo(0);
  t.integer('active').notNullable().defaultTo(0);
  t.bigInteger('next_poll_at').notNullable().defaultTo(0);
  t.integer('poll_errors').notNullable().defaultTo(0);
  t.string('lease_owner', 128).notNullable().defaultTo('');
  t.bigInteger('lease_until').notNullable().defaultTo(0);
  t.integer('refunded').notNullable().defaultTo(0);
};

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('midjourneys', (t) => {
    COMMON(t);
    t.string('group', 64).notNullable().defaultTo('');
    t.text('notify_hook').notNullable().defaultTo('');
    t.index(['active', 'next_poll_at'], 'midjourneys_active_due');
  });
  await knex.schema.alterTable('tasks', (t) => {
    COMMON(t);
    t.index(['active', 'next_poll_at'], 'tasks_active_due');
  });
}

export async function down(knex: Knex): Promise<void> {
  const cols = ['token_id', 'model_name', 'key_index', 'active', 'next_poll_at', 'poll_errors', 'lease_owner', 'lease_until', 'refunded'];
  await knex.schema.alterTable('midjourneys', (t) => {
    t.dropIndex(['active', 'next_poll_at'], 'midjourneys_active_due');
    t.dropColumns(...cols, 'group', 'notify_hook');
  });
  await knex.schema.alterTable('tasks', (t) => {
    t.dropIndex(['active', 'next_poll_at'], 'tasks_active_due');
    t.dropColumns(...cols);
  });
}
