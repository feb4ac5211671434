import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type request from 'supertest';
import { ALL_TARGETS, DB_TARGETS, KV_TARGETS, buildApp, describeEach, loginAgent, makeUser, setupRoot, type Target, type TestApp } from '../helpers/app';
import { mailLink, startSmtp, type TestSmtp } from '../helpers/smtp';
import { verifyPassword } from '../../server/src/lib/password';
import { clientIp, parseProxyTrust } from '../../server/src/relay/ip';
import { ADDRESS_MAX_FAILURES, CODE_MAX_ATTEMPTS, consumeCode, issueCode } from '../../server/src/services/verification';

// Counts bcrypt comparisons (the module's exports are not reconfigurable for jest.spyOn).
jest.mock('../../server/src/lib/password', () => {
  const actual = jest.requireActual('../../server/src/lib/password');
  return { ...actual, verifyPassword: jest.fn(actual.verifyPassword) };
});
const bcryptChecks = verifyPassword as jest.MockedFunction<typeof verifyPassword>;

/**
 * Account takeover holes: revocable sessions, login lockout races, verification-code guessing,
 * reset links from the Host header, client IPs behind proxies (docs/security.md).
 */

/** The session cookies (`session` and its signature) a response set, as a Cookie header. */
function cookieOf(res: request.Response): string {
  return ([] as string[])
    .concat(res.headers['set-cookie'] ?? [])
    .map((c) => c.split(';')[0]!)
    .filter((c) => !/^[^=]+=$/.test(c))
    .join('; ');
}

/** Logs in with a bare request and returns the cookie, to replay it like a copied cookie. */
async function loginCookie(app: TestApp, username: string, password: string): Promise<{ cookie: string; id: number }> {
  const res = await app.http().post('/api/user/login').send({ username, password });
  expect(res.body.success).toBe(true);
  return { cookie: cookieOf(res), id: res.body.data.id as number };
}

const selfWith = (app: TestApp, cookie: string, id: number) => app.http().get('/api/user/self').set('Cookie', cookie).set('New-Api-User', String(id));

/* ------------------------------------------------------------------ sessions */

