import knexFactory, { type Knex } from 'knex';
import OpenAI from 'openai';
import { buildApp, DB_TARGETS, describeEach, loginAgent, makeUser, type TestApp } from '../helpers/app';
import { startPgProxy, type PgProxy } from '../helpers/pgProxy';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { Reservation } from '../../server/src/ledger/reservation';
import { ledgerRepairs } from '../../server/src/ledger/repair';
import { withBatchConn, withPgConn } from '../../server/src/ledger/postgres/conn';
import { LOG_TYPE } from '../../server/src/repositories/logs';

/**
 * The ledger when the database goes away under it (docs/billing.md, "When the database is
 * lost"): a batch whose connection breaks runs again on a fresh one when nothing of it can have
 * committed, is resolved from its reservation rows when the commit was on its way, and a
 * reservation whose write failed for good is reconciled by the live node — settled at the cost
 * when the client had the answer, refunded when it did not — without a restart.
 */

const quotaOf = async (app: TestApp, id: number) => Number((await app.knex('users').where({ id }).first('quota')).quota);
const remainOf = async (app: TestApp, id: number) => Number((await app.knex('tokens').where({ id }).first('remain_quota')).remain_quota);
const consumeLogs = (app: TestApp, userId: number) => app.knex('logs').where({ user_id: userId, type: LOG_TYPE.consume }).orderBy('id');
const info = (tokenId: number) => ({ tokenId, model: 'test-model', group: 'default', stream: true });

/** Repairs, on both databases: what a live node does with a reservation whose write failed. */
describeEach(DB_TARGETS, 'a reservation whose write failed is reconciled by the live node', (getApp) => {
  test('settled at the cost when the client had the answer: the difference taken or given back, once', async () => {
    const app = getApp();
    const u = await makeUser(app, { quota: 1000 });
    const more = new Reservation(app.ctx, { userId: u.id }, 100, info(0));
    const less = new Reservation(app.ctx, { userId: u.id }, 100, info(0));
    await more.open();
    await less.open();
    expect(await quotaOf(app, u.id)).toBe(800);
    const repairs = ledgerRepairs(app.ctx);
    repairs.add(more, { charge: 250, channelId: 0, promptTokens: 20, completionTokens: 30 });
    repairs.add(less, { charge: 40, channelId: 0, promptTokens: 2, completionTokens: 3 });
    expect(repairs.pending).toBe(2);
    await repairs.runNow();
    expect(repairs.pending).toBe(0);
    // 1000 − 250 − 40
    expect(await quotaOf(app, u.id)).toBe(710);
    expect(await app.knex('reservations').where({ user_id: u.id })).toHaveLength(0);
    const logs = await consumeLogs(app, u.id);
    expect(logs.map((l) => Number(l.quota)).sort((a, b) => a - b)).toEqual([40, 250]);
    expect(logs.every((l) => String(l.content).includes('after a database error'))).toBe(true);
    expect(logs.find((l) => Number(l.quota) === 250)).toMatchObject({ prompt_tokens: 20, completion_tokens: 30 });
    // Tried again (a second failure reported, a retry timer): the row is gone, nothing moves twice.
    repairs.add(more, { charge: 250, channelId: 0, promptTokens: 20, completionTokens: 30 });
    await repairs.runNow();
    expect(await quotaOf(app, u.id)).toBe(710);
    expect(await consumeLogs(app, u.id)).toHaveLength(2);
  });

  test('a cost past the balance takes what is left, never below zero (user and limited token alike)', async () => {
    const app = getApp();
    const u = await makeUser(app, { quota: 300 });
    const t = await seedToken(app, u.id, { unlimited_quota: false, remain_quota: 150, name: 'repair-token' });
    const res = new Reservation(app.ctx, { userId: u.id, limitedTokenId: t.id }, 100, info(t.id));
    await res.open();
    expect(await remainOf(app, t.id)).toBe(50);
    ledgerRepairs(app.ctx).add(res, { charge: 1000, channelId: 0, promptTokens: 1, completionTokens: 1 });
    await ledgerRepairs(app.ctx).runNow();
    // The token had 50 left after the reservation: 150 charged in all.
    expect(await remainOf(app, t.id)).toBe(0);
    expect(await quotaOf(app, u.id)).toBe(150);
    expect((await consumeLogs(app, u.id)).map((l) => Number(l.quota))).toEqual([150]);
  });

  test('refunded when the client did not get the answer; a row that already moved on is left alone', async () => {
    const app = getApp();
    const u = await makeUser(app, { quota: 1000 });
    const refunded = new Reservation(app.ctx, { userId: u.id }, 100, info(0));
    const settled = new Reservation(app.ctx, { userId: u.id }, 100, info(0));
    await refunded.open();
    await settled.open();
    // The settle had committed after all (its answer was lost): the repair only writes its log row.
    await settled.settle(70, 0, 5, 6);
    expect(await quotaOf(app, u.id)).toBe(830);
    ledgerRepairs(app.ctx).add(refunded, { charge: 0, channelId: 0, promptTokens: 0, completionTokens: 0 });
    ledgerRepairs(app.ctx).add(settled, { charge: 70, channelId: 0, promptTokens: 5, completionTokens: 6 });
    await ledgerRepairs(app.ctx).runNow();
    expect(await quotaOf(app, u.id)).toBe(930);
    const logs = await consumeLogs(app, u.id);
    expect(logs.map((l) => Number(l.quota)).sort((a, b) => a - b)).toEqual([0, 70]);
    expect(await app.knex('reservations').where({ user_id: u.id })).toHaveLength(0);
  });
});

