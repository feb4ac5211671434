import { DB_TARGETS, describeEach, makeUser } from '../helpers/app';
import { accessHeaders } from '../helpers/auth';
import { insertLogs } from '../../server/src/repositories/logs';

describeEach(DB_TARGETS, 'drawing/task logs, dashboard data, performance', (app) => {
  let admin: Record<string, string>;
  let alice: { id: number };
  let aliceH: Record<string, string>;
  const t0 = 1_700_000_000;

  beforeAll(async () => {
    const a = await makeUser(app(), { role: 10 });
    admin = await accessHeaders(app(), a.id);
    alice = await makeUser(app());
    aliceH = await accessHeaders(app(), alice.id);
    const bob = await makeUser(app());
    const mj = [];
    for (let i = 0; i < 15; i++) {
      mj.push({
        user_id: i % 2 ? alice.id : bob.id,
        mj_id: `mj-${i}`,
        channel_id: 7 + (i % 3),
        action: 'IMAGINE',
        status: 'SUCCESS',
        submit_time: (t0 + i) * 1000,
        progress: '100%',
      });
    }
    await app().knex('midjourneys').insert(mj);
    const tasks = [];
    for (let i = 0; i < 6; i++) {
      tasks.push({
        user_id: i % 2 ? alice.id : bob.id,
        task_id: `task-${i}`,
        platform: 'suno',
        action: 'MUSIC',
        status: 'SUCCESS',
        channel_id: 3,
        submit_time: t0 + i * 10,
      });
    }
    await app().knex('tasks').insert(tasks);
    const logs = [];
    for (let i = 0; i < 6; i++) {
      logs.push({
        user_id: i < 4 ? alice.id : bob.id,
        username: i < 4 ? 'alice' : 'bob',
        type: 2,
        model_name: i % 2 ? 'gpt-4o' : 'gpt-4o-mini',
        quota: 100 + i,
        prompt_tokens: 10,
        completion_tokens: 5,
        created_at: t0 + i * 1800,
      });
    }
    logs.push({ user_id: alice.id, type: 1, quota: 99999, created_at: t0 });
    await insertLogs(app().knex, logs);
  });

  it('pages drawing logs for admins with filters, and limits users to their own without channel', async () => {
    const first = await app().http().get('/api/mj/').set(admin).query({ p: 1 });
    expect(first.body.success).toBe(true);
    expect(first.body.data).toHaveLength(10);
    const second = await app().http().get('/api/mj/').set(admin).query({ p: 2 });
    expect(second.body.data).toHaveLength(5);
    const byChannel = await app().http().get('/api/mj/').set(admin).query({ channel_id: 7 });
    expect(byChannel.body.data.every((r: { channel_id: number }) => r.channel_id === 7)).toBe(true);
    expect(byChannel.body.data).toHaveLength(5);
    const range = await app()
      .http()
      .get('/api/mj/')
      .set(admin)
      .query({ start_timestamp: (t0 + 3) * 1000, end_timestamp: (t0 + 5) * 1000 });
    expect(range.body.data.map((r: { mj_id: string }) => r.mj_id).sort()).toEqual(['mj-3', 'mj-4', 'mj-5']);
    const mine = await app().http().get('/api/mj/self').set(aliceH);
    expect(mine.body.data).toHaveLength(7);
    expect(mine.body.data.every((r: { user_id: number; channel_id?: number }) => r.user_id === alice.id && r.channel_id === undefined)).toBe(true);
    const forbidden = await app().http().get('/api/mj/').set(aliceH);
    expect(forbidden.status).toBe(403);
  });

  it('answers the spelling with a trailing slash and honours page_size (console lazy paging)', async () => {
    const mine = await app().http().get('/api/mj/self/').set(aliceH).query({ p: 1, page_size: 5 });
    expect(mine.body.success).toBe(true);
    expect(mine.body.data).toHaveLength(5);
    const next = await app().http().get('/api/mj/self/').set(aliceH).query({ p: 2, page_size: 5 });
    expect(next.body.data).toHaveLength(2);
    const ids = [...mine.body.data, ...next.body.data].map((r: { id: number }) => r.id);
    expect(new Set(ids).size).toBe(7);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const tooBig = await app().http().get('/api/task/').set(admin).query({ page_size: 1000 });
    expect(tooBig.body.success).toBe(false);
  });

  it('lists tasks by id and time (seconds)', async () => {
    const one = await app().http().get('/api/task/').set(admin).query({ task_id: 'task-2' });
    expect(one.body.data).toHaveLength(1);
    expect(one.body.data[0]).toMatchObject({ task_id: 'task-2', platform: 'suno' });
    const mine = await app()
      .http()
      .get('/api/task/self')
      .set(aliceH)
      .query({ start_timestamp: t0 + 15 });
    expect(mine.body.data.map((r: { task_id: string }) => r.task_id).sort()).toEqual(['task-3', 'task-5']);
    const bad = await app().http().get('/api/task/').set(admin).query({ p: 'x' });
    expect(bad.body.success).toBe(false);
  });

  it('aggregates consumption per hour and model', async () => {
    const res = await app()
      .http()
      .get('/api/data/')
      .set(admin)
      .query({ start_timestamp: t0 - 10, end_timestamp: t0 + 86400, default_time: 'hour' });
    expect(res.body.success).toBe(true);
    const rows = res.body.data as Array<{ created_at: number; model_name: string; count: number; quota: number; token_used: number }>;
    const total = rows.reduce((s, r) => s + r.quota, 0);
    expect(total).toBe(100 + 101 + 102 + 103 + 104 + 105);
    expect(rows.reduce((s, r) => s + r.count, 0)).toBe(6);
    expect(rows.every((r) => r.created_at % 3600 === 0 && r.token_used === 15 * r.count)).toBe(true);
    const day = await app()
      .http()
      .get('/api/data/')
      .set(admin)
      .query({ start_timestamp: t0 - 10, end_timestamp: t0 + 86400, default_time: 'day' });
    expect(day.body.data.length).toBeLessThanOrEqual(4);
    const mine = await app()
      .http()
      .get('/api/data/self')
      .set(aliceH)
      .query({ start_timestamp: t0 - 10, end_timestamp: t0 + 86400 });
    expect(mine.body.data.reduce((s: number, r: { quota: number }) => s + r.quota, 0)).toBe(100 + 101 + 102 + 103);
    const badRange = await app()
      .http()
      .get('/api/data/')
      .set(admin)
      .query({ start_timestamp: t0, end_timestamp: t0 - 1 });
    expect(badRange.body.success).toBe(false);
  });

  it('reports process metrics to admins only', async () => {
    const res = await app().http().get('/api/performance').set(admin);
    expect(res.body.success).toBe(true);
    expect(res.body.data.memory.rss).toBeGreaterThan(0);
    expect(res.body.data.database).toBe(app().target.db);
    expect(res.body.data.cpu_count).toBeGreaterThan(0);
    expect(res.body.data.load_average).toHaveLength(3);
    expect(res.body.data.uptime_ms).toBeGreaterThan(0);
    expect(Math.abs(res.body.data.sampled_at_ms - Date.now())).toBeLessThan(60_000);
    expect(res.body.data.event_loop_delay_ms).toEqual({ mean: expect.any(Number), p99: expect.any(Number), max: expect.any(Number) });
    expect((await app().http().get('/api/performance').set(aliceH)).status).toBe(403);
  });
});
