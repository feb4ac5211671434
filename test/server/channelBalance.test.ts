/**
 * Channel balances per kind against mocks of each provider's balance endpoint (OpenAI-style
 * billing, DeepSeek, OpenRouter, SiliconCloud, Moonshot, AI Proxy), and "update all balances"
 * answering per channel what was updated, what failed and why, and which kinds have no endpoint.
 */
import { ALL_TARGETS, describeEach, loginAgent, makeUser, setupRoot, type TestApp } from '../helpers/app';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { installBalanceMocks } from '../mock-upstream/balances';
import { installAiproxyLibraryMock } from '../mock-upstream/aiproxyLibrary';
import { seedChannel, setOptions } from '../mock-upstream/seed';
import { updateChannelBalance } from '../../server/src/channels/balance';

describeEach(ALL_TARGETS, 'channel balances', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let admin: Awaited<ReturnType<typeof loginAgent>>;

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    installBalanceMocks(mock);
    installAiproxyLibraryMock(mock);
    await setOptions(app, { Price: '7.3' });
    const root = await setupRoot(app);
    admin = await loginAgent(app, root.username, root.password);
  });
  afterAll(async () => mock?.close());

  const stored = async (id: number) => Number((await app.knex('channels').where({ id }).first()).balance);

  test('each kind reads its own endpoint, converts to USD and stores it', async () => {
    const cases: Array<{ type: number; base?: string; expected: number; path: string }> = [
      { type: 1, expected: 75, path: '/v1/dashboard/billing/subscription' },
      { type: 43, expected: 110.5, path: '/user/balance' },
      { type: 43, base: '/cny', expected: 10, path: '/cny/user/balance' },
      { type: 20, expected: 37.75, path: '/v1/credits' },
      { type: 40, expected: 9, path: '/v1/user/info' },
      { type: 25, expected: 20, path: '/v1/users/me/balance' },
      { type: 21, expected: 12.5, path: '/api/report/getUserOverview' },
      { type: 10, expected: 12.5, path: '/api/report/getUserOverview' },
    ];
    for (const c of cases) {
      mock.reset();
      const id = await seedChannel(app, {
        type: c.type,
        key: 'sk-balance-key',
        base_url: `${mock.url}${c.base ?? ''}`,
        models: 'm',
        other: c.type === 21 ? 'lib' : '',
      });
      const r = await admin.get(`/api/channel/update_balance/${id}/`);
      expect({ type: c.type, body: r.body }).toMatchObject({ type: c.type, body: { success: true, balance: c.expected } });
      expect(await stored(id)).toBeCloseTo(c.expected, 6);
      const req = mock.received(c.path)[0]!;
      if (c.type === 21 || c.type === 10) expect(req.headers['api-key']).toBe('sk-balance-key');
      else expect(req.headers.authorization).toBe('Bearer sk-balance-key');
    }
  });

  test('a failed lookup says why (key scrubbed) and stores nothing; a kind without endpoint says so', async () => {
    const bad = await seedChannel(app, { type: 25, key: 'sk-expired-Abc123456789', base_url: mock.url, models: 'm' });
    const r = await admin.get(`/api/channel/update_balance/${bad}/`);
    expect(r.body.success).toBe(false);
    expect(r.body.message).toContain('401');
    expect(r.body.message).not.toContain('Abc123456789');
    expect(await stored(bad)).toBe(0);
    const none = await seedChannel(app, { type: 42, key: 'k', base_url: mock.url, models: 'm' });
    await expect(updateChannelBalance(app.ctx, none)).rejects.toThrow(/Mistral channels have no balance endpoint/);
  });

  test('update all balances: a summary per enabled channel (updated, failed with reason, unsupported)', async () => {
    await app.knex('channels').del();
    const ok1 = await seedChannel(app, { name: 'ds', type: 43, key: 'sk-a', base_url: mock.url, models: 'm' });
    const ok2 = await seedChannel(app, { name: 'or', type: 20, key: 'sk-b', base_url: mock.url, models: 'm' });
    const failed = await seedChannel(app, { name: 'ms-expired', type: 25, key: 'sk-expired', base_url: mock.url, models: 'm' });
    const unsupported = await seedChannel(app, { name: 'claude', type: 14, key: 'k', base_url: mock.url, models: 'm' });
    await seedChannel(app, { name: 'disabled', type: 43, key: 'sk-c', base_url: mock.url, models: 'm', status: 2 });
    const r = await admin.get('/api/channel/update_balance');
    expect(r.body.success).toBe(true);
    expect(r.body.message).toContain('已更新 2 个');
    const s = r.body.data;
    expect(s).toMatchObject({ total: 4, updated: 2, failed: 1, unsupported: 1 });
    const byId = Object.fromEntries(s.results.map((x: { id: number }) => [x.id, x]));
    expect(byId[ok1]).toMatchObject({ name: 'ds', status: 'updated', balance: 110.5 });
    expect(byId[ok2]).toMatchObject({ name: 'or', status: 'updated', balance: 37.75 });
    expect(byId[failed]).toMatchObject({ name: 'ms-expired', status: 'failed', message: expect.stringContaining('401') });
    expect(byId[unsupported]).toMatchObject({ status: 'unsupported', message: expect.stringContaining('Claude') });
    expect(await stored(ok1)).toBe(110.5);
    // Admin only.
    const user = await makeUser(app, { password: 'password123' });
    const plain = await loginAgent(app, user.username, user.password);
    expect((await plain.get('/api/channel/update_balance')).status).toBe(403);
  });
});
