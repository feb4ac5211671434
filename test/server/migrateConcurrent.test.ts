import crypto from 'node:crypto';
import knexFactory from 'knex';
import { createApp } from '../../server/src/app';
import { loadConfig } from '../../server/src/config';
import { createLogger } from '../../server/src/lib/logger';
import { DB_TARGETS } from '../helpers/app';

/**
 * Several nodes first started at once on an empty PostgreSQL database (a Compose or Kubernetes
 * roll-out without the one-shot migration): migrations run under an advisory lock
 * (db/migrate.ts), so every node starts, each migration runs once, and no migration lock row is
 * left behind. Without it, knex's own lock let one of two nodes fail in 5 of 6 tries here.
 */
const PG = DB_TARGETS.filter((t) => t.db === 'postgres');

if (PG.length)
  describe('migrations when nodes start at once (PostgreSQL)', () => {
    test('three nodes on a new schema, three times: all start, each migration applied once, the lock free', async () => {
      const admin = knexFactory({ client: 'pg', connection: process.env.TEST_DATABASE_URL });
      try {
        for (let round = 0; round < 3; round++) {
          const schema = `t_mig_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
          const base = loadConfig({});
          const start = (n: number) =>
            createApp(
              {
                ...base,
                databaseUrl: process.env.TEST_DATABASE_URL!,
                pgSchema: schema,
                redisUrl: undefined,
                nodeId: `mig-${n}`,
                sessionSecret: 's',
                adminDist: undefined,
              },
              { logger: createLogger('silent'), serveConsole: false },
            );
          try {
            const results = await Promise.allSettled([start(1), start(2), start(3)]);
            for (const r of results) if (r.status === 'fulfilled') await r.value.close();
            expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))).toEqual(['ok', 'ok', 'ok']);
            const applied = await admin.withSchema(schema).table('knex_migrations').select('name');
            expect(new Set(applied.map((a) => a.name)).size).toBe(applied.length);
            const lock = await admin.withSchema(schema).table('knex_migrations_lock').select('is_locked');
            expect(lock).toEqual([{ is_locked: 0 }]);
          } finally {
            await admin.raw(`drop schema if exists "${schema}" cascade`);
          }
        }
      } finally {
        await admin.destroy();
      }
    });
  });
