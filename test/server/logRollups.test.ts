import { DB_TARGETS, describeEach, type TestApp } from '../helpers/app';
import { migrationSource } from '../../migrations';
import {
  deleteLogsBefore,
  insertLog,
  insertLogs,
  logRow,
  logStats,
  planRange,
  queryLogs,
  rebuildLogRollups,
  rollupDim,
  type LogFilter,
  type NewLog,
} from '../../server/src/repositories/logs';
import { filterQuery, listLogs, logStat } from '../../server/src/services/logs';
import { parse } from '../../server/src/lib/validate';
import { usageBatcher } from '../../server/src/ledger/usage';
import { groupUnit } from '../../server/src/ledger/sqlite/statements';

/** Deterministic PRNG so a failure can be replayed. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const H = 3600;
const D = 86400;
const T0 = Math.floor(1_700_000_000 / D) * D; // a day boundary
const USERS = [
  { id: 11, name: 'ann' },
  { id: 12, name: 'ben' },
  { id: 13, name: 'cat' },
  { id: 14, name: 'ann' }, // same username, other id: user_id and username filters differ
];
const MODELS = ['gpt-4o', 'o3', 'claude', 'weird|model'];
const TOKENS = ['', 'ta', 'tb'];
const GROUPS = ['default', 'vip', ''];
const CHANNELS = [0, 3, 4];

/** Timestamps around hour and day boundaries, plus random ones, over ~3 days. */
function randomTime(r: () => number): number {
  const day = Math.floor(r() * 3);
  const hour = Math.floor(r() * 24);
  const offsets = [0, 1, -1, H / 2 - 1, H / 2, H / 2 + 1, H - 1, Math.floor(r() * H)];
  return T0 + day * D + hour * H + offsets[Math.floor(r() * offsets.length)]!;
}

function randomLog(r: () => number, at?: number): NewLog {
  const u = USERS[Math.floor(r() * USERS.length)]!;
  const type = r() < 0.7 ? 2 : 1 + Math.floor(r() * 4);
  const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)]!;
  return {
    user_id: u.id,
    username: u.name,
    type,
    created_at: at ?? randomTime(r),
    model_name: pick(MODELS),
    token_name: pick(TOKENS),
    channel_id: pick(CHANNELS),
    group: pick(GROUPS),
    quota: Math.floor(r() * 100_000),
    prompt_tokens: Math.floor(r() * 5000),
    completion_tokens: Math.floor(r() * 2000),
  };
}

/** The plain SQL answer (no rollups): count under the filter, or type-2 quota sum. */
async function reference(app: TestApp, f: LogFilter, stat: boolean): Promise<number> {
  const qb = app.knex('logs');
  if (f.user_id !== undefined) qb.where('user_id', f.user_id);
  if (f.username) qb.where('username', f.username);
  if (f.token_name) qb.where('token_name', f.token_name);
  if (f.model_name) qb.where('model_name', f.model_name);
  if (f.channel) qb.where('channel_id', f.channel);
  if (f.group) qb.where('group', f.group);
  if (f.start_timestamp) qb.where('created_at', '>=', f.start_timestamp);
  if (f.end_timestamp) qb.where('created_at', '<=', f.end_timestamp);
  if (stat) qb.where('type', 2);
  else if (f.type) qb.where('type', f.type);
  const row = (await qb.first(app.knex.raw(stat ? 'coalesce(sum(quota), 0) as v' : 'count(*) as v'))) as { v: number | string };
  return Number(row.v);
}

/** Rollup rows as maintained (zero rows dropped), to compare with a rebuild from scratch. */
async function rollupSnapshot(app: TestApp): Promise<string[]> {
  const rows = (await app.knex('log_rollups').where('n', '<>', 0).orWhere('quota', '<>', 0).orWhere('tokens', '<>', 0).select('*')) as Array<
    Record<string, unknown>
  >;
  return rows
    .map((r) =>
      [r.dim, r.user_id, r.username, r.token_name, r.model_name, r.channel_id, r.group, r.bucket, r.type, r.n, r.quota, r.tokens].map(String).join('\u0001'),
    )
    .sort();
}

