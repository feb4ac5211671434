import OpenAI from 'openai';
import { buildApp, makeUser, type Target, type TestApp } from '../helpers/app';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { PG_USERS_WITH_RECORDS } from '../../server/src/ledger/records';
import { reservationsUpkeep, UPKEEP_EVERY } from '../../server/src/ledger/postgres/upkeep';
import { withBatchConn, withPgConn, type PgConn } from '../../server/src/ledger/postgres/conn';
import { nodeId } from '../../server/src/ledger/recovery';
import { fakeOnly } from '../helpers/clock';

/**
 * PostgreSQL keeps the reservations queue table compact and its plans on the primary key
 * (ledger/postgres/upkeep.ts): without it, on a server whose autovacuum is off or has not come
 * round yet, the balance batch's cached plan reads the whole table for every settle and refund.
 */

const PG: Target[] = process.env.TEST_DATABASE_URL ? [{ name: 'postgres', db: 'postgres', redis: false }] : [];

/**
 * The upkeep's period is the ledger heartbeat, a `setInterval`: the app is built with jest's fake
 * `setInterval` (only that: the database driver and pool keep their real timers), and the test
 * moves the heartbeat by `heartbeats(n)` instead of sleeping through it.
 */
const HEARTBEAT_MS = 300;
const heartbeats = (n: number) => jest.advanceTimersByTimeAsync(n * HEARTBEAT_MS);

const vacuums = async (app: TestApp) =>
  Number((await app.knex.raw("select vacuum_count as n from pg_stat_user_tables where relname = 'reservations' and schemaname = current_schema()")).rows[0].n);

/** The plan a long-lived connection keeps for the balance batch statement (its generic plan). */
async function genericPlan(conn: PgConn, name: string): Promise<string> {
  const args = ['{1}', '{0}', '{0}', ...Array<string>(24).fill('{}')].map((a) => `'${a}'`).join(', ');
  await conn.query({ text: 'set plan_cache_mode = force_generic_plan' });
  await conn.query({ text: `prepare ${name} as ${PG_USERS_WITH_RECORDS.text}` });
  const rows = (await conn.query({ text: `explain execute ${name}(${args})` })).rows;
  await conn.query({ text: `deallocate ${name}` });
  await conn.query({ text: 'reset plan_cache_mode' });
  return rows.map((r) => String(r['QUERY PLAN'])).join('\n');
}

