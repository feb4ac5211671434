import { BulkError } from '../lib/bulk';
import { describe, expect, it } from 'vitest';
import { createDataProvider } from './dataProvider';
import { recorder } from '../test/recorder';

function setup(admin = true) {
  const r = recorder(7);
  const dp = createDataProvider(r.http, { isAdmin: () => admin });
  return { r, dp };
}

const page = (page: number, perPage: number) => ({ pagination: { page, perPage }, sort: { field: 'id', order: 'DESC' as const }, filter: {} });

describe('dataProvider: every call', () => {
  it('sends New-Api-User and Cache-Control: no-store', async () => {
    const { r, dp } = setup();
    r.answer({ items: [], total: 0 });
    await dp.getList('channel', page(1, 10));
    expect(r.last.headers['New-Api-User']).toBe('7');
    expect(r.last.headers['Cache-Control']).toBe('no-store');
  });

  it('omits New-Api-User when nobody is logged in', async () => {
    const r = recorder(null);
    const dp = createDataProvider(r.http, { isAdmin: () => false });
    r.answer({ items: [], total: 0 });
    await dp.getList('token', page(1, 10));
    expect(r.last.headers['New-Api-User']).toBeUndefined();
  });

  it('turns success:false into an HttpError carrying the server message', async () => {
    const { r, dp } = setup();
    r.answerRaw(200, { success: false, message: '渠道未找到' });
    await expect(dp.getOne('channel', { id: 3 })).rejects.toMatchObject({ message: '渠道未找到', status: 200 });
  });

  it('maps 401/429/500/405 and other statuses per the generic handler', async () => {
    const { r, dp } = setup();
    r.answerRaw(401, { success: false, message: 'no' });
    await expect(dp.getList('user', page(1, 10))).rejects.toMatchObject({ status: 401 });
    expect(r.unauthorized).toBe(1);
    r.answerRaw(429, 'Too many');
    await expect(dp.getList('user', page(1, 10))).rejects.toMatchObject({ status: 429, message: 'app.error.too_many' });
    r.answerRaw(500, '');
    await expect(dp.getList('user', page(1, 10))).rejects.toMatchObject({ status: 500, message: 'app.error.internal' });
    r.answerRaw(405, '');
    await expect(dp.getList('user', page(1, 10))).rejects.toMatchObject({ status: 405, message: 'app.error.demo' });
    r.answerRaw(403, { success: false, message: '权限不足' });
    await expect(dp.getList('user', page(1, 10))).rejects.toMatchObject({ status: 403, message: 'Error: 权限不足' });
  });

  it('rejects unknown resources', async () => {
    const { dp } = setup();
    await expect(dp.getList('nope', page(1, 10))).rejects.toThrow(/Unknown resource/);
  });
});

