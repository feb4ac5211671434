import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_OPTIONS } from '../../seeds/defaultOptions';
import { ALL_TARGETS, DB_TARGETS, KV_TARGETS, buildApp, describeEach, loginAgent, makeUser, setupRoot, type LoggedIn, type Target } from '../helpers/app';

describeEach(DB_TARGETS, 'system options', (app) => {
  let root: LoggedIn;
  let admin: LoggedIn;
  beforeAll(async () => {
    const r = await setupRoot(app());
    root = await loginAgent(app(), r.username, r.password);
    const a = await makeUser(app(), { role: 10 });
    admin = await loginAgent(app(), a.username, a.password);
  });
  const put = (key: string, value: unknown) => root.put('/api/option/').send({ key, value });
  const stored = async (key: string) => (await app().knex('options').where({ key }).first())?.value as string | undefined;

  it('system options are for root; admins read and change the operation options only; users nothing', async () => {
    // System options (site content, login, mail, payment, bot check, fetch protection): 403 for admins, unchanged.
    for (const [key, value] of [
      ['SystemName', 'x'],
      ['RegisterEnabled', 'false'],
      ['SMTPServer', 'smtp.evil.example'],
      ['EpayId', '1'],
      ['TurnstileCheckEnabled', 'true'],
      ['fetch_setting.ssrf_protection_enabled', 'false'],
      ['ServerAddress', 'https://evil.example'],
    ]) {
      const res = await admin.put('/api/option/').send({ key, value });
      expect(res.status).toBe(403);
      expect(app().ctx.options.get(key!)).not.toBe(value);
    }
    // Operation options (ratios, rate limits, model and relay settings): admins save them.
    const ratio = JSON.stringify({ 'admin-model': 3 });
    for (const [key, value] of [
      ['ModelRatio', ratio],
      ['ModelRequestRateLimitCount', '7'],
      ['RetryTimes', '2'],
      ['claude.default_max_tokens', '{"default":4096}'],
      ['general_setting.ping_interval_seconds', '30'],
    ]) {
      const res = await admin.put('/api/option/').send({ key, value });
      expect(res.body).toMatchObject({ success: true });
      expect(app().ctx.options.get(key!)).toBe(value);
    }
    // Their values are checked as for root.
    expect((await admin.put('/api/option/').send({ key: 'RetryTimes', value: 'many' })).body.success).toBe(false);
    expect(app().ctx.options.get('RetryTimes')).toBe('2');
    // An admin reads the operation options only.
    const list = (await admin.get('/api/option/')).body.data as Array<{ key: string }>;
    const keys = list.map((o) => o.key);
    expect(keys).toEqual(expect.arrayContaining(['ModelRatio', 'RetryTimes', 'QuotaPerUnit']));
    for (const k of ['SystemName', 'SMTPServer', 'ServerAddress', 'GitHubClientId', 'Notice']) expect(keys).not.toContain(k);
    expect((await admin.post('/api/option/rest_model_ratio')).body.success).toBe(true);
    // Ordinary users and visitors: nothing.
    const u = await makeUser(app(), { role: 1 });
    const user = await loginAgent(app(), u.username, u.password);
    expect((await user.get('/api/option/')).status).toBe(403);
    expect((await user.put('/api/option/').send({ key: 'RetryTimes', value: '1' })).status).toBe(403);
    expect((await app().http().get('/api/option/')).status).toBe(401);
    // Root keeps everything.
    expect((await put('SystemName', 'Root Name')).body.success).toBe(true);
    expect(((await root.get('/api/option/')).body.data as Array<{ key: string }>).map((o) => o.key)).toEqual(
      expect.arrayContaining(['SystemName', 'ModelRatio']),
    );
  });

  it('lists key/value pairs without any secret', async () => {
    const secrets: Record<string, string> = {
      SMTPToken: 'smtp-secret-value',
      GitHubClientSecret: 'gh-secret-value',
      TurnstileSecretKey: 'ts-secret-value',
      EpayKey: 'epay-secret-value',
      'oidc.client_secret': 'oidc-secret-value',
      TelegramBotToken: 'tg-secret-value',
      WeChatServerToken: 'wx-secret-value',
      LinuxDOClientSecret: 'ldo-secret-value',
    };
    for (const [k, v] of Object.entries(secrets)) expect((await put(k, v)).body.success).toBe(true);
    const res = await root.get('/api/option/');
    expect(res.body.success).toBe(true);
    const list = res.body.data as Array<{ key: string; value: string }>;
    expect(list.find((o) => o.key === 'SystemName')).toBeDefined();
    expect(list.find((o) => o.key === 'PasswordLoginEnabled')).toEqual({ key: 'PasswordLoginEnabled', value: 'true' });
    const text = JSON.stringify(res.body);
    for (const [k, v] of Object.entries(secrets)) {
      expect(text).not.toContain(v);
      expect(list.some((o) => o.key === k)).toBe(false);
    }
  });

  it('stores valid values normalised, and they take effect', async () => {
    expect((await put('ServerAddress', 'https://gw.example.com///')).body.success).toBe(true);
    expect(await stored('ServerAddress')).toBe('https://gw.example.com');
    expect((await put('RegisterEnabled', false)).body.success).toBe(true);
    expect(app().ctx.options.bool('RegisterEnabled')).toBe(false);
    expect((await app().http().post('/api/user/register').send({ username: 'zed', password: '12345678', password2: '12345678' })).body.success).toBe(false);
    expect((await put('RegisterEnabled', 'true')).body.success).toBe(true);
    expect((await put('SystemName', 'My Gateway')).body.success).toBe(true);
    expect((await app().http().get('/api/status')).body.data.system_name).toBe('My Gateway');
    expect((await put('EmailDomainWhitelist', ' a.com , b.org ')).body.success).toBe(true);
    expect(await stored('EmailDomainWhitelist')).toBe('a.com,b.org');
  });

  it('refuses invalid values with a clear message and changes nothing', async () => {
    await put('Price', '7.3');
    await put('ModelRatio', DEFAULT_OPTIONS.ModelRatio);
    const snapshot = Object.fromEntries((await app().knex('options').select('key', 'value')).map((r: { key: string; value: string }) => [r.key, r.value]));
    const memory = app().ctx.options.all();
    const cases: Array<[string, unknown, string | RegExp]> = [
      ['Price', 'abc', /数字/],
      ['ModelRatio', '{not json', /JSON/],
      ['ModelRatio', '{"gpt-4o": -1}', /非负/],
      ['TopupGroupRatio', 'nope', 'Top-up group ratio is not a valid JSON string'],
      ['PasswordLoginEnabled', 'yes', /true 或 false/],
      ['NoSuchOption', 'x', /未知的配置项/],
      ['EmailDomainWhitelist', 'good.com,bad_domain', /Email domain format is incorrect/],
      ['EmailDomainWhitelist', 'a.com,a.com', 'This domain already exists in the whitelist'],
      ['PayAddress', 'https://pay.example.com', 'Please fill in the server address first'],
      ['GitHubOAuthEnabled', 'true', /GitHub/],
      ['TurnstileCheckEnabled', 'true', /Turnstile/],
      ['oidc.well_known', 'ftp://x', /http/],
      ['SystemName', { nested: true }, /./],
    ];
    // PayAddress needs the server address: clear it first for that case.
    await put('ServerAddress', '');
    for (const [key, value, message] of cases) {
      const res = await put(key, value);
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(false);
      if (typeof message === 'string') expect(res.body.message).toBe(message);
      else expect(res.body.message).toMatch(message);
    }
    const after = Object.fromEntries((await app().knex('options').select('key', 'value')).map((r: { key: string; value: string }) => [r.key, r.value]));
    expect(after).toEqual({ ...snapshot, ServerAddress: '' });
    expect(app().ctx.options.all()).toEqual({ ...memory, ServerAddress: '' });
    expect((await root.put('/api/option/').send({ value: 'x' })).body.success).toBe(false);

    await put('ServerAddress', 'https://gw.example.com');
    expect((await put('PayAddress', 'https://pay.example.com/')).body.success).toBe(true);
    expect(await stored('PayAddress')).toBe('https://pay.example.com');
    await put('GitHubClientId', 'id');
    await put('GitHubClientSecret', 'secret');
    expect((await put('GitHubOAuthEnabled', 'true')).body.success).toBe(true);
    expect((await app().http().get('/api/status')).body.data.github_oauth).toBe(true);
  });

  it('resets the model ratios to the defaults', async () => {
    expect((await put('ModelRatio', '{"only-model": 3}')).body.success).toBe(true);
    expect((await put('CompletionRatio', '{"only-model": 2}')).body.success).toBe(true);
    expect(app().ctx.options.json<Record<string, number>>('ModelRatio', {})).toEqual({ 'only-model': 3 });
    const res = await root.post('/api/option/rest_model_ratio');
    expect(res.body.success).toBe(true);
    for (const key of ['ModelRatio', 'CompletionRatio', 'CacheRatio', 'ModelPrice']) {
      expect(await stored(key)).toBe(DEFAULT_OPTIONS[key]);
      expect(app().ctx.options.get(key)).toBe(DEFAULT_OPTIONS[key]);
    }
  });
});

