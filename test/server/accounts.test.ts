import request from 'supertest';
import { DB_TARGETS, KV_TARGETS, describeEach, loginAgent, makeUser, setupRoot, type TestApp } from '../helpers/app';
import { mailCode, mailLink, startSmtp, type TestSmtp } from '../helpers/smtp';

let smtp: TestSmtp;
beforeAll(async () => {
  smtp = await startSmtp();
});
afterAll(async () => {
  await smtp.close();
});

async function useSmtp(app: TestApp) {
  const o = app.ctx.options;
  for (const [k, v] of Object.entries({ SMTPServer: '127.0.0.1', SMTPPort: String(smtp.port), SMTPAccount: '', SMTPFrom: 'noreply@test.local' }))
    await o.set(k, v);
}

describeEach(DB_TARGETS, 'login, logout and sessions', (app) => {
  let root: { id: number; username: string; password: string };
  beforeAll(async () => {
    root = await setupRoot(app());
  });

  it('logs in by username, answers the user without secrets and keeps the session', async () => {
    const agent = app().http();
    const res = await agent.post('/api/user/login').send({ username: root.username, password: root.password });
    expect(res.body).toMatchObject({ success: true, data: { id: root.id, username: 'root', role: 100 } });
    expect(res.body.data).not.toHaveProperty('password');
    expect(res.body.data).not.toHaveProperty('access_token');
    const cookie = res.headers['set-cookie'];
    expect(String(cookie)).toMatch(/httponly/i);
    const self = await agent.get('/api/user/self').set('New-Api-User', String(root.id));
    expect(self.body).toMatchObject({ success: true, data: { id: root.id, username: 'root' } });
    expect(self.body.data).not.toHaveProperty('password');
  });

  it('is 401 without or with a mismatching New-Api-User header, and without a session', async () => {
    const agent = app().http();
    await agent.post('/api/user/login').send({ username: root.username, password: root.password });
    expect((await agent.get('/api/user/self')).status).toBe(401);
    expect((await agent.get('/api/user/self').set('New-Api-User', String(root.id + 1))).status).toBe(401);
    expect((await app().http().get('/api/user/self').set('New-Api-User', String(root.id))).status).toBe(401);
  });

  it('logs in by email and refuses empty, wrong, disabled and deleted accounts', async () => {
    const u = await makeUser(app());
    await app().knex('users').where({ id: u.id }).update({ email: 'Login.Me@Example.com' });
    const byEmail = await app().http().post('/api/user/login').send({ username: 'login.me@example.com', password: u.password });
    expect(byEmail.body).toMatchObject({ success: true, data: { id: u.id } });

    const empty = await app().http().post('/api/user/login').send({ username: '', password: '' });
    expect(empty.body).toEqual({ success: false, message: 'Please enter username and password!', data: null });
    const wrong = await app().http().post('/api/user/login').send({ username: u.username, password: 'nope-nope' });
    expect(wrong.body.success).toBe(false);
    expect(wrong.status).toBe(200);

    await app().knex('users').where({ id: u.id }).update({ status: 2 });
    const disabled = await app().http().post('/api/user/login').send({ username: u.username, password: u.password });
    expect(disabled.body).toMatchObject({ success: false, message: '用户已被封禁' });
    await app().knex('users').where({ id: u.id }).update({ status: 1, deleted_at: 1 });
    const deleted = await app().http().post('/api/user/login').send({ username: u.username, password: u.password });
    expect(deleted.body.success).toBe(false);
  });

  it('respects PasswordLoginEnabled', async () => {
    await app().ctx.options.set('PasswordLoginEnabled', 'false');
    const res = await app().http().post('/api/user/login').send({ username: root.username, password: root.password });
    expect(res.body).toMatchObject({ success: false, message: '管理员关闭了密码登录' });
    await app().ctx.options.set('PasswordLoginEnabled', 'true');
  });

  it('logs out: the session no longer authenticates', async () => {
    const s = await loginAgent(app(), root.username, root.password);
    expect((await s.get('/api/user/self')).status).toBe(200);
    expect((await s.get('/api/user/logout')).body.success).toBe(true);
    expect((await s.get('/api/user/self')).status).toBe(401);
  });

  it('a disabled user loses an existing session at once', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    expect((await s.get('/api/user/self')).status).toBe(200);
    await app().knex('users').where({ id: u.id }).update({ status: 2 });
    expect((await s.get('/api/user/self')).status).toBe(401);
  });

  it('issues a system access token that authenticates with New-Api-User, and replaces the previous one', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    // A new token needs a fresh re-verification (docs/security.md).
    expect((await s.post('/api/verify').send({ method: 'password', password: u.password })).body.success).toBe(true);
    const t1 = (await s.get('/api/user/token')).body.data as string;
    expect(t1).toMatch(/^[A-Za-z0-9]{32}$/);
    const viaToken = await app().http().get('/api/user/self').set('Authorization', t1).set('New-Api-User', String(u.id));
    expect(viaToken.body).toMatchObject({ success: true, data: { id: u.id } });
    expect(viaToken.body.data).not.toHaveProperty('access_token');
    expect(
      (
        await app()
          .http()
          .get('/api/user/self')
          .set('Authorization', t1)
          .set('New-Api-User', String(u.id + 1))
      ).status,
    ).toBe(401);
    expect((await app().http().get('/api/user/self').set('Authorization', 'x'.repeat(32)).set('New-Api-User', String(u.id))).status).toBe(401);
    const t2 = (await s.get('/api/user/token')).body.data as string;
    expect(t2).not.toBe(t1);
    expect((await app().http().get('/api/user/self').set('Authorization', t1).set('New-Api-User', String(u.id))).status).toBe(401);
    expect((await app().http().get('/api/user/self').set('Authorization', t2).set('New-Api-User', String(u.id))).status).toBe(200);
  });
});