describeEach(ALL_TARGETS, 'revocable sessions', (app) => {
  let root: { id: number; username: string; password: string };
  beforeAll(async () => {
    root = await setupRoot(app());
  });

  it('logout ends the session on the server: a copy of the cookie is refused afterwards', async () => {
    const u = await makeUser(app());
    const { cookie, id } = await loginCookie(app(), u.username, u.password);
    expect((await selfWith(app(), cookie, id)).body.success).toBe(true);
    expect((await app().http().get('/api/user/logout').set('Cookie', cookie)).body.success).toBe(true);
    expect((await selfWith(app(), cookie, id)).status).toBe(401);
    // Another session of the same user is untouched.
    const other = await loginCookie(app(), u.username, u.password);
    expect((await selfWith(app(), other.cookie, id)).body.success).toBe(true);
  });

  it('POST /api/user/logout_all ends every session of the user, the caller included', async () => {
    const u = await makeUser(app());
    const a = await loginCookie(app(), u.username, u.password);
    const b = await loginCookie(app(), u.username, u.password);
    const bystander = await makeUser(app());
    const c = await loginCookie(app(), bystander.username, bystander.password);
    // Needs New-Api-User like every state-changing call.
    expect((await app().http().post('/api/user/logout_all').set('Cookie', a.cookie)).status).toBe(401);
    expect((await selfWith(app(), a.cookie, a.id)).body.success).toBe(true);
    const res = await app().http().post('/api/user/logout_all').set('Cookie', a.cookie).set('New-Api-User', String(a.id));
    expect(res.body.success).toBe(true);
    expect((await selfWith(app(), a.cookie, a.id)).status).toBe(401);
    expect((await selfWith(app(), b.cookie, b.id)).status).toBe(401);
    expect((await selfWith(app(), c.cookie, c.id)).body.success).toBe(true);
  });

  it('a password change ends the other sessions; the changing session goes on under a new cookie', async () => {
    const u = await makeUser(app());
    const other = await loginCookie(app(), u.username, u.password);
    const me = await loginCookie(app(), u.username, u.password);
    const res = await app()
      .http()
      .put('/api/user/self')
      .set('Cookie', me.cookie)
      .set('New-Api-User', String(me.id))
      .send({ password: 'brandnew123', original_password: u.password });
    expect(res.body.success).toBe(true);
    const reissued = cookieOf(res);
    expect(reissued).not.toBe('');
    expect((await selfWith(app(), reissued, me.id)).body.success).toBe(true);
    expect((await selfWith(app(), me.cookie, me.id)).status).toBe(401);
    expect((await selfWith(app(), other.cookie, other.id)).status).toBe(401);
    // A display-name change ends nothing.
    const third = await loginCookie(app(), u.username, 'brandnew123');
    await app().http().put('/api/user/self').set('Cookie', reissued).set('New-Api-User', String(me.id)).send({ display_name: 'Renamed' });
    expect((await selfWith(app(), third.cookie, third.id)).body.success).toBe(true);
  });

  it('an admin password change, a disable and a delete end all sessions of the user', async () => {
    const admin = await loginAgent(app(), root.username, root.password);
    for (const change of ['password', 'disable', 'delete'] as const) {
      const u = await makeUser(app());
      const s = await loginCookie(app(), u.username, u.password);
      expect((await selfWith(app(), s.cookie, s.id)).body.success).toBe(true);
      const res =
        change === 'password'
          ? await admin.put('/api/user/').send({ id: u.id, password: 'setbyadmin1' })
          : await admin.post('/api/user/manage').send({ id: u.id, action: change });
      expect(res.body.success).toBe(true);
      if (change === 'disable') await admin.post('/api/user/manage').send({ id: u.id, action: 'enable' });
      expect((await selfWith(app(), s.cookie, s.id)).status).toBe(401);
    }
  });

  it('a password reset ends all sessions of the user', async () => {
    const u = await makeUser(app());
    const email = `r${crypto.randomBytes(3).toString('hex')}@example.com`;
    await app().knex('users').where({ id: u.id }).update({ email });
    const s = await loginCookie(app(), u.username, u.password);
    const token = await issueCode(app().ctx, 'reset', email, 'T'.repeat(32));
    expect((await app().http().post('/api/user/reset').send({ email, token })).body.success).toBe(true);
    expect((await selfWith(app(), s.cookie, s.id)).status).toBe(401);
  });

  it('a password change with the access token ends the sessions and hands the script no cookie; root changing its own password keeps its session', async () => {
    const u = await makeUser(app());
    const s = await loginCookie(app(), u.username, u.password);
    await app().http().post('/api/verify').set('Cookie', s.cookie).set('New-Api-User', String(s.id)).send({ method: 'password', password: u.password });
    const token = (await app().http().get('/api/user/token').set('Cookie', s.cookie).set('New-Api-User', String(s.id))).body.data as string;
    const res = await app()
      .http()
      .put('/api/user/self')
      .set('Authorization', token)
      .set('New-Api-User', String(u.id))
      .send({ password: 'viatoken123', original_password: u.password });
    expect(res.body.success).toBe(true);
    expect(cookieOf(res)).toBe('');
    expect((await selfWith(app(), s.cookie, s.id)).status).toBe(401);

    const r = await loginCookie(app(), root.username, root.password);
    const other = await loginCookie(app(), root.username, root.password);
    const own = await app().http().put('/api/user/').set('Cookie', r.cookie).set('New-Api-User', String(r.id)).send({ id: r.id, password: root.password });
    expect(own.body.success).toBe(true);
    expect((await selfWith(app(), cookieOf(own), r.id)).body.success).toBe(true);
    expect((await selfWith(app(), other.cookie, r.id)).status).toBe(401);
  });

  it('an expired session is refused and swept at the next login', async () => {
    const u = await makeUser(app());
    const s = await loginCookie(app(), u.username, u.password);
    await app()
      .knex('user_sessions')
      .where({ user_id: u.id })
      .update({ expires_at: Math.floor(Date.now() / 1000) - 1 });
    expect((await selfWith(app(), s.cookie, s.id)).status).toBe(401);
    await loginCookie(app(), u.username, u.password);
    const rows = await app().knex('user_sessions').where({ user_id: u.id });
    expect(rows.length).toBe(1);
    expect(Number(rows[0].expires_at)).toBeGreaterThan(Date.now() / 1000);
  });

  it('a cookie without a server-side session (forged uid, old format) is refused', async () => {
    // Same secret, any uid: what a pre-upgrade cookie looks like.
    const res = await app()
      .http()
      .get('/api/user/self')
      .set('Cookie', legacyCookie(app(), { uid: root.id }))
      .set('New-Api-User', String(root.id));
    expect(res.status).toBe(401);
  });
});

