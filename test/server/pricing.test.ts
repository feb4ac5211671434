import crypto from 'node:crypto';
import { DB_TARGETS, describeEach, makeUser, setupRoot, type TestApp } from '../helpers/app';
import { UNSET_MODEL_RATIO } from '../../server/src/services/billing';

async function as(app: TestApp, id: number) {
  const token = crypto.randomBytes(16).toString('hex');
  await app.knex('users').where({ id }).update({ access_token: token });
  const wrap = (m: 'get' | 'post' | 'put' | 'delete') => (url: string) =>
    app.http()[m](url).set('Authorization', token).set('New-Api-User', String(id)).set('Accept-Language', 'zh');
  return { id, get: wrap('get'), post: wrap('post'), put: wrap('put'), del: wrap('delete') };
}

describeEach(DB_TARGETS, 'public pricing', (getApp) => {
  beforeAll(async () => {
    const app = getApp();
    await setupRoot(app);
    const admin = await as(app, (await makeUser(app, { role: 10 })).id);
    await app.ctx.options.set('ModelRatio', JSON.stringify({ 'gpt-4o': 1.25, o3: 1, 'unused-model': 3 }));
    await app.ctx.options.set('CompletionRatio', JSON.stringify({ 'gpt-4o': 4 }));
    await app.ctx.options.set('ModelPrice', JSON.stringify({ 'dall-e-3': 0.04 }));
    await app.ctx.options.set('GroupRatio', JSON.stringify({ default: 1, vip: 0.8, svip: 0.5, hidden: 2 }));
    await app.ctx.options.set('UserUsableGroups', JSON.stringify({ default: '默认分组', vip: 'vip分组' }));
    const mk = (body: Record<string, unknown>) => admin.post('/api/channel/').send({ type: 1, key: 'k', ...body });
    await mk({ name: 'a', models: 'gpt-4o,dall-e-3,no-price-model', group: 'default,vip' });
    await mk({ name: 'b', models: 'gpt-4o,o3', group: 'svip' });
    await mk({ name: 'off', models: 'only-disabled', group: 'default', status: 2 });
  });

  it('lists every model with an enabled ability, priced, with its groups; anonymous', async () => {
    const res = await getApp().http().get('/api/pricing');
    expect(res.body.success).toBe(true);
    expect(res.body.data).toEqual([
      {
        model_name: 'dall-e-3',
        quota_type: 1,
        model_ratio: 0,
        completion_ratio: 1,
        model_price: 0.04,
        enable_groups: ['default', 'vip'],
        priced: true,
        callable: true,
      },
      {
        model_name: 'gpt-4o',
        quota_type: 0,
        model_ratio: 1.25,
        completion_ratio: 4,
        model_price: 0,
        enable_groups: ['default', 'svip', 'vip'],
        priced: true,
        callable: true,
      },
      // Served but neither priced nor rated: the relay refuses it, so the answer says so.
      {
        model_name: 'no-price-model',
        quota_type: 0,
        model_ratio: 0,
        completion_ratio: 1,
        model_price: 0,
        enable_groups: ['default', 'vip'],
        priced: false,
        callable: false,
      },
      { model_name: 'o3', quota_type: 0, model_ratio: 1, completion_ratio: 1, model_price: 0, enable_groups: ['svip'], priced: true, callable: true },
    ]);
    expect(res.body.usable_group).toEqual({ default: '默认分组', vip: 'vip分组' });
    expect(res.body.group_ratio).toEqual({ default: 1, vip: 0.8 });
  });

  it("uses the logged-in user's group, and ignores a bad credential", async () => {
    const app = getApp();
    const svip = await as(app, (await makeUser(app, { group: 'svip' })).id);
    const res = await svip.get('/api/pricing');
    expect(res.body.usable_group).toEqual({ default: '默认分组', vip: 'vip分组', svip: '用户分组' });
    expect(res.body.group_ratio).toEqual({ default: 1, vip: 0.8, svip: 0.5 });
    const bad = await app.http().get('/api/pricing').set('Authorization', 'wrong-token').set('New-Api-User', '1');
    expect(bad.status).toBe(200);
    expect(bad.body.success).toBe(true);
    expect(bad.body.group_ratio).toEqual({ default: 1, vip: 0.8 });
  });

  it('answers unpriced models as callable at the default ratio for a user who accepts unset models, and only for them', async () => {
    const app = getApp();
    const entry = (body: { data: Array<{ model_name: string }> }, name: string) => body.data.find((e) => e.model_name === name);
    const accepting = await as(app, (await makeUser(app)).id);
    const saved = await accepting
      .put('/api/user/setting')
      .send({ notify_type: 'email', quota_warning_threshold: 500000, accept_unset_model_ratio_model: true });
    expect(saved.body.success).toBe(true);
    const mine = (await accepting.get('/api/pricing')).body;
    // The relay bills an accepted unpriced model at UNSET_MODEL_RATIO (37.5) and its completion ratio.
    expect(entry(mine, 'no-price-model')).toEqual({
      model_name: 'no-price-model',
      quota_type: 0,
      model_ratio: UNSET_MODEL_RATIO,
      completion_ratio: 1,
      model_price: 0,
      enable_groups: ['default', 'vip'],
      priced: false,
      callable: true,
    });
    // Priced models are unchanged by the setting.
    expect(entry(mine, 'gpt-4o')).toMatchObject({ model_ratio: 1.25, priced: true, callable: true });

    const plain = await as(app, (await makeUser(app)).id);
    expect(entry((await plain.get('/api/pricing')).body, 'no-price-model')).toMatchObject({ model_ratio: 0, priced: false, callable: false });
    // Switching the setting off takes effect on the next answer.
    await accepting.put('/api/user/setting').send({ notify_type: 'email', quota_warning_threshold: 500000, accept_unset_model_ratio_model: false });
    expect(entry((await accepting.get('/api/pricing')).body, 'no-price-model')).toMatchObject({ model_ratio: 0, callable: false });
  });

  it('answers unpriced models as callable to everyone, visitors included, in self-use mode', async () => {
    const app = getApp();
    await app.ctx.options.set('SelfUseModeEnabled', 'true');
    try {
      const res = await app.http().get('/api/pricing');
      expect(res.body.data.find((e: { model_name: string }) => e.model_name === 'no-price-model')).toMatchObject({
        model_ratio: UNSET_MODEL_RATIO,
        priced: false,
        callable: true,
      });
    } finally {
      await app.ctx.options.set('SelfUseModeEnabled', 'false');
    }
    const after = await app.http().get('/api/pricing');
    expect(after.body.data.find((e: { model_name: string }) => e.model_name === 'no-price-model')).toMatchObject({ callable: false });
  });

  it('follows channel changes (disabled models drop out)', async () => {
    const app = getApp();
    await app.knex('abilities').where({ model: 'o3' }).update({ enabled: false });
    const res = await app.http().get('/api/pricing');
    expect(res.body.data.map((e: { model_name: string }) => e.model_name)).toEqual(['dall-e-3', 'gpt-4o', 'no-price-model']);
  });
});