/** Two nodes sharing one database and one Redis: an option changed on A is seen by B. */
const SHARED_TARGETS: Target[] = [...KV_TARGETS, ...ALL_TARGETS].filter((t, i, all) => t.redis && all.findIndex((x) => x.name === t.name) === i);
const sharedTitle = 'options across nodes';
if (SHARED_TARGETS.length) {
  describe.each(SHARED_TARGETS.map((t) => [t.name, t] as const))(`${sharedTitle} [%s]`, (_name, target) => {
    it('reloads an option changed on node A on node B', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-opt-'));
      const config = target.db === 'sqlite' ? { databaseUrl: `sqlite:${path.join(dir, 'db.sqlite')}` } : undefined;
      const a = await buildApp(target, { config });
      const b = await buildApp(target, { shareWith: a, config });
      try {
        const r = await setupRoot(a);
        const rootA = await loginAgent(a, r.username, r.password);
        expect(b.ctx.options.get('SystemName')).not.toBe('Shared Name');
        expect((await rootA.put('/api/option/').send({ key: 'SystemName', value: 'Shared Name' })).body.success).toBe(true);
        expect((await rootA.put('/api/option/').send({ key: 'RegisterEnabled', value: 'false' })).body.success).toBe(true);
        let seen = '';
        for (let i = 0; i < 100 && seen !== 'Shared Name'; i++) {
          seen = (await b.http().get('/api/status')).body.data.system_name;
          if (seen !== 'Shared Name') await new Promise((res) => setTimeout(res, 50));
        }
        expect(seen).toBe('Shared Name');
        expect(b.ctx.options.bool('RegisterEnabled')).toBe(false);
        const reg = await b.http().post('/api/user/register').send({ username: 'nodeb', password: '12345678', password2: '12345678' });
        expect(reg.body).toMatchObject({ success: false, message: '管理员关闭了新用户注册' });
      } finally {
        await b.close();
        await a.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
} else {
  describeEach(DB_TARGETS, `${sharedTitle} (single node without Redis)`, (app) => {
    it('reloads an option change on the same node', async () => {
      const r = await setupRoot(app());
      const s = await loginAgent(app(), r.username, r.password);
      expect((await s.put('/api/option/').send({ key: 'SystemName', value: 'Local Name' })).body.success).toBe(true);
      expect((await app().http().get('/api/status')).body.data.system_name).toBe('Local Name');
    });
  });
}
