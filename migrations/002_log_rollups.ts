import type { Knex } from 'knex';

/**
 * Log rollups (docs/logs.md): `log_rollups` holds, per time bucket (hour or day) × log type × one
 * "dimension" (a combination of the console's exact-match filters), the number of logs, the sum
 * of quota and the sum of prompt + completion tokens. The console answers counts and quota sums
 * from it for whole hours and reads only the partial edge hours from `logs`.
 *
 * The rollups are kept in the same transaction as the change. PostgreSQL: statement-level triggers
 * with transition tables on insert, update, delete and truncate (one aggregated upsert per
 * statement), so every writer, plain SQL included, keeps them exact. SQLite has only row-level
 * triggers, which cost ≈ 10 µs per inserted row even when idle: there, inserts must go through
 * insertLogs() / the usage batcher (which aggregate in code), while updates and deletes keep row
 * triggers.
 *
 * `dim` is a bit mask of the key columns that are part of the key; the others hold their default
 * (0 / ''). The maintained dimensions and their bucket sizes are the rows of `log_rollup_dims`
 * (the triggers join it).
 */
export const DIM = { user_id: 1, username: 2, token_name: 4, model_name: 8, channel_id: 16, group: 32 } as const;
const HOUR = 3600;
const DAY = 86400;
/**
 * The maintained dimensions and their bucket size: none, each filter alone, and the pairs the console
 * uses most (a user's own log page filtered by model or token; admin token + model). Hour buckets,
 * except the per-user pairs: those have many keys with few logs each, so an hourly rollup would be
 * about as big as `logs` itself (10 M seeded logs: 8.2 M user × model × hour × type rows; per day
 * 4.5 M). user_id / username alone stay hourly (4.3 M rows each at 10 M logs) so that a heavy
 * user's partial edges are at most half an hour of raw rows.
 */
export const ROLLUP_DIMS_002: ReadonlyArray<{ dim: number; secs: number }> = [
  { dim: 0, secs: HOUR },
  { dim: DIM.token_name, secs: HOUR },
  { dim: DIM.model_name, secs: HOUR },
  { dim: DIM.channel_id, secs: HOUR },
  { dim: DIM.group, secs: HOUR },
  { dim: DIM.token_name | DIM.model_name, secs: HOUR },
  { dim: DIM.user_id, secs: HOUR },
  { dim: DIM.username, secs: HOUR },
  { dim: DIM.user_id | DIM.model_name, secs: DAY },
  { dim: DIM.user_id | DIM.token_name, secs: DAY },
];

const KEY_COLS = ['user_id', 'username', 'token_name', 'model_name', 'channel_id', 'group'] as const;
const PK = ['dim', ...KEY_COLS, 'bucket', 'type'];
const q = (c: string) => `"${c}"`;
const PK_SQL = PK.map(q).join(', ');
const INS_COLS = [...PK, 'n', 'quota', 'tokens'].map(q).join(', ');

/** Key expressions of one log row `x` under dimension row `d`. */
function keyExprs(x: string): string[] {
  return KEY_COLS.map((c) => {
    const zero = c === 'user_id' || c === 'channel_id' ? '0' : "''";
    return `CASE WHEN (d.dim & ${DIM[c]}) <> 0 THEN ${x}.${q(c)} ELSE ${zero} END`;
  });
}
const bucketExpr = (x: string) => `(${x}.created_at / d.secs) * d.secs`;
const tokensExpr = (x: string) => `(CAST(${x}.prompt_tokens AS BIGINT) + ${x}.completion_tokens)`;

/**
 * INSERT … SELECT that adds the aggregate of `src` (rows of logs with a column `s` = +1 / −1) to
 * the rollups, for the dimensions selected by `dimWhere`. Works on both databases.
 */
