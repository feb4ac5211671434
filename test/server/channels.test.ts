import crypto from 'node:crypto';
import { DB_TARGETS, describeEach, makeUser, setupRoot, type TestApp } from '../helpers/app';
import { channelCache } from '../../server/src/services/invalidate';

/** A client authenticated by system access token + New-Api-User (no session needed). */
async function as(app: TestApp, id: number) {
  const token = crypto.randomBytes(16).toString('hex');
  await app.knex('users').where({ id }).update({ access_token: token });
  const wrap = (m: 'get' | 'post' | 'put' | 'delete') => (url: string) =>
    app.http()[m](url).set('Authorization', token).set('New-Api-User', String(id)).set('Accept-Language', 'zh');
  return { get: wrap('get'), post: wrap('post'), put: wrap('put'), del: wrap('delete') };
}
type Client = Awaited<ReturnType<typeof as>>;

const count = async (app: TestApp, table: string, where: Record<string, unknown> = {}) =>
  Number((await app.knex(table).where(where).count({ n: '*' }).first())?.n ?? 0);

/** Abilities of one channel as sorted "group/model/enabled/priority/weight/tag" strings. */
async function abilitiesOf(app: TestApp, channelId: number): Promise<string[]> {
  const rows = await app.knex('abilities').where({ channel_id: channelId });
  return rows.map((r) => `${r.group}/${r.model}/${Boolean(r.enabled)}/${Number(r.priority)}/${Number(r.weight)}/${r.tag ?? ''}`).sort();
}

