import { generateSync } from 'otplib';
import type request from 'supertest';
import { ALL_TARGETS, buildApp, loginAgent, makeUser, setupRoot, type LoggedIn, type Target, type TestApp } from '../helpers/app';
import { SoftAuthenticator } from '../helpers/webauthn';

/**
 * Passkeys (WebAuthn) verified for real against credentials of a software authenticator (P-256 key
 * pairs, `none` attestation, ES256 assertions), challenges single-use and expiring, and the
 * two-node case: a challenge made on one node is verified on the other, once (docs/security.md).
 */

const ORIGIN = 'https://gateway.example.com';
const RP_ID = 'gateway.example.com';

function cookieOf(res: request.Response): string {
  return ([] as string[])
    .concat(res.headers['set-cookie'] ?? [])
    .map((c) => c.split(';')[0]!)
    .filter((c) => !/^[^=]+=$/.test(c))
    .join('; ');
}

function describeApp(title: string, fn: (app: () => TestApp, target: Target) => void) {
  describe.each(ALL_TARGETS.map((t) => [t.name, t] as const))(`${title} [%s]`, (_n, target: Target) => {
    let a: TestApp | undefined;
    beforeAll(async () => {
      a = await buildApp(target, { config: { loginLimit: { perAccount: 5, perIp: 10_000, windowSeconds: 900 } } });
      await a.ctx.options.set('ServerAddress', ORIGIN);
    });
    afterAll(async () => {
      await a?.close();
    });
    fn(() => a!, target);
  });
}

/** Re-verifies with the password, then registers a passkey of `auth` under `name`. */
async function register(s: LoggedIn, auth: SoftAuthenticator, name: string, password?: string) {
  if (password) expect((await s.post('/api/verify').send({ method: 'password', password })).body.success).toBe(true);
  const begin = await s.post('/api/user/passkey/register/begin');
  expect(begin.body.success).toBe(true);
  const credential = auth.create(begin.body.data.options, ORIGIN);
  const fin = await s.post('/api/user/passkey/register/finish').send({ name, credential });
  return { begin, credential, fin };
}

/** A passkey login from a fresh browser: begin, sign, finish. */
async function passkeyLogin(app: TestApp, auth: SoftAuthenticator) {
  const agent = app.http();
  const begin = await agent.post('/api/user/passkey/login/begin');
  expect(begin.body.success).toBe(true);
  const assertion = auth.get(begin.body.data.options, ORIGIN);
  const fin = await agent.post('/api/user/passkey/login/finish').send({ credential: assertion });
  return { agent, begin, assertion, fin };
}