export function rollupUpsertSql(src: string, table = 'log_rollups', dimsTable = 'log_rollup_dims', dimWhere = 'true'): string {
  const sel = ['d.dim', ...keyExprs('x'), bucketExpr('x'), 'x.type', 'SUM(x.s)', 'SUM(x.s * x.quota)', `SUM(x.s * ${tokensExpr('x')})`];
  const groups = sel
    .slice(0, 9)
    .map((_, i) => String(i + 1))
    .join(', ');
  return (
    `INSERT INTO ${table} AS r (${INS_COLS}) SELECT ${sel.join(', ')} FROM ${src} x CROSS JOIN ${dimsTable} d WHERE ${dimWhere} ` +
    `GROUP BY ${groups} ORDER BY ${groups} ` +
    `ON CONFLICT (${PK_SQL}) DO UPDATE SET n = r.n + excluded.n, quota = r.quota + excluded.quota, tokens = r.tokens + excluded.tokens`
  );
}

/** SQLite row trigger body: add `sign` × the row NEW/OLD to every maintained dimension. */
function sqliteRowUpsert(row: 'NEW' | 'OLD', sign: 1 | -1): string {
  const sel = ['d.dim', ...keyExprs(row), bucketExpr(row), `${row}.type`, String(sign), `${sign} * ${row}.quota`, `${sign} * ${tokensExpr(row)}`];
  return (
    `INSERT INTO log_rollups AS r (${INS_COLS}) SELECT ${sel.join(', ')} FROM log_rollup_dims d WHERE true ` +
    `ON CONFLICT (${PK_SQL}) DO UPDATE SET n = r.n + excluded.n, quota = r.quota + excluded.quota, tokens = r.tokens + excluded.tokens;`
  );
}