describeEach(KV_TARGETS, 'login rate limit', (app) => {
  it('answers 429 after too many failed logins of one account, even with the right password', async () => {
    const u = await makeUser(app());
    // Defaults: 5 per account, 20 per IP in 15 minutes (config loginLimit).
    expect(app().ctx.config.loginLimit).toEqual({ perAccount: 5, perIp: 20, windowSeconds: 900 });
    for (let i = 0; i < 5; i++) {
      const r = await app()
        .http()
        .post('/api/user/login')
        .send({ username: u.username, password: `wrong-${i}-pass` });
      expect(r.status).toBe(200);
      expect(r.body.success).toBe(false);
    }
    const blocked = await app().http().post('/api/user/login').send({ username: u.username, password: u.password });
    expect(blocked.status).toBe(429);
    expect(blocked.body.success).toBe(false);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describeEach(KV_TARGETS, 'verification mail limits', (app) => {
  it('limits mails per address (30 s) and per IP', async () => {
    await useSmtp(app());
    const before = smtp.mails.length;
    expect((await app().http().get('/api/verification').query({ email: 'limit0@example.com' })).body.success).toBe(true);
    await smtp.waitFor('limit0@example.com', before);
    const again = await app().http().get('/api/verification').query({ email: 'LIMIT0@example.com' });
    expect(again.status).toBe(429);
    let last = again;
    for (let i = 1; i <= 20; i++)
      last = await app()
        .http()
        .get('/api/verification')
        .query({ email: `limit${i}@example.com` });
    expect(last.status).toBe(429);
    expect(smtp.mails.slice(before).length).toBeLessThanOrEqual(20);
  });
});

describeEach(DB_TARGETS, 'registration', (app) => {
  beforeAll(async () => {
    await setupRoot(app());
    await useSmtp(app());
  });
  const reg = (body: Record<string, unknown>, q = '') => app().http().post(`/api/user/register${q}`).send(body);

  it('validates with the product messages and writes nothing on failure', async () => {
    expect((await reg({ username: 'alice', password: 'short', password2: 'short' })).body).toMatchObject({
      success: false,
      message: 'Password length must not be less than 8 characters!',
    });
    expect((await reg({ username: 'alice', password: '12345678', password2: '12345679' })).body).toMatchObject({
      success: false,
      message: 'The two passwords do not match',
    });
    expect((await reg({ username: 'alice', password: '1'.repeat(21), password2: '1'.repeat(21) })).body.success).toBe(false);
    expect((await reg({ username: 'a'.repeat(13), password: '12345678', password2: '12345678' })).body.success).toBe(false);
    expect((await reg({ username: '', password: '' })).body.success).toBe(false);
    expect(await app().knex('users').where({ username: 'alice' }).first()).toBeUndefined();
  });

  it('registers, refuses a taken username, and the new user can log in', async () => {
    const ok = await reg({ username: 'alice', password: '12345678', password2: '12345678' });
    expect(ok.body).toMatchObject({ success: true });
    const row = await app().knex('users').where({ username: 'alice' }).first();
    expect(row.role).toBe(1);
    expect(row.password).not.toBe('12345678');
    expect((await reg({ username: 'alice', password: '12345678', password2: '12345678' })).body.success).toBe(false);
    expect((await app().http().post('/api/user/login').send({ username: 'alice', password: '12345678' })).body.success).toBe(true);
  });

  it('honours RegisterEnabled and PasswordRegisterEnabled', async () => {
    await app().ctx.options.set('RegisterEnabled', 'false');
    expect((await reg({ username: 'bob1', password: '12345678', password2: '12345678' })).body).toMatchObject({
      success: false,
      message: '管理员关闭了新用户注册',
    });
    await app().ctx.options.set('RegisterEnabled', 'true');
    await app().ctx.options.set('PasswordRegisterEnabled', 'false');
    expect((await reg({ username: 'bob1', password: '12345678', password2: '12345678' })).body.success).toBe(false);
    await app().ctx.options.set('PasswordRegisterEnabled', 'true');
    expect(await app().knex('users').where({ username: 'bob1' }).first()).toBeUndefined();
  });

  it('credits inviter and invitee through aff_code', async () => {
    await app().ctx.options.set('QuotaForInviter', '1000');
    await app().ctx.options.set('QuotaForInvitee', '300');
    const inviter = await makeUser(app());
    const s = await loginAgent(app(), inviter.username, inviter.password);
    const code = (await s.get('/api/user/aff')).body.data as string;
    expect(code).toMatch(/^[A-Za-z0-9]{4,}$/);
    expect((await s.get('/api/user/aff')).body.data).toBe(code);
    expect((await reg({ username: 'invited1', password: '12345678', password2: '12345678', aff_code: code })).body.success).toBe(true);
    const invited = await app().knex('users').where({ username: 'invited1' }).first();
    expect(invited.inviter_id).toBe(inviter.id);
    expect(Number(invited.quota)).toBe(300);
    const inv = await app().knex('users').where({ id: inviter.id }).first();
    expect(inv.aff_count).toBe(1);
    expect(Number(inv.aff_quota)).toBe(1000);
    await app().ctx.options.set('QuotaForInviter', '0');
    await app().ctx.options.set('QuotaForInvitee', '0');
  });

  it('with email verification: mails a code through SMTP, requires and consumes it', async () => {
    await app().ctx.options.set('EmailVerificationEnabled', 'true');
    const noCode = await reg({ username: 'carol', password: '12345678', password2: '12345678', email: 'carol@example.com' });
    expect(noCode.body).toMatchObject({ success: false, message: '管理员开启了邮箱验证，请输入邮箱地址和验证码' });

    const before = smtp.mails.length;
    const sent = await app().http().get('/api/verification').query({ email: 'carol@example.com' });
    expect(sent.body).toMatchObject({ success: true });
    const mail = await smtp.waitFor('carol@example.com', before);
    const code = mailCode(mail)!;
    expect(code).toMatch(/^\d{6}$/);

    const again = await app().http().get('/api/verification').query({ email: 'carol@example.com' });
    expect(again.status).toBe(429);

    const bad = await reg({
      username: 'carol',
      password: '12345678',
      password2: '12345678',
      email: 'carol@example.com',
      verification_code: code === '000000' ? '111111' : '000000',
    });
    expect(bad.body).toMatchObject({ success: false, message: '验证码错误或已过期' });
    const good = await reg({ username: 'carol', password: '12345678', password2: '12345678', email: 'carol@example.com', verification_code: code });
    expect(good.body).toMatchObject({ success: true });
    expect((await app().knex('users').where({ username: 'carol' }).first()).email).toBe('carol@example.com');
    const reuse = await reg({ username: 'carol2', password: '12345678', password2: '12345678', email: 'carol@example.com', verification_code: code });
    expect(reuse.body.success).toBe(false);

    const taken = await app().http().get('/api/verification').query({ email: 'carol@example.com' });
    expect(taken.body).toMatchObject({ success: false, message: '邮箱地址已被占用' });
    const empty = await app().http().get('/api/verification').query({ email: '' });
    expect(empty.body.success).toBe(false);
    await app().ctx.options.set('EmailVerificationEnabled', 'false');
  });

  it("mails the code in the asking page's language, else in the server's (SERVER_LANGUAGE, zh)", async () => {
    const ask = async (email: string, lang?: string) => {
      const before = smtp.mails.length;
      const r = request(app().callback).get('/api/verification').query({ email });
      expect((await (lang ? r.set('Accept-Language', lang) : r)).body).toMatchObject({ success: true });
      return smtp.waitFor(email, before);
    };
    const english = await ask('lang-en@example.com', 'en-US,en;q=0.9');
    expect(english.subject).toMatch(/email verification$/);
    expect(english.body).toMatch(/Your verification code is/);
    const chinese = await ask('lang-zh@example.com', 'zh-CN');
    expect(chinese.subject).toMatch(/邮箱验证邮件$/);
    expect(chinese.body).toMatch(/您的验证码为/);
    const unstated = await ask('lang-none@example.com');
    expect(unstated.subject).toMatch(/邮箱验证邮件$/);
  });

  it('enforces the email domain whitelist and the alias restriction', async () => {
    await app().ctx.options.set('EmailDomainWhitelist', 'allowed.com');
    await app().ctx.options.set('EmailDomainRestrictionEnabled', 'true');
    const outside = await app().http().get('/api/verification').query({ email: 'dave@other.com' });
    expect(outside.body).toMatchObject({ success: false, message: '管理员启用了邮箱域名白名单，您的邮箱地址的域名不在白名单中' });
    await app().ctx.options.set('EmailAliasRestrictionEnabled', 'true');
    const alias = await app().http().get('/api/verification').query({ email: 'dave+x@allowed.com' });
    expect(alias.body.success).toBe(false);
    expect(alias.body.message).toContain('别名');
    const before = smtp.mails.length;
    const fine = await app().http().get('/api/verification').query({ email: 'dave@allowed.com' });
    expect(fine.body.success).toBe(true);
    await smtp.waitFor('dave@allowed.com', before);
    expect(smtp.mails.some((m) => m.to.includes('dave@other.com') || m.to.includes('dave+x@allowed.com'))).toBe(false);
    await app().ctx.options.set('EmailDomainRestrictionEnabled', 'false');
    await app().ctx.options.set('EmailAliasRestrictionEnabled', 'false');
  });
});

describeEach(DB_TARGETS, 'password reset', (app) => {
  beforeAll(async () => {
    await setupRoot(app());
    await useSmtp(app());
    await app().ctx.options.set('ServerAddress', 'https://gw.example.com/');
  });

  it('mails a one-time link; the token sets a new random password once', async () => {
    const u = await makeUser(app());
    await app().knex('users').where({ id: u.id }).update({ email: 'erin@example.com' });
    const before = smtp.mails.length;
    const res = await app().http().get('/api/reset_password').query({ email: 'erin@example.com' });
    expect(res.body).toMatchObject({ success: true });
    const mail = await smtp.waitFor('erin@example.com', before);
    const link = new URL(mailLink(mail)!);
    expect(link.origin + link.pathname).toBe('https://gw.example.com/user/reset');
    expect(link.searchParams.get('email')).toBe('erin@example.com');
    const token = link.searchParams.get('token')!;
    expect(token).toMatch(/^[A-Za-z0-9]{32}$/);

    const wrong = await app()
      .http()
      .post('/api/user/reset')
      .send({ email: 'erin@example.com', token: 'x'.repeat(32) });
    expect(wrong.body).toMatchObject({ success: false, message: '重置链接非法或已过期' });
    const done = await app().http().post('/api/user/reset').send({ email: 'erin@example.com', token });
    expect(done.body.success).toBe(true);
    const newPassword = done.body.data as string;
    expect(newPassword).toMatch(/^[A-Za-z0-9]{12}$/);
    expect((await app().http().post('/api/user/login').send({ username: u.username, password: u.password })).body.success).toBe(false);
    expect((await app().http().post('/api/user/login').send({ username: u.username, password: newPassword })).body.success).toBe(true);
    const again = await app().http().post('/api/user/reset').send({ email: 'erin@example.com', token });
    expect(again.body.success).toBe(false);
  });

  it('says so for an unknown email and sends nothing', async () => {
    const before = smtp.mails.length;
    const res = await app().http().get('/api/reset_password').query({ email: 'nobody@example.com' });
    expect(res.body).toMatchObject({ success: false, message: '该邮箱地址未注册' });
    expect(smtp.mails.slice(before).length).toBe(0);
  });
});

describeEach(DB_TARGETS, 'self service', (app) => {
  let root: { id: number; username: string; password: string };
  beforeAll(async () => {
    root = await setupRoot(app());
  });

  it('updates the display name and changes the password only with the original one', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    expect((await s.put('/api/user/self').send({ display_name: 'New Name' })).body.success).toBe(true);
    expect((await s.get('/api/user/self')).body.data.display_name).toBe('New Name');
    const noOrig = await s.put('/api/user/self').send({ password: 'newpassword1' });
    expect(noOrig.body).toMatchObject({ success: false, message: '原密码错误' });
    const short = await s.put('/api/user/self').send({ password: 'short', original_password: u.password });
    expect(short.body).toMatchObject({ success: false, message: 'Password length must not be less than 8 characters!' });
    const changed = await s.put('/api/user/self').send({ password: 'newpassword1', original_password: u.password });
    expect(changed.body.success).toBe(true);
    expect((await app().http().post('/api/user/login').send({ username: u.username, password: 'newpassword1' })).body.success).toBe(true);
    expect((await app().http().post('/api/user/login').send({ username: u.username, password: u.password })).body.success).toBe(false);
  });

  it('deletes the own account softly and ends the session; root cannot delete itself', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    expect((await s.del('/api/user/self')).body.data).toMatchObject({ verification_required: true });
    expect((await s.post('/api/verify').send({ method: 'password', password: u.password })).body.success).toBe(true);
    const del = await s.del('/api/user/self');
    expect(del.body).toMatchObject({ success: true });
    const row = await app().knex('users').where({ id: u.id }).first();
    expect(row.deleted_at).not.toBeNull();
    expect((await s.get('/api/user/self')).status).toBe(401);
    expect((await app().http().post('/api/user/login').send({ username: u.username, password: u.password })).body.success).toBe(false);

    const r = await loginAgent(app(), root.username, root.password);
    await r.post('/api/verify').send({ method: 'password', password: root.password });
    const rootDel = await r.del('/api/user/self');
    expect(rootDel.body.success).toBe(false);
    expect((await app().knex('users').where({ id: root.id }).first()).deleted_at).toBeNull();
  });

  it('stores notification settings, requiring an HTTPS webhook', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    const http = await s.put('/api/user/setting').send({ notify_type: 'webhook', quota_warning_threshold: 100000, webhook_url: 'http://hook.example.com/x' });
    expect(http.body).toMatchObject({ success: false, message: 'Webhook地址必须使用HTTPS' });
    const badType = await s.put('/api/user/setting').send({ notify_type: 'sms', quota_warning_threshold: 100000 });
    expect(badType.body.success).toBe(false);
    const badThreshold = await s.put('/api/user/setting').send({ notify_type: 'email', quota_warning_threshold: 0 });
    expect(badThreshold.body.success).toBe(false);
    expect((await app().knex('users').where({ id: u.id }).first()).setting).toBe('');

    const good = await s.put('/api/user/setting').send({
      notify_type: 'webhook',
      quota_warning_threshold: 500000,
      webhook_url: 'https://hook.example.com/x',
      webhook_secret: 'whsec',
      notification_email: '',
      accept_unset_model_ratio_model: true,
    });
    expect(good.body.success).toBe(true);
    const stored = JSON.parse((await app().knex('users').where({ id: u.id }).first()).setting);
    expect(stored).toEqual({
      notify_type: 'webhook',
      quota_warning_threshold: 500000,
      webhook_url: 'https://hook.example.com/x',
      webhook_secret: 'whsec',
      notification_email: '',
      accept_unset_model_ratio_model: true,
    });
    expect(JSON.parse((await s.get('/api/user/self')).body.data.setting).webhook_url).toBe('https://hook.example.com/x');
  });

  it('lists usable groups with ratios and the models of the own group', async () => {
    const u = await makeUser(app(), { group: 'vip' });
    await app()
      .knex('abilities')
      .insert([
        { group: 'vip', model: 'gpt-4o', channel_id: 1, enabled: true },
        { group: 'vip', model: 'gpt-4o', channel_id: 2, enabled: true },
        { group: 'vip', model: 'claude-x', channel_id: 1, enabled: false },
        { group: 'default', model: 'gpt-3.5-turbo', channel_id: 1, enabled: true },
      ]);
    const s = await loginAgent(app(), u.username, u.password);
    expect((await s.get('/api/user/models')).body.data).toEqual(['gpt-4o']);
    const groups = (await s.get('/api/user/self/groups')).body.data;
    expect(groups.default).toEqual({ desc: '默认分组', ratio: 1 });
    expect(groups.vip).toMatchObject({ ratio: 1 });
    const models = await s.get('/api/models');
    expect(models.body.data['1']).toContain('gpt-4o');
    expect(models.body.data['14'].some((m: string) => m.startsWith('claude'))).toBe(true);
    expect((await s.get('/api/group/')).status).toBe(403);
    const r = await loginAgent(app(), root.username, root.password);
    expect((await r.get('/api/group/')).body.data).toEqual(expect.arrayContaining(['default', 'vip']));
  });
});

describeEach(DB_TARGETS, 'invitation transfer', (app) => {
  beforeAll(async () => {
    await setupRoot(app());
  });

  it('refuses below the minimum and beyond the earnings', async () => {
    const u = await makeUser(app());
    await app().knex('users').where({ id: u.id }).update({ aff_quota: 600000 });
    const s = await loginAgent(app(), u.username, u.password);
    const small = await s.post('/api/user/aff_transfer').send({ quota: 499999 });
    expect(small.body).toMatchObject({ success: false, message: 'Minimum transfer amount is $1.00' });
    const much = await s.post('/api/user/aff_transfer').send({ quota: 700000 });
    expect(much.body.success).toBe(false);
    const ok = await s.post('/api/user/aff_transfer').send({ quota: 500000 });
    expect(ok.body.success).toBe(true);
    const row = await app().knex('users').where({ id: u.id }).first();
    expect(Number(row.aff_quota)).toBe(100000);
    expect(Number(row.quota)).toBe(500000);
  });

  it('never overspends under concurrent transfers', async () => {
    const u = await makeUser(app());
    await app().knex('users').where({ id: u.id }).update({ aff_quota: 1_500_000, quota: 0 });
    const s = await loginAgent(app(), u.username, u.password);
    const results = await Promise.all(Array.from({ length: 8 }, () => s.post('/api/user/aff_transfer').send({ quota: 500000 })));
    expect(results.filter((r) => r.body.success).length).toBe(3);
    const row = await app().knex('users').where({ id: u.id }).first();
    expect(Number(row.aff_quota)).toBe(0);
    expect(Number(row.quota)).toBe(1_500_000);
  });
});
