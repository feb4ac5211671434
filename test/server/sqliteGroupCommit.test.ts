import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp, type TestApp } from '../helpers/app';
import { groupTx, groupUnit, requestCheckpoint, Rollback, type RowUpdate } from '../../server/src/ledger/sqlite/statements';
import type { AppContext } from '../../server/src/context';

/** One statement through the group commit (what the balance moves do). */
const runFast = (app: AppContext, sql: string, params: unknown[]) => groupUnit(app, (run) => run(sql, params));

/** The SQLite hot-write path: statements of one event-loop turn share one transaction. */
describe('SQLite group commit (ledger/sqlite/statements.ts)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await buildApp({ name: 'sqlite', db: 'sqlite', redis: false });
    await app.knex.schema.createTable('gc_items', (t) => {
      t.integer('id').primary();
      t.integer('n').notNullable();
    });
  });
  afterAll(async () => {
    await app.close();
  });
  beforeEach(async () => {
    await app.knex('gc_items').delete();
    await app.knex('gc_items').insert([
      { id: 1, n: 100 },
      { id: 2, n: 0 },
    ]);
  });

  const dec = 'update "gc_items" set "n" = "n" - ? where "id" = ? and "n" >= ? returning "n" as v';
  const nOf = async (id: number) => Number((await app.knex('gc_items').where({ id }).first('n'))?.n);

  test('concurrent conditional decrements: each sees the balance left by the ones before it, none overspends', async () => {
    const results = await Promise.all(Array.from({ length: 30 }, () => runFast(app.ctx, dec, [7, 1, 7])));
    const won = results.filter((r) => r && r.length === 1).map((r) => Number(r![0]!.v));
    // 100 / 7 → 14 succeed, in order 93, 86, … 2; the other 16 find too little and change nothing.
    expect(won).toEqual(Array.from({ length: 14 }, (_, i) => 100 - 7 * (i + 1)));
    expect(results.filter((r) => r && r.length === 0)).toHaveLength(16);
    expect(await nOf(1)).toBe(2);
  });

  test('a failing statement rejects only its caller; the rest of the group is committed', async () => {
    const ok1 = runFast(app.ctx, 'update "gc_items" set "n" = "n" + 1 where "id" = 1 returning "n" as v', []);
    const bad = runFast(app.ctx, 'insert into "gc_items" ("id", "n") values (?, ?)', [1, 5]); // duplicate key
    const ok2 = runFast(app.ctx, 'update "gc_items" set "n" = "n" + 1 where "id" = 2 returning "n" as v', []);
    // (toMatchObject, not toThrow: better-sqlite3's error class may come from another jest realm)
    await expect(bad).rejects.toMatchObject({ message: expect.stringMatching(/UNIQUE|constraint/i) });
    expect((await ok1)![0]!.v).toBe(101);
    expect((await ok2)![0]!.v).toBe(1);
    expect(await nOf(1)).toBe(101);
    expect(await nOf(2)).toBe(1);
  });

  test('Rollback undoes only that unit of work (its SAVEPOINT), not its neighbours', async () => {
    const [a, b, c] = await Promise.all([
      groupTx(app.ctx, (run) => {
        run(dec, [10, 1, 10]);
        return 'a';
      }),
      groupTx(app.ctx, (run) => {
        run(dec, [50, 1, 50]); // applied, then undone
        if (run(dec, [1, 2, 1]).length === 0) throw new Rollback(); // id 2 has 0: roll back
        return 'b';
      }),
      groupTx(app.ctx, (run) => {
        run(dec, [5, 1, 5]);
        return 'c';
      }),
    ]);
    expect([a, b, c]).toEqual(['a', undefined, 'c']);
    expect(await nOf(1)).toBe(85);
    expect(await nOf(2)).toBe(0);
  });

  test('an error thrown inside a unit of work undoes it and reaches the caller', async () => {
    const p = groupTx(app.ctx, (run) => {
      run(dec, [40, 1, 40]);
      throw new Error('boom');
    });
    await expect(p).rejects.toThrow('boom');
    expect(await nOf(1)).toBe(100);
  });

  test('while a knex transaction holds the connection the group waits for it (never joins it)', async () => {
    let queued: Promise<unknown> | undefined;
    let inside: unknown = 'unset';
    await app.knex
      .transaction(async (trx) => {
        await trx('gc_items').where({ id: 2 }).update({ n: 9 });
        queued = runFast(app.ctx, dec, [1, 1, 1]);
        await new Promise((res) => setTimeout(res, 30));
        inside = (await trx('gc_items').where({ id: 1 }).first('n'))?.n;
        throw new Error('undo the transaction');
      })
      .catch(() => undefined);
    expect(inside).toBe(100); // not run inside the transaction
    expect(await queued).toEqual([{ v: 99 }]);
    expect(await nOf(1)).toBe(99); // run after it, and kept although the transaction rolled back
    expect(await nOf(2)).toBe(0);
  });

  test('a row update answers like RETURNING (UPDATE + primary-key SELECT)', async () => {
    const two: RowUpdate = {
      update: 'update "gc_items" set "n" = "n" + ? - ? where "id" = ? and "n" >= ?',
      read: 'select "n" from "gc_items" where "id" = ?',
      idAt: 2,
    };
    const update = (params: unknown[]) => groupUnit(app.ctx, (run) => run.update(two, params));
    expect(await update([10, 4, 1, 0])).toBe(106);
    expect(await update([10, 4, 2, 1])).toBeUndefined(); // id 2 has 0 < 1: no row, nothing changed
    expect(await update([1, 1, 99, 0])).toBeUndefined(); // no such id
    expect(await nOf(2)).toBe(0);
  });

  test('writes are durable when the promise resolves (visible to a fresh read)', async () => {
    await runFast(app.ctx, dec, [3, 1, 3]);
    expect(await nOf(1)).toBe(97);
  });
});

/**
 * WAL checkpoints come after a usage flush's commit (requestCheckpoint), once enough commits have
 * accumulated, instead of inside whichever call's commit crosses SQLite's threshold.
 */
describe('SQLite WAL checkpoint after a usage flush', () => {
  let dir: string;
  let app: TestApp;
  let file: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-wal-'));
    file = path.join(dir, 'g.db');
    app = await buildApp({ name: 'sqlite', db: 'sqlite', redis: false }, { config: { databaseUrl: `sqlite:${file}` } });
    await app.knex.schema.createTable('wal_items', (t) => {
      t.integer('id').primary();
      t.text('blob').notNullable();
    });
  });
  afterAll(async () => {
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the pages written by many commits reach the database file at the flush, not before', async () => {
    // Settle the schema into the file first, then measure what the hot commits add to it.
    await app.knex.raw('PRAGMA wal_checkpoint(TRUNCATE)');
    const before = fs.statSync(file).size;
    // 300 commits (one per turn) of ≈ 2 pages each: under SQLite's own threshold (4 000 pages).
    for (let i = 0; i < 300; i++) await groupUnit(app.ctx, (run) => run('insert into "wal_items" ("id", "blob") values (?, ?)', [i, 'x'.repeat(6000)]));
    expect(fs.statSync(file).size).toBe(before);
    requestCheckpoint(app.ctx);
    await groupUnit(app.ctx, (run) => run('insert into "wal_items" ("id", "blob") values (?, ?)', [1000, 'y']));
    expect(fs.statSync(file).size).toBeGreaterThan(before + 300 * 6000);
  });
});