const isPg = (knex: Knex) => /^(pg|postgres)/.test(String(knex.client.config.client));

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('log_rollup_dims', (t) => {
    t.integer('dim').primary();
    t.integer('secs').notNullable();
  });
  await knex('log_rollup_dims').insert(ROLLUP_DIMS_002);

  await knex.schema.createTable('log_rollups', (t) => {
    t.integer('dim').notNullable();
    t.integer('user_id').notNullable().defaultTo(0);
    t.string('username', 64).notNullable().defaultTo('');
    t.string('token_name', 64).notNullable().defaultTo('');
    t.string('model_name', 255).notNullable().defaultTo('');
    t.integer('channel_id').notNullable().defaultTo(0);
    t.string('group', 64).notNullable().defaultTo('');
    t.bigInteger('bucket').notNullable(); // start of the hour / day (per dim), epoch s
    t.integer('type').notNullable().defaultTo(0);
    t.bigInteger('n').notNullable().defaultTo(0);
    t.bigInteger('quota').notNullable().defaultTo(0);
    t.bigInteger('tokens').notNullable().defaultTo(0);
    t.primary(PK, 'log_rollups_pkey');
  });

  // Page fetch: ORDER BY created_at DESC, id DESC under each filter straight from an index.
  // (The old (x, created_at) indexes are replaced by (x, created_at, id).)
  for (const [name, col] of INDEXES) {
    await knex.schema.alterTable('logs', (t) => {
      t.dropIndex([], name);
    });
    await knex.schema.alterTable('logs', (t) => {
      t.index(col ? [col, 'created_at', 'id'] : ['created_at', 'id'], name);
    });
  }

  // Backfill, one dimension at a time (less memory than one pass over logs × all dimensions).
  if (isPg(knex)) await knex.raw(`SET LOCAL work_mem = '256MB'`);
  for (const { dim } of ROLLUP_DIMS_002) {
    await knex.raw(rollupUpsertSql('(SELECT logs.*, 1 AS s FROM logs)', 'log_rollups', 'log_rollup_dims', `d.dim = ${dim}`));
  }

  if (isPg(knex)) {
    const schema = String((await knex.raw('SELECT current_schema() AS s')).rows[0].s);
    const S = `"${schema.replace(/"/g, '""')}"`;
    const fn = (name: string, src: string) =>
      `CREATE OR REPLACE FUNCTION ${S}.${name}() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN ` +
      `${rollupUpsertSql(src, `${S}.log_rollups`, `${S}.log_rollup_dims`)}; RETURN NULL; END $fn$`;
    await knex.raw(fn('logs_rollup_ins', '(SELECT nr.*, 1 AS s FROM new_rows nr)'));
    await knex.raw(fn('logs_rollup_del', '(SELECT orr.*, -1 AS s FROM old_rows orr)'));
    await knex.raw(fn('logs_rollup_upd', '(SELECT orr.*, -1 AS s FROM old_rows orr UNION ALL SELECT nr.*, 1 AS s FROM new_rows nr)'));
    await knex.raw(
      `CREATE OR REPLACE FUNCTION ${S}.logs_rollup_trunc() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN TRUNCATE ${S}.log_rollups; RETURN NULL; END $fn$`,
    );
    await knex.raw(
      `CREATE TRIGGER logs_rollup_ins AFTER INSERT ON logs REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${S}.logs_rollup_ins()`,
    );
    await knex.raw(
      `CREATE TRIGGER logs_rollup_del AFTER DELETE ON logs REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${S}.logs_rollup_del()`,
    );
    await knex.raw(
      `CREATE TRIGGER logs_rollup_upd AFTER UPDATE ON logs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${S}.logs_rollup_upd()`,
    );
    await knex.raw(`CREATE TRIGGER logs_rollup_trunc AFTER TRUNCATE ON logs FOR EACH STATEMENT EXECUTE FUNCTION ${S}.logs_rollup_trunc()`);
  } else {
    // No INSERT trigger on SQLite: a row trigger costs ≈ 10 µs per inserted log even when it does
    // nothing (WHEN false), and ten upserts per row when it does. Inserts go through insertLogs()
    // or the usage batcher (server/src/repositories/logRollups.ts), which add each batch to the
    // rollups in the same transaction, one upsert per key. Updates and deletes (rare: purge,
    // repairs) keep their row triggers.
    await knex.raw(`CREATE TRIGGER logs_rollup_del AFTER DELETE ON logs BEGIN ${sqliteRowUpsert('OLD', -1)} END`);
    await knex.raw(`CREATE TRIGGER logs_rollup_upd AFTER UPDATE ON logs BEGIN ${sqliteRowUpsert('OLD', -1)} ${sqliteRowUpsert('NEW', 1)} END`);
  }
}

const INDEXES: Array<[string, string | undefined]> = [
  ['idx_logs_user_created', 'user_id'],
  ['idx_logs_type_created', 'type'],
  ['idx_logs_created', undefined],
  ['idx_logs_model_created', 'model_name'],
  ['idx_logs_username_created', 'username'],
  ['idx_logs_token_created', 'token_name'],
  ['idx_logs_channel_created', 'channel_id'],
  ['idx_logs_group_created', 'group'],
];

export async function down(knex: Knex): Promise<void> {
  if (isPg(knex)) {
    for (const t of ['ins', 'del', 'upd', 'trunc']) {
      await knex.raw(`DROP TRIGGER IF EXISTS logs_rollup_${t} ON logs`);
      await knex.raw(`DROP FUNCTION IF EXISTS logs_rollup_${t}()`);
    }
  } else {
    for (const t of ['ins', 'del', 'upd']) await knex.raw(`DROP TRIGGER IF EXISTS logs_rollup_${t}`);
  }
  for (const [name, col] of INDEXES) {
    await knex.schema.alterTable('logs', (t) => {
      t.dropIndex([], name);
    });
    await knex.schema.alterTable('logs', (t) => {
      t.index(col ? [col, 'created_at'] : ['created_at'], name);
    });
  }
  await knex.schema.dropTableIfExists('log_rollups');
  await knex.schema.dropTableIfExists('log_rollup_dims');
}
