import { generateSync } from 'otplib';
import type request from 'supertest';
import { ALL_TARGETS, buildApp, loginAgent, makeUser, setupRoot, type LoggedIn, type Target, type TestApp } from '../helpers/app';

/**
 * Two-factor login (TOTP + backup codes), the re-verification window, and what admins see and may
 * reset (docs/security.md, "Two-factor login, passkeys, re-verification"). Every target: SQLite,
 * PostgreSQL, PostgreSQL + Redis.
 */

const now = () => Math.floor(Date.now() / 1000);
/** The code an authenticator app shows `offset` seconds from now. */
const totp = (secret: string, offset = 0) => generateSync({ secret, epoch: now() + offset });

function cookieOf(res: request.Response): string {
  return ([] as string[])
    .concat(res.headers['set-cookie'] ?? [])
    .map((c) => c.split(';')[0]!)
    .filter((c) => !/^[^=]+=$/.test(c))
    .join('; ');
}

/** Builds one app per target with a lockout that counts per account only (the suite runs from one IP). */
function describeApp(title: string, fn: (app: () => TestApp) => void) {
  describe.each(ALL_TARGETS.map((t) => [t.name, t] as const))(`${title} [%s]`, (_n, target: Target) => {
    let a: TestApp | undefined;
    beforeAll(async () => {
      a = await buildApp(target, { config: { loginLimit: { perAccount: 5, perIp: 10_000, windowSeconds: 900 } } });
    });
    afterAll(async () => {
      await a?.close();
    });
    fn(() => a!);
  });
}

/** Enrols 2FA for a logged-in user: re-verify with the password, set up, confirm. */
async function enrol(s: LoggedIn, password: string): Promise<{ secret: string; backup: string[] }> {
  expect((await s.post('/api/verify').send({ method: 'password', password })).body.success).toBe(true);
  const setup = await s.post('/api/user/2fa/setup');
  expect(setup.body.success).toBe(true);
  const secret = setup.body.data.secret as string;
  const en = await s.post('/api/user/2fa/enable').send({ code: totp(secret) });
  expect(en.body).toMatchObject({ success: true });
  return { secret, backup: en.body.data.backup_codes as string[] };
}

/** First login step (password) from a fresh client; answers the client to finish with. */
async function passwordStep(app: TestApp, username: string, password: string) {
  const agent = app.http();
  const res = await agent.post('/api/user/login').send({ username, password });
  return { agent, res };
}