/** A koa-session cookie signed with the app's secret (as cookies were before session ids). */
function legacyCookie(app: TestApp, data: Record<string, unknown>): string {
  const value = Buffer.from(JSON.stringify({ ...data, _expire: Date.now() + 3600_000, _maxAge: 3600_000 })).toString('base64');
  const pair = `session=${value}`;
  const sig = crypto
    .createHmac('sha1', app.ctx.config.sessionSecret)
    .update(pair)
    .digest('base64')
    .replace(/\/|\+|=/g, (x) => ({ '/': '_', '+': '-', '=': '' })[x]!);
  return `${pair}; session.sig=${sig}`;
}

/** Two nodes sharing one PostgreSQL (and Redis when configured); a shared SQLite file without PostgreSQL. */
const PG_TARGETS: Target[] = ALL_TARGETS.filter((t) => t.db === 'postgres');
const SHARED_TARGETS: Target[] = PG_TARGETS.length ? PG_TARGETS : [{ name: 'sqlite-file', db: 'sqlite', redis: false }];

describe.each(SHARED_TARGETS.map((t) => [t.name, t] as const))('sessions across nodes [%s]', (_n, target) => {
  let node1: TestApp;
  let node2: TestApp;
  const file = path.join(os.tmpdir(), `sessions-${process.pid}-${crypto.randomBytes(4).toString('hex')}.db`);
  beforeAll(async () => {
    node1 = await buildApp(target, target.db === 'sqlite' ? { config: { databaseUrl: `sqlite:${file}` } } : {});
    node2 = await buildApp(target, { shareWith: node1 });
    await setupRoot(node1);
  });
  afterAll(async () => {
    await node2?.close();
    await node1?.close();
    fs.rmSync(file, { force: true });
  });

  it('logout everywhere and a password change on node 1 reject the old cookie on node 2', async () => {
    const u = await makeUser(node1);
    const a = await loginCookie(node1, u.username, u.password);
    expect((await selfWith(node2, a.cookie, a.id)).body.success).toBe(true);
    expect((await node1.http().post('/api/user/logout_all').set('Cookie', a.cookie).set('New-Api-User', String(a.id))).body.success).toBe(true);
    expect((await selfWith(node2, a.cookie, a.id)).status).toBe(401);

    const b = await loginCookie(node2, u.username, u.password);
    const c = await loginCookie(node1, u.username, u.password);
    expect((await selfWith(node2, b.cookie, b.id)).body.success).toBe(true);
    const changed = await node1
      .http()
      .put('/api/user/self')
      .set('Cookie', c.cookie)
      .set('New-Api-User', String(c.id))
      .send({ password: 'otherpass12', original_password: u.password });
    expect(changed.body.success).toBe(true);
    expect((await selfWith(node2, b.cookie, b.id)).status).toBe(401);
    expect((await selfWith(node2, cookieOf(changed), c.id)).body.success).toBe(true);

    const d = await loginCookie(node1, u.username, 'otherpass12');
    expect((await node1.http().get('/api/user/logout').set('Cookie', d.cookie)).body.success).toBe(true);
    expect((await selfWith(node2, d.cookie, d.id)).status).toBe(401);
  });
});

/* ------------------------------------------------------------------ cross-site logins */

describeEach(DB_TARGETS, 'logins started by another site', (app) => {
  it("refuses a password, WeChat or Telegram-widget login another site started (login CSRF); the console's own pass", async () => {
    const u = await makeUser(app());
    const login = (site?: string) => {
      const r = app().http().post('/api/user/login');
      return (site ? r.set('Sec-Fetch-Site', site) : r).set('Content-Type', 'text/plain').send(JSON.stringify({ username: u.username, password: u.password }));
    };
    for (const site of ['cross-site', 'same-site']) {
      const res = await login(site);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ success: false, message: '拒绝来自其他网站的登录请求' });
      expect(cookieOf(res)).toBe('');
    }
    for (const site of ['same-origin', 'none', undefined]) expect((await login(site)).body.success).toBe(true);
    expect((await app().http().get('/api/oauth/wechat?code=123456').set('Sec-Fetch-Site', 'cross-site')).status).toBe(403);
    expect((await app().http().get('/api/oauth/telegram/login?id=1&hash=x').set('Sec-Fetch-Site', 'cross-site')).status).toBe(403);
  });
});

