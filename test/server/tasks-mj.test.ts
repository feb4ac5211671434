import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp, ALL_TARGETS, loginAgent, makeUser, type TestApp } from '../helpers/app';
import { accessHeaders } from '../helpers/auth';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { startTaskMock, type TaskMock } from '../mock-upstream/tasks';
import { taskPoller } from '../../server/src/tasks';
import { refundFailedTask } from '../../server/src/tasks/core';
import { CHANNEL_TYPE } from '../../server/src/channels/kinds';
import { DEFAULT_ALLOWED_PORTS } from '../../server/src/lib/guardedFetch';

const PRICE = {
  mj_imagine: 0.1,
  mj_upscale: 0.05,
  mj_variation: 0.05,
  mj_describe: 0.04,
  mj_blend: 0.08,
  mj_custom_zoom: 0.03,
  mj_inpaint: 0.03,
  mj_modal: 0.02,
};
const Q = (usd: number) => Math.round(usd * 500_000);

describe.each(ALL_TARGETS.map((t) => [t.name, t] as const))('Midjourney tasks [%s]', (_name, target) => {
  let app: TestApp;
  let mock: TaskMock;
  let gw: { url: string; close(): Promise<void> };
  let alice: { id: number };
  let bob: { id: number };
  let aliceKey: string;
  let bobKey: string;
  let channelId: number;

  const quota = async (id: number) => Number((await app.knex('users').where({ id }).first()).quota);
  const tick = () => taskPoller(app.ctx).tick();
  const submit = (key: string, kind: string, body: Record<string, unknown>, prefix = '') =>
    app.http().post(`${prefix}/mj/submit/${kind}`).set('mj-api-secret', key).send(body);

  beforeAll(async () => {
    // The poller is ticked by hand (TASK_POLL_MS=0: no timer).
    app = await buildApp(target, { config: { taskPollMs: 0 } });
    mock = await startTaskMock();
    gw = await listen(app.callback);
    channelId = await seedChannel(app, {
      type: CHANNEL_TYPE.Midjourney,
      key: mock.keys.mj,
      base_url: mock.url,
      models: Object.keys(PRICE).join(','),
    });
    await setOptions(app, { ModelPrice: JSON.stringify(PRICE) });
    alice = await makeUser(app, { quota: 1_000_000 });
    bob = await makeUser(app, { quota: 1_000_000 });
    aliceKey = (await seedToken(app, alice.id)).key;
    bobKey = (await seedToken(app, bob.id)).key;
  });
  afterAll(async () => {
    await gw.close();
    await mock.close();
    await app.close();
  });
  beforeEach(() => mock.reset());

  it('a Midjourney channel takes no model-API call: a chat for its model finds no channel, and its test says why', async () => {
    const before = await quota(alice.id);
    const chat = await app
      .http()
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer sk-${aliceKey}`)
      .send({ model: 'mj_imagine', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBeGreaterThanOrEqual(400);
    expect(chat.body.error).toBeDefined();
    expect(mock.requests).toHaveLength(0);
    expect(await quota(alice.id)).toBe(before);
    const root = await makeUser(app, { role: 100 });
    const agent = await loginAgent(app, root.username, root.password);
    const test = await agent.get(`/api/channel/test/${channelId}`);
    expect(test.body).toMatchObject({ success: false, message: expect.stringContaining('不支持对话测试') });
    expect(mock.requests).toHaveLength(0);
  });

  it('imagine: billed on accept, polled to success, shown in fetch, list and the drawing log', async () => {
    const before = await quota(alice.id);
    const res = await submit(aliceKey, 'imagine', { prompt: 'a red fox', state: 'my-state', notifyHook: 'http://127.0.0.1:1/hook' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ code: 1, description: '提交成功' });
    const id = res.body.result as string;
    expect(typeof id).toBe('string');
    expect(await quota(alice.id)).toBe(before - Q(0.1));
    // The upstream got the channel's key, and no client callback (we call clients back ourselves).
    const sent = mock.requests.find((r) => r.path === '/mj/submit/imagine')!;
    expect(sent.headers['mj-api-secret']).toBe(mock.keys.mj);
    expect(sent.body.notifyHook).toBeUndefined();
    expect(sent.body.prompt).toBe('a red fox');

    const row = await app.knex('midjourneys').where({ mj_id: id }).first();
    expect(row).toMatchObject({ user_id: alice.id, channel_id: channelId, action: 'IMAGINE', status: 'SUBMITTED', code: 1, state: 'my-state' });
    expect(Number(row.quota)).toBe(Q(0.1));
    // Paid: refundable from now on.
    expect(row.refunded).toBe(0);

    await flushUsage(app);
    const log = await app.knex('logs').where({ user_id: alice.id, type: 2, model_name: 'mj_imagine' }).first();
    expect(Number(log.quota)).toBe(Q(0.1));
    expect(log.channel_id).toBe(channelId);

    await tick();
    let f = await app.http().get(`/mj/task/${id}/fetch`).set('mj-api-secret', aliceKey);
    expect(f.body).toMatchObject({ id, status: 'IN_PROGRESS', progress: '50%', action: 'IMAGINE' });
    await tick();
    f = await app.http().get(`/mj/task/${id}/fetch`).set('mj-api-secret', aliceKey);
    expect(f.body).toMatchObject({
      id,
      status: 'SUCCESS',
      progress: '100%',
      promptEn: 'a red fox (en)',
      imageUrl: `${mock.url}/images/${id}.png`,
    });
    // The upstream's own times: started and finished after the submit.
    expect(f.body.startTime).toBeGreaterThanOrEqual(f.body.submitTime);
    expect(f.body.finishTime).toBeGreaterThanOrEqual(f.body.startTime);
    expect(f.body.finishTime).toBe(mock.tasks.get(id)!.at[2]);
    expect(f.body.buttons).toHaveLength(2);
    // Finished: no more polls.
    const polls = mock.polled.get(id);
    await tick();
    expect(mock.polled.get(id)).toBe(polls);

    const listed = await app
      .http()
      .post('/mj/task/list-by-condition')
      .set('Authorization', aliceKey)
      .send({ ids: [id, 'nope'] });
    expect(listed.body.map((t: { id: string }) => t.id)).toEqual([id]);

    const log2 = await app
      .http()
      .get('/api/mj/self')
      .set(await accessHeaders(app, alice.id));
    const mine = log2.body.data.find((r: { mj_id: string }) => r.mj_id === id);
    expect(mine).toMatchObject({
      status: 'SUCCESS',
      progress: '100%',
      prompt: 'a red fox',
      prompt_en: 'a red fox (en)',
      image_url: `${mock.url}/images/${id}.png`,
    });
    expect(mine.lease_owner).toBeUndefined();
    expect(mine.channel_id).toBeUndefined();
  });

  it('a failed drawing is refunded exactly once, with a log row', async () => {
    const before = await quota(alice.id);
    const res = await submit(aliceKey, 'imagine', { prompt: 'this will fail' });
    const id = res.body.result as string;
    expect(await quota(alice.id)).toBe(before - Q(0.1));
    await tick();
    await tick();
    const row = await app.knex('midjourneys').where({ mj_id: id }).first();
    expect(row).toMatchObject({ status: 'FAILURE', fail_reason: 'Banned prompt detected by the mock', active: 0, refunded: 1 });
    expect(await quota(alice.id)).toBe(before);
    // A second refund attempt (another node, a retry) moves nothing.
    expect(await refundFailedTask(app.ctx, 'midjourneys', row, id, 'again')).toBe(false);
    await tick();
    expect(await quota(alice.id)).toBe(before);
    await flushUsage(app);
    const refunds = await app.knex('logs').where({ user_id: alice.id, type: 4 }).andWhere('content', 'like', `%${id}%`);
    expect(refunds).toHaveLength(1);
    expect(Number(refunds[0].quota)).toBe(Q(0.1));
    const f = await app.http().get(`/mj/task/${id}/fetch`).set('mj-api-secret', aliceKey);
    expect(f.body).toMatchObject({ status: 'FAILURE', failReason: 'Banned prompt detected by the mock' });
  });

  it('a task whose money never settled (a crash before the settle) is not refunded again on failure', async () => {
    const res = await submit(aliceKey, 'imagine', { prompt: 'crashed then fail' });
    const id = res.body.result as string;
    // As the row stands when the process dies between its insert and the settle (recovery gives
    // the open reservation back on its own).
    await app.knex('midjourneys').where({ mj_id: id }).update({ refunded: 1 });
    const before = await quota(alice.id);
    await tick();
    await tick();
    expect((await app.knex('midjourneys').where({ mj_id: id }).first()).status).toBe('FAILURE');
    expect(await quota(alice.id)).toBe(before);
  });

  it('a refused submit is passed through and costs nothing; no row', async () => {
    const before = await quota(alice.id);
    const res = await submit(aliceKey, 'imagine', { prompt: 'please reject me' });
    expect(res.body).toMatchObject({ code: 24, description: '可能包含敏感词' });
    expect(await quota(alice.id)).toBe(before);
    expect(await app.knex('midjourneys').where({ prompt: 'please reject me' }).first()).toBeUndefined();
  });

  it('checks input and balance before anything reaches the upstream', async () => {
    const empty = await submit(aliceKey, 'imagine', { prompt: '  ' });
    expect(empty.status).toBe(400);
    expect(empty.body).toMatchObject({ code: 4, result: null });
    const bad = await app.http().post('/mj/submit/imagine').set('mj-api-secret', aliceKey).set('content-type', 'application/json').send('{nope');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe(4);
    const nokey = await submit('sk-wrong', 'imagine', { prompt: 'x' });
    expect(nokey.status).toBe(401);
    expect(nokey.body.code).toBe(4);
    const poor = await makeUser(app, { quota: 10 });
    const poorKey = (await seedToken(app, poor.id)).key;
    const broke = await submit(poorKey, 'imagine', { prompt: 'a cat' });
    expect(broke.status).toBe(403);
    expect(await quota(poor.id)).toBe(10);
    expect(mock.requests.filter((r) => r.path.includes('/submit/'))).toHaveLength(0);
  });

  it('an unreachable upstream answers 502 and gives the reservation back', async () => {
    await seedChannel(app, { type: CHANNEL_TYPE.MidjourneyPlus, key: 'k', base_url: 'http://127.0.0.1:1', models: 'mj_shorten' });
    await setOptions(app, { ModelPrice: JSON.stringify({ ...PRICE, mj_shorten: 0.02 }) });
    const before = await quota(alice.id);
    const res = await submit(aliceKey, 'shorten', { prompt: 'a long prompt about a fox' });
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ code: 23, result: null });
    expect(JSON.stringify(res.body)).not.toContain('127.0.0.1');
    expect(await quota(alice.id)).toBe(before);
    expect(await app.knex('midjourneys').where({ action: 'SHORTEN' }).first()).toBeUndefined();
  });

  it("a user never sees another user's drawing", async () => {
    const res = await submit(aliceKey, 'imagine', { prompt: 'private fox' });
    const id = res.body.result as string;
    const f = await app.http().get(`/mj/task/${id}/fetch`).set('mj-api-secret', bobKey);
    expect(f.status).toBe(404);
    expect(f.body.code).toBe(3);
    const listed = await app
      .http()
      .post('/mj/task/list-by-condition')
      .set('mj-api-secret', bobKey)
      .send({ ids: [id] });
    expect(listed.body).toEqual([]);
    const bobLog = await app
      .http()
      .get('/api/mj/self')
      .set(await accessHeaders(app, bob.id));
    expect(bobLog.body.data.some((r: { mj_id: string }) => r.mj_id === id)).toBe(false);
    // Nor act on it.
    const change = await submit(bobKey, 'change', { taskId: id, action: 'UPSCALE', index: 1 });
    expect(change.status).toBe(404);
  });

  it('change, action and simple-change continue a drawing on its channel, billed per action; MjActionCheckSuccessEnabled', async () => {
    const first = await submit(aliceKey, 'imagine', { prompt: 'a blue fox' });
    const id = first.body.result as string;
    // Not finished yet: refused while the option is on (the default).
    const early = await submit(aliceKey, 'change', { taskId: id, action: 'UPSCALE', index: 1 });
    expect(early.status).toBe(400);
    expect(early.body.code).toBe(4);
    await tick();
    await tick();
    const before = await quota(alice.id);
    const up = await submit(aliceKey, 'change', { taskId: id, action: 'UPSCALE', index: 2 });
    expect(up.body.code).toBe(1);
    expect(await quota(alice.id)).toBe(before - Q(0.05));
    const v = await submit(aliceKey, 'action', { taskId: id, customId: `MJ::JOB::variation::1::${id}` });
    expect(v.body.code).toBe(1);
    const s = await submit(aliceKey, 'simple-change', { content: `${id} U3` });
    expect(s.body.code).toBe(1);
    expect(await quota(alice.id)).toBe(before - Q(0.05) * 3);
    const rows = await app.knex('midjourneys').whereIn('mj_id', [up.body.result, v.body.result, s.body.result]).orderBy('id');
    expect(rows.map((r: { action: string }) => r.action)).toEqual(['UPSCALE', 'VARIATION', 'UPSCALE']);
    const badAction = await submit(aliceKey, 'action', { taskId: id, customId: 'nonsense' });
    expect(badAction.status).toBe(400);

    // With the check off, an unfinished drawing may be acted on.
    const second = await submit(aliceKey, 'imagine', { prompt: 'a green fox' });
    await setOptions(app, { MjActionCheckSuccessEnabled: 'false' });
    try {
      const ok = await submit(aliceKey, 'change', { taskId: second.body.result, action: 'VARIATION', index: 1 });
      expect(ok.body.code).toBe(1);
    } finally {
      await setOptions(app, { MjActionCheckSuccessEnabled: 'true' });
    }
  });

  it('an action that opens a modal waits in MODAL unpolled; the modal continues the same task and its failure refunds both', async () => {
    const first = await submit(aliceKey, 'imagine', { prompt: 'a zoomable fox' });
    const id = first.body.result as string;
    await tick();
    await tick();
    const before = await quota(alice.id);
    const zoom = await submit(aliceKey, 'action', { taskId: id, customId: `MJ::CustomZoom::${id}` });
    expect(zoom.body.code).toBe(1);
    const zid = zoom.body.result as string;
    expect(await quota(alice.id)).toBe(before - Q(PRICE.mj_custom_zoom));
    // Not waiting yet: a modal is refused before anything is billed or sent.
    const early = await submit(aliceKey, 'modal', { taskId: zid, prompt: 'x --zoom 1.5' });
    expect(early.status).toBe(400);
    expect(early.body.code).toBe(4);
    await tick();
    let row = await app.knex('midjourneys').where({ mj_id: zid }).first();
    expect(row).toMatchObject({ status: 'MODAL', active: 0, action: 'CUSTOM_ZOOM' });
    const f = await app.http().get(`/mj/task/${zid}/fetch`).set('mj-api-secret', aliceKey);
    expect(f.body).toMatchObject({ id: zid, status: 'MODAL' });
    // Waiting for the client: no more polls.
    const polls = mock.polled.get(zid);
    await tick();
    expect(mock.polled.get(zid)).toBe(polls);
    // Another user cannot confirm it.
    const bobs = await submit(bobKey, 'modal', { taskId: zid });
    expect(bobs.status).toBe(404);
    expect(mock.requests.filter((r) => r.path === '/mj/submit/modal')).toHaveLength(0);

    const modal = await submit(aliceKey, 'modal', { taskId: zid, prompt: 'a zoomed fox that will fail --zoom 1.5' });
    expect(modal.body).toMatchObject({ code: 1, result: zid });
    expect(mock.requests.find((r) => r.path === '/mj/submit/modal')!.body).toMatchObject({ taskId: zid });
    expect(await quota(alice.id)).toBe(before - Q(PRICE.mj_custom_zoom) - Q(PRICE.mj_modal));
    // One upstream task, one row: taken up again with both prices on it.
    const rows = await app.knex('midjourneys').where({ mj_id: zid });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'SUBMITTED', active: 1, action: 'CUSTOM_ZOOM', refunded: 0, prompt: 'a zoomed fox that will fail --zoom 1.5' });
    expect(Number(rows[0].quota)).toBe(Q(PRICE.mj_custom_zoom) + Q(PRICE.mj_modal));
    // Running again: a second modal is refused.
    const again = await submit(aliceKey, 'modal', { taskId: zid });
    expect(again.status).toBe(400);

    await tick();
    await tick();
    row = await app.knex('midjourneys').where({ mj_id: zid }).first();
    expect(row).toMatchObject({ status: 'FAILURE', active: 0, refunded: 1 });
    expect(await quota(alice.id)).toBe(before);
    await tick();
    expect(await quota(alice.id)).toBe(before);
    await flushUsage(app);
    const refunds = await app.knex('logs').where({ user_id: alice.id, type: 4 }).andWhere('content', 'like', `%${zid}%`);
    expect(refunds).toHaveLength(1);
    expect(Number(refunds[0].quota)).toBe(Q(PRICE.mj_custom_zoom) + Q(PRICE.mj_modal));
    const consumed = await app.knex('logs').where({ user_id: alice.id, type: 2 }).whereIn('model_name', ['mj_custom_zoom', 'mj_modal']);
    expect(consumed.map((l: { model_name: string }) => l.model_name).sort()).toEqual(['mj_custom_zoom', 'mj_modal']);
  });

  it('a submit answered 21 (waiting in MODAL) is recorded as MODAL; the confirmed task succeeds with its image', async () => {
    const first = await submit(aliceKey, 'imagine', { prompt: 'a fox to inpaint' });
    const id = first.body.result as string;
    await tick();
    await tick();
    const inpaint = await submit(aliceKey, 'action', { taskId: id, customId: `MJ::Inpaint::1::${id}::SOLO` });
    expect(inpaint.body).toMatchObject({ code: 21, properties: { status: 'MODAL' } });
    const iid = inpaint.body.result as string;
    expect(await app.knex('midjourneys').where({ mj_id: iid }).first()).toMatchObject({ action: 'INPAINT', status: 'MODAL', code: 21 });
    // Confirmed at once, without waiting for a poll.
    const modal = await submit(aliceKey, 'modal', { taskId: iid, maskBase64: 'data:image/png;base64,AA' });
    expect(modal.body).toMatchObject({ code: 1, result: iid });
    await tick();
    await tick();
    const rows = await app.knex('midjourneys').where({ mj_id: iid });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'SUCCESS', action: 'INPAINT', code: 1, image_url: `${mock.url}/images/${iid}.png` });
    expect(Number(rows[0].quota)).toBe(Q(PRICE.mj_inpaint) + Q(PRICE.mj_modal));
  });

  it("a key's model limits hold for submits and for actions on a drawing", async () => {
    const limited = (await seedToken(app, alice.id, { model_limits: 'mj_imagine' })).key;
    const first = await submit(limited, 'imagine', { prompt: 'a limited fox' });
    expect(first.body.code).toBe(1);
    await tick();
    await tick();
    const before = await quota(alice.id);
    const up = await submit(limited, 'change', { taskId: first.body.result, action: 'UPSCALE', index: 1 });
    expect(up.status).toBe(403);
    expect(up.body.code).toBe(4);
    const describe = await submit(limited, 'describe', { base64: 'data:image/png;base64,AAAA' });
    expect(describe.status).toBe(403);
    expect(await quota(alice.id)).toBe(before);
  });

  it('mode prefixes reach the upstream; MjModeClearEnabled strips mode flags; MjAccountFilterEnabled passes accountFilter', async () => {
    await submit(aliceKey, 'imagine', { prompt: 'a fox --fast --v 6', accountFilter: { channelId: 'x' } }, '/mj-fast');
    let sent = mock.requests.find((r) => r.path === '/mj-fast/mj/submit/imagine')!;
    expect(sent.body.prompt).toBe('a fox --fast --v 6');
    expect(sent.body.accountFilter).toBeUndefined();
    await setOptions(app, { MjModeClearEnabled: 'true', MjAccountFilterEnabled: 'true' });
    try {
      await submit(aliceKey, 'imagine', { prompt: 'a fox --relax --v 6', accountFilter: { channelId: 'x' } }, '/mj-relax');
      sent = mock.requests.find((r) => r.path === '/mj-relax/mj/submit/imagine')!;
      expect(sent.body.prompt).toBe('a fox --v 6');
      expect(sent.body.accountFilter).toEqual({ channelId: 'x' });
    } finally {
      await setOptions(app, { MjModeClearEnabled: 'false', MjAccountFilterEnabled: 'false' });
    }
  });

  it('MjForwardUrlEnabled serves images through /mj/image/{id}', async () => {
    const res = await submit(aliceKey, 'imagine', { prompt: 'a forwarded fox' });
    const id = res.body.result as string;
    await tick();
    await tick();
    await setOptions(app, { MjForwardUrlEnabled: 'true', ServerAddress: 'https://gw.example.com/' });
    try {
      const f = await app.http().get(`/mj/task/${id}/fetch`).set('mj-api-secret', aliceKey);
      expect(f.body.imageUrl).toBe(`https://gw.example.com/mj/image/${id}`);
      const img = await app.http().get(`/mj/image/${id}`).buffer(true);
      expect(img.status).toBe(200);
      expect(img.headers['content-type']).toBe('image/png');
      expect(Buffer.compare(img.body as Buffer, mock.image)).toBe(0);
      const missing = await app.http().get('/mj/image/none');
      expect(missing.status).toBe(404);
    } finally {
      await setOptions(app, { MjForwardUrlEnabled: 'false', ServerAddress: '' });
    }
  });

  it('MjNotifyEnabled: the client notifyHook is called back through the guarded fetch', async () => {
    const got: any[] = [];
    const hook = http.createServer((req, res) => {
      let b = '';
      req.on('data', (c) => (b += c));
      req.on('end', () => {
        got.push(JSON.parse(b));
        res.end('ok');
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/cb`;
    try {
      // Off (the default): no callback.
      const off = await submit(aliceKey, 'imagine', { prompt: 'quiet fox', notifyHook: hookUrl });
      await tick();
      expect(got).toHaveLength(0);
      expect((await app.knex('midjourneys').where({ mj_id: off.body.result }).first()).notify_hook).toBe('');

      await setOptions(app, { MjNotifyEnabled: 'true' });
      // On, but a loopback hook is refused by the guarded fetch unless private addresses are allowed.
      const guarded = await submit(aliceKey, 'imagine', { prompt: 'guarded fox', notifyHook: hookUrl });
      await tick();
      expect(got).toHaveLength(0);
      expect((await app.knex('midjourneys').where({ mj_id: guarded.body.result }).first()).notify_hook).toBe(hookUrl);

      // (Its ephemeral port too: the user policy allows only the usual web ports by default.)
      await setOptions(app, { 'fetch_setting.allow_private_ip_enabled': 'true', 'fetch_setting.allowed_ports': '' });
      const on = await submit(aliceKey, 'imagine', { prompt: 'loud fox', notifyHook: hookUrl });
      await tick();
      await tick();
      for (let i = 0; i < 50 && got.filter((g) => g.id === on.body.result).length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      const mine = got.filter((g) => g.id === on.body.result);
      expect(mine.map((g) => g.status)).toEqual(['IN_PROGRESS', 'SUCCESS']);
      // Nothing came for the first one, nor for the second while the guard refused it: called back
      // (had they been) ticks before these. (The second's later SUCCESS, allowed by now, may come.)
      expect(got.filter((g) => g.id === off.body.result)).toHaveLength(0);
      expect(got.filter((g) => g.id === guarded.body.result && g.status === 'IN_PROGRESS')).toHaveLength(0);
      const bad = await submit(aliceKey, 'imagine', { prompt: 'x', notifyHook: 'ftp://example.com' });
      expect(bad.status).toBe(400);
    } finally {
      await setOptions(app, {
        MjNotifyEnabled: 'false',
        'fetch_setting.allow_private_ip_enabled': 'false',
        'fetch_setting.allowed_ports': DEFAULT_ALLOWED_PORTS,
      });
      await new Promise<void>((r) => hook.close(() => r()));
    }
  });

  it('describe, blend and upload-discord-images', async () => {
    const d = await submit(aliceKey, 'describe', { base64: 'data:image/png;base64,AAAA' });
    expect(d.body.code).toBe(1);
    const b = await submit(aliceKey, 'blend', { base64Array: ['data:image/png;base64,AA', 'data:image/png;base64,BB'], dimensions: 'SQUARE' });
    expect(b.body.code).toBe(1);
    const one = await submit(aliceKey, 'blend', { base64Array: ['x'] });
    expect(one.status).toBe(400);
    const rows = await app.knex('midjourneys').whereIn('mj_id', [d.body.result, b.body.result]).orderBy('id');
    expect(rows.map((r: { model_name: string }) => r.model_name)).toEqual(['mj_describe', 'mj_blend']);
    const up = await submit(aliceKey, 'upload-discord-images', { base64Array: ['data:image/png;base64,AA'] });
    expect(up.body).toMatchObject({ code: 1, result: ['https://cdn.example/upload.png'] });
  });

  it('upstream errors back off the next poll', async () => {
    const res = await submit(aliceKey, 'imagine', { prompt: 'patient fox' });
    const id = res.body.result as string;
    mock.failPolls = true;
    await tick();
    let row = await app.knex('midjourneys').where({ mj_id: id }).first();
    expect(row.poll_errors).toBe(1);
    expect(Number(row.next_poll_at)).toBeGreaterThan(Date.now() + 1_000);
    expect(row.status).toBe('SUBMITTED');
    // Not due: the next tick leaves it alone even when the upstream is back.
    mock.failPolls = false;
    await tick();
    expect(mock.polled.get(id)).toBeUndefined();
    await app.knex('midjourneys').where({ mj_id: id }).update({ next_poll_at: 0 });
    await tick();
    row = await app.knex('midjourneys').where({ mj_id: id }).first();
    expect(row).toMatchObject({ poll_errors: 0, status: 'IN_PROGRESS' });
  });
});