async function waitFor(check: () => Promise<boolean>, ms = 10_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

if (PG.length)
  describe.each(PG.map((t) => [t.name, t] as const))('reservations table upkeep [%s]', (_n, target) => {
    let app: TestApp;
    let mock: MockUpstream;
    let gw: { url: string; close(): Promise<void> };
    beforeAll(async () => {
      mock = await startMockUpstream();
      fakeOnly(['setInterval', 'clearInterval']);
      app = await buildApp(target, { config: { ledgerHeartbeatMs: HEARTBEAT_MS } });
      gw = await listen(app.callback);
    });
    afterAll(async () => {
      jest.useRealTimers();
      await gw?.close();
      await app?.close();
      await mock?.close();
    });

    test('a plan that scans the table is replaced by primary-key lookups once the upkeep ran', async () => {
      // Planned while the table is empty, as on a fresh database.
      expect(await withPgConn(app.ctx, false, (conn) => genericPlan(conn, 'probe_fresh'))).toMatch(/Seq Scan on reservations/);
      // A busy minute of calls: rows in and out of the queue (this node's, which no take-over touches).
      const me = nodeId(app.ctx);
      await app.knex.raw('insert into reservations (id, node_id, user_id, created_at) select g, ?, 1, 0 from generate_series(1, ?::int) g', [me, UPKEEP_EVERY]);
      const deletedBy = await app.knex.transaction(async (trx) => {
        await trx.raw('delete from reservations where id <= ?', [UPKEEP_EVERY - 50]);
        return Number((await trx.raw('select txid_current() % 4294967296 as x')).rows[0].x);
      });
      // Vacuum frees dead rows only once no transaction older than their delete is open — neither
      // a snapshot (backend_xmin) nor a writer between statements (backend_xid, or the oldest xid
      // still running): other test files share this server, so wait for theirs to end (as a quiet
      // moment would in production).
      await waitFor(async () => {
        const r = (
          await app.knex.raw(
            `select txid_snapshot_xmin(txid_current_snapshot()) % 4294967296 as oldest,
                    (select count(*) from pg_stat_activity where pid <> pg_backend_pid()
                       and (backend_xmin::text::bigint <= ? or backend_xid::text::bigint <= ?)) as n`,
            [deletedBy, deletedBy],
          )
        ).rows[0];
        return Number(r.n) === 0 && Number(r.oldest) > deletedBy;
      }, 60_000);
      const before = await vacuums(app);
      const upkeep = reservationsUpkeep(app.ctx);
      upkeep.deleted(UPKEEP_EVERY);
      await upkeep.running;
      expect(await vacuums(app)).toBe(before + 1);
      const plan = await withPgConn(app.ctx, false, (conn) => genericPlan(conn, 'probe_kept'));
      expect(plan).toMatch(/Index Scan (using|on) reservations_pkey/);
      expect(plan).not.toMatch(/Seq Scan on reservations/);
      // The dead rows' room is free again: the table does not grow while the queue turns over.
      const pages = async () => Number((await app.knex.raw("select pg_relation_size('reservations') / 8192 as n")).rows[0].n);
      const size = await pages();
      await app.knex.raw('insert into reservations (id, node_id, user_id, created_at) select g, ?, 1, 0 from generate_series(?::bigint, ?::bigint) g', [
        me,
        UPKEEP_EVERY + 1,
        UPKEEP_EVERY + 2_000,
      ]);
      expect(await pages()).toBe(size);
      await app
        .knex('reservations')
        .where('id', '<=', UPKEEP_EVERY + 2_000)
        .del();
    });

    test('the balance batches look reservations up by primary key whatever the statistics say', async () => {
      // A table as a fresh database has it: empty, never analysed.
      await app.knex.raw('truncate reservations');
      expect(await withPgConn(app.ctx, false, (conn) => genericPlan(conn, 'probe_pooled'))).toMatch(/Seq Scan on reservations/);
      const plan = await withBatchConn(app.ctx, false, (conn) => genericPlan(conn, 'probe_batch'));
      expect(plan).toMatch(/Index Scan (using|on) reservations_pkey/);
      expect(plan).not.toMatch(/Seq Scan on reservations/);
      // The connection is held: the same one batch after batch.
      const pid = async () => Number((await withBatchConn(app.ctx, false, (conn) => conn.query({ text: 'select pg_backend_pid() as p' }))).rows[0]!.p);
      const held = await pid();
      expect(await pid()).toBe(held);
      // A failed statement gives it back to the pool, reset: the pooled connections (that one
      // among them) plan as usual.
      await expect(withBatchConn(app.ctx, false, (conn) => conn.query({ text: 'select * from no_such_table' }))).rejects.toThrow();
      const pooled = await Promise.all(
        Array.from({ length: 8 }, () =>
          withPgConn(app.ctx, true, (conn) =>
            conn.query({ text: 'select pg_backend_pid() as p, current_setting($1) as s', values: ['enable_seqscan'] }).then((r) => r.rows[0]!),
          ),
        ),
      );
      expect(pooled.map((r) => Number(r.p))).toContain(held);
      expect(new Set(pooled.map((r) => r.s))).toEqual(new Set(['on']));
      // The next batch takes a connection and sets it alike.
      expect(await withBatchConn(app.ctx, false, (conn) => conn.query({ text: 'show enable_seqscan' }))).toMatchObject({ rows: [{ enable_seqscan: 'off' }] });
    });

    test("the usage batch's deletions bring the vacuum round on the heartbeat period", async () => {
      await setOptions(app, { ModelRatio: JSON.stringify({ 'test-model': 2 }) });
      await seedChannel(app, { base_url: mock.url, models: 'test-model' });
      const u = await makeUser(app, { quota: 10_000_000 });
      const t = await seedToken(app, u.id, { name: 'upkeep' });
      const client = new OpenAI({ apiKey: t.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const upkeep = reservationsUpkeep(app.ctx);
      // Let a vacuum of the previous test's rows come and go first.
      await heartbeats(1);
      await upkeep.running;
      const before = await vacuums(app);
      for (let i = 0; i < 3; i++) await client.chat.completions.create({ model: 'test-model', messages: [{ role: 'user', content: 'hi' }] });
      expect(Number((await app.knex('reservations').count({ n: '*' }).first())!.n)).toBe(3);
      await flushUsage(app);
      expect(Number((await app.knex('reservations').count({ n: '*' }).first())!.n)).toBe(0);
      // Far below UPKEEP_EVERY: nothing until the heartbeat comes round, then one vacuum.
      expect(upkeep.running).toBeUndefined();
      await heartbeats(1);
      await upkeep.running;
      await waitFor(async () => (await vacuums(app)) > before);
      // And with nothing deleted since, no further vacuum.
      const after = await vacuums(app);
      await heartbeats(3);
      await upkeep.running;
      expect(await vacuums(app)).toBe(after);
    });
  });
