import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb, releaseDbMemory, type Db } from '../../server/src/db/knex';
import { nativeMemory } from '../../server/src/lib/native';
import { testGc } from '../helpers/gc';
import { DB_TARGETS } from '../helpers/app';

/** What the idle GC asks of the database (app.releaseIdle → releaseDbMemory). */
describe('releaseDbMemory', () => {
  test('SQLite: the page cache a burst filled (4 MB) is given back', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-cache-'));
    const db = createDb(`sqlite:${path.join(dir, 'c.db')}`);
    try {
      await db.knex.schema.createTable('blobs', (t) => {
        t.increments('id');
        t.binary('b');
      });
      // ≈ 12 MB of pages written and read back: the cache is full.
      await db.knex.transaction(async (tx) => {
        for (let i = 0; i < 400; i++) await tx('blobs').insert(Array.from({ length: 10 }, () => ({ b: crypto.randomBytes(3000) })));
      });
      expect(Number((await db.knex('blobs').sum({ n: db.knex.raw('length(b)') }))[0]!.n)).toBe(4000 * 3000);
      const trim = nativeMemory()!.trim;
      testGc()();
      trim();
      const before = process.memoryUsage.rss();
      await releaseDbMemory(db);
      trim();
      const released = before - process.memoryUsage.rss();
      expect(released).toBeGreaterThan(2.5 * 2 ** 20);
      // Nothing was lost: the next read comes from the file.
      expect(Number((await db.knex('blobs').count({ n: '*' }))[0]!.n)).toBe(4000);
    } finally {
      await db.knex.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test.each(DB_TARGETS.map((t) => [t.name, t] as const))('%s: runs between writes without disturbing them', async (_name, target) => {
    let db: Db;
    let schema: string | undefined;
    if (target.db === 'postgres') {
      schema = `t_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
      db = createDb(process.env.TEST_DATABASE_URL!, { pgSchema: schema });
    } else db = createDb('sqlite::memory:');
    try {
      await db.knex.schema.createTable('items', (t) => {
        t.increments('id');
        t.integer('n');
      });
      await db.knex('items').insert({ n: 1 });
      await Promise.all([releaseDbMemory(db), db.knex('items').insert({ n: 2 })]);
      await releaseDbMemory(db);
      expect((await db.knex('items').orderBy('id').select('n')).map((r) => r.n)).toEqual([1, 2]);
    } finally {
      if (schema) await db.knex.raw(`drop schema if exists "${schema}" cascade`);
      await db.knex.destroy();
    }
  });
});
