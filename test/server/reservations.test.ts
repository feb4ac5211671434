import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import OpenAI from 'openai';
import { buildApp, DB_TARGETS, describeEach, makeUser, type Target, type TestApp } from '../helpers/app';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { Reservation } from '../../server/src/ledger/reservation';
import { nodeId, reconcileOne, reconcileOwn, reconcileStale } from '../../server/src/ledger/recovery';
import { usageBatcher } from '../../server/src/ledger/usage';
import { logRow, LOG_TYPE } from '../../server/src/repositories/logs';

/**
 * Quota on a crash (docs/billing.md): every amount a call takes before it is billed has a row in
 * `reservations`, written in the same commit as the balance move; a crash leaves rows that the
 * next start (or another node, once the crashed node is gone) reconciles.
 */

const quotaOf = async (app: TestApp, id: number) => Number((await app.knex('users').where({ id }).first('quota')).quota);
const usedOf = async (app: TestApp, id: number) => Number((await app.knex('users').where({ id }).first('used_quota')).used_quota);
const remainOf = async (app: TestApp, id: number) => Number((await app.knex('tokens').where({ id }).first('remain_quota')).remain_quota);
const tokenUsedOf = async (app: TestApp, id: number) => Number((await app.knex('tokens').where({ id }).first('used_quota')).used_quota);
const rowOf = (app: TestApp, id: number) => app.knex('reservations').where({ id }).first();
const logsOf = (app: TestApp, userId: number) => app.knex('logs').where({ user_id: userId, type: LOG_TYPE.consume }).orderBy('id');

async function payerWithToken(app: TestApp, quota: number, remain: number) {
  const u = await makeUser(app, { quota });
  const t = await seedToken(app, u.id, { unlimited_quota: false, remain_quota: remain, name: 'crash-token' });
  return { userId: u.id, tokenId: t.id, payer: { userId: u.id, limitedTokenId: t.id } };
}

const info = (tokenId: number, stream = true) => ({ tokenId, model: 'test-model', group: 'default', stream });

/** A row as a crashed node would have left it (the balance move it stands for is already applied). */
async function crashRow(
  app: TestApp,
  f: { id?: number; node: string; state: 0 | 1; userId: number; tokenId: number; limited: boolean; reserved: number; taken?: number; channelId?: number },
) {
  // Far above the ids of real runs (run id × 2³²).
  const id = f.id ?? 2 ** 52 + crypto.randomInt(2 ** 40);
  await app.knex('reservations').insert({
    id,
    node_id: f.node,
    state: f.state,
    user_id: f.userId,
    token_id: f.tokenId,
    limited: f.limited,
    channel_id: f.channelId ?? 0,
    model_name: 'test-model',
    group: 'default',
    reserved: f.reserved,
    taken: f.taken ?? 0,
    prompt_tokens: f.state === 1 ? 11 : 0,
    completion_tokens: f.state === 1 ? 7 : 0,
    is_stream: true,
    created_at: Date.now() - 5000,
  });
  return id;
}