/** Maintained rollups equal a rebuild from `logs` (the rebuild runs in a rolled-back transaction). */
async function expectRollupsInStep(app: TestApp) {
  const maintained = await rollupSnapshot(app);
  let rebuilt: string[] = [];
  await app.knex
    .transaction(async (trx) => {
      await rebuildLogRollups(trx);
      rebuilt = await rollupSnapshot({ ...app, knex: trx } as TestApp);
      throw new Error('rollback');
    })
    .catch((e: Error) => {
      if (e.message !== 'rollback') throw e;
    });
  expect(rebuilt.length).toBeGreaterThan(0);
  expect(maintained).toEqual(rebuilt);
}

/** Time ranges: none, open ends, aligned, ±1 s around hour/day edges, one bucket, empty, reversed. */
function ranges(r: () => number): Array<[number | undefined, number | undefined]> {
  const out: Array<[number | undefined, number | undefined]> = [
    [undefined, undefined],
    [T0 + D + 5 * H, undefined],
    [undefined, T0 + D + 5 * H - 1],
    [T0, T0 + 3 * D - 1],
    [T0 + D, T0 + 2 * D],
    [T0 + D - 1, T0 + 2 * D + 1],
    [T0 + D + 1, T0 + 2 * D - 1],
    [T0 + 7 * H + 10, T0 + 7 * H + 20], // inside one hour, short
    [T0 + 7 * H + 10, T0 + 7 * H + 3000], // inside one hour, long
    [T0 + 30 * H + H / 2, T0 + 31 * H + H / 2], // neighbouring hours
    [T0 + D + H / 2 + 1, T0 + 2 * D + H / 2 - 1], // mid-hour edges, both kinds of edge reads
    [T0 + D + 3 * H, T0 + D + 2 * H], // reversed: nothing
  ];
  for (let i = 0; i < 6; i++) {
    const a = T0 - H + Math.floor(r() * (3 * D + 2 * H));
    const b = a + Math.floor(r() * r() * 2 * D);
    out.push([a, b]);
  }
  return out;
}

