import pg from 'pg';
import { buildApp, DB_TARGETS, makeUser, type TestApp } from '../helpers/app';
import { waitFor } from '../helpers/clock';
import { balances, preConsume, refund, settle, type MoveOutcome } from '../../server/src/ledger/balances';
import type { AppContext } from '../../server/src/context';

const move = (app: AppContext, userId: number, tokenId: number | undefined, amount: number, take: boolean) => balances(app).move(userId, tokenId, amount, take);

const quotaOf = async (app: TestApp, id: number) => Number((await app.knex('users').where({ id }).first('quota')).quota);
const remainOf = async (app: TestApp, id: number) => Number((await app.knex('tokens').where({ id }).first('remain_quota')).remain_quota);
async function limitedToken(app: TestApp, userId: number, remain: number): Promise<number> {
  const [row] = await app
    .knex('tokens')
    .insert({ user_id: userId, key: `k${Date.now()}${Math.random()}`.replace('.', ''), name: 't', remain_quota: remain, unlimited_quota: false })
    .returning('id');
  return Number(typeof row === 'object' ? (row as { id: number }).id : row);
}
const userOf = (o: MoveOutcome | undefined) => (typeof o === 'object' ? o.userQuota : o);
/** The balances of an outcome, without its write order. */
const balancesOf = (o: MoveOutcome) =>
  typeof o === 'object' ? { userQuota: o.userQuota, ...(o.tokenRemain !== undefined && { tokenRemain: o.tokenRemain }) } : o;

/**
 * Balance moves of one payer that land in the same SQLite group commit run as one net statement
 * per balance row, with exactly the outcome of a serial order (adds first, then takes).
 */
describe('balance moves aggregated per payer in a group commit (SQLite)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await buildApp({ name: 'sqlite', db: 'sqlite', redis: false });
  });
  afterAll(async () => {
    await app.close();
  });

  /** Rows changed on the connection so far: one UPDATE of one row counts 1. */
  const totalChanges = async () => Number(((await app.knex.raw('select total_changes() as n')) as Array<{ n: number }>)[0]!.n);

  test('moves that fit: one statement; each move sees the balance the serial order leaves; write order follows it', async () => {
    const u = await makeUser(app, { quota: 1000 });
    const before = await totalChanges();
    // Queued in one turn: they share the next group commit.
    const out = await Promise.all([
      move(app.ctx, u.id, undefined, 100, true),
      move(app.ctx, u.id, undefined, 50, false),
      move(app.ctx, u.id, undefined, 200, true),
      move(app.ctx, u.id, undefined, 300, true),
    ]);
    expect(await totalChanges()).toBe(before + 1);
    expect(await quotaOf(app, u.id)).toBe(450);
    // Serial order: the add (1000 + 50), then the takes in the order they were asked for.
    expect(out.map(userOf)).toEqual([950, 1050, 750, 450]);
    const seqs = out.map((o) => (o as { seq: number }).seq);
    expect([seqs[1], seqs[0], seqs[2], seqs[3]]).toEqual([...seqs].sort((a, b) => a - b));
  });

  test('moves that do not fit together run one by one: adds first, each take refused alone', async () => {
    const u = await makeUser(app, { quota: 500 });
    const out = await Promise.all([
      move(app.ctx, u.id, undefined, 300, true),
      move(app.ctx, u.id, undefined, 300, true),
      move(app.ctx, u.id, undefined, 100, false),
      move(app.ctx, u.id, undefined, 250, true),
    ]);
    // 500 + 100 = 600; 300 → 300; 300 → 0; 250 does not fit and takes nothing.
    expect(out.map(userOf)).toEqual([300, 0, 600, 'user']);
    expect(await quotaOf(app, u.id)).toBe(0);
  });

  test('a limited token: the token can refuse the batch; then each take alone, the user part given back with a refusal', async () => {
    const u = await makeUser(app, { quota: 10_000 });
    const t = await limitedToken(app, u.id, 400);
    const out = await Promise.all([move(app.ctx, u.id, t, 300, true), move(app.ctx, u.id, t, 300, true)]);
    expect(out[0]).toMatchObject({ userQuota: 9700, tokenRemain: 100 });
    expect(out[1]).toBe('token');
    expect(await quotaOf(app, u.id)).toBe(9700);
    expect(await remainOf(app, t)).toBe(100);

    // Both balances fit: one statement each for user and token.
    const before = await totalChanges();
    const ok = await Promise.all([move(app.ctx, u.id, t, 40, true), move(app.ctx, u.id, t, 60, false), move(app.ctx, u.id, t, 70, true)]);
    expect(await totalChanges()).toBe(before + 2);
    expect(ok).toEqual([
      expect.objectContaining({ userQuota: 9720, tokenRemain: 120 }),
      expect.objectContaining({ userQuota: 9760, tokenRemain: 160 }),
      expect.objectContaining({ userQuota: 9650, tokenRemain: 50 }),
    ]);
    expect(await remainOf(app, t)).toBe(50);
  });

  test('payers in one group are independent: one refused, the others taken', async () => {
    const rich = await makeUser(app, { quota: 1000 });
    const poor = await makeUser(app, { quota: 10 });
    const out = await Promise.all([
      move(app.ctx, poor.id, undefined, 20, true),
      move(app.ctx, rich.id, undefined, 20, true),
      move(app.ctx, poor.id, undefined, 5, true),
      move(app.ctx, rich.id, undefined, 30, true),
    ]);
    expect(out.map(userOf)).toEqual(['user', 980, 5, 950]);
    expect(await quotaOf(app, poor.id)).toBe(5);
    expect(await quotaOf(app, rich.id)).toBe(950);
  });

  test('billing on top: concurrent reservations never overspend; settles and refunds land exactly', async () => {
    const u = await makeUser(app, { quota: 300 });
    const payer = { userId: u.id };
    const results = await Promise.allSettled(Array.from({ length: 40 }, () => preConsume(app.ctx, payer, 10)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(30);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.status)).toEqual(Array(10).fill(403));
    expect(await quotaOf(app, u.id)).toBe(0);
    // 30 calls settle in one turn: 10 cost 4 (refund 6 each), 10 cost 10, 10 cost 12 (2 extra each).
    const settled = await Promise.all(Array.from({ length: 30 }, (_, i) => settle(app.ctx, payer, 10, i < 10 ? 4 : i < 20 ? 10 : 12)));
    expect(settled.map((s) => s.taken)).toEqual([...Array(10).fill(4), ...Array(10).fill(10), ...Array(10).fill(12)]);
    expect(await quotaOf(app, u.id)).toBe(60 - 20);
    await refund(app.ctx, payer, 5);
    expect(await quotaOf(app, u.id)).toBe(45);
  });
});