/* ------------------------------------------------------------------ login lockout */

const LIMITED_TARGETS: Target[] = [...KV_TARGETS, ...ALL_TARGETS.filter((t) => t.db === 'postgres' && t.redis)];

describe.each(LIMITED_TARGETS.map((t) => [t.name, t] as const))('login lockout [%s]', (_n, target) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await buildApp(target, { config: { loginLimit: { perAccount: 5, perIp: 8, windowSeconds: 60 } } });
    await setupRoot(app);
  });
  afterAll(async () => {
    await app?.close();
  });

  const login = (username: string, password: string, ip?: string) => {
    const r = app.http().post('/api/user/login');
    return (ip ? r.set('X-Forwarded-For', ip) : r).send({ username, password });
  };

  it('counts before the password check: of 20 concurrent wrong guesses at most 5 reach bcrypt; the right password is refused while locked', async () => {
    const u = await makeUser(app);
    bcryptChecks.mockClear();
    const answers = await Promise.all(Array.from({ length: 20 }, () => login(u.username, 'wrong-password')));
    const wrong = answers.filter((r) => r.status === 200 && r.body.message === '用户名或密码错误，或用户已被封禁');
    const locked = answers.filter((r) => r.status === 429);
    expect(bcryptChecks.mock.calls.length).toBeLessThanOrEqual(5);
    expect(wrong.length).toBe(5);
    expect(locked.length).toBe(15);
    const right = await login(u.username, u.password);
    expect(right.status).toBe(429);
    expect(right.body.success).toBe(false);
  });

  it('a success resets the account count', async () => {
    const app2 = await buildApp(target, { config: { loginLimit: { perAccount: 3, perIp: 100, windowSeconds: 60 } } });
    try {
      const u = await makeUser(app2);
      const go = (p: string) => app2.http().post('/api/user/login').send({ username: u.username, password: p });
      for (let i = 0; i < 2; i++) expect((await go('bad-guess-1')).body.success).toBe(false);
      expect((await go(u.password)).body.success).toBe(true);
      for (let i = 0; i < 3; i++) expect((await go('bad-guess-2')).status).toBe(200);
      expect((await go('bad-guess-3')).status).toBe(429);
    } finally {
      await app2.close();
    }
  });

  it('limits one IP across accounts, also for concurrent guesses', async () => {
    const app3 = await buildApp(target, { config: { loginLimit: { perAccount: 100, perIp: 5, windowSeconds: 60 } } });
    try {
      const users = await Promise.all(Array.from({ length: 4 }, () => makeUser(app3)));
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          app3
            .http()
            .post('/api/user/login')
            .send({ username: users[i % 4]!.username, password: 'nope-nope' }),
        ),
      );
      expect(answers.filter((r) => r.status === 429).length).toBe(15);
      expect((await app3.http().post('/api/user/login').send({ username: users[0]!.username, password: users[0]!.password })).status).toBe(429);
    } finally {
      await app3.close();
    }
  });
});

/* ------------------------------------------------------------------ verification codes */