describeApp('passkeys', (app, target) => {
  beforeAll(async () => {
    await setupRoot(app());
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('registers several named passkeys after a re-verification; the RP is ServerAddress', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    const auth = new SoftAuthenticator();
    // Adding a way to log in is a sensitive change.
    expect((await s.post('/api/user/passkey/register/begin')).body).toMatchObject({
      success: false,
      data: { verification_required: true, methods: ['password'] },
    });
    const first = await register(s, auth, 'Laptop', u.password);
    const opts = first.begin.body.data.options;
    expect(opts.rp).toMatchObject({ id: RP_ID, name: 'AI Gateway' });
    expect(opts.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
    expect(opts.attestation).toBe('none');
    expect(opts.excludeCredentials).toEqual([]);
    expect(first.fin.body).toMatchObject({ success: true, data: { name: 'Laptop' } });
    const second = await register(s, auth, 'Phone');
    expect(second.begin.body.data.options.excludeCredentials.map((c: { id: string }) => c.id)).toEqual([first.credential.id]);
    // One user handle per user.
    expect(second.begin.body.data.options.user.id).toBe(opts.user.id);
    expect(second.fin.body.success).toBe(true);
    const list = (await s.get('/api/user/passkey')).body.data;
    expect(list).toMatchObject({ enabled: true, available: true });
    expect(list.items.map((p: { name: string }) => p.name)).toEqual(['Laptop', 'Phone']);
    expect(JSON.stringify(list)).not.toContain('public_key');
    const stored = await app().knex('user_passkeys').where({ user_id: u.id }).orderBy('id');
    expect(stored.map((r: { credential_id: string }) => r.credential_id)).toEqual([first.credential.id, second.credential.id]);
    // Now the account re-verifies with a passkey, not the password.
    expect((await s.get('/api/verify')).body.data.methods).toEqual(['passkey']);
  });

  it('refused registrations change nothing: wrong origin, wrong RP, no user verification, a used or foreign challenge, a bad name', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    expect((await s.post('/api/verify').send({ method: 'password', password: u.password })).body.success).toBe(true);
    const auth = new SoftAuthenticator();
    const attempt = async (make: (opts: Parameters<SoftAuthenticator['create']>[0]) => unknown, name = 'Key') => {
      const begin = await s.post('/api/user/passkey/register/begin');
      return s.post('/api/user/passkey/register/finish').send({ name, credential: make(begin.body.data.options) });
    };
    expect((await attempt((o) => auth.create(o, 'https://evil.example.com'))).body.message).toMatch(/^Passkey 验证失败/);
    expect((await attempt((o) => auth.create({ ...o, rp: { ...o.rp, id: 'evil.example.com' } }, ORIGIN))).body.message).toMatch(/^Passkey 验证失败/);
    expect((await attempt((o) => auth.create(o, ORIGIN, { uv: false }))).body.message).toMatch(/^Passkey 验证失败/);
    expect((await attempt((o) => auth.create(o, ORIGIN), '   ')).body.message).toBe('Passkey 名称不能为空，且不能超过 64 个字符');
    // A response to a challenge that was never issued, or one issued to another session.
    expect((await attempt((o) => auth.create({ ...o, challenge: 'bm90LWlzc3VlZA' }, ORIGIN))).body.message).toBe('Passkey 验证已过期或已使用，请重试');
    const other = await loginAgent(app(), u.username, u.password);
    const foreign = await other.post('/api/user/passkey/register/begin');
    // (the other session is not re-verified: it gets no options at all)
    expect(foreign.body.data).toMatchObject({ verification_required: true });
    const mine = await s.post('/api/user/passkey/register/begin');
    const cred = auth.create(mine.body.data.options, ORIGIN);
    expect((await other.post('/api/user/passkey/register/finish').send({ name: 'X', credential: cred })).body.message).toBe(
      'Passkey 验证已过期或已使用，请重试',
    );
    expect(await app().knex('user_passkeys').where({ user_id: u.id })).toHaveLength(0);
    // The challenge was taken by that refused attempt: the right browser cannot reuse it either.
    expect((await s.post('/api/user/passkey/register/finish').send({ name: 'X', credential: cred })).body.message).toBe('Passkey 验证已过期或已使用，请重试');
    // A good one, then the same response again: one use.
    const ok = await attempt((o) => auth.create(o, ORIGIN));
    expect(ok.body.success).toBe(true);
    expect(await app().knex('user_passkeys').where({ user_id: u.id })).toHaveLength(1);
  });

  it('challenges expire after 5 minutes', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    expect((await s.post('/api/verify').send({ method: 'password', password: u.password })).body.success).toBe(true);
    const begin = await s.post('/api/user/passkey/register/begin');
    const challenge = begin.body.data.options.challenge as string;
    const ttl = await app().ctx.kv.ttl(`webauthn:challenge:${challenge}`);
    expect(ttl).toBeGreaterThan(290);
    expect(ttl).toBeLessThanOrEqual(300);
    if (target.redis) {
      // Redis expires the key itself: shown by its TTL above.
      return;
    }
    const real = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(real + 301_000);
    const cred = new SoftAuthenticator().create(begin.body.data.options, ORIGIN);
    expect((await s.post('/api/user/passkey/register/finish').send({ name: 'Late', credential: cred })).body.message).toBe(
      'Passkey 验证已过期或已使用，请重试',
    );
    jest.restoreAllMocks();
    expect(await app().knex('user_passkeys').where({ user_id: u.id })).toHaveLength(0);
  });

  it('logs in with a discoverable passkey (no username); replays, unknown keys, forged signatures and disabled users are refused', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    const auth = new SoftAuthenticator();
    await register(s, auth, 'Laptop', u.password);
    const { agent, begin, assertion, fin } = await passkeyLogin(app(), auth);
    expect(begin.body.data.options).toMatchObject({ rpId: RP_ID, userVerification: 'required' });
    expect(begin.body.data.options.allowCredentials ?? []).toEqual([]);
    expect(fin.body).toMatchObject({ success: true, data: { id: u.id, username: u.username } });
    expect(fin.body.data).not.toHaveProperty('password');
    expect((await agent.get('/api/user/self').set('New-Api-User', String(u.id))).body.success).toBe(true);
    const row = await app().knex('user_passkeys').where({ user_id: u.id }).first();
    expect(Number(row.counter)).toBe(1);
    expect(row.last_used_at).not.toBeNull();
    // The same assertion again (its challenge is used): refused.
    const again = app().http();
    await again.post('/api/user/passkey/login/begin');
    expect((await again.post('/api/user/passkey/login/finish').send({ credential: assertion })).body).toMatchObject({
      success: false,
      message: 'Passkey 验证已过期或已使用，请重试',
    });
    // An assertion for a fresh challenge but an old counter (a cloned key): refused.
    const clone = app().http();
    const cb = await clone.post('/api/user/passkey/login/begin');
    auth.credentials[0]!.counter = 0;
    const stale = auth.get(cb.body.data.options, ORIGIN);
    expect((await clone.post('/api/user/passkey/login/finish').send({ credential: stale })).body.success).toBe(false);
    auth.credentials[0]!.counter = 5;
    // A key the server does not know.
    const stranger = new SoftAuthenticator();
    stranger.create(
      { rp: { id: RP_ID, name: 'x' }, user: { id: 'c3RyYW5nZXI', name: 'x', displayName: 'x' }, challenge: 'eA', pubKeyCredParams: [] } as never,
      ORIGIN,
    );
    expect((await passkeyLogin(app(), stranger)).fin.body).toMatchObject({ success: false, message: '未找到该 Passkey，请使用已注册的 Passkey' });
    // A forged signature: the challenge is signed by another key under this credential's id.
    const forger = new SoftAuthenticator();
    forger.create(
      {
        rp: { id: RP_ID, name: 'x' },
        user: { id: auth.credentials[0]!.userHandle, name: 'x', displayName: 'x' },
        challenge: 'eA',
        pubKeyCredParams: [],
      } as never,
      ORIGIN,
    );
    forger.credentials[0]!.id = auth.credentials[0]!.id;
    const forged = await passkeyLogin(app(), forger);
    expect(forged.fin.body.success).toBe(false);
    expect((await forged.agent.get('/api/user/self').set('New-Api-User', String(u.id))).status).toBe(401);
    // A disabled user cannot log in with a passkey.
    await app().knex('users').where({ id: u.id }).update({ status: 2 });
    expect((await passkeyLogin(app(), auth)).fin.body).toMatchObject({ success: false, message: '用户已被封禁' });
    await app().knex('users').where({ id: u.id }).update({ status: 1 });
    expect((await passkeyLogin(app(), auth)).fin.body.success).toBe(true);
  });

  it('the login finish needs the challenge of the same browser', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    const auth = new SoftAuthenticator();
    await register(s, auth, 'Laptop', u.password);
    const a = app().http();
    const begin = await a.post('/api/user/passkey/login/begin');
    const assertion = auth.get(begin.body.data.options, ORIGIN);
    const b = app().http();
    await b.post('/api/user/passkey/login/begin');
    expect((await b.post('/api/user/passkey/login/finish').send({ credential: assertion })).body.success).toBe(false);
    expect((await b.get('/api/user/self').set('New-Api-User', String(u.id))).status).toBe(401);
  });

  it('re-verifies with a passkey; renames and deletes (re-verified); admins reset users below them', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    const auth = new SoftAuthenticator();
    await register(s, auth, 'Laptop', u.password);
    // Another session of the same user: not verified; a passkey assertion verifies it.
    const other = await loginAgent(app(), u.username, u.password);
    expect((await other.get('/api/user/token')).body.data).toMatchObject({ verification_required: true, methods: ['passkey'] });
    expect((await other.post('/api/verify').send({ method: 'password', password: u.password })).body.message).toBe('该验证方式不可用');
    const vb = await other.post('/api/user/passkey/verify/begin');
    expect(vb.body.data.options.allowCredentials.map((c: { id: string }) => c.id)).toEqual([auth.credentials[0]!.id]);
    const bad = auth.get(vb.body.data.options, 'https://evil.example.com');
    expect((await other.post('/api/user/passkey/verify/finish').send({ credential: bad })).body.success).toBe(false);
    expect((await other.get('/api/verify')).body.data.verified).toBe(false);
    const vb2 = await other.post('/api/user/passkey/verify/begin');
    const v = await other.post('/api/user/passkey/verify/finish').send({ credential: auth.get(vb2.body.data.options, ORIGIN) });
    expect(v.body).toMatchObject({ success: true, data: { method: 'passkey' } });
    expect((await other.get('/api/user/token')).body.data).toMatch(/^[A-Za-z0-9]{32}$/);

    const id = (await other.get('/api/user/passkey')).body.data.items[0].id as number;
    expect((await other.put(`/api/user/passkey/${id}`).send({ name: 'Work laptop' })).body.success).toBe(true);
    expect((await other.put(`/api/user/passkey/${id}`).send({ name: 'x'.repeat(65) })).body.success).toBe(false);
    expect((await other.get('/api/user/passkey')).body.data.items[0].name).toBe('Work laptop');
    // Somebody else's passkey id: not found, nothing deleted.
    const stranger = await makeUser(app());
    const st = await loginAgent(app(), stranger.username, stranger.password);
    expect((await st.post('/api/verify').send({ method: 'password', password: stranger.password })).body.success).toBe(true);
    expect((await st.del(`/api/user/passkey/${id}`)).body).toMatchObject({ success: false, message: 'Passkey 不存在' });
    // A session that has not re-verified cannot delete it.
    const third = await loginAgent(app(), u.username, u.password);
    expect((await third.del(`/api/user/passkey/${id}`)).body.data).toMatchObject({ verification_required: true });
    expect(await app().knex('user_passkeys').where({ id })).toHaveLength(1);

    // Admin reset (below them only).
    const admin = await makeUser(app(), { role: 10 });
    const a = await loginAgent(app(), admin.username, admin.password);
    expect((await a.get('/api/user/?p=1&page_size=100')).body.data.items.find((x: { id: number }) => x.id === u.id)).toMatchObject({ passkey_count: 1 });
    const peer = await makeUser(app(), { role: 10 });
    expect((await a.del(`/api/user/${peer.id}/reset_passkey`)).body.success).toBe(false);
    expect((await a.del(`/api/user/${u.id}/reset_passkey`)).body).toMatchObject({ success: true, message: 'Passkey 已重置' });
    expect(await app().knex('user_passkeys').where({ user_id: u.id })).toHaveLength(0);
    expect((await passkeyLogin(app(), auth)).fin.body.success).toBe(false);
  });

  it('with 2FA and a passkey either re-verifies; a passkey login skips the TOTP step', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    expect((await s.post('/api/verify').send({ method: 'password', password: u.password })).body.success).toBe(true);
    const setup = await s.post('/api/user/2fa/setup');
    const secret = setup.body.data.secret as string;
    expect((await s.post('/api/user/2fa/enable').send({ code: generateSync({ secret }) })).body.success).toBe(true);
    const auth = new SoftAuthenticator();
    expect((await register(s, auth, 'Laptop')).fin.body.success).toBe(true);
    expect((await s.get('/api/verify')).body.data.methods).toEqual(['2fa', 'passkey']);
    // The passkey (user-verified) is the whole login.
    expect((await passkeyLogin(app(), auth)).fin.body.success).toBe(true);
  });

  it('without ServerAddress (or with the switch off) passkeys are off and say why', async () => {
    const u = await makeUser(app());
    const s = await loginAgent(app(), u.username, u.password);
    await app().ctx.options.set('ServerAddress', '');
    try {
      expect((await app().http().post('/api/user/passkey/login/begin')).body).toMatchObject({
        success: false,
        message: '管理员未设置服务器地址 (ServerAddress)，无法使用 Passkey',
      });
      expect((await app().http().get('/api/status')).body.data.passkey_login).toBe(false);
      expect((await s.post('/api/verify').send({ method: 'password', password: u.password })).body.success).toBe(true);
      expect((await s.post('/api/user/passkey/register/begin')).body.success).toBe(false);
    } finally {
      await app().ctx.options.set('ServerAddress', ORIGIN);
    }
    await app().ctx.options.set('PasskeyLoginEnabled', 'false');
    try {
      expect((await app().http().post('/api/user/passkey/login/begin')).body).toMatchObject({ success: false, message: '管理员未启用 Passkey 登录' });
    } finally {
      await app().ctx.options.set('PasskeyLoginEnabled', 'true');
    }
    expect((await app().http().get('/api/status')).body.data.passkey_login).toBe(true);
  });
});