describeEach(DB_TARGETS, 'channel administration', (getApp) => {
  let admin: Client;
  let root: Client;
  let user: Client;
  const create = (body: Record<string, unknown>) => admin.post('/api/channel/').send(body);
  const base = { name: 'c', type: 1, key: 'sk-upstream-1', models: 'gpt-4o,gpt-4o-mini', group: 'default,vip' };

  beforeAll(async () => {
    const app = getApp();
    const r = await setupRoot(app);
    root = await as(app, r.id);
    const a = await makeUser(app, { role: 10 });
    const u = await makeUser(app, { role: 1 });
    admin = await as(app, a.id);
    user = await as(app, u.id);
  });

  it('requires admin: anonymous 401, user 403, nothing written', async () => {
    const app = getApp();
    expect((await app.http().get('/api/channel/')).status).toBe(401);
    for (const [m, url] of [
      ['get', '/api/channel/'],
      ['post', '/api/channel/'],
      ['put', '/api/channel/'],
      ['get', '/api/channel/1'],
      ['delete', '/api/channel/1/'],
      ['post', '/api/channel/fix'],
      ['get', '/api/channel/models'],
      ['delete', '/api/channel/disabled'],
      ['put', '/api/channel/tag'],
    ] as const) {
      const res = await user[m === 'delete' ? 'del' : m](url).send(base);
      expect([url, res.status]).toEqual([url, 403]);
    }
    expect(await count(app, 'channels')).toBe(0);
  });

  it('creates a channel with normalised fields and its abilities in step', async () => {
    const app = getApp();
    await channelCache(app.ctx).get('probe', async () => 'cached');
    const res = await create({
      ...base,
      name: ' main ',
      base_url: 'https://up.example.com//',
      weight: -5,
      priority: '3',
      models: ['gpt-4o', 'gpt-4o', ' o3 '],
      model_mapping: '{"a":"b"}',
      auto_ban: 0,
      tag: '',
    });
    expect(res.body).toMatchObject({ success: true });
    const c = res.body.data;
    expect(c).toMatchObject({
      name: 'main',
      base_url: 'https://up.example.com',
      weight: 0,
      priority: 3,
      models: 'gpt-4o,o3',
      group: 'default,vip',
      status: 1,
      auto_ban: 0,
      tag: '',
    });
    expect(typeof c.id).toBe('number');
    // Only root reads upstream keys in full: the admin's answer carries the masked key.
    expect(c).toMatchObject({ key: '…-1', key_masked: true });
    expect((await app.knex('channels').where({ id: c.id }).first()).key).toBe('sk-upstream-1');
    expect(await abilitiesOf(app, c.id)).toEqual(['default/gpt-4o/true/3/0/', 'default/o3/true/3/0/', 'vip/gpt-4o/true/3/0/', 'vip/o3/true/3/0/']);
    expect(channelCache(app.ctx).peek('probe')).toBeUndefined();
    // Defaults: group default, auto_ban 1, priority 0, weight 0.
    const d = await create({ name: 'd', key: 'k', models: 'm1' });
    expect(d.body.data).toMatchObject({ group: 'default', auto_ban: 1, priority: 0, weight: 0, type: 1 });
    await admin.del(`/api/channel/${c.id}/`);
    await admin.del(`/api/channel/${d.body.data.id}/`);
  });

  it('refuses bad channel input and writes nothing', async () => {
    const app = getApp();
    const before = await count(app, 'channels');
    const cases: Array<[Record<string, unknown>, string | RegExp]> = [
      [{ ...base, name: '' }, '请填写渠道名称和渠道密钥！'],
      [{ ...base, key: '   ' }, '请填写渠道名称和渠道密钥！'],
      [{ name: 'x', key: 'y', group: 'default' }, '请至少选择一个模型！'],
      [{ ...base, models: ' , ' }, '请至少选择一个模型！'],
      [{ ...base, model_mapping: '{bad' }, '模型映射必须是合法的 JSON 格式！'],
      [{ ...base, model_mapping: '[1,2]' }, '模型映射必须是合法的 JSON 格式！'],
      [{ ...base, status_code_mapping: 'nope' }, /状态码映射/],
      [{ ...base, setting: '"str"' }, /设置/],
      [{ ...base, param_override: '12' }, /参数覆盖/],
      [{ ...base, priority: 'high' }, /优先级必须是整数/],
      [{ ...base, priority: 1.5 }, /优先级必须是整数/],
      [{ ...base, weight: 'x' }, /权重/],
      [{ ...base, weight: 2 ** 40 }, /权重过大/],
      [{ ...base, max_input_tokens: 2 ** 40 }, /max_input_tokens/],
      [{ ...base, type: 999 }, /未知的渠道类型/],
      [{ ...base, type: 'openai' }, /渠道类型/],
      [{ ...base, name: 'n'.repeat(200) }, /渠道名称长度/],
      [{ ...base, models: 42 }, /模型/],
      [{ ...base, group: Array.from({ length: 40 }, (_, i) => `group-number-${i}`).join(',') }, /分组过长/],
      [{ ...base, group: 'g'.repeat(65) }, /分组名称过长/],
      [{ ...base, mode: 'weird' }, /mode/],
    ];
    for (const [body, msg] of cases) {
      const res = await create(body);
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(false);
      expect(res.body.message).toMatch(msg);
    }
    const arr = await admin.post('/api/channel/').send([1, 2]);
    expect(arr.body.success).toBe(false);
    const malformed = await admin.post('/api/channel/').set('content-type', 'application/json').send('{oops');
    expect(malformed.body.success).toBe(false);
    expect(await count(app, 'channels')).toBe(before);
    expect(await count(app, 'abilities')).toBe(0);
  });

  it('batch-creates one channel per key line', async () => {
    const app = getApp();
    const res = await create({ ...base, name: 'batch', key: 'k1\nk2\r\n\nk3\n' });
    expect(res.body.success).toBe(true);
    const stored = async (id: number) => (await app.knex('channels').where({ id }).first()).key;
    expect(await Promise.all(res.body.data.map((c: { id: number }) => stored(c.id)))).toEqual(['k1', 'k2', 'k3']);
    for (const c of res.body.data) expect((await abilitiesOf(app, c.id)).length).toBe(4);
    const explicit = await create({ mode: 'batch', channel: { ...base, name: 'one', key: 'only' } });
    expect(explicit.body.data).toHaveLength(1);
    // A JSON key (service account) with several lines stays one channel.
    const json = await create({ ...base, name: 'vertex', type: 41, key: '{\n"type": "service_account"\n}' });
    expect(Array.isArray(json.body.data)).toBe(false);
    expect(await stored(json.body.data.id)).toBe('{\n"type": "service_account"\n}');
    const ids = [...res.body.data.map((c: { id: number }) => c.id), explicit.body.data[0].id, json.body.data.id];
    const del = await admin.post('/api/channel/batch').send({ ids: [ids[0], 999999, ...ids] });
    expect(del.body).toMatchObject({ success: true, data: ids.length });
    // Per id, in the order asked, each once: what was deleted and what was not there.
    expect(del.body.results).toEqual([
      { id: ids[0], success: true, status: 'deleted', message: '' },
      { id: 999999, success: false, status: 'not_found', message: expect.any(String) },
      ...ids.slice(1).map((id: number) => ({ id, success: true, status: 'deleted', message: '' })),
    ]);
    // Asked again, every id is reported missing and nothing else changes.
    const again = await admin.post('/api/channel/batch').send({ ids: ids.slice(0, 2) });
    expect(again.body).toMatchObject({ success: true, data: 0 });
    expect(again.body.results.map((r: { status: string }) => r.status)).toEqual(['not_found', 'not_found']);
    expect(await count(app, 'channels')).toBe(0);
    expect(await count(app, 'abilities')).toBe(0);
    for (const bad of [{}, { ids: [] }, { ids: 'x' }, { ids: [1.5] }, { ids: [-1] }]) {
      expect((await admin.post('/api/channel/batch').send(bad)).body.success).toBe(false);
    }
  });

  describe('with seeded channels', () => {
    const ids: Record<string, number> = {};
    beforeAll(async () => {
      for (const [name, priority, models, group] of [
        ['a', 0, 'm1,m2', 'default'],
        ['b', 5, 'm2', 'vip'],
        ['c', 5, 'm3', 'default,vip'],
        ['d', -1, 'm1', 'svip'],
      ] as const) {
        const res = await create({ name, type: 1, key: `key-${name}`, models, group, priority });
        ids[name] = res.body.data.id;
      }
    });

    it('lists by priority then id, or by id; paged; without keys', async () => {
      const list = await admin.get('/api/channel/?p=1&page_size=10');
      expect(list.body.data.items.map((c: { name: string }) => c.name)).toEqual(['c', 'b', 'a', 'd']);
      expect(list.body.data).toMatchObject({ total: 4, page: 1, page_size: 10 });
      for (const c of list.body.data.items) expect(c).not.toHaveProperty('key');
      const byId = await admin.get('/api/channel?id_sort=true'); // with or without the trailing slash
      expect(byId.body.data.items.map((c: { name: string }) => c.name)).toEqual(['d', 'c', 'b', 'a']);
      const page2 = await admin.get('/api/channel/?p=2&page_size=3');
      expect(page2.body.data.items.map((c: { name: string }) => c.name)).toEqual(['d']);
      expect((await admin.get('/api/channel/?p=0')).body.success).toBe(false);
      expect((await admin.get('/api/channel/?page_size=abc')).body.success).toBe(false);
    });

    it('searches by keyword, group and model', async () => {
      const names = async (qs: string) => (await admin.get(`/api/channel/search?${qs}`)).body.data.items.map((c: { name: string }) => c.name);
      expect(await names('keyword=b')).toEqual(['b']);
      expect(await names('keyword=B')).toEqual(['b']);
      expect(await names(`keyword=${ids.d}`)).toEqual(['d']);
      // Searching by key is root's: for an admin it would confirm a guessed key.
      expect(await names('keyword=key-c')).toEqual([]);
      expect((await root.get('/api/channel/search?keyword=key-c')).body.data.items.map((c: { name: string }) => c.name)).toEqual(['c']);
      expect(await names('group=vip')).toEqual(['c', 'b']);
      expect(await names('group=vi')).toEqual([]);
      expect(await names('model=m1')).toEqual(['a', 'd']);
      expect(await names('group=default&model=m2&id_sort=true')).toEqual(['a']);
      expect(await names('keyword=%25')).toEqual([]);
    });

    it('reads one channel with its key masked (root too: the full key needs a re-verification); unknown or non-numeric ids do not', async () => {
      const res = await root.get(`/api/channel/${ids.a}`);
      expect(res.body).toMatchObject({ success: true, data: { id: ids.a, name: 'a', key: '…', key_masked: true } });
      expect((await admin.get(`/api/channel/${ids.a}`)).body).toMatchObject({ success: true, data: { id: ids.a, name: 'a', key: '…', key_masked: true } });
      const missing = await admin.get('/api/channel/999999');
      expect(missing.body.success).toBe(false);
      const word = await admin.get('/api/channel/not-a-route');
      expect(word.body.success).toBe(false);
      expect(word.status).toBe(404);
    });

    it('updates fully and partially, keeping abilities in step', async () => {
      const app = getApp();
      const off = await admin.put('/api/channel/').send({ id: ids.a, status: 2 });
      expect(off.body).toMatchObject({ success: true, data: { status: 2, name: 'a', models: 'm1,m2' } });
      expect(JSON.parse(off.body.data.other_info)).toMatchObject({ status_reason: expect.any(String), status_time: expect.any(Number) });
      expect(await abilitiesOf(app, ids.a)).toEqual(['default/m1/false/0/0/', 'default/m2/false/0/0/']);
      await admin.put('/api/channel/').send({ id: ids.a, status: 1, priority: 7, weight: 3 });
      expect(await abilitiesOf(app, ids.a)).toEqual(['default/m1/true/7/3/', 'default/m2/true/7/3/']);
      // Full edit; an empty key keeps the stored key. (It re-points the channel, which without the
      // key is root's: channelRepoint.test.ts.)
      const full = await root
        .put('/api/channel/')
        .send({ id: ids.a, name: 'a2', key: '', models: 'm9', group: 'vip', base_url: 'http://x/', model_mapping: '' });
      expect(full.body.data).toMatchObject({ name: 'a2', models: 'm9', group: 'vip', base_url: 'http://x' });
      expect((await app.knex('channels').where({ id: ids.a }).first()).key).toBe('key-a');
      expect(await abilitiesOf(app, ids.a)).toEqual(['vip/m9/true/7/3/']);
      const before = await app.knex('channels').where({ id: ids.a }).first();
      for (const bad of [
        { id: ids.a, model_mapping: '{x' },
        { id: ids.a, models: '' },
        { id: ids.a, name: '' },
        { id: ids.a, status: 9 },
        { id: 'x', name: 'q' },
        { name: 'no id' },
        { id: ids.a, priority: 'p' },
      ]) {
        const res = await admin.put('/api/channel/').send(bad);
        expect(res.body.success).toBe(false);
      }
      expect((await admin.put('/api/channel/').send({ id: 999999, name: 'ghost' })).body.success).toBe(false);
      expect(await app.knex('channels').where({ id: ids.a }).first()).toEqual(before);
      await admin.put('/api/channel/').send({ id: ids.a, name: 'a', models: 'm1,m2', group: 'default', priority: 0, weight: 0 });
    });

    it('tags channels, aggregates them, edits and toggles by tag', async () => {
      const app = getApp();
      expect((await admin.post('/api/channel/batch/tag').send({ ids: [ids.b, ids.c], tag: '' })).body.message).toBe('标签不能为空！');
      expect((await admin.post('/api/channel/batch/tag').send({ ids: [], tag: 't' })).body.message).toBe('请先选择要设置标签的渠道！');
      const tagged = await admin.post('/api/channel/batch/tag').send({ ids: [ids.b, ids.c, 999999], tag: 'grp' });
      expect(tagged.body).toMatchObject({ success: true, data: 2 });
      expect(tagged.body.results).toEqual([
        { id: ids.b, success: true, status: 'tagged', message: '' },
        { id: ids.c, success: true, status: 'tagged', message: '' },
        { id: 999999, success: false, status: 'not_found', message: expect.any(String) },
      ]);
      expect(await abilitiesOf(app, ids.b)).toEqual(['vip/m2/true/5/0/grp']);

      const agg = await admin.get('/api/channel/?tag_mode=true');
      expect(agg.body.data.total).toBe(3);
      const [first, ...rest] = agg.body.data.items;
      expect(first).toMatchObject({
        key: 'tag:grp',
        id: 'tag:grp',
        tag: 'grp',
        name: 'grp',
        group: 'default,vip',
        priority: 5,
        weight: 0,
        status: 1,
        type: 1,
        isTag: true,
      });
      expect(first.children.map((c: { name: string }) => c.name)).toEqual(['c', 'b']);
      expect(rest.map((c: { name: string }) => c.name)).toEqual(['a', 'd']);

      await app.knex('channels').where({ id: ids.b }).update({ used_quota: 10, response_time: 100 });
      await app.knex('channels').where({ id: ids.c }).update({ used_quota: 5, response_time: 300 });
      await admin.put('/api/channel/').send({ id: ids.b, priority: 1 });
      const mixed = (await admin.get('/api/channel/?tag_mode=true&id_sort=true')).body.data.items.find((r: { key: string }) => r.key === 'tag:grp');
      expect(mixed).toMatchObject({ used_quota: 15, response_time: 200, priority: null, weight: 0 });

      // Tag edit validation.
      expect((await admin.put('/api/channel/tag').send({ tag: 'grp' })).body.message).toBe('没有任何修改！');
      expect((await admin.put('/api/channel/tag').send({ tag: 'grp', priority: 'x' })).body.message).toBe('优先级必须是整数！');
      expect((await admin.put('/api/channel/tag').send({ tag: 'grp', priority: 1.2 })).body.message).toBe('优先级必须是整数！');
      expect((await admin.put('/api/channel/tag').send({ tag: 'grp', weight: -1 })).body.message).toBe('权重必须是非负整数！');
      expect((await admin.put('/api/channel/tag').send({ tag: 'grp', model_mapping: '[]' })).body.success).toBe(false);
      expect((await admin.put('/api/channel/tag').send({ tag: 'nope', priority: 1 })).body.success).toBe(false);
      expect((await admin.put('/api/channel/tag').send({ priority: 1 })).body.success).toBe(false);

      const edit = await admin
        .put('/api/channel/tag')
        .send({ tag: 'grp', priority: 9, weight: 4, models: 'mx,my', groups: 'default', model_mapping: '{"mx":"m2"}' });
      expect(edit.body.success).toBe(true);
      for (const id of [ids.b, ids.c]) expect(await abilitiesOf(app, id)).toEqual(['default/mx/true/9/4/grp', 'default/my/true/9/4/grp']);
      expect((await app.knex('channels').where({ id: ids.b }).first()).model_mapping).toBe('{"mx":"m2"}');

      expect((await admin.post('/api/channel/tag/disabled').send({ tag: 'grp' })).body.success).toBe(true);
      for (const id of [ids.b, ids.c]) {
        expect(Number((await app.knex('channels').where({ id }).first()).status)).toBe(2);
        expect(await abilitiesOf(app, id)).toEqual(['default/mx/false/9/4/grp', 'default/my/false/9/4/grp']);
      }
      expect((await admin.post('/api/channel/tag/enabled').send({ tag: 'grp' })).body.success).toBe(true);
      expect(await abilitiesOf(app, ids.c)).toEqual(['default/mx/true/9/4/grp', 'default/my/true/9/4/grp']);
      expect((await admin.post('/api/channel/tag/enabled').send({})).body.success).toBe(false);

      // Rename, then dissolve with an empty new tag.
      await admin.put('/api/channel/tag').send({ tag: 'grp', new_tag: 'grp2' });
      expect(await abilitiesOf(app, ids.b)).toEqual(['default/mx/true/9/4/grp2', 'default/my/true/9/4/grp2']);
      await admin.put('/api/channel/tag').send({ tag: 'grp2', new_tag: '' });
      expect((await app.knex('channels').where({ id: ids.b }).first()).tag).toBeNull();
      expect(await abilitiesOf(app, ids.b)).toEqual(['default/mx/true/9/4/', 'default/my/true/9/4/']);
      const flat = await admin.get('/api/channel/?tag_mode=true');
      expect(flat.body.data.total).toBe(4);
    });

    it('lists known and enabled models', async () => {
      const app = getApp();
      const models = (await admin.get('/api/channel/models')).body.data.map((m: { id: string }) => m.id);
      expect(models).toEqual(expect.arrayContaining(['m1', 'mx', 'gpt-4o']));
      await admin.put('/api/channel/').send({ id: ids.d, status: 2 });
      const enabled = (await admin.get('/api/channel/models_enabled')).body.data;
      const expected = (await app.knex('abilities').where({ enabled: true }).distinct('model')).map((r) => r.model).sort();
      expect(enabled).toEqual(expected);
      expect(enabled).toContain('m1'); // still served by channel a
      expect(enabled).not.toContain('gpt-4o');
    });

    it('fixes abilities, deletes one and all disabled channels', async () => {
      const app = getApp();
      const before = await app.knex('abilities').orderBy(['channel_id', 'group', 'model']);
      await app.knex('abilities').delete();
      await app.knex('abilities').insert({ group: 'ghost', model: 'ghost', channel_id: 424242, enabled: true, priority: 0, weight: 0 });
      const fixed = await admin.post('/api/channel/fix');
      expect(fixed.body).toMatchObject({ success: true, data: 4 });
      expect(await app.knex('abilities').orderBy(['channel_id', 'group', 'model'])).toEqual(before);

      expect((await admin.del('/api/channel/999999/')).body.success).toBe(false);
      const del = await admin.del(`/api/channel/${ids.a}/`);
      expect(del.body.success).toBe(true);
      expect(await count(app, 'abilities', { channel_id: ids.a })).toBe(0);
      expect(await count(app, 'channels', { id: ids.a })).toBe(0);

      const purge = await admin.del('/api/channel/disabled');
      expect(purge.body).toMatchObject({ success: true, data: 1 }); // d was disabled above
      expect(await count(app, 'channels')).toBe(2);
      expect(await count(app, 'abilities', { channel_id: ids.d })).toBe(0);
    });
  });
});