describeApp('two-factor enrolment', (app) => {
  beforeAll(async () => {
    await setupRoot(app());
  });

  it('enrols with a QR code and the secret, confirms with a code and answers ten single-use backup codes', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    // Setting up is a sensitive change: a fresh password check first.
    const refused = await s.post('/api/user/2fa/setup');
    expect(refused.body).toMatchObject({ success: false, data: { verification_required: true, methods: ['password'] } });
    expect(await app().knex('user_two_factor').where({ user_id: u.id }).first()).toBeUndefined();
    expect((await s.post('/api/verify').send({ method: 'password', password: 'wrong-password' })).body).toMatchObject({ success: false, message: '密码错误' });
    expect((await s.post('/api/verify').send({ method: 'password', password: u.password })).body.success).toBe(true);
    const setup = await s.post('/api/user/2fa/setup');
    expect(setup.body.success).toBe(true);
    const { secret, qr_code_data: uri, qr_code: qr } = setup.body.data;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(uri).toBe(
      `otpauth://totp/${encodeURIComponent('AI Gateway')}:${u.username}?secret=${secret}&issuer=${encodeURIComponent('AI Gateway')}`.replace(/%20/g, '%20'),
    );
    expect(qr).toMatch(/^data:image\/png;base64,/);
    // Pending until confirmed: login does not ask for a code yet.
    expect((await s.get('/api/user/2fa/status')).body.data).toMatchObject({ enabled: false, pending: true });
    expect((await passwordStep(app(), u.username, u.password)).res.body.data).not.toHaveProperty('require_2fa');
    // A wrong code changes nothing.
    const bad = await s.post('/api/user/2fa/enable').send({ code: String((Number(totp(secret)) + 1) % 1_000_000).padStart(6, '0') });
    expect(bad.body).toMatchObject({ success: false, message: '验证码或备用码错误，请重试' });
    expect((await app().knex('user_two_factor').where({ user_id: u.id }).first()).enabled).toBeFalsy();
    const en = await s.post('/api/user/2fa/enable').send({ code: totp(secret) });
    expect(en.body.success).toBe(true);
    const codes = en.body.data.backup_codes as string[];
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[A-Z2-9]{5}-[A-Z2-9]{5}$/);
    // Stored hashed only.
    const stored = await app().knex('user_backup_codes').where({ user_id: u.id });
    expect(stored).toHaveLength(10);
    expect(JSON.stringify(stored)).not.toContain(codes[0]!.replace('-', ''));
    expect((await s.get('/api/user/2fa/status')).body.data).toMatchObject({ enabled: true, backup_codes_remaining: 10 });
    // Set up again while on: refused.
    expect((await s.post('/api/user/2fa/setup')).body).toMatchObject({ success: false, message: '用户已启用两步验证，请先禁用后重新设置' });
  });

  it('login asks for the code after the password; a replayed code is refused within its window; backup codes work once', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    const { secret, backup } = await enrol(s, u.password);

    const first = await passwordStep(app(), u.username, u.password);
    expect(first.res.body).toMatchObject({ success: true, data: { require_2fa: true } });
    // No session before the second step.
    expect((await first.agent.get('/api/user/self').set('New-Api-User', String(u.id))).status).toBe(401);
    expect((await first.agent.post('/api/user/login/2fa').send({ code: '000000' })).body).toMatchObject({
      success: false,
      message: '验证码或备用码错误，请重试',
    });
    // The enrolment used the current step; the authenticator's next code works.
    const next = totp(secret, 30);
    const done = await first.agent.post('/api/user/login/2fa').send({ code: next });
    expect(done.body).toMatchObject({ success: true, data: { id: u.id } });
    expect((await first.agent.get('/api/user/self').set('New-Api-User', String(u.id))).body.success).toBe(true);
    // The pending login is used up.
    expect((await first.agent.post('/api/user/login/2fa').send({ code: next })).body).toMatchObject({ success: false, message: '登录会话已过期，请重新登录' });

    // The same code again, still inside its window, from another browser: refused.
    const replay = await passwordStep(app(), u.username, u.password);
    expect((await replay.agent.post('/api/user/login/2fa').send({ code: next })).body).toMatchObject({ success: false });
    expect((await replay.agent.get('/api/user/self').set('New-Api-User', String(u.id))).status).toBe(401);
    // An earlier code (a step already passed) is refused too.
    expect((await replay.agent.post('/api/user/login/2fa').send({ code: totp(secret) })).body.success).toBe(false);

    // A backup code (any case, with or without the dash) logs in once.
    const bc = backup[0]!;
    expect((await replay.agent.post('/api/user/login/2fa').send({ code: bc.toLowerCase().replace('-', '') })).body.success).toBe(true);
    const again = await passwordStep(app(), u.username, u.password);
    expect((await again.agent.post('/api/user/login/2fa').send({ code: bc })).body.success).toBe(false);
    expect((await s.get('/api/user/2fa/status')).body.data.backup_codes_remaining).toBe(9);
  });

  it('the second step cannot be started without the password step of the same browser', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    const { secret } = await enrol(s, u.password);
    const step1 = await passwordStep(app(), u.username, u.password);
    expect(step1.res.body.data.require_2fa).toBe(true);
    // Another browser (no pending cookie) with a right code: refused, no session.
    const other = app().http();
    const res = await other.post('/api/user/login/2fa').send({ code: totp(secret, 30) });
    expect(res.body).toMatchObject({ success: false, message: '登录会话已过期，请重新登录' });
    // A copy of the pending cookie works once only, on whichever finishes first.
    const cookie = cookieOf(step1.res);
    const a = await app()
      .http()
      .post('/api/user/login/2fa')
      .set('Cookie', cookie)
      .send({ code: totp(secret, 30) });
    expect(a.body.success).toBe(true);
    const b = await app()
      .http()
      .post('/api/user/login/2fa')
      .set('Cookie', cookie)
      .send({ code: totp(secret, -30) });
    expect(b.body.success).toBe(false);
  });

  it('the lockout counts wrong codes after a right password: the right code is refused once locked', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    const { secret } = await enrol(s, u.password);
    const step = await passwordStep(app(), u.username, u.password); // 1 slot (kept until the code passes)
    for (let i = 0; i < 4; i++) expect((await step.agent.post('/api/user/login/2fa').send({ code: '111111' })).body.success).toBe(false); // 5 slots
    const locked = await step.agent.post('/api/user/login/2fa').send({ code: totp(secret, 30) });
    expect(locked.status).toBe(429);
    expect((await step.agent.get('/api/user/self').set('New-Api-User', String(u.id))).status).toBe(401);
    // Logging in again with the password does not reset the count.
    const again = await passwordStep(app(), u.username, u.password);
    expect(again.res.status).toBe(429);
    // Unlocked (window over): the count starts again, and a full login clears it.
    await app().ctx.kv.del(`rl:loginfail:user:#${u.id}`);
    const fresh = await passwordStep(app(), u.username, u.password);
    expect((await fresh.agent.post('/api/user/login/2fa').send({ code: totp(secret, 30) })).body.success).toBe(true);
    expect(await app().ctx.kv.get(`rl:loginfail:user:#${u.id}`)).toBeNull();
  });

  it('disables with a code (a wrong one changes nothing), or after a fresh re-verification; backup codes are replaced', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    const { secret, backup } = await enrol(s, u.password);
    expect((await s.post('/api/user/2fa/disable').send({ code: '222222' })).body).toMatchObject({ success: false, message: '验证码或备用码错误，请重试' });
    expect((await app().knex('user_two_factor').where({ user_id: u.id }).first()).enabled).toBeTruthy();
    expect(await app().knex('user_backup_codes').where({ user_id: u.id }).whereNull('used_at')).toHaveLength(10);

    // New backup codes with a code: the old ones stop working.
    const regen = await s.post('/api/user/2fa/backup_codes').send({ code: totp(secret, 30) });
    expect(regen.body.success).toBe(true);
    const fresh = regen.body.data.backup_codes as string[];
    const step = await passwordStep(app(), u.username, u.password);
    expect((await step.agent.post('/api/user/login/2fa').send({ code: backup[0] })).body.success).toBe(false);
    expect((await step.agent.post('/api/user/login/2fa').send({ code: fresh[0] })).body.success).toBe(true);

    // Without a code: a fresh re-verification is needed, and with 2FA on the password is not enough.
    await app().ctx.kv.del(`rl:loginfail:user:#${u.id}`);
    const s2 = await (async () => {
      const st = await passwordStep(app(), u.username, u.password);
      await st.agent.post('/api/user/login/2fa').send({ code: fresh[1] });
      const uid = String(u.id);
      return { post: (url: string) => st.agent.post(url).set('New-Api-User', uid), get: (url: string) => st.agent.get(url).set('New-Api-User', uid) };
    })();
    expect((await s2.post('/api/user/2fa/disable').send({})).body).toMatchObject({ success: false, data: { verification_required: true, methods: ['2fa'] } });
    expect((await s2.post('/api/verify').send({ method: 'password', password: u.password })).body).toMatchObject({
      success: false,
      message: '该验证方式不可用',
    });
    expect((await s2.post('/api/verify').send({ method: '2fa', code: fresh[2] })).body.success).toBe(true);
    expect((await s2.post('/api/user/2fa/disable').send({})).body).toMatchObject({ success: true, message: '两步验证已禁用' });
    expect(await app().knex('user_two_factor').where({ user_id: u.id }).first()).toBeUndefined();
    expect(await app().knex('user_backup_codes').where({ user_id: u.id })).toHaveLength(0);
    expect((await passwordStep(app(), u.username, u.password)).res.body.data).toMatchObject({ id: u.id });
  });
});