describeEach(KV_TARGETS, 'verification code guessing', (app) => {
  it(`a code dies after ${CODE_MAX_ATTEMPTS} wrong tries, even for the right code; a new code works`, async () => {
    const email = `g${crypto.randomBytes(3).toString('hex')}@example.com`;
    const code = await issueCode(app().ctx, 'email', email, '123456');
    for (let i = 0; i < CODE_MAX_ATTEMPTS; i++) expect(await consumeCode(app().ctx, 'email', email, String(200000 + i))).toBe(false);
    expect(await consumeCode(app().ctx, 'email', email, code)).toBe(false);
    const fresh = await issueCode(app().ctx, 'email', email, '654321');
    expect(await consumeCode(app().ctx, 'email', email, fresh)).toBe(true);
    expect(await consumeCode(app().ctx, 'email', email, fresh)).toBe(false);
  });

  it('concurrent guesses cannot share one slot', async () => {
    const email = `c${crypto.randomBytes(3).toString('hex')}@example.com`;
    const code = await issueCode(app().ctx, 'email', email, '111111');
    const guesses = Array.from({ length: 30 }, (_, i) => String(300000 + i));
    guesses[25] = code;
    const results = await Promise.all(guesses.map((g) => consumeCode(app().ctx, 'email', email, g)));
    expect(results.filter(Boolean).length).toBe(0);
  });

  it(`an address takes at most ${ADDRESS_MAX_FAILURES} wrong tries across new codes`, async () => {
    const email = `a${crypto.randomBytes(3).toString('hex')}@example.com`;
    let failures = 0;
    while (failures < ADDRESS_MAX_FAILURES) {
      await issueCode(app().ctx, 'email', email, '999999');
      for (let i = 0; i < CODE_MAX_ATTEMPTS - 1 && failures < ADDRESS_MAX_FAILURES; i++, failures++) {
        expect(await consumeCode(app().ctx, 'email', email, '000000')).toBe(false);
      }
    }
    const code = await issueCode(app().ctx, 'email', email, '424242');
    expect(await consumeCode(app().ctx, 'email', email, code)).toBe(false);
  });

  it('email binding through the API: after the wrong tries the right code is refused', async () => {
    await setupRoot(app()).catch(() => undefined);
    const u = await makeUser(app());
    const me = await loginAgent(app(), u.username, u.password);
    const email = `b${crypto.randomBytes(3).toString('hex')}@example.com`;
    const code = await issueCode(app().ctx, 'email', email, '777777');
    for (let i = 0; i < CODE_MAX_ATTEMPTS; i++) {
      expect((await me.get(`/api/oauth/email/bind?email=${email}&code=${100000 + i}`)).body.success).toBe(false);
    }
    expect((await me.get(`/api/oauth/email/bind?email=${email}&code=${code}`)).body).toMatchObject({ success: false, message: '验证码错误或已过期！' });
    expect((await app().knex('users').where({ id: u.id }).first()).email).not.toBe(email);
  });
});

/* ------------------------------------------------------------------ mail links */

describeEach(DB_TARGETS, 'links in mails come from ServerAddress only', (app) => {
  let smtp: TestSmtp;
  beforeAll(async () => {
    smtp = await startSmtp();
    await setupRoot(app());
    const o = app().ctx.options;
    for (const [k, v] of Object.entries({ SMTPServer: '127.0.0.1', SMTPPort: String(smtp.port), SMTPAccount: '', SMTPFrom: 'noreply@test.local' }))
      await o.set(k, v);
  });
  afterAll(async () => {
    await smtp?.close();
  });

  it('without ServerAddress the reset mail is refused with what to set, whatever the Host; with it the link ignores Host', async () => {
    const u = await makeUser(app());
    const email = `m${crypto.randomBytes(3).toString('hex')}@example.com`;
    await app().knex('users').where({ id: u.id }).update({ email });
    await app().ctx.options.set('ServerAddress', '');
    const before = smtp.mails.length;
    const refused = await app().http().get('/api/reset_password').query({ email }).set('Host', 'evil.example').set('X-Forwarded-Host', 'evil.example');
    expect(refused.body).toMatchObject({ success: false });
    expect(refused.body.message).toContain('ServerAddress');
    expect(await app().ctx.kv.get(`code:reset:${email}`)).toBeNull();
    expect(smtp.mails.length).toBe(before);

    await app().ctx.options.set('ServerAddress', 'https://gw.example.com');
    const sent = await app().http().get('/api/reset_password').query({ email }).set('Host', 'evil.example');
    expect(sent.body.success).toBe(true);
    const link = new URL(mailLink(await smtp.waitFor(email, before))!);
    expect(link.origin).toBe('https://gw.example.com');
    // The one mail since: the refused request (earlier) sent none.
    expect(smtp.mails.slice(before).filter((m) => m.to.includes(email))).toHaveLength(1);
  });
});

/* ------------------------------------------------------------------ client IPs */

