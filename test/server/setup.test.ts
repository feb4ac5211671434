import { ALL_TARGETS, KV_TARGETS, buildApp, describeEach } from '../helpers/app';
import { ROOT_START_QUOTA } from '../../server/src/services/setup';

describeEach(ALL_TARGETS, 'setup and status', (app) => {
  it('reports setup not done on a fresh database, and status answers before setup', async () => {
    const setup = await app().http().get('/api/setup');
    expect(setup.body).toMatchObject({ success: true, data: { status: false, root_init: false, database_type: app().target.db } });
    const status = await app().http().get('/api/status');
    expect(status.body.success).toBe(true);
    expect(status.body.data.setup).toBe(false);
    expect(status.body.data.quota_per_unit).toBe(500000);
    expect(typeof status.body.data.start_time).toBe('number');
    for (const key of [
      'system_name',
      'logo',
      'footer_html',
      'display_in_currency',
      'enable_drawing',
      'enable_task',
      'enable_data_export',
      'chats',
      'data_export_default_time',
      'default_collapse_sidebar',
      'mj_notify_enabled',
      'chat_link',
      'chat_link2',
      'docs_link',
      'version',
      'email_verification',
      'turnstile_check',
      'turnstile_site_key',
      'github_oauth',
      'github_client_id',
      'oidc_enabled',
      'oidc_client_id',
      'oidc_authorization_endpoint',
      'wechat_login',
      'wechat_qrcode',
      'telegram_oauth',
      'telegram_bot_name',
      'linuxdo_oauth',
      'linuxdo_client_id',
      'self_use_mode_enabled',
      'demo_site_enabled',
      'min_topup',
    ]) {
      expect(status.body.data).toHaveProperty(key);
    }
    for (const key of ['email_verification', 'turnstile_check', 'github_oauth', 'oidc_enabled', 'wechat_login', 'telegram_oauth', 'linuxdo_oauth']) {
      expect(typeof status.body.data[key]).toBe('boolean');
    }
  });

  it('rejects a bad setup payload and changes nothing', async () => {
    const short = await app().http().post('/api/setup').send({ username: 'root', password: 'short', confirmPassword: 'short' });
    expect(short.status).toBe(200);
    expect(short.body.success).toBe(false);
    expect(short.body.message).toContain('密码长度至少为8个字符');
    const mismatch = await app().http().post('/api/setup').send({ username: 'root', password: '12345678', confirmPassword: '12345679' });
    expect(mismatch.body).toMatchObject({ success: false, message: '两次输入的密码不一致' });
    const malformed = await app().http().post('/api/setup').set('content-type', 'application/json').send('{bad json');
    expect(malformed.body.success).toBe(false);
    expect(await app().knex('users').count({ n: '*' }).first()).toMatchObject({ n: 0 });
    expect((await app().http().get('/api/setup')).body.data.status).toBe(false);
  });

  it('refuses sign-ups before setup: nobody registers on a gateway without its root', async () => {
    const reg = await app().http().post('/api/user/register').send({ username: 'early', password: '12345678', password2: '12345678' });
    expect(reg.body).toMatchObject({ success: false, message: expect.stringContaining('初始化') });
    expect(await app().knex('users').count({ n: '*' }).first()).toMatchObject({ n: 0 });
  });

  it('creates the root user once with a starting balance, logs the operator in, records the usage mode, and refuses a second setup', async () => {
    const agent = app().http();
    const ok = await agent.post('/api/setup').send({ username: 'root', password: '12345678', confirmPassword: '12345678', SelfUseModeEnabled: true });
    expect(ok.body).toMatchObject({ success: true, data: { username: 'root', role: 100, quota: ROOT_START_QUOTA } });
    const root = await app().knex('users').where({ username: 'root' }).first();
    expect(root.role).toBe(100);
    expect(root.password).not.toBe('12345678');
    expect(Number(root.quota)).toBe(ROOT_START_QUOTA);
    // The setup's answer set the session cookie: the operator is logged in as root.
    const self = await agent.get('/api/user/self').set('New-Api-User', String(root.id));
    expect(self.body).toMatchObject({ success: true, data: { id: root.id, role: 100 } });
    // Registration opens once the root exists (RegisterEnabled defaults on).
    const reg = await app().http().post('/api/user/register').send({ username: 'later', password: '12345678', password2: '12345678' });
    expect(reg.body).toMatchObject({ success: true });
    const status = await app().http().get('/api/status');
    expect(status.body.data.setup).toBe(true);
    expect(status.body.data.self_use_mode_enabled).toBe(true);
    const again = await app().http().post('/api/setup').send({ username: 'root2', password: '12345678', confirmPassword: '12345678' });
    expect(again.body.success).toBe(false);
    expect(await app().knex('users').count({ n: '*' }).first()).toMatchObject({ n: 2 });
  });
});

describe.each(KV_TARGETS.map((t) => [t.name, t] as const))('global API rate limit [%s]', (_n, target) => {
  it('answers 429 with Retry-After in the envelope after the per-IP budget, shared by two nodes on Redis', async () => {
    const a = await buildApp(target, { config: { apiRateLimit: { count: 5, windowSeconds: 60 } } });
    // On Redis a second node (own DB, same Redis namespace) shares the budget.
    const b = target.redis
      ? await buildApp(target, { config: { redisPrefix: a.ctx.config.redisPrefix, apiRateLimit: { count: 5, windowSeconds: 60 } } })
      : undefined;
    try {
      const codes: number[] = [];
      for (let i = 0; i < 4; i++) codes.push((await a.http().get('/api/status')).status);
      const second = b ?? a;
      codes.push((await second.http().get('/api/status')).status);
      const limited = await second.http().get('/api/status');
      expect(codes).toEqual([200, 200, 200, 200, 200]);
      expect(limited.status).toBe(429);
      expect(limited.body).toMatchObject({ success: false });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await b?.close();
      await a.close();
    }
  });
});