const PG = DB_TARGETS.filter((t) => t.db === 'postgres');

if (PG.length) {
  describe('PostgreSQL: a lost connection under the ledger', () => {
    let proxy: PgProxy;
    let app: TestApp;
    beforeAll(async () => {
      proxy = await startPgProxy(process.env.TEST_DATABASE_URL!);
      app = await buildApp(PG[0]!, { config: { databaseUrl: proxy.url, dbAcquireTimeoutMs: 1500 } });
    });
    afterAll(async () => {
      await app?.close();
      await proxy?.close();
    });

    // The users-only batch is one statement that commits on its own; with a limited token the
    // batch is a transaction ending in COMMIT.
    const cases: Array<[string, boolean, string]> = [
      ['a users-only batch (one statement)', false, 'gw_moves_users_res'],
      ['a batch with a limited token (a transaction)', true, 'COMMIT'],
    ];
    test.each(cases)('%s lost on its way to the server runs again: taken once', async (_name, limited, marker) => {
      const u = await makeUser(app, { quota: 1000 });
      const t = limited ? await seedToken(app, u.id, { unlimited_quota: false, remain_quota: 1000 }) : undefined;
      // A first move sets up the batches' connection; the next one is cut.
      await new Reservation(app.ctx, { userId: u.id, limitedTokenId: t?.id }, 1, info(t?.id ?? 0)).open();
      const cut = proxy.cutOn(marker, 'before');
      const res = new Reservation(app.ctx, { userId: u.id, limitedTokenId: t?.id }, 100, info(t?.id ?? 0));
      await res.open();
      await cut;
      expect(await quotaOf(app, u.id)).toBe(899);
      if (t) expect(await remainOf(app, t.id)).toBe(899);
      expect(await app.knex('reservations').where({ id: res.id })).toHaveLength(1);
      expect(ledgerRepairs(app.ctx).pending).toBe(0);
    });

    test.each(cases)('%s that committed but whose answer was lost is resolved from its rows: taken once, not twice', async (_name, limited, marker) => {
      const u = await makeUser(app, { quota: 1000 });
      const t = limited ? await seedToken(app, u.id, { unlimited_quota: false, remain_quota: 1000 }) : undefined;
      await new Reservation(app.ctx, { userId: u.id, limitedTokenId: t?.id }, 1, info(t?.id ?? 0)).open();
      const cut = proxy.cutOn(marker, 'after');
      const res = new Reservation(app.ctx, { userId: u.id, limitedTokenId: t?.id }, 100, info(t?.id ?? 0));
      await res.open();
      await cut;
      expect(await quotaOf(app, u.id)).toBe(899);
      if (t) expect(await remainOf(app, t.id)).toBe(899);
      // The settle goes through as usual afterwards.
      await res.settle(60, 0, 1, 1);
      expect(await quotaOf(app, u.id)).toBe(939);
      expect((await app.knex('reservations').where({ id: res.id }).first()).state).toBe(1);
    });

    test('a connection terminated between batches (pg_terminate_backend) is replaced; the move runs once', async () => {
      const u = await makeUser(app, { quota: 1000 });
      await new Reservation(app.ctx, { userId: u.id }, 1, info(0)).open();
      const admin = knexFactory({ client: 'pg', connection: process.env.TEST_DATABASE_URL });
      try {
        const killed = await admin.raw('select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = ?', [
          `ai-gateway ${app.ctx.config.nodeId}`,
        ]);
        expect(killed.rows.length).toBeGreaterThan(0);
      } finally {
        await admin.destroy();
      }
      await new Reservation(app.ctx, { userId: u.id }, 100, info(0)).open();
      expect(await quotaOf(app, u.id)).toBe(899);
    });

    test('a settle that fails for good (the database away) is settled by the live node once it is back', async () => {
      const u = await makeUser(app, { quota: 1000 });
      const settled = new Reservation(app.ctx, { userId: u.id }, 100, info(0));
      const refunded = new Reservation(app.ctx, { userId: u.id }, 100, info(0));
      await settled.open();
      await refunded.open();
      proxy.down();
      try {
        await expect(settled.settle(250, 0, 10, 20)).rejects.toThrow();
        await expect(refunded.refund()).rejects.toThrow();
      } finally {
        proxy.up();
      }
      const repairs = ledgerRepairs(app.ctx);
      expect(repairs.pending).toBe(2);
      // Still held while the database was away.
      expect(await quotaOf(app, u.id)).toBe(800);
      await repairs.runNow();
      expect(repairs.pending).toBe(0);
      expect(await quotaOf(app, u.id)).toBe(750);
      expect(await app.knex('reservations').where({ user_id: u.id })).toHaveLength(0);
      expect((await consumeLogs(app, u.id)).map((l) => Number(l.quota)).sort((a, b) => a - b)).toEqual([0, 250]);
      // Once: another round finds nothing to do.
      await repairs.runNow();
      expect(await quotaOf(app, u.id)).toBe(750);
    });
  });

  describe('PostgreSQL: connections terminated under load', () => {
    let app: TestApp;
    let mock: MockUpstream;
    let gw: { url: string; close(): Promise<void> };
    let admin: Knex;
    beforeAll(async () => {
      app = await buildApp(PG[0]!);
      mock = await startMockUpstream();
      gw = await listen(app.callback);
      admin = knexFactory({ client: 'pg', connection: process.env.TEST_DATABASE_URL });
      await setOptions(app, { ModelRatio: JSON.stringify({ 'test-model': 2 }), CompletionRatio: JSON.stringify({ 'test-model': 3 }), PreConsumedQuota: '500' });
      await seedChannel(app, { base_url: mock.url, models: 'test-model' });
    });
    afterAll(async () => {
      await gw?.close();
      await mock?.close();
      await admin?.destroy();
      await app?.close();
    });

    test('no call answers 500, no reservation stays open, and every unit of quota is accounted for', async () => {
      const start = 1_000_000;
      const u = await makeUser(app, { quota: start });
      const tok = await seedToken(app, u.id, { unlimited_quota: true });
      const sdk = new OpenAI({ apiKey: tok.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const statuses: number[] = [];
      const call = async (i: number) => {
        try {
          if (i % 2) {
            const s = await sdk.chat.completions.create({ model: 'test-model', stream: true, messages: [{ role: 'user', content: `hi ${i}` }] });
            for await (const _ of s) void _;
          } else await sdk.chat.completions.create({ model: 'test-model', messages: [{ role: 'user', content: `hi ${i}` }] });
          statuses.push(200);
        } catch (err) {
          statuses.push((err as { status?: number }).status ?? 0);
        }
      };
      const kill = async () => {
        await admin.raw('select pg_terminate_backend(pid) from pg_stat_activity where application_name = ?', [`ai-gateway ${app.ctx.config.nodeId}`]);
      };
      const load = (async () => {
        for (let round = 0; round < 6; round++) await Promise.all(Array.from({ length: 20 }, (_, i) => call(round * 20 + i)));
      })();
      for (let k = 0; k < 3; k++) {
        await new Promise((r) => setTimeout(r, 60));
        await kill();
      }
      await load;
      expect(statuses).toHaveLength(120);
      // A call may fail while the database is away (503, in the caller's format), never with a 500.
      expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(60);
      await ledgerRepairs(app.ctx).runNow();
      await flushUsage(app);
      expect(await app.knex('reservations').where({ node_id: app.ctx.config.nodeId })).toHaveLength(0);
      const charged = (await consumeLogs(app, u.id)).reduce((sum, l) => sum + Number(l.quota), 0);
      // 2 × (11 + 7 × 3) = 64 per answered call.
      expect(charged).toBeGreaterThanOrEqual(64 * statuses.filter((s) => s === 200).length);
      expect((await quotaOf(app, u.id)) + charged).toBe(start);
    });
  });

  describe('PostgreSQL: commit mode and timeouts of the ledger', () => {
    const show = async (app: TestApp, tx: boolean, held: boolean, what: string) =>
      (held ? withBatchConn : withPgConn)(app.ctx, tx, async (conn) => String((await conn.query({ text: `show ${what}` })).rows[0]![what]));

    test('ledger transactions commit asynchronously by default; the rest of the pool and LEDGER_DURABLE_COMMIT=on durably', async () => {
      const app = await buildApp(PG[0]!);
      try {
        expect(await show(app, true, false, 'synchronous_commit')).toBe('off');
        expect(await show(app, true, true, 'synchronous_commit')).toBe('off');
        expect(await show(app, false, true, 'synchronous_commit')).toBe('off');
        // Console writes (top-ups, settings) stay durable: the session's setting was not changed.
        expect(await show(app, false, false, 'synchronous_commit')).toBe('on');
        expect((await app.knex.raw('show synchronous_commit')).rows[0].synchronous_commit).toBe('on');
        expect((await app.knex.raw('show statement_timeout')).rows[0].statement_timeout).toBe('30s');
        expect((await app.knex.raw('show lock_timeout')).rows[0].lock_timeout).toBe('5s');
      } finally {
        await app.close();
      }
      const durable = await buildApp(PG[0]!, { config: { ledgerDurableCommit: true } });
      try {
        expect(await show(durable, true, false, 'synchronous_commit')).toBe('on');
        expect(await show(durable, true, true, 'synchronous_commit')).toBe('on');
        expect(await show(durable, false, true, 'synchronous_commit')).toBe('on');
      } finally {
        await durable.close();
      }
    });

    test('a table lock held elsewhere: relay and console calls fail in their caller’s format at the lock timeout, nothing taken', async () => {
      const app = await buildApp(PG[0]!, { config: { dbLockTimeoutMs: 300 } });
      const mock = await startMockUpstream();
      const gw = await listen(app.callback);
      const admin = knexFactory({ client: 'pg', connection: process.env.TEST_DATABASE_URL, pool: { min: 1, max: 1 } });
      try {
        await setOptions(app, { ModelRatio: JSON.stringify({ 'test-model': 2 }), PreConsumedQuota: '500' });
        await seedChannel(app, { base_url: mock.url, models: 'test-model' });
        const u = await makeUser(app, { quota: 100_000 });
        const tok = await seedToken(app, u.id, { unlimited_quota: true });
        // Warm: the key and the user are cached, so the call's first database work is the reservation.
        const sdk = new OpenAI({ apiKey: tok.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
        await sdk.chat.completions.create({ model: 'test-model', messages: [{ role: 'user', content: 'warm' }] });
        await flushUsage(app);
        const before = await quotaOf(app, u.id);
        const consoleAgent = await loginAgent(app, u.username, u.password);
        await admin.transaction(async (trx) => {
          await trx.raw(`lock table "${app.schema}"."users" in access exclusive mode`);
          const t0 = Date.now();
          const openai = await fetch(`${gw.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${tok.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'test-model', messages: [{ role: 'user', content: 'hi' }] }),
          });
          expect(Date.now() - t0).toBeLessThan(5000);
          expect(openai.status).toBe(503);
          expect(openai.headers.get('retry-after')).toBe('2');
          const body = (await openai.json()) as { error: { message: string; code: string } };
          expect(body.error.code).toBe('database_unavailable');
          expect(body.error.message).not.toMatch(/lock|timeout|users|SQL/i);
          const claude = await fetch(`${gw.url}/v1/messages`, {
            method: 'POST',
            headers: { 'x-api-key': tok.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
            body: JSON.stringify({ model: 'test-model', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
          });
          expect(claude.status).toBe(503);
          expect(((await claude.json()) as { type: string }).type).toBe('error');
          const self = await consoleAgent.get('/api/user/self');
          expect(self.status).toBe(503);
          expect(self.body).toMatchObject({ success: false, message: '网关的数据库暂时未能响应，请稍后重试' });
        });
        await ledgerRepairs(app.ctx).runNow();
        expect(await quotaOf(app, u.id)).toBe(before);
        expect(await app.knex('reservations').where({ user_id: u.id })).toHaveLength(0);
      } finally {
        await admin.destroy();
        await gw.close();
        await mock.close();
        await app.close();
      }
    });
  });
}