describeEach(DB_TARGETS, 'quota reservations', (getApp) => {
  let app: TestApp;
  beforeAll(() => {
    app = getApp();
  });

  test('reserve: the row is written in the same commit as the take (a row that cannot be written undoes the take)', async () => {
    const { userId, tokenId, payer } = await payerWithToken(app, 10_000, 5_000);
    const r = new Reservation(app.ctx, payer, 2_800, info(tokenId));
    expect(await r.open()).toMatchObject({ userQuota: 7_200, tokenRemain: 2_200 });
    const row = await rowOf(app, r.id);
    expect(row).toMatchObject({ state: 0, user_id: userId, token_id: tokenId, node_id: nodeId(app.ctx), model_name: 'test-model', group: 'default' });
    expect(Number(row.reserved)).toBe(2_800);
    expect(await r.open()).toMatchObject({ userQuota: 7_200 }); // idempotent: the same move
    expect(await quotaOf(app, userId)).toBe(7_200);

    // A reservation whose row cannot be inserted (its id is taken already): nothing is taken either.
    const r2 = new Reservation(app.ctx, payer, 1_000, info(tokenId));
    await crashRow(app, { id: r2.id, node: 'elsewhere', state: 0, userId, tokenId, limited: true, reserved: 1 });
    const failed = await r2.open().then(
      () => 'opened',
      (e: unknown) => String((e as Error)?.message ?? e),
    );
    expect(failed).toMatch(/unique|duplicate/i);
    expect(await quotaOf(app, userId)).toBe(7_200);
    expect(await remainOf(app, tokenId)).toBe(2_200);
    await app.knex('reservations').where({ id: r2.id }).del();
    await r.refund();
    expect(await quotaOf(app, userId)).toBe(10_000);
  });

  test('settle marks the row settled with what was taken; the flush deletes it with its log row; refund deletes it', async () => {
    const { userId, tokenId, payer } = await payerWithToken(app, 20_000, 20_000);
    // Settled below the reservation (a refund of the difference), at it (row only), above it.
    for (const [actual, taken] of [
      [1_234, 1_234],
      [2_800, 2_800],
      [3_000, 3_000],
    ] as const) {
      const before = await quotaOf(app, userId);
      const r = new Reservation(app.ctx, payer, 2_800, info(tokenId));
      await r.open();
      const s = await r.settle(actual, 0, 11, 7);
      expect(s.taken).toBe(taken);
      const row = await rowOf(app, r.id);
      expect(row).toMatchObject({ state: 1, prompt_tokens: 11, completion_tokens: 7 });
      expect(Number(row.taken)).toBe(taken);
      expect(await quotaOf(app, userId)).toBe(before - taken);
      expect(await r.settle(actual, 0, 11, 7)).toBe(s); // once only
      // The batch deletes the row in the transaction that writes the log row.
      const b = usageBatcher(app.ctx);
      b.addUsage(userId, tokenId, undefined, taken);
      b.addRow(logRow({ user_id: userId, type: LOG_TYPE.consume, quota: taken, content: `call ${r.id}` }));
      b.closeReservation(r.handOver()!);
      expect(r.handOver()).toBeUndefined();
      expect(await rowOf(app, r.id)).toBeTruthy();
      await b.flush();
      expect(await rowOf(app, r.id)).toBeUndefined();
      expect((await logsOf(app, userId)).some((l) => l.content === `call ${r.id}`)).toBe(true);
    }
    // Refund: the row goes with the money.
    const before = await quotaOf(app, userId);
    const r = new Reservation(app.ctx, payer, 2_800, info(tokenId));
    await r.open();
    await r.refund();
    await r.refund(); // once only
    expect(await rowOf(app, r.id)).toBeUndefined();
    expect(await quotaOf(app, userId)).toBe(before);
    // Nothing reserved, extra cost billed: the row is inserted settled.
    const r0 = new Reservation(app.ctx, payer, 0, info(tokenId));
    await r0.open();
    expect(await rowOf(app, r0.id)).toBeUndefined();
    await r0.settle(500, 0, 1, 1);
    expect(Number((await rowOf(app, r0.id)).taken)).toBe(500);
    expect((await rowOf(app, r0.id)).state).toBe(1);
    await app.knex('reservations').where({ id: r0.id }).del();
  });

  test('many calls in one commit (one batch): every row written, opened, settled and refunded with its own values', async () => {
    const { userId, tokenId, payer } = await payerWithToken(app, 1_000_000, 1_000_000);
    const rs = Array.from({ length: 60 }, (_, i) => new Reservation(app.ctx, payer, 1_000 + i, info(tokenId, i % 2 === 0)));
    await Promise.all(rs.map((r) => r.open()));
    const opened = await app.knex('reservations').whereIn(
      'id',
      rs.map((r) => r.id),
    );
    expect(opened).toHaveLength(60);
    for (const r of rs) expect(Number(opened.find((o) => Number(o.id) === r.id).reserved)).toBe(r.amount);
    // Half settle (at various costs), half refund, all at once.
    await Promise.all(rs.map((r, i) => (i % 2 ? r.refund() : r.settle(500 + i, 0, i, 1))));
    const after = await app.knex('reservations').whereIn(
      'id',
      rs.map((r) => r.id),
    );
    expect(after).toHaveLength(30);
    for (const row of after) {
      const i = rs.findIndex((r) => r.id === Number(row.id));
      expect(i % 2).toBe(0);
      expect(row).toMatchObject({ state: 1, prompt_tokens: i });
      expect(Number(row.taken)).toBe(500 + i);
    }
    const billed = rs.reduce((a, _r, i) => a + (i % 2 ? 0 : 500 + i), 0);
    expect(await quotaOf(app, userId)).toBe(1_000_000 - billed);
    expect(await remainOf(app, tokenId)).toBe(1_000_000 - billed);
    await app
      .knex('reservations')
      .whereIn(
        'id',
        rs.map((r) => r.id),
      )
      .del();
  });

  test('payers without a limited token (a users-only batch): rows with the moves, none for a refused take', async () => {
    const rich = (await makeUser(app, { quota: 100_000 })).id;
    const poor = (await makeUser(app, { quota: 1_500 })).id;
    const mk = (userId: number, amount: number) => new Reservation(app.ctx, { userId }, amount, info(0));
    const rs = [mk(rich, 2_000), mk(rich, 3_000), mk(poor, 1_000), mk(poor, 1_000), mk(rich, 500)];
    // One batch: the poor user's second take does not fit (its row then takes the one-move path).
    const out = await Promise.all(
      rs.map((r) =>
        r.open().then(
          () => 'ok',
          (e: { status?: number }) => e.status,
        ),
      ),
    );
    expect(out.filter((o) => o === 403)).toHaveLength(1);
    const rows = await app.knex('reservations').whereIn(
      'id',
      rs.map((r) => r.id),
    );
    expect(rows).toHaveLength(4);
    expect(await quotaOf(app, rich)).toBe(94_500);
    expect(await quotaOf(app, poor)).toBe(500);
    const opened = rs.filter((_r, i) => out[i] === 'ok');
    // Settle at, below and above the reservation, and refund, all in one batch.
    await Promise.all([opened[0]!.settle(opened[0]!.amount, 0, 1, 1), opened[1]!.settle(100, 0, 1, 1), opened[2]!.settle(1_400, 0, 1, 1), opened[3]!.refund()]);
    const after = await app
      .knex('reservations')
      .whereIn(
        'id',
        rs.map((r) => r.id),
      )
      .orderBy('id');
    expect(after.map((r) => [Number(r.id), r.state, Number(r.taken)])).toEqual(
      [opened[0]!, opened[1]!, opened[2]!].map((r, i) => [r.id, 1, [r.amount, 100, 1_400][i]]).sort((x, y) => x[0]! - y[0]!),
    );
    expect(await app.knex('reservations').where({ id: opened[3]!.id })).toHaveLength(0);
    await app
      .knex('reservations')
      .whereIn(
        'id',
        rs.map((r) => r.id),
      )
      .del();
  });

  test('the one-move paths (a knex transaction holds SQLite; a balance that ran out) write the row in their transaction', async () => {
    const { userId, tokenId, payer } = await payerWithToken(app, 3_000, 3_000);
    // SQLite: while a knex transaction holds the connection the move takes the knex path.
    const held = new Reservation(app.ctx, payer, 100, info(tokenId));
    let opened: Promise<unknown> | undefined;
    await app.knex.transaction(async (trx) => {
      await trx('users').where({ id: userId }).first();
      opened = held.open();
      await new Promise((r) => setTimeout(r, 20));
    });
    await opened;
    expect((await rowOf(app, held.id)).state).toBe(0);
    await held.refund();
    expect(await rowOf(app, held.id)).toBeUndefined();
    expect(await quotaOf(app, userId)).toBe(3_000);
    // Extra cost beyond the balance: the clamped path takes what is left, in a knex transaction.
    const r = new Reservation(app.ctx, payer, 2_000, info(tokenId));
    await r.open();
    const s = await r.settle(5_000, 0, 1, 1);
    expect(s.taken).toBe(3_000);
    expect(await quotaOf(app, userId)).toBe(0);
    const row = await rowOf(app, r.id);
    expect(row.state).toBe(1);
    expect(Number(row.taken)).toBe(3_000);
    await app.knex('reservations').where({ id: r.id }).del();
  });

  test('reconciliation of each crash state: balances exact, one explaining log row each', async () => {
    const me = nodeId(app.ctx);
    const { userId, tokenId } = await payerWithToken(app, 100_000, 50_000);
    const channelId = await seedChannel(app, { base_url: 'http://127.0.0.1:9', models: 'test-model', name: 'crash-ch' });
    // What the crashed node had done to the balances: took 2 800 twice (open), settled one call at 900.
    await app
      .knex('users')
      .where({ id: userId })
      .update({ quota: 100_000 - 2_800 - 2_800 - 900 });
    await app
      .knex('tokens')
      .where({ id: tokenId })
      .update({ remain_quota: 50_000 - 2_800 - 2_800 - 900 });
    const open1 = await crashRow(app, { node: me, state: 0, userId, tokenId, limited: true, reserved: 2_800 });
    const open2 = await crashRow(app, { node: me, state: 0, userId, tokenId, limited: true, reserved: 2_800 });
    const settled = await crashRow(app, { node: me, state: 1, userId, tokenId, limited: true, reserved: 2_800, taken: 900, channelId });
    expect(await reconcileOwn(app.ctx)).toBe(3);
    expect(await reconcileOwn(app.ctx)).toBe(0);
    expect(await app.knex('reservations').whereIn('id', [open1, open2, settled])).toHaveLength(0);
    expect(await quotaOf(app, userId)).toBe(100_000 - 900);
    expect(await remainOf(app, tokenId)).toBe(50_000 - 900);
    expect(await usedOf(app, userId)).toBe(900);
    expect(await tokenUsedOf(app, tokenId)).toBe(900);
    const logs = await logsOf(app, userId);
    expect(logs).toHaveLength(3);
    expect(logs.reduce((a, l) => a + Number(l.quota), 0)).toBe(900);
    expect(logs.filter((l) => l.content.startsWith('reservation refunded after a restart (request ')).map((l) => Number(l.quota))).toEqual([0, 0]);
    const s = logs.find((l) => l.content.includes(`(request ${settled})`))!;
    expect(s).toMatchObject({ token_name: 'crash-token', channel_id: channelId, channel_name: 'crash-ch', prompt_tokens: 11, completion_tokens: 7 });
    expect(Number(s.quota)).toBe(900);
    expect(s.content).toMatch(/^reservation settled before a restart/);
    expect(JSON.parse(s.other).reservation).toMatchObject({ id: settled, recovered: 'settled', reserved: 2_800 });
    expect(Number((await app.knex('channels').where({ id: channelId }).first()).used_quota)).toBe(900);
  });

  test('a restart reconciles what the previous run left (same node id)', async () => {
    // A second app on the same database with this app's node id stands for the restarted process.
    const file = app.target.db === 'sqlite' ? path.join(os.tmpdir(), `res-${crypto.randomBytes(4).toString('hex')}.db`) : undefined;
    const first = file
      ? await buildApp(app.target, { config: { databaseUrl: `sqlite:${file}`, nodeId: 'restart-node' } })
      : await buildApp(app.target, { config: { nodeId: 'restart-node' } });
    try {
      const { userId, tokenId, payer } = await payerWithToken(first, 10_000, 10_000);
      const open = new Reservation(first.ctx, payer, 2_800, info(tokenId));
      await open.open();
      const done = new Reservation(first.ctx, payer, 2_800, info(tokenId));
      await done.open();
      await done.settle(700, 0, 11, 7); // settled, never flushed: the "crash" comes before the batch
      const second = await buildApp(app.target, {
        shareWith: file ? undefined : first,
        config: { ...(file ? { databaseUrl: `sqlite:${file}` } : {}), nodeId: 'restart-node' },
      });
      try {
        expect(await second.knex('reservations').where({ user_id: userId })).toHaveLength(0);
        expect(await quotaOf(second, userId)).toBe(10_000 - 700);
        expect(await remainOf(second, tokenId)).toBe(10_000 - 700);
        expect(await usedOf(second, userId)).toBe(700);
        const logs = await logsOf(second, userId);
        expect(logs.map((l) => Number(l.quota)).sort((a, b) => a - b)).toEqual([0, 700]);
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
      if (file) for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
    }
  });

  test("a second node starting on the same database leaves a live node's reservations alone (SQLite file too)", async () => {
    const file = app.target.db === 'sqlite' ? path.join(os.tmpdir(), `res-${crypto.randomBytes(4).toString('hex')}.db`) : undefined;
    const first = file
      ? await buildApp(app.target, { config: { databaseUrl: `sqlite:${file}`, nodeId: 'live-node' } })
      : await buildApp(app.target, { config: { nodeId: 'live-node' } });
    try {
      const { userId, tokenId, payer } = await payerWithToken(first, 10_000, 10_000);
      const inFlight = new Reservation(first.ctx, payer, 2_800, info(tokenId));
      await inFlight.open();
      const second = await buildApp(app.target, {
        shareWith: file ? undefined : first,
        config: { ...(file ? { databaseUrl: `sqlite:${file}` } : {}), nodeId: 'other-node' },
      });
      try {
        expect(await rowOf(second, inFlight.id)).toMatchObject({ state: 0, node_id: 'live-node' });
        expect(await quotaOf(second, userId)).toBe(10_000 - 2_800);
        expect(await logsOf(second, userId)).toHaveLength(0);
      } finally {
        await second.close();
      }
      // The live node settles its call as usual: nothing was refunded under it.
      await inFlight.settle(1_000, 0, 5, 5);
      expect(await quotaOf(first, userId)).toBe(10_000 - 1_000);
    } finally {
      await first.close();
      if (file) for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
    }
  });
});

describeEach(DB_TARGETS, 'quota reservations through the relay', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let gw: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    gw = await listen(app.callback);
    await setOptions(app, { ModelRatio: JSON.stringify({ 'test-model': 2 }), CompletionRatio: JSON.stringify({ 'test-model': 3 }), PreConsumedQuota: '500' });
    await seedChannel(app, { base_url: mock.url, models: 'test-model' });
    await seedChannel(app, { base_url: mock.url, models: 'fail-model', key: 'sk-fault-500' });
    await setOptions(app, { ModelRatio: JSON.stringify({ 'test-model': 2, 'fail-model': 1 }) });
  });
  afterAll(async () => {
    await gw?.close();
    await mock?.close();
  });

  test('a billed call leaves a settled row until the flush writes its log row; a failed call leaves none', async () => {
    const { userId, tokenId } = await payerWithToken(app, 100_000, 100_000);
    const key = (await app.knex('tokens').where({ id: tokenId }).first()).key as string;
    const sdk = new OpenAI({ apiKey: `sk-${key}`, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await flushUsage(app);
    const stream = await sdk.chat.completions.create({ model: 'test-model', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    for await (const _ of stream) void _;
    const rows = await app.knex('reservations').where({ user_id: userId });
    expect(rows).toHaveLength(1);
    // 2 × (11 + 7 × 3) = 64
    expect(rows[0]).toMatchObject({ state: 1, token_id: tokenId, prompt_tokens: 11, completion_tokens: 7 });
    expect(Number(rows[0].taken)).toBe(64);
    expect(rows[0].channel_id).toBeGreaterThan(0);
    await flushUsage(app);
    expect(await app.knex('reservations').where({ user_id: userId })).toHaveLength(0);
    const logs = await logsOf(app, userId);
    expect(logs.map((l) => Number(l.quota))).toEqual([64]);
    await expect(sdk.chat.completions.create({ model: 'fail-model', messages: [{ role: 'user', content: 'hi' }] })).rejects.toThrow();
    expect(await app.knex('reservations').where({ user_id: userId })).toHaveLength(0);
    expect(await quotaOf(app, userId)).toBe(100_000 - 64);
    expect(await remainOf(app, tokenId)).toBe(100_000 - 64);
  });
});

const PG_REDIS: Target[] = process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL ? [{ name: 'postgres+redis', db: 'postgres', redis: true }] : [];

// Several nodes need a shared database: PostgreSQL (+ Redis) only.
if (PG_REDIS.length)
  describe.each(PG_REDIS.map((t) => [t.name, t] as const))('reservations of a gone node, two live nodes [%s]', (_n, target) => {
    let a: TestApp;
    let b: TestApp;
    beforeAll(async () => {
      // Heartbeats far apart: the test drives the take-over itself.
      const ledger = { ledgerStaleMs: 30_000, ledgerHeartbeatMs: 600_000 };
      a = await buildApp(target, { config: { nodeId: 'node-a', ...ledger } });
      b = await buildApp(target, { shareWith: a, config: { nodeId: 'node-b', ...ledger } });
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    test("each row of a gone node is reconciled exactly once; a live node's rows are not touched", async () => {
      const { userId, tokenId, payer } = await payerWithToken(a, 1_000_000, 1_000_000);
      // A live reservation of node a.
      const live = new Reservation(a.ctx, payer, 2_800, info(tokenId));
      await live.open();
      // A node that heartbeat recently (alive, but not one of these apps), and a gone one.
      await a.knex('gateway_nodes').insert([
        { node_id: 'node-alive', seen_at: Date.now(), started_at: Date.now() },
        { node_id: 'node-gone', seen_at: Date.now() - 60_000, started_at: Date.now() - 120_000 },
      ]);
      const aliveRow = await crashRow(a, { node: 'node-alive', state: 0, userId, tokenId, limited: true, reserved: 100 });
      const gone: number[] = [];
      for (let i = 0; i < 20; i++)
        gone.push(
          await crashRow(a, {
            node: i % 2 ? 'node-gone' : 'node-never-seen',
            state: i % 4 === 0 ? 1 : 0,
            userId,
            tokenId,
            limited: true,
            reserved: 2_800,
            taken: 1_000,
          }),
        );
      // What the gone nodes had taken: 2 800 per open row, 1 000 per settled one; plus the live and alive rows.
      const openN = gone.length - 5;
      const took = openN * 2_800 + 5 * 1_000;
      await a
        .knex('users')
        .where({ id: userId })
        .decrement('quota', took + 100);
      await a
        .knex('tokens')
        .where({ id: tokenId })
        .decrement('remain_quota', took + 100);
      // Both nodes race, several times over.
      const counts = await Promise.all([reconcileStale(a.ctx), reconcileStale(b.ctx), reconcileStale(b.ctx), reconcileStale(a.ctx)]);
      expect(counts.reduce((x, y) => x + y, 0)).toBe(20);
      expect(await a.knex('reservations').whereIn('id', gone)).toHaveLength(0);
      expect(await rowOf(a, live.id)).toMatchObject({ state: 0, node_id: 'node-a' });
      expect(await rowOf(a, aliveRow)).toMatchObject({ state: 0, node_id: 'node-alive' });
      const logs = await logsOf(a, userId);
      expect(logs).toHaveLength(20);
      expect(new Set(logs.map((l) => JSON.parse(l.other).reservation.id)).size).toBe(20);
      expect(logs.reduce((x, l) => x + Number(l.quota), 0)).toBe(5_000);
      expect(await quotaOf(a, userId)).toBe(1_000_000 - 5_000 - 100 - 2_800);
      expect(await remainOf(a, tokenId)).toBe(1_000_000 - 5_000 - 100 - 2_800);
      expect(await usedOf(a, userId)).toBe(5_000);
      // A node seen again after the row was listed keeps it (the lease re-checks the heartbeat).
      await a.knex('gateway_nodes').where({ node_id: 'node-gone' }).update({ seen_at: Date.now() });
      const back = await crashRow(a, { node: 'node-gone', state: 0, userId, tokenId, limited: true, reserved: 1 });
      expect(await reconcileOne(b.ctx, back, 'node-gone', Date.now() - 30_000)).toBeUndefined();
      expect(await rowOf(a, back)).toBeTruthy();
      // And once its heartbeat is old, it is taken over.
      await a
        .knex('gateway_nodes')
        .where({ node_id: 'node-gone' })
        .update({ seen_at: Date.now() - 60_000 });
      await a.knex('users').where({ id: userId }).decrement('quota', 1);
      await a.knex('tokens').where({ id: tokenId }).decrement('remain_quota', 1);
      expect(await reconcileStale(b.ctx)).toBe(1);
      expect(await quotaOf(a, userId)).toBe(1_000_000 - 5_000 - 100 - 2_800);
      await live.refund();
      expect(await rowOf(a, live.id)).toBeUndefined();
    });
  });
