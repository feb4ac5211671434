import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp, ALL_TARGETS, makeUser, type Target, type TestApp } from '../helpers/app';
import { seedChannel, seedToken, setOptions, updateChannel } from '../mock-upstream/seed';
import { invalidateChannels } from '../../server/src/services/invalidate';
import { startTaskMock, type TaskMock } from '../mock-upstream/tasks';
import { taskPoller } from '../../server/src/tasks';
import { CHANNEL_TYPE } from '../../server/src/channels/kinds';
import { fakeOnly, waitFor } from '../helpers/clock';

/**
 * The poller across nodes and restarts: two apps sharing one database (PostgreSQL, or one SQLite
 * file) never poll one task at once; a new app on the same database finishes what a closed one
 * left; the timer-driven poller works on its own and stops with the app.
 */
describe.each(ALL_TARGETS.map((t) => [t.name, t] as const))('task poller [%s]', (_name, target: Target) => {
  let mock: TaskMock;
  let file: string | undefined;
  const apps: TestApp[] = [];

  const dbConfig = () => (file ? { databaseUrl: `sqlite:${file}` } : {});
  async function node(share?: TestApp, taskPollMs = 0): Promise<TestApp> {
    const a = await buildApp(target, { shareWith: share, config: { ...dbConfig(), taskPollMs } });
    apps.push(a);
    return a;
  }
  async function seed(a: TestApp) {
    await seedChannel(a, { type: CHANNEL_TYPE.Midjourney, key: mock.keys.mj, base_url: mock.url, models: 'mj_imagine' });
    await seedChannel(a, { type: CHANNEL_TYPE.Suno, key: mock.keys.suno, base_url: mock.url, models: 'suno_music' });
    await setOptions(a, { ModelPrice: JSON.stringify({ mj_imagine: 0.1, suno_music: 0.1 }) });
    const u = await makeUser(a, { quota: 10_000_000 });
    return { user: u, key: (await seedToken(a, u.id)).key };
  }
  const imagine = async (a: TestApp, key: string, prompt: string) => {
    const res = await a.http().post('/mj/submit/imagine').set('mj-api-secret', key).send({ prompt });
    expect(res.body.code).toBe(1);
    return res.body.result as string;
  };

  beforeAll(async () => {
    mock = await startTaskMock();
  });
  beforeEach(() => {
    mock.reset();
    file = target.db === 'sqlite' ? path.join(os.tmpdir(), `tasks-${crypto.randomBytes(4).toString('hex')}.db`) : undefined;
  });
  afterEach(async () => {
    // Sharing apps first, the owner of the schema last.
    for (const a of apps.reverse()) await a.close();
    apps.length = 0;
    if (file) for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
  });
  afterAll(async () => {
    await mock.close();
  });

  it('two nodes polling at the same moment never poll one task twice', async () => {
    const a = await node();
    const { key } = await seed(a);
    // Started after the seeding: each node loads channels and prices at its start.
    const b = await node(a);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await imagine(i % 2 ? b : a, key, `fox ${i}`));
    // Slow upstream: both rounds overlap for their whole length.
    mock.pollDelayMs = 150;
    await Promise.all([taskPoller(a.ctx).tick(), taskPoller(b.ctx).tick()]);
    for (const id of ids) expect(mock.polled.get(id)).toBe(1);
    const rows = await a.knex('midjourneys').whereIn('mj_id', ids);
    expect(rows.every((r: { status: string; lease_owner: string }) => r.status === 'IN_PROGRESS' && r.lease_owner === '')).toBe(true);
    await Promise.all([taskPoller(a.ctx).tick(), taskPoller(b.ctx).tick()]);
    for (const id of ids) expect(mock.polled.get(id)).toBe(2);
    expect((await a.knex('midjourneys').whereIn('mj_id', ids).where({ status: 'SUCCESS' })).length).toBe(6);
  });

  it('a failed task polled by two nodes is refunded once', async () => {
    const a = await node();
    const { user, key } = await seed(a);
    const b = await node(a);
    const before = Number((await a.knex('users').where({ id: user.id }).first()).quota);
    const id = await imagine(a, key, 'fail on two nodes');
    for (let i = 0; i < 3; i++) await Promise.all([taskPoller(a.ctx).tick(), taskPoller(b.ctx).tick()]);
    expect(mock.polled.get(id)).toBe(2);
    expect(Number((await a.knex('users').where({ id: user.id }).first()).quota)).toBe(before);
  });

  it('a leased task is left to its node until the lease runs out', async () => {
    const a = await node();
    const { key } = await seed(a);
    // Started after the seeding: each node loads channels and prices at its start.
    const b = await node(a);
    const id = await imagine(a, key, 'leased fox');
    // Node A took it and then went silent (a crash mid-poll): its lease still runs.
    await a
      .knex('midjourneys')
      .where({ mj_id: id })
      .update({ lease_owner: 'dead-node', lease_until: Date.now() + 60_000 });
    await taskPoller(b.ctx).tick();
    expect(mock.polled.get(id)).toBeUndefined();
    await a
      .knex('midjourneys')
      .where({ mj_id: id })
      .update({ lease_until: Date.now() - 1 });
    await taskPoller(b.ctx).tick();
    expect(mock.polled.get(id)).toBe(1);
  });

  it('a task unfinished 24 hours after its submit fails and is refunded, answered or not', async () => {
    const a = await node();
    const { user, key } = await seed(a);
    const quota = async () => Number((await a.knex('users').where({ id: user.id }).first()).quota);
    const before = await quota();
    const answered = await imagine(a, key, 'a fox still drawing');
    const silent = await imagine(a, key, 'a fox nobody answers for');
    const dayAgo = Date.now() - 25 * 3600 * 1000;
    await a.knex('midjourneys').whereIn('mj_id', [answered, silent]).update({ submit_time: dayAgo });
    expect(await quota()).toBe(before - 2 * 50_000);
    // The upstream still says IN_PROGRESS for one; the other gets no answer at all.
    mock.tasks.delete(silent);
    await taskPoller(a.ctx).tick();
    expect(mock.polled.get(answered)).toBe(1);
    const rows = await a.knex('midjourneys').whereIn('mj_id', [answered, silent]);
    for (const row of rows) expect(row).toMatchObject({ status: 'FAILURE', fail_reason: '任务超时', active: 0, refunded: 1 });
    expect(await quota()).toBe(before);
    await taskPoller(a.ctx).tick();
    expect(await quota()).toBe(before);
  });

  it('a deleted channel fails (and refunds) its tasks; a disabled one still follows them', async () => {
    const a = await node();
    const { user, key } = await seed(a);
    const quota = async () => Number((await a.knex('users').where({ id: user.id }).first()).quota);
    const before = await quota();
    const song = await a.http().post('/suno/submit/music').set('Authorization', `Bearer ${key}`).send({ prompt: 'an orphan song' });
    const songId = song.body.data as string;
    const mj = await imagine(a, key, 'a fox on a disabled channel');
    const row = (t: string, id: string) =>
      a
        .knex(t)
        .where(t === 'tasks' ? { task_id: id } : { mj_id: id })
        .first();
    const sunoChannel = Number((await row('tasks', songId)).channel_id);
    const mjChannel = Number((await row('midjourneys', mj)).channel_id);
    await a.knex('channels').where({ id: sunoChannel }).del();
    await updateChannel(a, mjChannel, { status: 2 });
    await invalidateChannels(a.ctx);
    await taskPoller(a.ctx).tick();
    expect(await row('tasks', songId)).toMatchObject({ status: 'FAILURE', fail_reason: '任务所在渠道已删除', active: 0, refunded: 1 });
    expect(mock.polled.get(songId)).toBeUndefined();
    expect((await row('midjourneys', mj)).status).toBe('IN_PROGRESS');
    await taskPoller(a.ctx).tick();
    expect((await row('midjourneys', mj)).status).toBe('SUCCESS');
    // The song's price came back; the drawing's was spent.
    expect(await quota()).toBe(before - 50_000);
  });

  it('a restart resumes unfinished tasks', async () => {
    // `holder` keeps the database (and the PostgreSQL schema) while nodes come and go.
    const holder = await node();
    const { key } = await seed(holder);
    const a = await node(holder);
    const mj = await imagine(a, key, 'restart fox');
    const song = await a.http().post('/suno/submit/music').set('Authorization', `Bearer ${key}`).send({ prompt: 'restart song' });
    const songId = song.body.data as string;
    await taskPoller(a.ctx).tick();
    expect((await a.knex('midjourneys').where({ mj_id: mj }).first()).status).toBe('IN_PROGRESS');
    // Closed mid-task; a new process (another node id) on the same database finishes both.
    apps.splice(apps.indexOf(a), 1);
    await a.close();
    const b = await node(holder);
    for (let i = 0; i < 3; i++) await taskPoller(b.ctx).tick();
    expect((await b.knex('midjourneys').where({ mj_id: mj }).first()).status).toBe('SUCCESS');
    expect((await b.knex('tasks').where({ task_id: songId }).first()).status).toBe('SUCCESS');
  });

  it('the timer-driven poller finishes tasks on its own and stops with the app', async () => {
    const holder = await node();
    const { key } = await seed(holder);
    // The poller's timer (and the mock's poll delay) on jest's fake setTimeout, the database and
    // sockets on their real timers: the test moves the poll interval instead of sleeping through it.
    fakeOnly(['setTimeout', 'clearTimeout']);
    try {
      const advance = () => jest.advanceTimersByTimeAsync(50);
      const a = await node(holder, 50);
      const row = async (id: string) => a.knex('midjourneys').where({ mj_id: id }).first();
      const id = await imagine(a, key, 'timer fox');
      // Each interval that passes is a round (when the last one has ended): polled until done.
      await waitFor(async () => {
        await advance();
        return (await row(id)).status === 'SUCCESS';
      });
      mock.pollDelayMs = 100;
      const second = await imagine(a, key, 'timer fox 2');
      // The next round leases the task and asks the mock, which holds its answer for 100 ms of the
      // fake clock: moved 50 ms at a time until the lease shows, the round is then in progress.
      await waitFor(async () => {
        await advance();
        return (await row(second)).lease_owner === taskPoller(a.ctx).owner;
      });
      apps.splice(apps.indexOf(a), 1);
      // Closing waits for the round in progress (its poll answered, its result written) and gives
      // back its leases; the clock moves on until it has closed.
      let closed = false;
      const closing = a.close().then(() => (closed = true));
      await waitFor(async () => {
        await advance();
        return closed;
      });
      await closing;
      const polls = mock.polled.get(second) ?? 0;
      expect(polls).toBe(1);
      expect((await holder.knex('midjourneys').where({ mj_id: second }).first()).status).toBe('IN_PROGRESS');
      await jest.advanceTimersByTimeAsync(300);
      expect(mock.polled.get(second) ?? 0).toBe(polls);
      expect((await holder.knex('midjourneys').where({ mj_id: second }).first()).lease_owner).toBe('');
    } finally {
      jest.useRealTimers();
    }
  });
});