/**
 * The same on PostgreSQL (ledger/balances/postgres.ts): the moves of one turn are batched, one
 * statement per balance table, in one transaction; the moves of a row that does not fit then run
 * one at a time.
 */
const PG_TARGETS = DB_TARGETS.filter((t) => t.db === 'postgres');
if (PG_TARGETS.length) {
  describe('balance moves batched per turn (PostgreSQL)', () => {
    let app: TestApp;
    beforeAll(async () => {
      // The lock cycle below is broken by whichever waiter's deadlock check runs first once the
      // cycle exists; each runs once, deadlock_timeout after its wait began. The batch begins to
      // wait first, so it is the victim as long as the test closes the cycle within that time: 1 s
      // (the default) was not always enough on a loaded CI box.
      const url = new URL(process.env.TEST_DATABASE_URL!);
      url.searchParams.set('options', '-c deadlock_timeout=5s');
      // The lock timeout (5 s by default) must not end the wait before the deadlock check does.
      app = await buildApp(PG_TARGETS[0]!, { config: { databaseUrl: url.toString(), dbLockTimeoutMs: 30_000 } });
    });
    afterAll(async () => {
      await app.close();
    });

    test('moves of one turn that fit: each sees the balance of the serial order (adds first, then takes)', async () => {
      const u = await makeUser(app, { quota: 1000 });
      const out = await Promise.all([
        move(app.ctx, u.id, undefined, 100, true),
        move(app.ctx, u.id, undefined, 50, false),
        move(app.ctx, u.id, undefined, 200, true),
        move(app.ctx, u.id, undefined, 300, true),
      ]);
      // One statement per move would have answered 900 for the first take (it was asked first).
      expect(out.map(userOf)).toEqual([950, 1050, 750, 450]);
      expect(await quotaOf(app, u.id)).toBe(450);
      // One write order for the batch (the balance view keeps its lowest balance), a later one after it.
      const seqs = out.map((o) => (typeof o === 'object' ? o.seq : undefined));
      expect(new Set(seqs).size).toBe(1);
      const next = await move(app.ctx, u.id, undefined, 1, true);
      expect(typeof next === 'object' && next.seq! > seqs[0]!).toBe(true);
    });

    test('a user whose moves do not fit together: each then runs alone, never overspending', async () => {
      const u = await makeUser(app, { quota: 500 });
      const out = await Promise.all([move(app.ctx, u.id, undefined, 300, true), move(app.ctx, u.id, undefined, 300, true)]);
      // One of the two takes 300 on its own, the other finds 200 and is refused.
      expect(out.map(userOf).sort()).toEqual([200, 'user']);
      expect(await quotaOf(app, u.id)).toBe(200);
      await app.knex('users').where({ id: u.id }).update({ quota: 500 });
      const payer = { userId: u.id };
      const results = await Promise.allSettled([
        preConsume(app.ctx, payer, 300),
        preConsume(app.ctx, payer, 300),
        refund(app.ctx, payer, 100),
        preConsume(app.ctx, payer, 250),
      ]);
      // The four run as concurrent single statements, in no set order: with the refund first, 600
      // covers any two of the takes; with it last, 500 covers only one. Never more than there is.
      expect(results[2]!.status).toBe('fulfilled');
      const refused = results.filter((r) => r.status === 'rejected');
      expect(refused.length === 1 || refused.length === 2).toBe(true);
      for (const r of refused) expect((r as PromiseRejectedResult).reason.status).toBe(403);
      const taken = [300, 300, undefined, 250].reduce<number>((sum, amount, i) => sum + (amount && results[i]!.status === 'fulfilled' ? amount : 0), 0);
      expect(taken).toBeLessThanOrEqual(600);
      expect(await quotaOf(app, u.id)).toBe(600 - taken);
    });

    test('payers in one batch are independent: a poor user is refused, a rich one taken', async () => {
      const rich = await makeUser(app, { quota: 1000 });
      const poor = await makeUser(app, { quota: 10 });
      const out = await Promise.all([
        move(app.ctx, poor.id, undefined, 20, true),
        move(app.ctx, rich.id, undefined, 20, true),
        move(app.ctx, rich.id, undefined, 30, true),
      ]);
      expect(out.map(userOf)).toEqual(['user', 980, 950]);
      expect(await quotaOf(app, poor.id)).toBe(10);
      expect(await quotaOf(app, rich.id)).toBe(950);
    });

    test('a limited token that refuses the batch: its user gets that part back; then one take is refused alone', async () => {
      const u = await makeUser(app, { quota: 10_000 });
      const t = await limitedToken(app, u.id, 500);
      const other = await makeUser(app, { quota: 1000 });
      const out = await Promise.all([move(app.ctx, u.id, t, 300, true), move(app.ctx, u.id, t, 300, true), move(app.ctx, other.id, undefined, 10, true)]);
      expect(balancesOf(out[2]!)).toEqual({ userQuota: 990 });
      // Run alone: one takes 300 from both, the other finds the token short (its user's part given back).
      expect(
        out
          .slice(0, 2)
          .map((o) => (typeof o === 'string' ? o : JSON.stringify(balancesOf(o))))
          .sort(),
      ).toEqual(['token', JSON.stringify({ userQuota: 9700, tokenRemain: 200 })]);
      expect(await quotaOf(app, u.id)).toBe(9700);
      expect(await remainOf(app, t)).toBe(200);
      await app.knex('users').where({ id: u.id }).update({ quota: 10_000 });
      await app.knex('tokens').where({ id: t }).update({ remain_quota: 500 });
      const payer = { userId: u.id, limitedTokenId: t };
      const results = await Promise.allSettled([preConsume(app.ctx, payer, 300), preConsume(app.ctx, payer, 300)]);
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason.code).toBe('insufficient_token_quota');
      expect(await quotaOf(app, u.id)).toBe(9700);
      expect(await remainOf(app, t)).toBe(200);
      // Both fit: user and token moved together, each move with the balances the serial order leaves.
      const ok = await Promise.all([move(app.ctx, u.id, t, 40, true), move(app.ctx, u.id, t, 60, false), move(app.ctx, u.id, t, 70, true)]);
      expect(ok.map(balancesOf)).toEqual([
        { userQuota: 9720, tokenRemain: 220 },
        { userQuota: 9760, tokenRemain: 260 },
        { userQuota: 9650, tokenRemain: 150 },
      ]);
      expect(await quotaOf(app, u.id)).toBe(9650);
      expect(await remainOf(app, t)).toBe(150);
    });

    test('one batch commits at a time: the moves asked for meanwhile go together in the next', async () => {
      const u = await makeUser(app, { quota: 100_000 });
      // Every batch statement, and how many were in flight at once.
      type Query = (this: unknown, q: unknown, ...rest: unknown[]) => Promise<unknown>;
      const proto = pg.Client.prototype as unknown as { query: Query };
      const query = proto.query;
      let inFlight = 0;
      let most = 0;
      let batches = 0;
      proto.query = function (this: unknown, q: unknown, ...rest: unknown[]) {
        const name = (q as { name?: string } | undefined)?.name ?? '';
        if (!name.startsWith('gw_moves_users')) return query.call(this, q, ...rest);
        batches++;
        most = Math.max(most, ++inFlight);
        return query.call(this, q, ...rest).finally(() => inFlight--);
      };
      try {
        const pending: Array<Promise<MoveOutcome>> = [];
        for (let turn = 0; turn < 20; turn++) {
          pending.push(move(app.ctx, u.id, undefined, 10, true));
          await new Promise((resolve) => setImmediate(resolve));
        }
        const out = await Promise.all(pending);
        expect(out.every((o) => typeof o === 'object')).toBe(true);
        // A batch per turn would have had up to 20 statements in flight, queueing on the user's row.
        expect(most).toBe(1);
        expect(batches).toBeGreaterThan(0);
        expect(batches).toBeLessThan(20);
        expect(await quotaOf(app, u.id)).toBe(100_000 - 200);
      } finally {
        proto.query = query;
      }
    });

    test('a batch that fails is rejected as a whole and writes nothing', async () => {
      const u = await makeUser(app, { quota: 1000 });
      const t = await limitedToken(app, u.id, 1000);
      // A fractional amount is not a bigint: the statement fails.
      const out = await Promise.allSettled([move(app.ctx, u.id, t, 10, true), move(app.ctx, u.id, undefined, 0.5, true)]);
      expect(out.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      expect(await quotaOf(app, u.id)).toBe(1000);
      expect(await remainOf(app, t)).toBe(1000);
      // The connection went back to the pool usable.
      expect(userOf(await move(app.ctx, u.id, t, 10, true))).toBe(990);
    });

    test('a batch PostgreSQL aborts to break a lock cycle runs again and lands once', async () => {
      const warn = jest.spyOn(app.ctx.log, 'warn');
      const aborted = (err: unknown) => (err as { code?: string }).code === '40P01';
      try {
        // The batch begins to wait first, so its deadlock check normally finds the cycle. On a
        // loaded box the test may close the cycle only after that check, and PostgreSQL then aborts
        // the test's own transaction instead: the batch was not the one aborted, so the scenario
        // runs again (the batch's moves still land exactly once, checked each time).
        for (let round = 1; ; round++) {
          const a = await makeUser(app, { quota: 1000 });
          const b = await makeUser(app, { quota: 1000 });
          warn.mockClear();
          // Another writer (another node's batch, a usage flush) holds b's row and then wants a's.
          const other = await app.knex.transaction();
          let otherAborted = false;
          try {
            await other('users').where({ id: b.id }).forUpdate().first();
            const otherPid = Number((await other.raw('select pg_backend_pid() as p')).rows[0].p);
            // One batch for both users: it locks a's row (ids in ascending order), then waits for b's.
            const moves = Promise.all([move(app.ctx, a.id, undefined, 10, true), move(app.ctx, b.id, undefined, 20, true)]);
            await waitFor(async () => {
              const r = await app.knex.raw('select count(*) as n from pg_stat_activity where ? = any(pg_blocking_pids(pid))', [otherPid]);
              return Number(r.rows[0].n) > 0;
            });
            // The cycle: PostgreSQL aborts the batch (its deadlock check comes first); `other` gets a's row.
            try {
              await other('users').where({ id: a.id }).forUpdate().first();
              await other.commit();
            } catch (err) {
              if (!aborted(err) || round >= 3) throw err;
              otherAborted = true;
              await other.rollback();
            }
            expect((await moves).map(userOf)).toEqual([990, 980]);
          } finally {
            if (!other.isCompleted()) await other.rollback();
          }
          expect(await quotaOf(app, a.id)).toBe(990);
          expect(await quotaOf(app, b.id)).toBe(980);
          if (otherAborted) continue;
          expect(warn.mock.calls.some(([o]) => aborted(o))).toBe(true);
          return;
        }
      } finally {
        warn.mockRestore();
      }
    });

    test('billing on top: concurrent reservations never overspend; settles and refunds land exactly', async () => {
      const u = await makeUser(app, { quota: 300 });
      const payer = { userId: u.id };
      const results = await Promise.allSettled(Array.from({ length: 40 }, () => preConsume(app.ctx, payer, 10)));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(30);
      expect(await quotaOf(app, u.id)).toBe(0);
      const settled = await Promise.all(Array.from({ length: 30 }, (_, i) => settle(app.ctx, payer, 10, i < 10 ? 4 : i < 20 ? 10 : 12)));
      // 60 refunded, then the 10 extra-cost settles take 2 each as far as the balance reaches.
      expect(settled.map((s) => s.taken)).toEqual([...Array(10).fill(4), ...Array(10).fill(10), ...Array(10).fill(12)]);
      expect(await quotaOf(app, u.id)).toBe(40);
    });
  });
}