describeApp('re-verification before sensitive actions', (app) => {
  let root: { id: number; username: string; password: string };
  beforeAll(async () => {
    root = await setupRoot(app());
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('the access token, account deletion and the channel key need a fresh verification; a refusal changes nothing', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    const before = (await app().knex('users').where({ id: u.id }).first()).access_token;
    const t = await s.get('/api/user/token');
    expect(t.body).toMatchObject({ success: false, message: '此操作需要安全验证，请先完成验证', data: { verification_required: true, methods: ['password'] } });
    expect((await app().knex('users').where({ id: u.id }).first()).access_token).toBe(before);
    const d = await s.del('/api/user/self');
    expect(d.body.data).toMatchObject({ verification_required: true });
    expect((await app().knex('users').where({ id: u.id }).first()).deleted_at).toBeNull();
    expect((await s.get('/api/verify')).body.data).toMatchObject({ verified: false, methods: ['password'], window_seconds: 300 });

    // Root: the channel key is masked everywhere; the full key needs the verification.
    const r = await loginAgent(app(), root.username, root.password);
    const ch = await r
      .post('/api/channel/')
      .send({ name: 'kv', type: 1, key: 'sk-the-real-upstream-key-123456', models: 'gpt-4o', group: 'default', base_url: 'https://api.example.com' });
    expect(ch.body.data).toMatchObject({ key: 'sk-t…3456', key_masked: true });
    const id = ch.body.data.id as number;
    expect((await r.get(`/api/channel/${id}`)).body.data.key).toBe('sk-t…3456');
    expect((await r.post(`/api/channel/${id}/key`)).body).toMatchObject({ success: false, data: { verification_required: true } });
    expect((await r.post('/api/verify').send({ method: 'password', password: root.password })).body.success).toBe(true);
    const key = await r.post(`/api/channel/${id}/key`);
    expect(key.body).toMatchObject({ success: true, data: { key: 'sk-the-real-upstream-key-123456' } });
    expect(key.headers['cache-control']).toBe('no-store');
    // An admin never reads it, verified or not.
    const admin = await makeUser(app(), { role: 10 });
    const as = await loginAgent(app(), admin.username, admin.password);
    expect((await as.post('/api/verify').send({ method: 'password', password: admin.password })).body.success).toBe(true);
    expect((await as.post(`/api/channel/${id}/key`)).status).toBe(403);

    // The verification belongs to that session only: another session of the same user is not verified.
    expect((await s.post('/api/verify').send({ method: 'password', password: u.password })).body.success).toBe(true);
    const other = await loginAgent(app(), u.username, u.password);
    expect((await other.get('/api/user/token')).body.data).toMatchObject({ verification_required: true });
    const token = await s.get('/api/user/token');
    expect(token.body.data).toMatch(/^[A-Za-z0-9]{32}$/);
    // An access-token caller verifies for that token (a script rotating its own token).
    const viaToken = (url: string) => app().http().get(url).set('Authorization', token.body.data).set('New-Api-User', String(u.id));
    expect((await viaToken('/api/user/token')).body.data).toMatchObject({ verification_required: true });
  });

  it('the window is honoured: past it the verification is asked again; root may shorten it', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    const v = await s.post('/api/verify').send({ method: 'password', password: u.password });
    expect(v.body.data.expires_at).toBeGreaterThanOrEqual(now() + 299);
    expect((await s.get('/api/user/token')).body.success).toBe(true);
    const real = Date.now();
    // 4 minutes later: still verified.
    jest.spyOn(Date, 'now').mockReturnValue(real + 240_000);
    expect((await s.get('/api/user/token')).body.success).toBe(true);
    // Root shortens the window to 2 minutes: the same proof no longer counts.
    await app().ctx.options.set('SecureVerificationWindowSeconds', '120');
    try {
      expect((await s.get('/api/user/token')).body.data).toMatchObject({ verification_required: true });
    } finally {
      await app().ctx.options.set('SecureVerificationWindowSeconds', '300');
    }
    // Past the 5 minutes: asked again.
    jest.spyOn(Date, 'now').mockReturnValue(real + 301_000);
    expect((await s.get('/api/user/token')).body.data).toMatchObject({ verification_required: true });
    expect((await s.get('/api/verify')).body.data.verified).toBe(false);
  });

  it('wrong passwords at the re-verification count toward the login lockout', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    for (let i = 0; i < 5; i++) expect((await s.post('/api/verify').send({ method: 'password', password: `nope-${i}` })).body.success).toBe(false);
    expect((await s.post('/api/verify').send({ method: 'password', password: u.password })).status).toBe(429);
    expect((await s.get('/api/verify')).body.data.verified).toBe(false);
  });
});

