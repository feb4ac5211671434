/**
 * Console log queries on a big `logs` table (`npm run bench:logs`, `-- --rows 200000` to try).
 *
 * 1. Builds the gateway schema (createApp → migrations) in a dedicated PostgreSQL schema.
 * 2. Seeds N rows (default 10 000 000) with `INSERT … SELECT generate_series` in 1M-row batches,
 *    with the table's indexes dropped during the load and recreated after (from pg_indexes, so they
 *    are exactly the migration's), then ANALYZE. Distribution: 30 days skewed to recent, 10 000
 *    users Zipf-like (user 1 ≈ 4.6 % of all rows), 30 models and 50 channels skewed, 90 % consume
 *    logs, groups default/vip/svip.
 * 3. Times the console's own code paths — `listLogs` / `logStat` from server/src/services/logs.ts,
 *    i.e. what GET /api/log/, /api/log/self/, /api/log/stat, /api/log/self/stat run — for one user
 *    and for admin filters: 1 warm-up + 5 runs each, median and max; target ≤ 50 ms.
 *
 * Options: --rows N, --schema S (default bench_logs_<N>), --keep (keep the seeded schema; a later
 * run with the same schema and row count reuses it), --runs N. Env: BENCH_PG_URL.
 * Writes bench/results/logs-<date>.json.
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { createApp } from '../server/src/app';
import { loadConfig, type AppConfig } from '../server/src/config';
import { createLogger } from '../server/src/lib/logger';
import { filterQuery, listLogs, logStat, toLogFilter } from '../server/src/services/logs';
import { parse, parsePaging } from '../server/src/lib/validate';
import { rebuildLogRollups, LOG_TYPE } from '../server/src/repositories/logs';

const argv = process.argv.slice(2);
const opt = (n: string) => {
  const i = argv.indexOf(n);
  return i >= 0 ? argv[i + 1] : undefined;
};
const ROWS = Number(opt('--rows') ?? 10_000_000);
const RUNS = Number(opt('--runs') ?? 5);
const KEEP = argv.includes('--keep');
const SCHEMA = opt('--schema') ?? `bench_logs_${ROWS}`;
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TARGET_MS = 50;
const BATCH = 1_000_000;
const USERS = 10_000;
const MODELS = [
  'gpt-4o-mini',
  'gpt-4o',
  'claude-3-5-sonnet-20241022',
  'gemini-1.5-flash',
  'gpt-4.1-mini',
  'deepseek-chat',
  'gpt-3.5-turbo',
  'claude-3-5-haiku-20241022',
  'gemini-2.0-flash',
  'o3-mini',
  'gpt-4.1',
  'qwen-plus',
  'deepseek-reasoner',
  'text-embedding-3-small',
  'gpt-4-turbo',
  'claude-3-opus-20240229',
  'gemini-1.5-pro',
  'mistral-large-latest',
  'llama-3.1-70b',
  'o1',
  'glm-4-plus',
  'moonshot-v1-8k',
  'dall-e-3',
  'whisper-1',
  'tts-1',
  'text-embedding-3-large',
  'gpt-4o-audio-preview',
  'yi-large',
  'doubao-pro-32k',
  'command-r-plus',
];

const log = (...a: unknown[]) => console.log(...a); // eslint-disable-line no-console -- the benchmark's output
if (!Number.isInteger(ROWS) || ROWS < 1000) throw new Error('--rows must be an integer ≥ 1000');
if (!/^[a-z_][a-z0-9_]*$/.test(SCHEMA)) throw new Error('--schema must be a plain lower-case identifier');

async function main() {
  const t0 = Date.now();
  const config: AppConfig = {
    ...loadConfig({}),
    databaseUrl: PG_URL,
    pgSchema: SCHEMA,
    redisUrl: undefined,
    redisPrefix: `benchlogs:${crypto.randomBytes(4).toString('hex')}:`,
    sessionSecret: 'bench',
    sessionSecretGenerated: false,
    adminDist: undefined,
    logLevel: 'warn',
  };
  const app = await createApp(config, { logger: createLogger('warn'), serveConsole: false });
  const startupSec = (Date.now() - t0) / 1000;
  const knex = app.ctx.knex;
  if (app.ctx.db.kind !== 'postgres') throw new Error('bench:logs needs PostgreSQL');
  const now = Math.floor(Date.now() / 1000);
  let seedSec = 0;
  let indexSec = 0;
  let rollupSec = 0;

  try {
    const existing = Number((await knex('logs').count({ n: '*' }).first())?.n ?? 0);
    if (existing === ROWS) {
      log(`reusing ${SCHEMA}.logs (${ROWS.toLocaleString()} rows already seeded)`);
    } else {
      if (existing) await knex.raw('TRUNCATE logs RESTART IDENTITY');
      // Drop the indexes during the load (5–10× faster), recreate exactly the same ones after.
      const idx = (
        await knex.raw(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = ? AND tablename = 'logs' AND indexname NOT LIKE '%_pkey'`, [SCHEMA])
      ).rows as Array<{ indexname: string; indexdef: string }>;
      for (const i of idx) await knex.raw(`DROP INDEX IF EXISTS "${SCHEMA}"."${i.indexname}"`);
      // Likewise the rollup triggers: rebuilt in one pass after the load (rebuildLogRollups).
      await knex.raw('ALTER TABLE logs DISABLE TRIGGER USER');
      const ts = Date.now();
      const models = `(ARRAY[${MODELS.map((m) => `'${m}'`).join(',')}])`;
      for (let from = 1; from <= ROWS; from += BATCH) {
        const to = Math.min(ROWS, from + BATCH - 1);
        await knex.raw(
          `INSERT INTO logs (user_id, created_at, type, content, username, token_name, token_id, model_name, quota, prompt_tokens, completion_tokens,
                             use_time, is_stream, channel_id, channel_name, "group", ip, other)
           SELECT u, ${now} - floor(2592000 * power(r_t, 2))::bigint, ty,
                  CASE WHEN ty = 2 THEN '' ELSE 'quota change / system event #' || g END,
                  'user' || u, 'token-' || (u % 5), u * 5 + (u % 5), ${models}[1 + floor(30 * power(r_m, 2))::int],
                  CASE WHEN ty = 2 THEN floor((pt + ct) * (0.5 + r_q * 10))::bigint ELSE floor(r_q * 500000)::bigint END,
                  CASE WHEN ty = 2 THEN pt ELSE 0 END, CASE WHEN ty = 2 THEN ct ELSE 0 END,
                  floor(r_q * 30)::int, r_s < 0.6, ch, 'channel-' || ch,
                  CASE WHEN r_g < 0.8 THEN 'default' WHEN r_g < 0.95 THEN 'vip' ELSE 'svip' END,
                  '10.0.' || (u % 250) || '.' || (g % 250),
                  CASE WHEN ty = 2 THEN '{"model_ratio":0.075,"group_ratio":1,"completion_ratio":4,"frt":' || floor(r_s * 2000) || '}' ELSE '' END
           FROM (
             SELECT g, 1 + floor(${USERS} * power(random(), 3))::int AS u, random() AS r_t, random() AS r_m, random() AS r_q, random() AS r_s, random() AS r_g,
                    CASE WHEN r < 0.90 THEN 2 WHEN r < 0.95 THEN 1 WHEN r < 0.98 THEN 3 ELSE 4 END AS ty,
                    floor(random() * random() * 4000)::int AS pt, floor(random() * 1000)::int AS ct,
                    1 + floor(50 * power(random(), 1.5))::int AS ch
             FROM (SELECT g, random() AS r FROM generate_series(?::int, ?::int) g) s0
           ) s`,
          [from, to],
        );
        log(`  seeded ${to.toLocaleString()} / ${ROWS.toLocaleString()} rows (${((Date.now() - ts) / 1000).toFixed(0)} s)`);
      }
      seedSec = (Date.now() - ts) / 1000;
      const ti = Date.now();
      for (const i of idx) {
        await knex.raw(i.indexdef);
        log(`  index ${i.indexname} (${((Date.now() - ti) / 1000).toFixed(0)} s)`);
      }
      indexSec = (Date.now() - ti) / 1000;
      const tr = Date.now();
      await knex.transaction((trx) => rebuildLogRollups(trx));
      await knex.raw('ALTER TABLE logs ENABLE TRIGGER USER');
      rollupSec = (Date.now() - tr) / 1000;
      log(`  rollups rebuilt (${rollupSec.toFixed(0)} s)`);
    }
    // What autovacuum does to a table after a bulk load (visibility map for index-only scans, statistics).
    await knex.raw('VACUUM (ANALYZE) logs');
    await knex.raw('VACUUM (ANALYZE) log_rollups');
    const rollupRows = Number((await knex('log_rollups').count({ n: '*' }).first())?.n ?? 0);
    log(`log_rollups: ${rollupRows.toLocaleString()} rows`);

    // Pick users from the data: the heaviest, a median one, and a light one.
    const heavy = (await knex.raw(`SELECT user_id, count(*)::int AS n FROM logs WHERE user_id = 1 GROUP BY user_id`)).rows[0] as { user_id: number; n: number };
    const typical = { user_id: 2000, n: Number((await knex('logs').where({ user_id: 2000 }).count({ n: '*' }).first())?.n ?? 0) };
    const light = { user_id: 9000, n: Number((await knex('logs').where({ user_id: 9000 }).count({ n: '*' }).first())?.n ?? 0) };
    const day = String(now - 86400);
    const week = String(now - 7 * 86400);
    const q = (o: Record<string, string | number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

    type Scenario = { name: string; endpoint: string; fn: () => Promise<unknown>; check: () => Promise<{ got: number; want: number }> };
    // Exactness: each answer once against the plain SQL over `logs` (no rollups).
    const reference = async (query: Record<string, unknown>, userId: number | undefined, stat: boolean) => {
      const f = toLogFilter(parse(filterQuery, query), userId === undefined ? undefined : { userId });
      const qb = knex('logs');
      if (f.user_id !== undefined) qb.where('user_id', f.user_id);
      if (f.username) qb.where('username', f.username);
      if (f.token_name) qb.where('token_name', f.token_name);
      if (f.model_name) qb.where('model_name', f.model_name);
      if (f.channel) qb.where('channel_id', f.channel);
      if (f.group) qb.where('group', f.group);
      if (f.start_timestamp) qb.where('created_at', '>=', f.start_timestamp);
      if (f.end_timestamp) qb.where('created_at', '<=', f.end_timestamp);
      if (stat) qb.where('type', LOG_TYPE.consume);
      else if (f.type) qb.where('type', f.type);
      const r = (await qb.first(knex.raw(stat ? 'coalesce(sum(quota), 0) as v' : 'count(*) as v'))) as { v: string | number };
      return Number(r.v);
    };
    const self = (u: number) => ({ userId: u });
    const L = (name: string, endpoint: string, query: Record<string, string>, user?: number): Scenario => ({
      name,
      endpoint,
      fn: () => listLogs(app.ctx, parse(filterQuery, query), parsePaging(query), user === undefined ? undefined : self(user)),
      check: async () => ({
        got: (await listLogs(app.ctx, parse(filterQuery, query), parsePaging(query), user === undefined ? undefined : self(user))).total,
        want: await reference(query, user, false),
      }),
    });
    const S = (name: string, endpoint: string, query: Record<string, string>, user?: number): Scenario => ({
      name,
      endpoint,
      fn: () => logStat(app.ctx, parse(filterQuery, query), user === undefined ? undefined : self(user)),
      check: async () => ({
        got: (await logStat(app.ctx, parse(filterQuery, query), user === undefined ? undefined : self(user))).quota,
        want: await reference(query, user, true),
      }),
    });
    const scenarios: Scenario[] = [
      L(`self list, heavy user (${heavy.n.toLocaleString()} rows), page 1`, 'GET /api/log/self/', q({ p: 1, page_size: 10 }), heavy.user_id),
      L(`self list, heavy user, last 24 h`, 'GET /api/log/self/', q({ p: 1, page_size: 10, start_timestamp: day, end_timestamp: now }), heavy.user_id),
      L(`self list, heavy user, type=2 + model`, 'GET /api/log/self/', q({ p: 1, page_size: 10, type: 2, model_name: 'gpt-4o' }), heavy.user_id),
      L(`self list, heavy user, page 100`, 'GET /api/log/self/', q({ p: 100, page_size: 10 }), heavy.user_id),
      L(`self list, typical user (${typical.n.toLocaleString()} rows)`, 'GET /api/log/self/', q({ p: 1, page_size: 10 }), typical.user_id),
      L(`self list, light user (${light.n.toLocaleString()} rows)`, 'GET /api/log/self/', q({ p: 1, page_size: 10 }), light.user_id),
      S(`self stat, heavy user, last 24 h`, 'GET /api/log/self/stat', q({ start_timestamp: day, end_timestamp: now }), heavy.user_id),
      S(`self stat, heavy user, last 7 days`, 'GET /api/log/self/stat', q({ start_timestamp: week, end_timestamp: now }), heavy.user_id),
      S(`self stat, heavy user, all time`, 'GET /api/log/self/stat', {}, heavy.user_id),
      S(`self stat, typical user, all time`, 'GET /api/log/self/stat', {}, typical.user_id),
      L('admin list, no filter, page 1', 'GET /api/log/', q({ p: 1, page_size: 10 })),
      L('admin list, last 24 h', 'GET /api/log/', q({ p: 1, page_size: 10, start_timestamp: day, end_timestamp: now })),
      L('admin list, type=1 (top-ups)', 'GET /api/log/', q({ p: 1, page_size: 10, type: 1 })),
      L('admin list, username=user1', 'GET /api/log/', q({ p: 1, page_size: 10, username: 'user1' })),
      L('admin list, username of a light user', 'GET /api/log/', q({ p: 1, page_size: 10, username: `user${light.user_id}` })),
      L('admin list, model=claude-3-opus (rare)', 'GET /api/log/', q({ p: 1, page_size: 10, model_name: 'claude-3-opus-20240229' })),
      L('admin list, channel=40 + last 7 days', 'GET /api/log/', q({ p: 1, page_size: 10, channel: 40, start_timestamp: week, end_timestamp: now })),
      L(
        'admin list, token_name + model + 24 h',
        'GET /api/log/',
        q({ p: 1, page_size: 10, token_name: 'token-1', model_name: 'gpt-4o', start_timestamp: day, end_timestamp: now }),
      ),
      S('admin stat, last 24 h', 'GET /api/log/stat', q({ start_timestamp: day, end_timestamp: now })),
      S('admin stat, model=gpt-4o + 24 h', 'GET /api/log/stat', q({ model_name: 'gpt-4o', start_timestamp: day, end_timestamp: now })),
      S('admin stat, username=user1, 7 days', 'GET /api/log/stat', q({ username: 'user1', start_timestamp: week, end_timestamp: now })),
      S('admin stat, all time', 'GET /api/log/stat', {}),
    ];

    log(`\ntiming ${scenarios.length} queries on ${ROWS.toLocaleString()} rows: 1 warm-up + ${RUNS} runs each (target ≤ ${TARGET_MS} ms)\n`);
    const results: Array<{ name: string; endpoint: string; medianMs: number; maxMs: number; runsMs: number[]; exact: boolean; value: number; pass: boolean }> =
      [];
    for (const s of scenarios) {
      const c = await s.check(); // doubles as the warm-up
      const runs: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t = process.hrtime.bigint();
        await s.fn();
        runs.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      const sorted = [...runs].sort((a, b) => a - b);
      const med = sorted[sorted.length >> 1];
      const exact = c.got === c.want;
      const r = {
        name: s.name,
        endpoint: s.endpoint,
        medianMs: med,
        maxMs: sorted[sorted.length - 1],
        runsMs: runs,
        exact,
        value: c.got,
        pass: exact && med <= TARGET_MS,
      };
      results.push(r);
      log(
        `  ${r.pass ? 'PASS' : 'FAIL'}  ${med.toFixed(1).padStart(8)} ms  (max ${r.maxMs.toFixed(1).padStart(8)})  ${s.endpoint.padEnd(22)} ${s.name}` +
          (exact ? '' : `  INEXACT: ${c.got} ≠ ${c.want} (raw SQL)`),
      );
    }
    const failed = results.filter((r) => !r.pass);
    log(
      `\n${results.length - failed.length}/${results.length} exact and within ${TARGET_MS} ms (median). Startup (migrations) ${startupSec.toFixed(0)} s.` +
        (seedSec ? ` Seed ${seedSec.toFixed(0)} s, indexes ${indexSec.toFixed(0)} s, rollups ${rollupSec.toFixed(0)} s.` : ''),
    );

    const stamp = new Date()
      .toISOString()
      .replace(/[:]/g, '-')
      .replace(/\.\d+Z$/, 'Z');
    const dir = path.join(__dirname, 'results');
    fs.mkdirSync(dir, { recursive: true });
    const out = path.join(dir, `logs-${stamp}${ROWS < 10_000_000 ? `-${ROWS}` : ''}.json`);
    fs.writeFileSync(
      out,
      JSON.stringify(
        {
          date: new Date().toISOString(),
          rows: ROWS,
          schema: SCHEMA,
          targetMs: TARGET_MS,
          startupSec,
          seedSec,
          indexSec,
          rollupSec,
          rollupRows,
          users: { heavy, typical, light },
          results,
          elapsedSec: (Date.now() - t0) / 1000,
        },
        null,
        2,
      ) + '\n',
    );
    log(`wrote ${path.relative(path.resolve(__dirname, '..'), out)}`);
  } finally {
    await app.close();
    if (!KEEP) {
      const { default: knexFactory } = await import('knex');
      const k = knexFactory({ client: 'pg', connection: PG_URL });
      try {
        await k.raw(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
      } finally {
        await k.destroy();
      }
    }
  }
}

main().catch((err) => {
  // eslint-disable-next-line no-console -- a command-line tool's output
  console.error(err);
  process.exit(1);
});