describe('dataProvider: getList', () => {
  it.each([
    ['channel', '/api/channel/?p=2&page_size=20'],
    ['token', '/api/token/?p=2&size=20'],
    ['redemption', '/api/redemption/?p=2&page_size=20'],
    ['user', '/api/user/?p=2&page_size=20'],
  ])('%s → %s', async (res, url) => {
    const { r, dp } = setup();
    r.answer({ items: [{ id: 1 }, { id: 2 }], total: 42, page: 2, page_size: 20 });
    const out = await dp.getList(res, page(2, 20));
    expect(r.last).toMatchObject({ method: 'GET', url });
    expect(r.last.body).toBeUndefined();
    expect(out).toEqual({ data: [{ id: 1 }, { id: 2 }], total: 42 });
  });

  it('topup_order: the admin order list with its filters (empty ones left out), no trailing slash', async () => {
    const { r, dp } = setup();
    r.answer({ items: [{ id: 3, trade_no: 'T3' }], total: 1 });
    const out = await dp.getList('topup_order', {
      ...page(2, 20),
      filter: { username: ' alice ', status: 'success', start_timestamp: 1700000000, end_timestamp: '' },
    });
    expect(r.last).toMatchObject({ method: 'GET', url: '/api/user/topup?p=2&page_size=20&username=alice&status=success&start_timestamp=1700000000' });
    expect(out).toEqual({ data: [{ id: 3, trade_no: 'T3' }], total: 1 });
    r.answer({ items: [], total: 0 });
    await dp.getList('topup_order', page(1, 10));
    expect(r.last.url).toBe('/api/user/topup?p=1&page_size=10');
  });

  it('accepts the plural aliases', async () => {
    const { r, dp } = setup();
    r.answer({ items: [], total: 0 });
    await dp.getList('channels', page(1, 10));
    expect(r.last.url).toBe('/api/channel/?p=1&page_size=10');
  });

  it('channel: id_sort and tag_mode pass through; keyword/group/model use /search', async () => {
    const { r, dp } = setup();
    r.answer({ items: [], total: 0 });
    await dp.getList('channel', { ...page(1, 10), filter: { id_sort: true, tag_mode: false } });
    expect(r.last.url).toBe('/api/channel/?id_sort=true&tag_mode=false&p=1&page_size=10');
    r.answer({ items: [{ id: 9 }], total: 1 });
    const out = await dp.getList('channel', { ...page(1, 10), filter: { keyword: 'gpt', group: 'vip', model: 'gpt-4o', id_sort: true, tag_mode: true } });
    expect(r.last.url).toBe('/api/channel/search?keyword=gpt&group=vip&model=gpt-4o&id_sort=true&tag_mode=true&p=1&page_size=10');
    expect(out.total).toBe(1);
  });

  it('user search: keyword and group', async () => {
    const { r, dp } = setup();
    r.answer({ items: [], total: 0 });
    await dp.getList('user', { ...page(3, 50), filter: { keyword: 'ali', group: 'default' } });
    expect(r.last.url).toBe('/api/user/search?keyword=ali&group=default&p=3&page_size=50');
  });

  it('react-admin q filter is the keyword', async () => {
    const { r, dp } = setup();
    r.answer({ items: [], total: 0 });
    await dp.getList('redemption', { ...page(1, 10), filter: { q: 'abc' } });
    expect(r.last.url).toBe('/api/redemption/search?keyword=abc&p=1&page_size=10');
  });

  it('token search: keyword and token, paged with size', async () => {
    const { r, dp } = setup();
    r.answer({ items: [], total: 0 });
    await dp.getList('token', { ...page(1, 100), filter: { token: 'abc' } });
    expect(r.last.url).toBe('/api/token/search?token=abc&p=1&size=100');
  });

  it('search text is trimmed; a pasted token key loses its sk- prefix', async () => {
    const { r, dp } = setup();
    r.answer({ items: [], total: 0 });
    await dp.getList('token', { ...page(1, 10), filter: { keyword: ' mine ', token: ' sk-abc ' } });
    expect(r.last.url).toBe('/api/token/search?keyword=mine&token=abc&p=1&size=10');
    await dp.getList('token', { ...page(1, 10), filter: { token: 'sk-' } });
    expect(r.last.url).toBe('/api/token/?p=1&size=10');
    await dp.getList('user', { ...page(1, 10), filter: { keyword: '   ' } });
    expect(r.last.url).toBe('/api/user/?p=1&page_size=10');
    await dp.getList('redemption', { ...page(1, 10), filter: { keyword: ' abc' } });
    expect(r.last.url).toBe('/api/redemption/search?keyword=abc&p=1&page_size=10');
  });

  it('an empty keyword stays on the plain list', async () => {
    const { r, dp } = setup();
    r.answer({ items: [], total: 0 });
    await dp.getList('user', { ...page(1, 10), filter: { keyword: '' } });
    expect(r.last.url).toBe('/api/user/?p=1&page_size=10');
  });

  it('logs: admin → /api/log/, user → /api/log/self/, with every filter', async () => {
    const filter = {
      type: 2,
      username: 'bob',
      token_name: 't1',
      model_name: 'gpt-4o',
      start_timestamp: 100,
      end_timestamp: 200,
      channel: 3,
      group: 'vip',
      other: 'x',
    };
    const a = setup(true);
    a.r.answer({ items: [{ id: 1 }], total: 1 });
    await a.dp.getList('log', { ...page(1, 10), filter });
    expect(a.r.last.url).toBe(
      '/api/log/?p=1&page_size=10&type=2&username=bob&token_name=t1&model_name=gpt-4o&start_timestamp=100&end_timestamp=200&channel=3&group=vip',
    );
    const u = setup(false);
    u.r.answer({ items: [], total: 0 });
    await u.dp.getList('log', { ...page(2, 20), filter: { type: 0, model_name: 'x' } });
    expect(u.r.last.url).toBe('/api/log/self/?p=2&page_size=20&type=0&model_name=x');
  });

  it('drawing and task logs: admins → /api/mj/ and /api/task/ with the channel, users → /api/mj/self/ and /api/task/self without', async () => {
    const a = setup(true);
    a.r.answer([]);
    await a.dp.getList('midjourney', { ...page(2, 20), filter: { channel_id: 7, mj_id: 'mj-1', start_timestamp: 1700000000000, other: 'x' } });
    expect(a.r.last).toMatchObject({ method: 'GET', url: '/api/mj/?p=2&page_size=20&channel_id=7&mj_id=mj-1&start_timestamp=1700000000000' });
    a.r.answer([]);
    await a.dp.getList('task', { ...page(1, 10), filter: { channel_id: 3, task_id: 't-1', end_timestamp: 1700000000 } });
    expect(a.r.last.url).toBe('/api/task/?p=1&page_size=10&channel_id=3&task_id=t-1&end_timestamp=1700000000');
    const u = setup(false);
    u.r.answer([]);
    await u.dp.getList('task', { ...page(1, 10), filter: { channel_id: 7, task_id: 'mj-1', start_timestamp: 1700000000 } });
    expect(u.r.last.url).toBe('/api/task/self?p=1&page_size=10&task_id=mj-1&start_timestamp=1700000000');
    u.r.answer([]);
    await u.dp.getList('midjourney', page(1, 10));
    expect(u.r.last.url).toBe('/api/mj/self/?p=1&page_size=10');
  });

  it('drawing and task logs page without a total: a full page may have a next one, a short page has not', async () => {
    const { r, dp } = setup();
    const rows = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ id: from + i }));
    r.answer(rows(10));
    expect(await dp.getList('midjourney', page(1, 10))).toEqual({ data: rows(10), pageInfo: { hasPreviousPage: false, hasNextPage: true } });
    r.answer(rows(4, 10));
    expect(await dp.getList('midjourney', page(2, 10))).toEqual({ data: rows(4, 10), pageInfo: { hasPreviousPage: true, hasNextPage: false } });
    r.answer([]);
    expect(await dp.getList('task', page(3, 10))).toEqual({ data: [], pageInfo: { hasPreviousPage: true, hasNextPage: false } });
    r.answer(null);
    expect(await dp.getList('task', page(1, 10))).toEqual({ data: [], pageInfo: { hasPreviousPage: false, hasNextPage: false } });
  });

  it('tolerates a bare list answer', async () => {
    const { r, dp } = setup();
    r.answer([{ id: 1 }]);
    expect(await dp.getList('channel', page(1, 10))).toEqual({ data: [{ id: 1 }], total: 1 });
  });
});

