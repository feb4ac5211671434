import { buildApp, ALL_TARGETS, makeUser, type TestApp } from '../helpers/app';
import { accessHeaders } from '../helpers/auth';
import { flushUsage, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { startTaskMock, type TaskMock } from '../mock-upstream/tasks';
import { taskPoller } from '../../server/src/tasks';
import { CHANNEL_TYPE } from '../../server/src/channels/kinds';

const PRICE = { suno_music: 0.2, suno_lyrics: 0.02 };
const Q = (usd: number) => Math.round(usd * 500_000);

describe.each(ALL_TARGETS.map((t) => [t.name, t] as const))('Suno tasks [%s]', (_name, target) => {
  let app: TestApp;
  let mock: TaskMock;
  let alice: { id: number };
  let bob: { id: number };
  let aliceKey: string;
  let bobKey: string;
  let channelId: number;

  const quota = async (id: number) => Number((await app.knex('users').where({ id }).first()).quota);
  const tick = () => taskPoller(app.ctx).tick();
  const post = (key: string, path: string, body: Record<string, unknown>) => app.http().post(path).set('Authorization', `Bearer ${key}`).send(body);
  const get = (key: string, path: string) => app.http().get(path).set('Authorization', `Bearer ${key}`);

  beforeAll(async () => {
    app = await buildApp(target, { config: { taskPollMs: 0 } });
    mock = await startTaskMock();
    channelId = await seedChannel(app, { type: CHANNEL_TYPE.Suno, key: mock.keys.suno, base_url: mock.url, models: 'suno_music,suno_lyrics' });
    await setOptions(app, { ModelPrice: JSON.stringify(PRICE) });
    alice = await makeUser(app, { quota: 1_000_000 });
    bob = await makeUser(app, { quota: 1_000_000 });
    aliceKey = (await seedToken(app, alice.id)).key;
    bobKey = (await seedToken(app, bob.id)).key;
  });
  afterAll(async () => {
    await mock.close();
    await app.close();
  });
  beforeEach(() => mock.reset());

  it('a Suno channel takes no model-API call: a chat for its model finds no channel', async () => {
    const before = await quota(alice.id);
    const chat = await post(aliceKey, '/v1/chat/completions', { model: 'suno_music', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBeGreaterThanOrEqual(400);
    expect(chat.body.error).toBeDefined();
    expect(mock.requests).toHaveLength(0);
    expect(await quota(alice.id)).toBe(before);
  });

  it('music: billed on accept, polled through QUEUED and IN_PROGRESS to SUCCESS, fetched by id and by ids', async () => {
    const before = await quota(alice.id);
    const res = await post(aliceKey, '/suno/submit/music', {
      prompt: '[Verse] hello',
      tags: 'pop',
      mv: 'chirp-v3-5',
      title: 'Hi',
      notify_hook: 'http://127.0.0.1/x',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ code: 'success', message: '' });
    const id = res.body.data as string;
    expect(await quota(alice.id)).toBe(before - Q(0.2));
    const sent = mock.requests.find((r) => r.path === '/suno/submit/music')!;
    expect(sent.headers.authorization).toBe(`Bearer ${mock.keys.suno}`);
    expect(sent.body).toMatchObject({ prompt: '[Verse] hello', tags: 'pop', mv: 'chirp-v3-5' });
    expect(sent.body.notify_hook).toBeUndefined();

    let f = await get(aliceKey, `/suno/fetch/${id}`);
    expect(f.body).toMatchObject({ code: 'success', data: { task_id: id, action: 'MUSIC', status: 'SUBMITTED', progress: '0%' } });
    await tick();
    f = await get(aliceKey, `/suno/fetch/${id}`);
    expect(f.body.data).toMatchObject({ status: 'QUEUED' });
    await tick();
    f = await get(aliceKey, `/suno/fetch/${id}`);
    expect(f.body.data).toMatchObject({ status: 'IN_PROGRESS', progress: '50%', start_time: Math.floor(mock.tasks.get(id)!.at[2]! / 1000) });
    await tick();
    f = await get(aliceKey, `/suno/fetch/${id}`);
    expect(f.body.data).toMatchObject({ status: 'SUCCESS', progress: '100%', finish_time: Math.floor(mock.tasks.get(id)!.at[3]! / 1000), fail_reason: '' });
    expect(f.body.data.data[0]).toMatchObject({ id: `${id}-clip1`, audio_url: `${mock.url}/audio/${id}-1.mp3`, status: 'complete' });

    const byIds = await post(aliceKey, '/suno/fetch', { ids: [id, 'unknown'], action: 'MUSIC' });
    expect(byIds.body.code).toBe('success');
    expect(byIds.body.data.map((t: { task_id: string }) => t.task_id)).toEqual([id]);
    const wrongAction = await post(aliceKey, '/suno/fetch', { ids: [id], action: 'LYRICS' });
    expect(wrongAction.body.data).toEqual([]);

    await flushUsage(app);
    const log = await app.knex('logs').where({ user_id: alice.id, type: 2, model_name: 'suno_music' }).first();
    expect(Number(log.quota)).toBe(Q(0.2));
    expect(log.channel_id).toBe(channelId);

    const taskLog = await app
      .http()
      .get('/api/task/self')
      .set(await accessHeaders(app, alice.id));
    expect(taskLog.body.data.find((r: { task_id: string }) => r.task_id === id)).toMatchObject({
      platform: 'suno',
      action: 'MUSIC',
      status: 'SUCCESS',
      progress: '100%',
      finish_time: Math.floor(mock.tasks.get(id)!.at[3]! / 1000),
    });
    const adminH = await accessHeaders(app, (await makeUser(app, { role: 10 })).id);
    const all = await app.http().get('/api/task/').set(adminH).query({ task_id: id });
    expect(all.body.data).toHaveLength(1);
    expect(all.body.data[0].channel_id).toBe(channelId);
  });

  it('a status outside the protocol is shown as UNKNOWN and the song is still followed to its end', async () => {
    const res = await post(aliceKey, '/suno/submit/music', { prompt: 'an odd song' });
    const id = res.body.data as string;
    await tick();
    const f = await get(aliceKey, `/suno/fetch/${id}`);
    expect(f.body.data).toMatchObject({ status: 'UNKNOWN' });
    expect(await app.knex('tasks').where({ task_id: id }).first()).toMatchObject({ status: 'UNKNOWN', active: 1 });
    const taskLog = await app
      .http()
      .get('/api/task/self')
      .set(await accessHeaders(app, alice.id))
      .query({ task_id: id });
    expect(taskLog.body.data).toEqual([expect.objectContaining({ task_id: id, status: 'UNKNOWN', platform: 'suno', action: 'MUSIC' })]);
    await tick();
    await tick();
    expect((await get(aliceKey, `/suno/fetch/${id}`)).body.data).toMatchObject({ status: 'SUCCESS' });
  });

  it('lyrics: its own price and type', async () => {
    const before = await quota(alice.id);
    const res = await post(aliceKey, '/suno/submit/lyrics', { prompt: 'a song about foxes' });
    const id = res.body.data as string;
    expect(await quota(alice.id)).toBe(before - Q(0.02));
    for (let i = 0; i < 3; i++) await tick();
    const f = await get(aliceKey, `/suno/fetch/${id}`);
    expect(f.body.data).toMatchObject({ action: 'LYRICS', status: 'SUCCESS' });
    expect(f.body.data.data).toMatchObject({ text: '[Verse]\nla la la' });
  });

  it('a failed song is refunded exactly once', async () => {
    const before = await quota(alice.id);
    const res = await post(aliceKey, '/suno/submit/music', { gpt_description_prompt: 'this should fail' });
    const id = res.body.data as string;
    for (let i = 0; i < 4; i++) await tick();
    const row = await app.knex('tasks').where({ task_id: id }).first();
    expect(row).toMatchObject({ status: 'FAILURE', fail_reason: 'suno refused the prompt', refunded: 1, active: 0 });
    expect(await quota(alice.id)).toBe(before);
    await flushUsage(app);
    const refunds = await app.knex('logs').where({ user_id: alice.id, type: 4 }).andWhere('content', 'like', `%${id}%`);
    expect(refunds).toHaveLength(1);
  });

  it('a refused submit answers the upstream error and costs nothing', async () => {
    const before = await quota(alice.id);
    const res = await post(aliceKey, '/suno/submit/music', { prompt: 'reject this' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'prompt_rejected', message: 'prompt rejected by the mock', data: null });
    expect(await quota(alice.id)).toBe(before);
    const empty = await post(aliceKey, '/suno/submit/lyrics', {});
    expect(empty.status).toBe(400);
    expect(empty.body).toMatchObject({ code: 'invalid_request', data: null });
    const unknown = await post(aliceKey, '/suno/submit/video', { prompt: 'x' });
    expect(unknown.status).toBe(404);
  });

  it('prompts go through the sensitive-word check before anything is billed or sent', async () => {
    await setOptions(app, { CheckSensitiveEnabled: 'true', CheckSensitiveOnPromptEnabled: 'true', SensitiveWords: 'forbiddenword' });
    try {
      const before = await quota(alice.id);
      const res = await post(aliceKey, '/suno/submit/music', { prompt: 'a song', tags: 'pop, forbiddenword' });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'sensitive_words_detected', data: null });
      expect(await quota(alice.id)).toBe(before);
      expect(mock.requests).toHaveLength(0);
    } finally {
      await setOptions(app, { CheckSensitiveEnabled: 'false', CheckSensitiveOnPromptEnabled: 'false', SensitiveWords: '' });
    }
  });

  it("a user never sees another user's song", async () => {
    const res = await post(aliceKey, '/suno/submit/music', { prompt: 'alice only' });
    const id = res.body.data as string;
    const f = await get(bobKey, `/suno/fetch/${id}`);
    expect(f.status).toBe(404);
    expect(f.body).toMatchObject({ code: 'task_not_exist', data: null });
    const byIds = await post(bobKey, '/suno/fetch', { ids: [id] });
    expect(byIds.body.data).toEqual([]);
    const bobLog = await app
      .http()
      .get('/api/task/self')
      .set(await accessHeaders(app, bob.id));
    expect(bobLog.body.data.some((r: { task_id: string }) => r.task_id === id)).toBe(false);
  });
});