describeEach(DB_TARGETS, 'log rollups', (getApp) => {
  const r = rng(20261122);
  const app = () => getApp();

  beforeAll(async () => {
    await app().knex('logs').delete();
  });

  it('planRange covers exactly the inclusive range (rollup buckets ± raw edges)', () => {
    const pr = rng(7);
    for (const size of [H, D]) {
      for (let i = 0; i < 400; i++) {
        const base = 10 * size;
        const s = pr() < 0.1 ? undefined : base + Math.floor(pr() * 4 * size) - (pr() < 0.3 ? (Math.floor(pr() * 4) * size) % size : 0);
        const e = pr() < 0.1 ? undefined : (s ?? base) + Math.floor(pr() * 3 * size) - Math.floor(pr() * 3);
        // Half the cases know the time: a range ending now (or later) in a busy current bucket.
        const now = pr() < 0.5 ? Infinity : (e ?? (s ?? base) + 2 * size) + Math.floor(pr() * size) - Math.floor(size / 4);
        const terms = planRange(s, e, size, now);
        const weight = (t: number) =>
          terms.reduce((acc, term) => {
            if (term.raw) return acc + (t >= term.raw.from && t <= term.raw.to ? term.sign : 0);
            const b = t - (t % size);
            const lo = term.rollup!.from ?? -Infinity;
            const hi = term.rollup!.to ?? Infinity;
            return acc + (b >= lo && b <= hi ? term.sign : 0);
          }, 0);
        const probes = [0, 1, base - 1, base, base + 1];
        for (const x of [s, e]) if (x !== undefined) probes.push(x - 1, x, x + 1, x - (x % size), x - (x % size) + size - 1, x - (x % size) + size);
        for (let k = 0; k < 30; k++) probes.push(base - size + Math.floor(pr() * 8 * size));
        for (const t of probes) {
          const want = (s === undefined || t >= s) && (e === undefined || t <= e) ? 1 : 0;
          expect([s, e, t, weight(t)]).toEqual([s, e, t, want]);
        }
        // Raw reads never cover more than half a bucket of past time in all.
        const past = terms.reduce((acc, t) => acc + (t.raw ? Math.max(0, Math.min(t.raw.to, now) - t.raw.from + 1) : 0), 0);
        expect(past).toBeLessThanOrEqual(size);
        for (const term of terms) if (term.raw) expect(Math.max(0, Math.min(term.raw.to, now) - term.raw.from + 1)).toBeLessThanOrEqual(size / 2);
      }
    }
  });

  it('a range ending now, late in the current bucket, reads only what came after its end', () => {
    const be = 500 * H;
    const end = be + 25 * 60; // 25 minutes into the current hour
    const terms = planRange(be - 24 * H + 40 * 60, end, H, end + 3);
    expect(terms).toContainEqual({ sign: -1, raw: { from: end + 1, to: be + H - 1 } });
    expect(terms.some((t) => t.raw && t.raw.from <= end && t.raw.to >= be)).toBe(false);
    // Without the time, the shorter piece by the clock is the inside one.
    expect(planRange(be - 24 * H + 40 * 60, end, H)).toContainEqual({ sign: 1, raw: { from: be, to: end } });
  });

  it('migration backfills rollups from logs written before it', async () => {
    const a = app();
    // Only the rollup migrations are undone: later ones (sessions, reservations) are independent of them.
    await a.knex.migrate.down({ migrationSource, name: '009_pg_batch_rollups' });
    await a.knex.migrate.down({ migrationSource, name: '002_log_rollups' });
    expect(await a.knex.schema.hasTable('log_rollups')).toBe(false);
    await a.knex('logs').insert(Array.from({ length: 150 }, () => logRow(randomLog(r))));
    await a.knex.migrate.latest({ migrationSource });
    expect(await a.knex.schema.hasTable('log_rollups')).toBe(true);
    await expectRollupsInStep(a);
    expect(await reference(a, {}, false)).toBe(150);
  });

  it('keeps rollups in step through batcher, insertLog, multi-row inserts and updates', async () => {
    const a = app();
    const b = usageBatcher(a.ctx);
    for (let i = 0; i < 1100; i++) b.addLog(randomLog(r)); // more than one batch (FLUSH_AT)
    await b.flush();
    // The batch adds its own rollups (on PostgreSQL its insert trigger is told to leave them: a
    // double count would show below); SQLite has no insert trigger at all.
    const triggers =
      a.target.db === 'sqlite'
        ? ((await a.knex.raw("select name from sqlite_master where type = 'trigger' and tbl_name = 'logs'")) as Array<{ name: string }>)
            .map((t) => t.name)
            .sort()
        : [];
    if (a.target.db === 'sqlite') expect(triggers).toEqual(['logs_rollup_del', 'logs_rollup_upd']);
    await expectRollupsInStep(a);
    for (let i = 0; i < 20; i++) await insertLog(a.knex, randomLog(r));
    await a.knex.transaction(async (trx) => {
      for (let i = 0; i < 10; i++) await insertLog(trx, randomLog(r));
    });
    // Plain multi-row SQL on PostgreSQL (its statement trigger); SQLite keeps rollups in insertLogs.
    const many = Array.from({ length: 300 }, () => randomLog(r));
    if (a.target.db === 'postgres') await a.knex('logs').insert(many.map(logRow));
    else await insertLogs(a.knex, many);
    await expectRollupsInStep(a);
    // An update that moves rows between keys and buckets.
    await a
      .knex('logs')
      .where('model_name', 'o3')
      .where('type', 2)
      .update({ model_name: 'o3-moved', quota: 7, created_at: T0 + D + 5 });
    await expectRollupsInStep(a);
    // A rolled-back insert leaves no trace.
    const before = await rollupSnapshot(a);
    await a.knex
      .transaction(async (trx) => {
        await insertLog(trx, randomLog(r));
        throw new Error('nope');
      })
      .catch(() => undefined);
    expect(await rollupSnapshot(a)).toEqual(before);
  });

  it('a flush while the SQLite connection is busy in a transaction waits for it and keeps rollups in step', async () => {
    const a = app();
    const before = await reference(a, {}, false);
    const b = usageBatcher(a.ctx);
    if (a.target.db === 'sqlite') await groupUnit(a.ctx, (run) => run('select 1 as v', [])); // the group commit holds its connection handle from now on
    for (let i = 0; i < 30; i++) b.addLog(randomLog(r));
    let flushed: Promise<void> | undefined;
    await a.knex.transaction(async (trx) => {
      flushed = b.flush(); // SQLite: the group commit finds the connection in this transaction and waits for it
      await trx('logs').count({ n: '*' });
      await new Promise((res) => setTimeout(res, 30));
    });
    await flushed;
    expect(await reference(a, {}, false)).toBe(before + 30);
    await expectRollupsInStep(a);
  });

  it('concurrent writers do not lose counts', async () => {
    const a = app();
    const before = await reference(a, {}, false);
    const same = (i: number): NewLog => ({
      ...randomLog(r, T0 + D + 10 * H + (i % 7)),
      user_id: 11,
      username: 'ann',
      model_name: 'gpt-4o',
      token_name: 'ta',
      group: 'vip',
      channel_id: 3,
      type: 2,
    });
    await Promise.all([
      ...Array.from({ length: 8 }, (_, k) =>
        a.knex.transaction(async (trx) => {
          const rows = Array.from({ length: 40 }, (_, i) => same(k * 40 + i));
          if (a.target.db === 'postgres') await trx('logs').insert(rows.map(logRow));
          else await insertLogs(trx, rows);
        }),
      ),
      ...Array.from({ length: 20 }, (_, i) => insertLog(a.knex, same(i))),
      (async () => {
        const b = usageBatcher(a.ctx);
        for (let i = 0; i < 60; i++) b.addLog(same(i));
        await b.flush();
      })(),
    ]);
    expect(await reference(a, {}, false)).toBe(before + 8 * 40 + 20 + 60);
    await expectRollupsInStep(a);
  });

  it('answers every filter combination exactly (rollup path and raw path agree with plain SQL)', async () => {
    const a = app();
    const keys = ['user_id', 'username', 'token_name', 'model_name', 'channel', 'group'] as const;
    const values: Record<(typeof keys)[number], () => string | number> = {
      user_id: () => USERS[Math.floor(r() * USERS.length)]!.id,
      username: () => USERS[Math.floor(r() * USERS.length)]!.name,
      token_name: () => ['ta', 'tb', 'zz'][Math.floor(r() * 3)]!,
      model_name: () => ['gpt-4o', 'o3-moved', 'claude', 'weird|model'][Math.floor(r() * 4)]!,
      channel: () => [3, 4, 9][Math.floor(r() * 3)]!,
      group: () => ['default', 'vip'][Math.floor(r() * 2)]!,
    };
    let viaRollup = 0;
    let checked = 0;
    for (let mask = 0; mask < 64; mask++) {
      const base: LogFilter = {};
      keys.forEach((k, i) => {
        if (mask & (1 << i)) (base as Record<string, unknown>)[k] = values[k]();
      });
      if (rollupDim(base)) viaRollup++;
      for (const [start, end] of ranges(r)) {
        for (const type of [undefined, 2, 1]) {
          const f: LogFilter = { ...base, start_timestamp: start, end_timestamp: end, type };
          const { total, rows } = await queryLogs(a.knex, f, { p: 1, page_size: 3 });
          expect([mask, start, end, type, total]).toEqual([mask, start, end, type, await reference(a, f, false)]);
          expect(rows.length).toBe(Math.min(3, total));
          if (type === undefined) {
            const s = await logStats(a.knex, f, T0);
            expect([mask, start, end, s.quota]).toEqual([mask, start, end, await reference(a, f, true)]);
          }
          checked++;
        }
      }
    }
    expect(viaRollup).toBe(10); // every maintained dimension was exercised
    expect(checked).toBeGreaterThan(64 * 12 * 3 - 1);
  });

  it('pages newest first with id as tie-break, and past the end is empty', async () => {
    const a = app();
    const f: LogFilter = { user_id: 11 };
    const total = await reference(a, f, false);
    const all = await a
      .knex('logs')
      .where(f)
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .select('id');
    const page2 = await queryLogs(a.knex, f, { p: 2, page_size: 7 });
    expect(page2.total).toBe(total);
    expect(page2.rows.map((x) => Number(x.id))).toEqual(all.slice(7, 14).map((x) => Number(x.id)));
    const past = await queryLogs(a.knex, f, { p: Math.ceil(total / 7) + 1, page_size: 7 });
    expect(past).toEqual({ rows: [], total });
  });

  it('serves the console services (list + stat) from the same numbers', async () => {
    const a = app();
    const q = { start_timestamp: String(T0 + D + 1), end_timestamp: String(T0 + 2 * D + 7), model_name: 'gpt-4o' };
    const list = await listLogs(a.ctx, parse(filterQuery, q), { p: 1, page_size: 5 });
    expect(list.total).toBe(await reference(a, { model_name: 'gpt-4o', start_timestamp: T0 + D + 1, end_timestamp: T0 + 2 * D + 7 }, false));
    const self = await logStat(a.ctx, parse(filterQuery, q), { userId: 11 });
    expect(self.quota).toBe(await reference(a, { user_id: 11, model_name: 'gpt-4o', start_timestamp: T0 + D + 1, end_timestamp: T0 + 2 * D + 7 }, true));
  });

  it('purge (mid-hour target) adjusts rollups and figures', async () => {
    const a = app();
    const target = T0 + D + 7 * H + 1234;
    const older = Number((await a.knex('logs').where('created_at', '<', target).count({ n: '*' }).first())!.n);
    expect(older).toBeGreaterThan(0);
    expect(await deleteLogsBefore(a.knex, target)).toBe(older);
    await expectRollupsInStep(a);
    // No all-zero rows left behind for purged buckets.
    expect(Number((await a.knex('log_rollups').where('n', 0).where('bucket', '<', target).count({ n: '*' }).first())!.n)).toBe(0);
    for (const f of [
      {},
      { user_id: 11 },
      { model_name: 'gpt-4o', start_timestamp: T0, end_timestamp: target + H },
      { username: 'ann', end_timestamp: target },
    ]) {
      expect((await queryLogs(a.knex, f, { p: 1, page_size: 1 })).total).toBe(await reference(a, f, false));
      expect((await logStats(a.knex, f, T0)).quota).toBe(await reference(a, f, true));
    }
    expect(await reference(a, { end_timestamp: target - 1 }, false)).toBe(0);
  });

  it('truncate and full delete leave no stale figures', async () => {
    const a = app();
    await a.knex('logs').delete();
    expect((await queryLogs(a.knex, {}, { p: 1, page_size: 1 })).total).toBe(0);
    expect((await logStats(a.knex, { user_id: 11 }, T0)).quota).toBe(0);
    await insertLogs(
      a.knex,
      Array.from({ length: 5 }, () => randomLog(r)),
    );
    if (a.target.db === 'postgres') {
      await a.knex.raw('TRUNCATE logs');
      expect(Number((await a.knex('log_rollups').count({ n: '*' }).first())!.n)).toBe(0);
    }
  });
});