describe('dataProvider: getOne / getMany', () => {
  it.each(['channel', 'token', 'redemption', 'user'])('%s getOne → GET /api/%s/{id}', async (res) => {
    const { r, dp } = setup();
    r.answer({ id: 5, name: 'n' });
    const out = await dp.getOne(res, { id: 5 });
    expect(r.last).toMatchObject({ method: 'GET', url: `/api/${res}/5` });
    expect(out.data).toEqual({ id: 5, name: 'n' });
  });

  it('getMany fetches each id', async () => {
    const { r, dp } = setup();
    r.answer({ id: 1 });
    r.answer({ id: 2 });
    const out = await dp.getMany('user', { ids: [1, 2] });
    expect(r.calls.map((c) => c.url)).toEqual(['/api/user/1', '/api/user/2']);
    expect(out.data).toEqual([{ id: 1 }, { id: 2 }]);
  });
});

describe('dataProvider: create', () => {
  it('channel: POST /api/channel/ with models and group as comma strings', async () => {
    const { r, dp } = setup();
    r.answer({ id: 11, name: 'c' });
    const out = await dp.create('channel', {
      data: { name: 'c', type: 1, key: 'k', models: ['gpt-4o', 'gpt-4o-mini'], groups: ['default', 'vip'], auto_ban: 1 },
    });
    expect(r.last).toMatchObject({ method: 'POST', url: '/api/channel/' });
    expect(r.last.body).toEqual({ name: 'c', type: 1, key: 'k', models: 'gpt-4o,gpt-4o-mini', group: 'default,vip', auto_ban: 1 });
    expect(out.data).toEqual({ id: 11, name: 'c' });
  });

  it('channel: group as a list is joined too; strings stay', async () => {
    const { r, dp } = setup();
    r.answer({ id: 12 });
    await dp.create('channel', { data: { name: 'c', models: 'a,b', group: ['default'] } });
    expect(r.last.body).toEqual({ name: 'c', models: 'a,b', group: 'default' });
  });

  it('token: POST /api/token/ with model_limits as a comma string', async () => {
    const { r, dp } = setup();
    r.answer({ id: 3, name: 't' });
    await dp.create('token', { data: { name: 't', remain_quota: 500000, expired_time: -1, model_limits: ['a', 'b'] } });
    expect(r.last).toMatchObject({ method: 'POST', url: '/api/token/', body: { name: 't', remain_quota: 500000, expired_time: -1, model_limits: 'a,b' } });
  });

  it('token batch (meta.names): one POST per name in turn, the first answers with every record in batch', async () => {
    const { r, dp } = setup();
    r.answer({ id: 3, name: 't' });
    r.answer({ id: 4, name: 't-abc123' });
    const out = await dp.create('token', { data: { name: 't', remain_quota: 1, model_limits: ['a'] }, meta: { names: ['t', 't-abc123'] } });
    expect(r.calls.map((c) => [c.method, c.url, (c.body as { name: string }).name, (c.body as { model_limits: string }).model_limits])).toEqual([
      ['POST', '/api/token/', 't', 'a'],
      ['POST', '/api/token/', 't-abc123', 'a'],
    ]);
    expect(out.data).toMatchObject({ id: 3, name: 't', batch: [{ id: 3 }, { id: 4 }] });
  });

  it('token batch: a failure stops the batch and rejects', async () => {
    const { r, dp } = setup();
    r.answer({ id: 3 });
    r.answerRaw(200, { success: false, message: 'quota' });
    await expect(dp.create('token', { data: { name: 't' }, meta: { names: ['t', 't-1', 't-2'] } })).rejects.toThrow('quota');
    expect(r.calls).toHaveLength(2);
  });

  it('redemption: a batch answer gives the first record plus the whole batch', async () => {
    const { r, dp } = setup();
    r.answer([
      { id: 1, key: 'k1' },
      { id: 2, key: 'k2' },
    ]);
    const out = await dp.create('redemption', { data: { name: 'r', quota: 100000, count: 2 } });
    expect(r.last).toMatchObject({ method: 'POST', url: '/api/redemption/', body: { name: 'r', quota: 100000, count: 2 } });
    expect(out.data).toEqual({
      id: 1,
      key: 'k1',
      batch: [
        { id: 1, key: 'k1' },
        { id: 2, key: 'k2' },
      ],
    });
  });

  it('user: POST /api/user/', async () => {
    const { r, dp } = setup();
    r.answer({ id: 4, username: 'u' });
    await dp.create('user', { data: { username: 'u', display_name: 'U', password: '12345678' } });
    expect(r.last).toMatchObject({ method: 'POST', url: '/api/user/', body: { username: 'u', display_name: 'U', password: '12345678' } });
  });
});