describe('clientIp', () => {
  const xff = '6.6.6.6, 203.0.113.9, 10.0.0.2';
  it('ignores X-Forwarded-For unless proxies are trusted', () => {
    expect(clientIp('10.0.0.1', xff, parseProxyTrust(undefined, undefined))).toBe('10.0.0.1');
    expect(clientIp('10.0.0.1', xff, parseProxyTrust('false', ''))).toBe('10.0.0.1');
  });
  it('walks from the right past the trusted hops; leftmost entries the client wrote never count', () => {
    expect(clientIp('10.0.0.1', xff, parseProxyTrust('true', undefined))).toBe('10.0.0.2');
    expect(clientIp('10.0.0.1', xff, parseProxyTrust('2', undefined))).toBe('203.0.113.9');
    expect(clientIp('10.0.0.1', 'spoof, 203.0.113.9', parseProxyTrust('1', undefined))).toBe('203.0.113.9');
    // Fewer entries than hops: the leftmost real entry; none at all: the socket's peer.
    expect(clientIp('10.0.0.1', '203.0.113.9', parseProxyTrust('3', undefined))).toBe('203.0.113.9');
    expect(clientIp('10.0.0.1', undefined, parseProxyTrust('1', undefined))).toBe('10.0.0.1');
    // Junk written where a proxy's entry should be stops at the last trusted address.
    expect(clientIp('10.0.0.1', '203.0.113.9, not-an-ip', parseProxyTrust('2', undefined))).toBe('10.0.0.1');
  });
  it('with trusted CIDRs skips every trusted address from the right, and only reads XFF from a trusted peer', () => {
    const t = parseProxyTrust(undefined, '10.0.0.0/8, ::1');
    expect(clientIp('10.0.0.1', xff, t)).toBe('203.0.113.9');
    expect(clientIp('::ffff:10.0.0.1', '1.2.3.4, 10.9.9.9, 10.0.0.3', t)).toBe('1.2.3.4');
    expect(clientIp('198.51.100.1', xff, t)).toBe('198.51.100.1');
  });
  it('refuses a malformed setting', () => {
    expect(() => parseProxyTrust('yes', undefined)).toThrow(/TRUST_PROXY/);
    expect(() => parseProxyTrust(undefined, 'nonsense')).toThrow(/TRUST_PROXY_CIDRS/);
  });
});

describe.each(LIMITED_TARGETS.map((t) => [t.name, t] as const))('client IP behind one trusted proxy [%s]', (_n, target) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await buildApp(target, {
      config: {
        trustProxy: parseProxyTrust('1', undefined),
        loginLimit: { perAccount: 100, perIp: 3, windowSeconds: 60 },
      },
    });
    await setupRoot(app);
  });
  afterAll(async () => {
    await app?.close();
  });

  // The client controls everything left of the entry our proxy appended.
  const spoofed = (real: string, i: number) => `${i}.${i}.${i}.${i}, 10.0.0.${i}, ${real}`;

  it('the token IP allow-list uses the address the proxy saw', async () => {
    const u = await makeUser(app);
    const me = await loginAgent(app, u.username, u.password);
    const res = await me.post('/api/token/').send({ name: 'ip', remain_quota: 0, unlimited_quota: true, expired_time: -1, allow_ips: '10.20.30.40' });
    expect(res.body.success).toBe(true);
    const key = (await app.knex('tokens').where({ user_id: u.id }).first()).key as string;
    const models = (fwd: string) => app.http().get('/v1/models').set('Authorization', `Bearer sk-${key}`).set('X-Forwarded-For', fwd);
    expect((await models('10.20.30.40')).status).toBe(200);
    expect((await models('6.6.6.6, 10.20.30.40')).status).toBe(200);
    // The allowed address sent by the client itself, in front of the real one.
    expect((await models('10.20.30.40, 198.51.100.77')).status).toBe(403);
  });

  it('login lockout counts per real address, whatever the client puts in front', async () => {
    const u = await makeUser(app);
    for (let i = 1; i <= 3; i++)
      expect(
        (await app.http().post('/api/user/login').set('X-Forwarded-For', spoofed('198.51.100.5', i)).send({ username: u.username, password: 'wrong-one' }))
          .status,
      ).toBe(200);
    const fourth = await app
      .http()
      .post('/api/user/login')
      .set('X-Forwarded-For', spoofed('198.51.100.5', 4))
      .send({ username: u.username, password: u.password });
    expect(fourth.status).toBe(429);
    // Another real address is not locked.
    expect(
      (await app.http().post('/api/user/login').set('X-Forwarded-For', '198.51.100.6').send({ username: u.username, password: u.password })).body.success,
    ).toBe(true);
  });

  it('the per-IP API rate limit counts per real address', async () => {
    const limited = await buildApp(target, { config: { trustProxy: parseProxyTrust('1', undefined), apiRateLimit: { count: 3, windowSeconds: 60 } } });
    try {
      const call = (fwd: string) => limited.http().get('/api/status').set('X-Forwarded-For', fwd);
      for (let i = 1; i <= 3; i++) expect((await call(spoofed('198.51.100.9', i))).status).toBe(200);
      expect((await call(spoofed('198.51.100.9', 4))).status).toBe(429);
      expect((await call('198.51.100.10')).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
