import { buildApp, ALL_TARGETS, makeUser, type TestApp } from '../helpers/app';
import { accessHeaders } from '../helpers/auth';
import { flushUsage, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { startTaskMock, type TaskMock } from '../mock-upstream/tasks';
import { taskPoller } from '../../server/src/tasks';
import { CHANNEL_TYPE } from '../../server/src/channels/kinds';

/** USD per second of video. */
const PRICE = { 'sora-2': 0.1 };
const Q = (usd: number) => Math.round(usd * 500_000);

describe.each(ALL_TARGETS.map((t) => [t.name, t] as const))('OpenAI video tasks [%s]', (_name, target) => {
  let app: TestApp;
  let mock: TaskMock;
  let alice: { id: number };
  let bob: { id: number };
  let aliceKey: string;
  let bobKey: string;

  const quota = async (id: number) => Number((await app.knex('users').where({ id }).first()).quota);
  const tick = () => taskPoller(app.ctx).tick();
  const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

  beforeAll(async () => {
    app = await buildApp(target, { config: { taskPollMs: 0 } });
    mock = await startTaskMock();
    await seedChannel(app, { type: CHANNEL_TYPE.OpenAI, key: mock.keys.video, base_url: mock.url, models: 'sora-2' });
    // A Midjourney channel offering the same model name is never used for videos.
    await seedChannel(app, { type: CHANNEL_TYPE.Midjourney, key: 'wrong', base_url: `${mock.url}/wrong`, models: 'sora-2', priority: 10 });
    await setOptions(app, { ModelPrice: JSON.stringify(PRICE) });
    alice = await makeUser(app, { quota: 10_000_000 });
    bob = await makeUser(app, { quota: 10_000_000 });
    aliceKey = (await seedToken(app, alice.id)).key;
    bobKey = (await seedToken(app, bob.id)).key;
  });
  afterAll(async () => {
    await mock.close();
    await app.close();
  });
  beforeEach(() => mock.reset());

  it('create: billed per second, polled to completed, retrieved, downloaded and listed', async () => {
    const before = await quota(alice.id);
    const res = await app.http().post('/v1/videos').set(auth(aliceKey)).send({ model: 'sora-2', prompt: 'a fox running', seconds: '8', size: '1280x720' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'video', model: 'sora-2', status: 'queued', progress: 0, seconds: '8' });
    const id = res.body.id as string;
    expect(await quota(alice.id)).toBe(before - Q(0.1) * 8);
    expect(mock.requests.find((r) => r.path === '/v1/videos')!.headers.authorization).toBe(`Bearer ${mock.keys.video}`);

    let g = await app.http().get(`/v1/videos/${id}`).set(auth(aliceKey));
    expect(g.body).toMatchObject({ id, object: 'video', status: 'queued' });
    const early = await app.http().get(`/v1/videos/${id}/content`).set(auth(aliceKey));
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('video_not_ready');
    await tick();
    g = await app.http().get(`/v1/videos/${id}`).set(auth(aliceKey));
    expect(g.body).toMatchObject({ status: 'in_progress', progress: 50 });
    await tick();
    g = await app.http().get(`/v1/videos/${id}`).set(auth(aliceKey));
    expect(g.body).toMatchObject({
      status: 'completed',
      progress: 100,
      completed_at: Math.floor(mock.tasks.get(id)!.at[2]! / 1000),
      error: null,
      size: '1280x720',
    });

    const content = await app.http().get(`/v1/videos/${id}/content`).set(auth(aliceKey)).buffer(true);
    expect(content.status).toBe(200);
    expect(content.headers['content-type']).toBe('video/mp4');
    expect(Buffer.from(content.body as Buffer).toString()).toBe(`mock-mp4:${id}`);

    const list = await app.http().get('/v1/videos').set(auth(aliceKey)).query({ limit: 10 });
    expect(list.body).toMatchObject({ object: 'list', first_id: id, has_more: false });
    expect(list.body.data.map((v: { id: string }) => v.id)).toContain(id);

    await flushUsage(app);
    const log = await app.knex('logs').where({ user_id: alice.id, type: 2, model_name: 'sora-2' }).first();
    expect(Number(log.quota)).toBe(Q(0.1) * 8);
    const taskLog = await app
      .http()
      .get('/api/task/self')
      .set(await accessHeaders(app, alice.id));
    expect(taskLog.body.data.find((r: { task_id: string }) => r.task_id === id)).toMatchObject({
      platform: 'openai',
      action: 'VIDEO',
      status: 'SUCCESS',
      progress: '100%',
    });
  });

  it('multipart create (the SDK with an input reference) with the default length', async () => {
    const before = await quota(alice.id);
    const res = await app
      .http()
      .post('/v1/videos')
      .set(auth(aliceKey))
      .field('model', 'sora-2')
      .field('prompt', 'a multipart fox')
      .attach('input_reference', Buffer.from('img'), 'ref.png');
    expect(res.status).toBe(200);
    expect(await quota(alice.id)).toBe(before - Q(0.1) * 4);
    const sent = mock.requests.find((r) => r.path === '/v1/videos')!;
    expect(String(sent.headers['content-type'])).toMatch(/^multipart\/form-data/);
  });

  it('a failed video is refunded exactly once', async () => {
    const before = await quota(alice.id);
    const res = await app.http().post('/v1/videos').set(auth(aliceKey)).send({ model: 'sora-2', prompt: 'this will fail', seconds: 4 });
    const id = res.body.id as string;
    await tick();
    await tick();
    await tick();
    const g = await app.http().get(`/v1/videos/${id}`).set(auth(aliceKey));
    expect(g.body).toMatchObject({ status: 'failed', error: { code: 'moderation_blocked', message: 'The video was blocked by moderation' } });
    expect(await quota(alice.id)).toBe(before);
    await flushUsage(app);
    expect(await app.knex('logs').where({ user_id: alice.id, type: 4 }).andWhere('content', 'like', `%${id}%`)).toHaveLength(1);
  });

  it('a limited token pays with the user and gets its share back when the video fails', async () => {
    const t = await seedToken(app, alice.id, { unlimited_quota: false, remain_quota: Q(0.1) * 10 });
    const remain = async () => Number((await app.knex('tokens').where({ id: t.id }).first()).remain_quota);
    const before = await quota(alice.id);
    const ok = await app.http().post('/v1/videos').set(auth(t.key)).send({ model: 'sora-2', prompt: 'a limited fox', seconds: 4 });
    expect(ok.status).toBe(200);
    expect(await remain()).toBe(Q(0.1) * 6);
    const bad = await app.http().post('/v1/videos').set(auth(t.key)).send({ model: 'sora-2', prompt: 'a limited fox that will fail', seconds: 4 });
    expect(await remain()).toBe(Q(0.1) * 2);
    // More than the token has left: refused, nothing taken.
    const tooLong = await app.http().post('/v1/videos').set(auth(t.key)).send({ model: 'sora-2', prompt: 'too long', seconds: 8 });
    expect(tooLong.status).toBe(403);
    expect(await remain()).toBe(Q(0.1) * 2);
    for (let i = 0; i < 3; i++) await tick();
    expect((await app.knex('tasks').where({ task_id: bad.body.id }).first()).status).toBe('FAILURE');
    expect(await remain()).toBe(Q(0.1) * 6);
    expect(await quota(alice.id)).toBe(before - Q(0.1) * 4);
  });

  it('bad input and refusals cost nothing; errors in OpenAI shape', async () => {
    const before = await quota(alice.id);
    const noPrompt = await app.http().post('/v1/videos').set(auth(aliceKey)).send({ model: 'sora-2' });
    expect(noPrompt.status).toBe(400);
    expect(noPrompt.body.error).toMatchObject({ code: 'invalid_request' });
    const badSeconds = await app.http().post('/v1/videos').set(auth(aliceKey)).send({ model: 'sora-2', prompt: 'x', seconds: 'ten' });
    expect(badSeconds.status).toBe(400);
    const refused = await app.http().post('/v1/videos').set(auth(aliceKey)).send({ model: 'sora-2', prompt: 'reject me' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'moderation_blocked', message: 'Your request was rejected by the safety system' });
    const unknownModel = await app.http().post('/v1/videos').set(auth(aliceKey)).send({ model: 'sora-9', prompt: 'x' });
    expect(unknownModel.status).toBe(503);
    expect(unknownModel.body.error.code).toBe('model_not_found');
    expect(await quota(alice.id)).toBe(before);
  });

  it("a network error on one video's poll backs off that video only", async () => {
    const one = await app.http().post('/v1/videos').set(auth(aliceKey)).send({ model: 'sora-2', prompt: 'first fox' });
    const two = await app.http().post('/v1/videos').set(auth(aliceKey)).send({ model: 'sora-2', prompt: 'second fox' });
    // Polled in submit order: the first one's connection drops, the second still gets its answer.
    mock.dropPolls.add(one.body.id);
    await tick();
    const row1 = await app.knex('tasks').where({ task_id: one.body.id }).first();
    const row2 = await app.knex('tasks').where({ task_id: two.body.id }).first();
    expect(row1).toMatchObject({ status: 'QUEUED', poll_errors: 1, active: 1 });
    expect(Number(row1.next_poll_at)).toBeGreaterThan(Date.now() + 1000);
    expect(row2).toMatchObject({ status: 'IN_PROGRESS', poll_errors: 0 });
    expect(mock.polled.get(two.body.id)).toBe(1);
  });

  it("a user never sees another user's video", async () => {
    const res = await app.http().post('/v1/videos').set(auth(aliceKey)).send({ model: 'sora-2', prompt: 'alice only' });
    const id = res.body.id as string;
    const g = await app.http().get(`/v1/videos/${id}`).set(auth(bobKey));
    expect(g.status).toBe(404);
    expect(g.body.error.code).toBe('video_not_found');
    const c = await app.http().get(`/v1/videos/${id}/content`).set(auth(bobKey));
    expect(c.status).toBe(404);
    const list = await app.http().get('/v1/videos').set(auth(bobKey));
    expect(list.body.data.some((v: { id: string }) => v.id === id)).toBe(false);
  });
});
