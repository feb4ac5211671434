import type { Knex } from 'knex';

/**
 * Durable reservations (docs/billing.md, "Quota on a crash"): every amount a relayed call takes
 * from a balance before it is billed has a row here, written in the same transaction as the
 * balance move, until the call's log row (and usage counters) are written. A row left behind by a
 * crash is reconciled at start-up (or by another node once its node is gone).
 *
 * `state`: 0 open (the reserved amount is taken, not yet settled), 1 settled (`taken` is the final
 * cost, moved already; only the log row and counters are missing).
 * `gateway_nodes`: one row per gateway node, `seen_at` its heartbeat (epoch ms).
 */
const isPg = (knex: Knex) => /^(pg|postgres)/.test(String(knex.client.config.client));

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('reservations', (t) => {
    // The request id: run id × 2³² + a counter (ledger/reservation.ts). On SQLite exactly
    // `integer primary key`, the rowid itself: the hot insert/update/delete touch one b-tree. No
    // other index: the table holds only calls in flight or not yet logged (≈ one second of traffic),
    // and it is scanned only at start-up and by the take-over check.
    t.specificType('id', isPg(knex) ? 'bigint' : 'integer').primary();
    t.string('node_id', 128).notNullable();
    t.integer('state').notNullable().defaultTo(0);
    t.integer('user_id').notNullable();
    /** The call's token (0: playground); `limited` says whether its remain_quota was charged too. */
    t.integer('token_id').notNullable().defaultTo(0);
    t.boolean('limited').notNullable().defaultTo(false);
    t.integer('channel_id').notNullable().defaultTo(0);
    t.string('model_name', 255).notNullable().defaultTo('');
    t.string('group', 64).notNullable().defaultTo('');
    t.bigInteger('reserved').notNullable().defaultTo(0);
    t.bigInteger('taken').notNullable().defaultTo(0);
    t.integer('prompt_tokens').notNullable().defaultTo(0);
    t.integer('completion_tokens').notNullable().defaultTo(0);
    t.boolean('is_stream').notNullable().defaultTo(false);
    t.bigInteger('created_at').notNullable();
  });
  // One row per process start: its id prefixes the ids of that run's reservations (unique across
  // nodes and restarts without any coordination on the hot path).
  await knex.schema.createTable('ledger_runs', (t) => {
    t.increments('id').primary();
    t.string('node_id', 128).notNullable();
    t.bigInteger('started_at').notNullable();
  });
  await knex.schema.createTable('gateway_nodes', (t) => {
    t.string('node_id', 128).primary();
    t.bigInteger('seen_at').notNullable();
    t.bigInteger('started_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('ledger_runs');
  await knex.schema.dropTableIfExists('gateway_nodes');
  await knex.schema.dropTableIfExists('reservations');
}
