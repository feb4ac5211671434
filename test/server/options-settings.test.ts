import { DB_TARGETS, describeEach, loginAgent, setupRoot, type LoggedIn } from '../helpers/app';
import { insertLogs } from '../../server/src/repositories/logs';

/** Settings page rules enforced by PUT /api/option/ and the log purge it offers. */
describeEach(DB_TARGETS, 'settings page options', (app) => {
  let root: LoggedIn;
  beforeAll(async () => {
    const r = await setupRoot(app());
    root = await loginAgent(app(), r.username, r.password);
  });
  const put = (key: string, value: unknown) => root.put('/api/option/').send({ key, value });

  it('refuses rate limits and ping intervals below their minimum, changing nothing', async () => {
    for (const [key, bad, good] of [
      ['ModelRequestRateLimitDurationMinutes', '-1', '0'],
      ['ModelRequestRateLimitCount', '-5', '0'],
      ['ModelRequestRateLimitSuccessCount', '0', '1'],
      ['general_setting.ping_interval_seconds', '0', '1'],
    ] as const) {
      const before = app().ctx.options.get(key);
      const res = await put(key, bad);
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(false);
      expect(res.body.message).toContain(key);
      expect(app().ctx.options.get(key)).toBe(before);
      expect((await put(key, good)).body.success).toBe(true);
      expect(app().ctx.options.get(key)).toBe(good);
    }
  });

  it('thinking budget percentage stays within 0.1 to 1', async () => {
    expect((await put('claude.thinking_adapter_budget_tokens_percentage', '0.05')).body.success).toBe(false);
    expect((await put('gemini.thinking_adapter_budget_tokens_percentage', '1.5')).body.success).toBe(false);
    expect((await put('gemini.thinking_adapter_budget_tokens_percentage', '0.5')).body.success).toBe(true);
    expect(app().ctx.options.get('gemini.thinking_adapter_budget_tokens_percentage')).toBe('0.5');
  });

  it('a switch with dependencies is accepted once its settings are stored first (the console save order)', async () => {
    expect((await put('GitHubOAuthEnabled', 'true')).body.success).toBe(false);
    expect((await put('GitHubClientId', 'cid')).body.success).toBe(true);
    expect((await put('GitHubClientSecret', 'csecret')).body.success).toBe(true);
    expect((await put('GitHubOAuthEnabled', 'true')).body.success).toBe(true);
    expect((await put('GitHubOAuthEnabled', 'false')).body.success).toBe(true);
  });

  it('clears logs before a timestamp (DELETE /api/log/?target_timestamp=) and needs the time', async () => {
    const now = Math.floor(Date.now() / 1000);
    const base = {
      user_id: 1,
      username: 'x',
      type: 2,
      content: 'c',
      model_name: 'm',
      token_name: '',
      quota: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      channel_id: 0,
      use_time: 0,
      is_stream: false,
      group: 'default',
      other: '',
    };
    await insertLogs(app().knex, [
      { ...base, created_at: now - 90 * 86400 },
      { ...base, created_at: now - 60 * 86400 },
      { ...base, created_at: now - 60 },
    ]);
    const missing = await root.del('/api/log/');
    expect(missing.body.success).toBe(false);
    const res = await root.del(`/api/log/?target_timestamp=${now - 30 * 86400}`);
    expect(res.body).toMatchObject({ success: true, data: 2 });
    expect(
      Number(
        (
          await app()
            .knex('logs')
            .where('created_at', '<', now - 30 * 86400)
            .count({ n: '*' })
            .first()
        )?.n,
      ),
    ).toBe(0);
    expect(
      Number(
        (
          await app()
            .knex('logs')
            .where('created_at', '=', now - 60)
            .count({ n: '*' })
            .first()
        )?.n,
      ),
    ).toBe(1);
  });
});