describeApp('2FA administration', (app) => {
  let root: { id: number; username: string; password: string };
  beforeAll(async () => {
    root = await setupRoot(app());
  });

  it('admins see who has 2FA on and reset it for users below them only', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    await enrol(s, u.password);
    const admin = await makeUser(app(), { role: 10 });
    const peer = await makeUser(app(), { role: 10 });
    const ps = await loginAgent(app(), peer.username, peer.password);
    await enrol(ps, peer.password);
    const a = await loginAgent(app(), admin.username, admin.password);
    const list = await a.get('/api/user/?p=1&page_size=100');
    const row = (id: number) => list.body.data.items.find((x: { id: number }) => x.id === id);
    expect(row(u.id)).toMatchObject({ two_fa_enabled: true, passkey_count: 0 });
    expect(row(admin.id)).toMatchObject({ two_fa_enabled: false });
    expect((await a.get('/api/user/2fa/stats')).body.data).toMatchObject({ enabled_users: 2 });
    // Not for an equal: nothing changes.
    expect((await a.del(`/api/user/${peer.id}/2fa`)).body).toMatchObject({ success: false, message: '无权操作同级或更高级用户的两步验证设置' });
    expect((await app().knex('user_two_factor').where({ user_id: peer.id }).first()).enabled).toBeTruthy();
    expect((await s.get('/api/user/self')).status).toBe(200);
    const reset = await a.del(`/api/user/${u.id}/2fa`);
    expect(reset.body).toMatchObject({ success: true });
    expect(await app().knex('user_two_factor').where({ user_id: u.id }).first()).toBeUndefined();
    // The user's sessions end; the password alone logs in again.
    expect((await s.get('/api/user/self')).status).toBe(401);
    expect((await passwordStep(app(), u.username, u.password)).res.body.data).toMatchObject({ id: u.id });
    expect((await a.del(`/api/user/${u.id}/2fa`)).body).toMatchObject({ success: false, message: '用户未启用两步验证' });
    // Root resets the admin's.
    const r = await loginAgent(app(), root.username, root.password);
    expect((await r.del(`/api/user/${peer.id}/2fa`)).body.success).toBe(true);
  });

  it('root may require 2FA for admins: admin routes wait until it is on, user routes keep working', async () => {
    const admin = await makeUser(app(), { role: 10 });
    const a = await loginAgent(app(), admin.username, admin.password);
    await app().ctx.options.set('AdminTwoFactorRequired', 'true');
    try {
      const refused = await a.get('/api/channel/?p=1&page_size=10');
      expect(refused.status).toBe(403);
      expect(refused.body.message).toBe('管理员要求管理员账户启用两步验证，请先在个人设置中启用两步验证');
      expect((await a.get('/api/user/self')).status).toBe(200);
      expect((await a.get('/api/user/2fa/status')).body.data).toMatchObject({ enabled: false, required: true });
      await enrol(a, admin.password);
      expect((await a.get('/api/channel/?p=1&page_size=10')).body.success).toBe(true);
      // Plain users are not concerned.
      const u = await makeUser(app());
      expect((await (await loginAgent(app(), u.username, u.password)).get('/api/user/2fa/status')).body.data.required).toBe(false);
    } finally {
      await app().ctx.options.set('AdminTwoFactorRequired', 'false');
    }
  });

  it('root cannot require 2FA for admins before turning it on for itself (it would lose the settings page)', async () => {
    const r = await loginAgent(app(), root.username, root.password);
    const put = (value: string) => r.put('/api/option/').send({ key: 'AdminTwoFactorRequired', value });
    expect((await put('true')).body).toMatchObject({ success: false, message: '请先在个人设置中为自己的账户启用两步验证，再要求管理员启用' });
    expect(app().ctx.options.get('AdminTwoFactorRequired')).toBe('false');
    expect((await app().knex('options').where({ key: 'AdminTwoFactorRequired' }).first())?.value ?? 'false').toBe('false');
    // Turning it off, or other options, are not concerned.
    expect((await put('false')).body.success).toBe(true);
    const { backup } = await enrol(r, root.password);
    try {
      expect((await put('true')).body.success).toBe(true);
      expect(app().ctx.options.get('AdminTwoFactorRequired')).toBe('true');
      // Root (with 2FA) keeps the admin routes.
      expect((await r.get('/api/option/')).body.success).toBe(true);
      expect((await put('false')).body.success).toBe(true);
    } finally {
      await app().ctx.options.set('AdminTwoFactorRequired', 'false');
      expect((await r.post('/api/user/2fa/disable').send({ code: backup[0] })).body.success).toBe(true);
    }
  });
});