/** Two nodes sharing PostgreSQL and Redis: what one issues, the other honours, once. */
const SHARED: Target[] = ALL_TARGETS.filter((t) => t.db === 'postgres' && t.redis);
if (SHARED.length) {
  describe.each(SHARED.map((t) => [t.name, t] as const))('passkeys and 2FA across two nodes [%s]', (_n, target) => {
    let node1: TestApp;
    let node2: TestApp;
    beforeAll(async () => {
      node1 = await buildApp(target);
      node2 = await buildApp(target, { shareWith: node1 });
      await setupRoot(node1);
      await node1.ctx.options.set('ServerAddress', ORIGIN);
      // The option reaches node 2 through the pub/sub reload.
      for (let i = 0; i < 50 && node2.ctx.options.get('ServerAddress') !== ORIGIN; i++) await new Promise((r) => setTimeout(r, 50));
      expect(node2.ctx.options.get('ServerAddress')).toBe(ORIGIN);
    });
    afterAll(async () => {
      await node2?.close();
      await node1?.close();
    });

    it('a challenge made on node 1 is verified on node 2, once; a re-verification on one node counts on the other', async () => {
      const u = await makeUser(node1);
      const s = await loginAgent(node1, u.username, u.password);
      const auth = new SoftAuthenticator();
      // Re-verified on node 1, registration begun on node 2 and finished on node 1.
      expect((await s.post('/api/verify').send({ method: 'password', password: u.password })).body.success).toBe(true);
      const cookie = s.agent.jar
        .getCookies({ domain: '127.0.0.1', path: '/', secure: false, script: false })
        .map((c) => `${c.name}=${c.value}`)
        .join('; ');
      const on = (node: TestApp) => ({
        post: (url: string) => node.http().post(url).set('Cookie', cookie).set('New-Api-User', String(u.id)),
      });
      const begin = await on(node2).post('/api/user/passkey/register/begin');
      expect(begin.body.success).toBe(true);
      const fin = await on(node1)
        .post('/api/user/passkey/register/finish')
        .send({ name: 'Laptop', credential: auth.create(begin.body.data.options, ORIGIN) });
      expect(fin.body.success).toBe(true);

      // Login begun on node 1, finished on node 2; the same response again on node 1 is refused.
      const lb = await node1.http().post('/api/user/passkey/login/begin');
      const loginCookie = cookieOf(lb);
      const assertion = auth.get(lb.body.data.options, ORIGIN);
      const done = await node2.http().post('/api/user/passkey/login/finish').set('Cookie', loginCookie).send({ credential: assertion });
      expect(done.body).toMatchObject({ success: true, data: { id: u.id } });
      const replay = await node1.http().post('/api/user/passkey/login/finish').set('Cookie', loginCookie).send({ credential: assertion });
      expect(replay.body).toMatchObject({ success: false, message: 'Passkey 验证已过期或已使用，请重试' });
    });

    it('a 2FA login started on node 1 finishes on node 2; the code cannot be replayed on node 1', async () => {
      const u = await makeUser(node1);
      const s = await loginAgent(node1, u.username, u.password);
      expect((await s.post('/api/verify').send({ method: 'password', password: u.password })).body.success).toBe(true);
      const secret = (await s.post('/api/user/2fa/setup')).body.data.secret as string;
      expect((await s.post('/api/user/2fa/enable').send({ code: generateSync({ secret }) })).body.success).toBe(true);
      const step1 = await node1.http().post('/api/user/login').send({ username: u.username, password: u.password });
      expect(step1.body.data).toEqual({ require_2fa: true });
      const code = generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
      const fin = await node2.http().post('/api/user/login/2fa').set('Cookie', cookieOf(step1)).send({ code });
      expect(fin.body).toMatchObject({ success: true, data: { id: u.id } });
      const other = await node2.http().post('/api/user/login').send({ username: u.username, password: u.password });
      expect((await node1.http().post('/api/user/login/2fa').set('Cookie', cookieOf(other)).send({ code })).body.success).toBe(false);
    });
  });
}