describe('dataProvider: update', () => {
  it.each(['token', 'redemption', 'user'])('%s: PUT /api/%s/ with the id in the body', async (res) => {
    const { r, dp } = setup();
    r.answer({ id: 5, name: 'new' });
    const out = await dp.update(res, { id: 5, data: { name: 'new' }, previousData: { id: 5, name: 'old' } });
    expect(r.last).toMatchObject({ method: 'PUT', url: `/api/${res}/`, body: { name: 'new', id: 5 } });
    expect(out.data).toEqual({ id: 5, name: 'new' });
  });

  it('channel: PUT /api/channel/ with comma strings', async () => {
    const { r, dp } = setup();
    r.answer(null);
    const out = await dp.update('channel', { id: 2, data: { id: 2, name: 'c', models: ['m1'], groups: ['default'] }, previousData: { id: 2 } });
    expect(r.last.body).toEqual({ id: 2, name: 'c', models: 'm1', group: 'default' });
    expect(out.data).toMatchObject({ id: 2, name: 'c' });
  });
});

describe('dataProvider: updateMany (status)', () => {
  it.each(['token', 'redemption'])('%s: PUT /api/%s/?status_only=true per id', async (res) => {
    const { r, dp } = setup();
    const out = await dp.updateMany(res, { ids: [1, 2], data: { status: 2 } });
    expect(r.calls).toEqual([
      expect.objectContaining({ method: 'PUT', url: `/api/${res}/?status_only=true`, body: { id: 1, status: 2 } }),
      expect.objectContaining({ method: 'PUT', url: `/api/${res}/?status_only=true`, body: { id: 2, status: 2 } }),
    ]);
    expect(out.data).toEqual([1, 2]);
  });

  it('channel: PUT /api/channel/ {id, status}', async () => {
    const { r, dp } = setup();
    await dp.updateMany('channel', { ids: [3], data: { status: 1 } });
    expect(r.calls).toEqual([expect.objectContaining({ method: 'PUT', url: '/api/channel/', body: { id: 3, status: 1 } })]);
  });

  it('user: enable/disable through POST /api/user/manage', async () => {
    const { r, dp } = setup();
    await dp.updateMany('user', { ids: [8, 9], data: { status: 2 } });
    await dp.updateMany('user', { ids: [8], data: { status: 1 } });
    expect(r.calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['POST', '/api/user/manage', { id: 8, action: 'disable' }],
      ['POST', '/api/user/manage', { id: 9, action: 'disable' }],
      ['POST', '/api/user/manage', { id: 8, action: 'enable' }],
    ]);
  });

  it('other fields: a PUT per id', async () => {
    const { r, dp } = setup();
    await dp.updateMany('channel', { ids: [1, 2], data: { priority: 5 } });
    expect(r.calls.map((c) => c.body)).toEqual([
      { priority: 5, id: 1 },
      { priority: 5, id: 2 },
    ]);
  });

  it('goes on after a failure and reports every item', async () => {
    const { r, dp } = setup();
    r.answerRaw(200, { success: false, message: 'bad' });
    const err = await dp.updateMany('token', { ids: [1, 2], data: { status: 1 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BulkError);
    expect((err as BulkError).items).toEqual([
      { label: '#1', ok: false, message: 'bad' },
      { label: '#2', ok: true },
    ]);
    expect((err as BulkError).message).toBe('1 succeeded, 1 failed: #1 bad');
    expect(r.calls).toHaveLength(2);
  });
});

describe('dataProvider: delete', () => {
  it.each(['channel', 'token', 'redemption'])('%s: DELETE /api/%s/{id}/', async (res) => {
    const { r, dp } = setup();
    const out = await dp.delete(res, { id: 6, previousData: { id: 6, name: 'x' } });
    expect(r.last).toMatchObject({ method: 'DELETE', url: `/api/${res}/6/` });
    expect(r.last.body).toBeUndefined();
    expect(out.data).toEqual({ id: 6, name: 'x' });
  });

  it('user: deregister through POST /api/user/manage {action: delete}', async () => {
    const { r, dp } = setup();
    await dp.delete('user', { id: 6 });
    expect(r.last).toMatchObject({ method: 'POST', url: '/api/user/manage', body: { id: 6, action: 'delete' } });
  });

  it('channel deleteMany: one POST /api/channel/batch {ids}', async () => {
    const { r, dp } = setup();
    r.answer(2);
    const out = await dp.deleteMany('channel', { ids: [1, 2] });
    expect(r.calls).toEqual([expect.objectContaining({ method: 'POST', url: '/api/channel/batch', body: { ids: [1, 2] } })]);
    expect(out.data).toEqual([1, 2]);
  });

  it('channel deleteMany: a per-id failure in the answer rejects with the report', async () => {
    const { r, dp } = setup();
    r.answer(1, {
      results: [
        { id: 1, success: true, status: 'deleted', message: '' },
        { id: 2, success: false, status: 'not_found', message: '渠道不存在' },
      ],
    });
    const err = await dp.deleteMany('channel', { ids: [1, 2] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BulkError);
    expect((err as BulkError).items).toEqual([
      { label: '#1', ok: true, code: 'deleted' },
      { label: '#2', ok: false, message: '渠道不存在', code: 'not_found' },
    ]);
  });

  it('deleteChannels: the count and the per-id items (none from a count-only server)', async () => {
    const { r, dp } = setup();
    r.answer(1, { results: [{ id: 5, success: true, status: 'deleted', message: '' }] });
    expect(await dp.deleteChannels([5])).toEqual({ count: 1, items: [{ label: '#5', ok: true, code: 'deleted' }] });
    r.answer(2);
    expect(await dp.deleteChannels([5, 6])).toEqual({ count: 2, items: [] });
  });

  it.each(['token', 'redemption'])('%s deleteMany: one DELETE per id', async (res) => {
    const { r, dp } = setup();
    await dp.deleteMany(res, { ids: [1, 2] });
    expect(r.calls.map((c) => [c.method, c.url])).toEqual([
      ['DELETE', `/api/${res}/1/`],
      ['DELETE', `/api/${res}/2/`],
    ]);
  });

  it('user deleteMany: a manage delete per id', async () => {
    const { r, dp } = setup();
    await dp.deleteMany('user', { ids: [3, 4] });
    expect(r.calls.map((c) => c.body)).toEqual([
      { id: 3, action: 'delete' },
      { id: 4, action: 'delete' },
    ]);
  });
});

describe('dataProvider: custom calls', () => {
  it('testChannel → GET /api/channel/test/{id}?model=, answering the time', async () => {
    const { r, dp } = setup();
    r.answer(null, { message: 'ok', time: 1.25 });
    expect(await dp.testChannel(4, 'gpt-4o mini')).toEqual({ message: 'ok', time: 1.25 });
    expect(r.last).toMatchObject({ method: 'GET', url: '/api/channel/test/4?model=gpt-4o%20mini' });
    r.answer(null, { time: 0.5 });
    await dp.testChannel(4);
    expect(r.last.url).toBe('/api/channel/test/4');
  });

  it('a failed test rejects with the server message', async () => {
    const { r, dp } = setup();
    r.answerRaw(200, { success: false, message: 'upstream 401', time: 0.2 });
    await expect(dp.testChannel(4)).rejects.toMatchObject({ message: 'upstream 401' });
  });

  it('channel maintenance calls', async () => {
    const { r, dp } = setup();
    await dp.testAllChannels();
    r.answer(12.5);
    expect(await dp.updateChannelBalance(3)).toEqual({ balance: 12.5 });
    await dp.updateAllBalances();
    r.answer(4);
    expect(await dp.deleteDisabledChannels()).toEqual({ count: 4 });
    await dp.fixAbilities();
    r.answer(['m1']);
    expect(await dp.fetchModels(3)).toEqual({ data: ['m1'] });
    r.answer(['m2']);
    expect(await dp.fetchModels({ base_url: 'http://x', type: 1, key: 'k' })).toEqual({ data: ['m2'] });
    await dp.channelModels();
    await dp.enabledModels();
    await dp.editTag({ tag: 't', new_tag: 'u', models: 'a,b' });
    await dp.enableTag('t');
    await dp.disableTag('t');
    r.answer(2);
    expect(await dp.batchSetTag([1, 2], 'x')).toEqual({ count: 2, items: [] });
    await dp.copyChannel(3, { suffix: '_copy', reset_balance: true });
    expect(r.calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['GET', '/api/channel/test', undefined],
      ['GET', '/api/channel/update_balance/3/', undefined],
      ['GET', '/api/channel/update_balance', undefined],
      ['DELETE', '/api/channel/disabled', undefined],
      ['POST', '/api/channel/fix', {}],
      ['GET', '/api/channel/fetch_models/3', undefined],
      ['POST', '/api/channel/fetch_models', { base_url: 'http://x', type: 1, key: 'k' }],
      ['GET', '/api/channel/models', undefined],
      ['GET', '/api/channel/models_enabled', undefined],
      ['PUT', '/api/channel/tag', { tag: 't', new_tag: 'u', models: 'a,b' }],
      ['POST', '/api/channel/tag/enabled', { tag: 't' }],
      ['POST', '/api/channel/tag/disabled', { tag: 't' }],
      ['POST', '/api/channel/batch/tag', { ids: [1, 2], tag: 'x' }],
      ['POST', '/api/channel/copy/3?suffix=_copy&reset_balance=true', {}],
    ]);
  });

  it('user and wallet calls', async () => {
    const { r, dp } = setup();
    r.answer({ status: 1, role: 10 });
    expect(await dp.manageUser(5, 'promote')).toEqual({ data: { status: 1, role: 10 } });
    r.answer(100000, { message: '兑换成功！' });
    expect(await dp.redeem('CODE')).toEqual({ quota: 100000, message: '兑换成功！' });
    r.answer(['default', 'vip']);
    expect(await dp.getGroups()).toEqual({ data: ['default', 'vip'] });
    await dp.getSelf();
    await dp.userModels();
    await dp.selfGroups();
    expect(r.calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['POST', '/api/user/manage', { id: 5, action: 'promote' }],
      ['POST', '/api/user/topup', { key: 'CODE' }],
      ['GET', '/api/group/', undefined],
      ['GET', '/api/user/self', undefined],
      ['GET', '/api/user/models', undefined],
      ['GET', '/api/user/self/groups', undefined],
    ]);
  });

  it('logStat: admin and self endpoints with the filters; clearLogs', async () => {
    const { r, dp } = setup(false);
    r.answer({ quota: 10, rpm: 2, tpm: 300 });
    expect(await dp.logStat({ type: 2, model_name: 'm', junk: 1 })).toEqual({ quota: 10, rpm: 2, tpm: 300 });
    expect(r.last.url).toBe('/api/log/self/stat?type=2&model_name=m');
    r.answer({ quota: 1 });
    await dp.logStat({ username: 'a' }, true);
    expect(r.last.url).toBe('/api/log/stat?username=a');
    r.answer(7);
    expect(await dp.clearLogs(1700000000)).toEqual({ count: 7 });
    expect(r.last).toMatchObject({ method: 'DELETE', url: '/api/log/?target_timestamp=1700000000' });
  });
});