/** A tight per-IP limit (the suite's requests all come from one IP); per account out of the way. */
describe.each(ALL_TARGETS.map((t) => [t.name, t] as const))('2FA logins and the per-IP lockout [%s]', (_n, target: Target) => {
  let a: TestApp | undefined;
  beforeAll(async () => {
    a = await buildApp(target, { config: { loginLimit: { perAccount: 100, perIp: 3, windowSeconds: 900 } } });
    await setupRoot(a);
  });
  afterAll(async () => {
    await a?.close();
  });

  it("a finished 2FA login gives back the password step's IP slot too: right logins never lock the IP out", async () => {
    const u = await makeUser(a!);
    const s = await loginAgent(a!, u.username, u.password);
    const { backup } = await enrol(s, u.password);
    // Five full logins (password, then a backup code) from the same IP with a limit of 3 attempts.
    for (let i = 0; i < 5; i++) {
      const step = await passwordStep(a!, u.username, u.password);
      expect(step.res.body).toMatchObject({ success: true, data: { require_2fa: true } });
      expect((await step.agent.post('/api/user/login/2fa').send({ code: backup[i] })).body).toMatchObject({ success: true, data: { id: u.id } });
    }
    // Wrong attempts still count: three wrong codes after a right password lock the IP.
    const step = await passwordStep(a!, u.username, u.password); // 1
    expect((await step.agent.post('/api/user/login/2fa').send({ code: '111111' })).body.success).toBe(false); // 2
    expect((await step.agent.post('/api/user/login/2fa').send({ code: '222222' })).body.success).toBe(false); // 3
    expect((await step.agent.post('/api/user/login/2fa').send({ code: backup[5] })).status).toBe(429);
  });
});
