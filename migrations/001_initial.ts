import type { Knex } from 'knex';

/**
 * The whole data model. Same schema on SQLite and PostgreSQL: quota columns are BIGINT,
 * timestamps are epoch seconds (BIGINT) unless a column says otherwise, JSON lives in TEXT.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.increments('id').primary();
    t.string('username', 64).notNullable().unique();
    t.string('password', 255).notNullable().defaultTo('');
    t.string('display_name', 64).notNullable().defaultTo('');
    t.integer('role').notNullable().defaultTo(1);
    t.integer('status').notNullable().defaultTo(1);
    t.string('email', 128).notNullable().defaultTo('').index();
    t.string('github_id', 128).notNullable().defaultTo('').index();
    t.string('oidc_id', 255).notNullable().defaultTo('').index();
    t.string('wechat_id', 128).notNullable().defaultTo('').index();
    t.string('telegram_id', 128).notNullable().defaultTo('').index();
    t.string('linux_do_id', 128).notNullable().defaultTo('').index();
    t.string('access_token', 64).nullable().unique();
    t.bigInteger('quota').notNullable().defaultTo(0);
    t.bigInteger('used_quota').notNullable().defaultTo(0);
    t.integer('request_count').notNullable().defaultTo(0);
    t.string('group', 64).notNullable().defaultTo('default').index();
    t.string('aff_code', 32).nullable().unique();
    t.integer('aff_count').notNullable().defaultTo(0);
    t.bigInteger('aff_quota').notNullable().defaultTo(0);
    t.bigInteger('aff_history_quota').notNullable().defaultTo(0);
    t.integer('inviter_id').notNullable().defaultTo(0).index();
    t.text('setting').notNullable().defaultTo('');
    t.string('remark', 255).notNullable().defaultTo('');
    t.bigInteger('created_at').notNullable().defaultTo(0);
    t.bigInteger('deleted_at').nullable().index();
  });

  await knex.schema.createTable('tokens', (t) => {
    t.increments('id').primary();
    t.integer('user_id').notNullable().index();
    t.string('key', 64).notNullable().unique();
    t.integer('status').notNullable().defaultTo(1);
    t.string('name', 64).notNullable().defaultTo('').index();
    t.bigInteger('created_time').notNullable().defaultTo(0);
    t.bigInteger('accessed_time').notNullable().defaultTo(0);
    t.bigInteger('expired_time').notNullable().defaultTo(-1);
    t.bigInteger('remain_quota').notNullable().defaultTo(0);
    t.boolean('unlimited_quota').notNullable().defaultTo(false);
    t.boolean('model_limits_enabled').notNullable().defaultTo(false);
    t.text('model_limits').notNullable().defaultTo('');
    t.text('allow_ips').notNullable().defaultTo('');
    t.bigInteger('used_quota').notNullable().defaultTo(0);
    t.integer('request_count').notNullable().defaultTo(0);
    t.string('group', 64).notNullable().defaultTo('');
    t.bigInteger('deleted_at').nullable().index();
  });

  await knex.schema.createTable('channels', (t) => {
    t.increments('id').primary();
    t.integer('type').notNullable().defaultTo(1).index();
    t.text('key').notNullable().defaultTo('');
    t.string('openai_organization', 128).notNullable().defaultTo('');
    t.string('test_model', 128).notNullable().defaultTo('');
    t.integer('status').notNullable().defaultTo(1).index();
    t.string('name', 128).notNullable().defaultTo('').index();
    t.integer('weight').notNullable().defaultTo(0);
    t.bigInteger('created_time').notNullable().defaultTo(0);
    t.bigInteger('test_time').notNullable().defaultTo(0);
    t.integer('response_time').notNullable().defaultTo(0);
    t.string('base_url', 512).notNullable().defaultTo('');
    t.text('other').notNullable().defaultTo('');
    t.double('balance').notNullable().defaultTo(0);
    t.bigInteger('balance_updated_time').notNullable().defaultTo(0);
    t.text('models').notNullable().defaultTo('');
    t.string('group', 255).notNullable().defaultTo('default');
    t.bigInteger('used_quota').notNullable().defaultTo(0);
    t.integer('request_count').notNullable().defaultTo(0);
    t.text('model_mapping').notNullable().defaultTo('');
    t.text('status_code_mapping').notNullable().defaultTo('');
    t.bigInteger('priority').notNullable().defaultTo(0);
    t.integer('auto_ban').notNullable().defaultTo(1);
    t.text('other_info').notNullable().defaultTo('');
    t.string('tag', 128).nullable().index();
    t.text('setting').notNullable().defaultTo('');
    t.text('param_override').notNullable().defaultTo('');
    t.integer('max_input_tokens').notNullable().defaultTo(0);
  });

  // One row per (group, model, channel): what routing reads.
  await knex.schema.createTable('abilities', (t) => {
    t.string('group', 64).notNullable();
    t.string('model', 255).notNullable();
    t.integer('channel_id').notNullable().index();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.bigInteger('priority').notNullable().defaultTo(0);
    t.integer('weight').notNullable().defaultTo(0);
    t.string('tag', 128).nullable().index();
    t.primary(['group', 'model', 'channel_id']);
    t.index(['group', 'model', 'enabled', 'priority'], 'idx_abilities_route');
  });

  await knex.schema.createTable('options', (t) => {
    t.string('key', 128).primary();
    t.text('value').notNullable().defaultTo('');
  });

  await knex.schema.createTable('logs', (t) => {
    t.bigIncrements('id').primary();
    t.integer('user_id').notNullable().defaultTo(0);
    t.bigInteger('created_at').notNullable().defaultTo(0);
    t.integer('type').notNullable().defaultTo(0);
    t.text('content').notNullable().defaultTo('');
    t.string('username', 64).notNullable().defaultTo('');
    t.string('token_name', 64).notNullable().defaultTo('');
    t.integer('token_id').notNullable().defaultTo(0);
    t.string('model_name', 255).notNullable().defaultTo('');
    t.bigInteger('quota').notNullable().defaultTo(0);
    t.integer('prompt_tokens').notNullable().defaultTo(0);
    t.integer('completion_tokens').notNullable().defaultTo(0);
    t.integer('use_time').notNullable().defaultTo(0);
    t.boolean('is_stream').notNullable().defaultTo(false);
    t.integer('channel_id').notNullable().defaultTo(0);
    t.string('channel_name', 128).notNullable().defaultTo('');
    t.string('group', 64).notNullable().defaultTo('');
    t.string('ip', 64).notNullable().defaultTo('');
    t.text('other').notNullable().defaultTo('');
    // The console filters: one user's logs by time, admins by type/time, plus exact-match filters.
    t.index(['user_id', 'created_at'], 'idx_logs_user_created');
    t.index(['type', 'created_at'], 'idx_logs_type_created');
    t.index(['created_at'], 'idx_logs_created');
    t.index(['model_name', 'created_at'], 'idx_logs_model_created');
    t.index(['username', 'created_at'], 'idx_logs_username_created');
    t.index(['token_name', 'created_at'], 'idx_logs_token_created');
    t.index(['channel_id', 'created_at'], 'idx_logs_channel_created');
    t.index(['group', 'created_at'], 'idx_logs_group_created');
  });

  await knex.schema.createTable('redemptions', (t) => {
    t.increments('id').primary();
    t.integer('user_id').notNullable().defaultTo(0);
    t.string('key', 64).notNullable().unique();
    t.integer('status').notNullable().defaultTo(1);
    t.string('name', 64).notNullable().defaultTo('').index();
    t.bigInteger('quota').notNullable().defaultTo(0);
    t.bigInteger('created_time').notNullable().defaultTo(0);
    t.bigInteger('redeemed_time').notNullable().defaultTo(0);
    t.integer('used_user_id').notNullable().defaultTo(0);
    t.bigInteger('deleted_at').nullable().index();
  });

  await knex.schema.createTable('top_ups', (t) => {
    t.increments('id').primary();
    t.integer('user_id').notNullable().index();
    t.bigInteger('amount').notNullable().defaultTo(0);
    t.double('money').notNullable().defaultTo(0);
    t.string('trade_no', 128).notNullable().unique();
    t.string('payment_method', 32).notNullable().defaultTo('');
    t.bigInteger('create_time').notNullable().defaultTo(0);
    t.bigInteger('complete_time').notNullable().defaultTo(0);
    t.string('status', 32).notNullable().defaultTo('pending');
  });

  await knex.schema.createTable('midjourneys', (t) => {
    t.increments('id').primary();
    t.integer('code').notNullable().defaultTo(0);
    t.integer('user_id').notNullable().defaultTo(0).index();
    t.string('action', 40).notNullable().defaultTo('').index();
    t.string('mj_id', 191).notNullable().defaultTo('').index();
    t.text('prompt').notNullable().defaultTo('');
    t.text('prompt_en').notNullable().defaultTo('');
    t.text('description').notNullable().defaultTo('');
    t.text('state').notNullable().defaultTo('');
    t.bigInteger('submit_time').notNullable().defaultTo(0).index();
    t.bigInteger('start_time').notNullable().defaultTo(0);
    t.bigInteger('finish_time').notNullable().defaultTo(0);
    t.text('image_url').notNullable().defaultTo('');
    t.string('status', 20).notNullable().defaultTo('').index();
    t.string('progress', 30).notNullable().defaultTo('');
    t.text('fail_reason').notNullable().defaultTo('');
    t.integer('channel_id').notNullable().defaultTo(0).index();
    t.bigInteger('quota').notNullable().defaultTo(0);
    t.text('buttons').notNullable().defaultTo('');
    t.text('properties').notNullable().defaultTo('');
    t.bigInteger('created_at').notNullable().defaultTo(0);
  });

  await knex.schema.createTable('tasks', (t) => {
    t.bigIncrements('id').primary();
    t.bigInteger('created_at').notNullable().defaultTo(0).index();
    t.bigInteger('updated_at').notNullable().defaultTo(0);
    t.string('task_id', 191).notNullable().defaultTo('').index();
    t.string('platform', 30).notNullable().defaultTo('').index();
    t.integer('user_id').notNullable().defaultTo(0).index();
    t.string('group', 64).notNullable().defaultTo('');
    t.integer('channel_id').notNullable().defaultTo(0).index();
    t.bigInteger('quota').notNullable().defaultTo(0);
    t.string('action', 40).notNullable().defaultTo('').index();
    t.string('status', 20).notNullable().defaultTo('').index();
    t.text('fail_reason').notNullable().defaultTo('');
    t.bigInteger('submit_time').notNullable().defaultTo(0).index();
    t.bigInteger('start_time').notNullable().defaultTo(0);
    t.bigInteger('finish_time').notNullable().defaultTo(0);
    t.string('progress', 20).notNullable().defaultTo('');
    t.text('properties').notNullable().defaultTo('');
    t.text('data').notNullable().defaultTo('');
  });

  await knex.schema.createTable('setups', (t) => {
    t.increments('id').primary();
    t.string('version', 64).notNullable().defaultTo('');
    t.bigInteger('initialized_at').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['setups', 'tasks', 'midjourneys', 'top_ups', 'redemptions', 'logs', 'options', 'abilities', 'channels', 'tokens', 'users']) {
    await knex.schema.dropTableIfExists(table);
  }
}
