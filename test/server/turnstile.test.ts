import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DB_TARGETS, describeEach, loginAgent, makeUser, setupRoot } from '../helpers/app';

interface VerifyCall {
  contentType: string;
  form: URLSearchParams;
}

/** A stand-in for Cloudflare's siteverify: accepts exactly the token 'good-token'. */
async function startVerifyServer() {
  const calls: VerifyCall[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      calls.push({ contentType: String(req.headers['content-type']), form });
      const ok = req.method === 'POST' && form.get('response') === 'good-token' && form.get('secret') === 'ts-secret';
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success: ok, 'error-codes': ok ? [] : ['invalid-input-response'] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/siteverify`;
  return { url, calls, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const MISSING = 'Please retry in a few seconds, Turnstile is checking the user environment!';

describeEach(DB_TARGETS, 'turnstile bot-check', (app) => {
  let verify: Awaited<ReturnType<typeof startVerifyServer>>;
  let user: { id: number; username: string; password: string };
  beforeAll(async () => {
    verify = await startVerifyServer();
    const r = await setupRoot(app());
    const root = await loginAgent(app(), r.username, r.password);
    // Switching it on needs the keys first (server-side rule).
    expect((await root.put('/api/option/').send({ key: 'TurnstileCheckEnabled', value: 'true' })).body.success).toBe(false);
    for (const [key, value] of Object.entries({
      TurnstileSiteKey: 'ts-site',
      TurnstileSecretKey: 'ts-secret',
      TurnstileVerifyURL: verify.url,
      TurnstileCheckEnabled: 'true',
    })) {
      expect((await root.put('/api/option/').send({ key, value })).body.success).toBe(true);
    }
    user = await makeUser(app());
  });
  afterAll(async () => {
    await verify.close();
  });

  it('requires a token on login, registration, verification and password reset', async () => {
    const login = await app().http().post('/api/user/login').send({ username: user.username, password: user.password });
    expect(login.body).toEqual({ success: false, message: MISSING, data: null });
    const reg = await app().http().post('/api/user/register').send({ username: 'tsuser', password: '12345678', password2: '12345678' });
    expect(reg.body).toMatchObject({ success: false, message: MISSING });
    expect((await app().http().get('/api/verification?email=a@example.com')).body).toMatchObject({ success: false, message: MISSING });
    expect((await app().http().get('/api/reset_password?email=a@example.com')).body).toMatchObject({ success: false, message: MISSING });
    expect(await app().knex('users').where({ username: 'tsuser' }).first()).toBeUndefined();
    expect(verify.calls).toHaveLength(0);
  });

  it('refuses a token the verify endpoint rejects', async () => {
    const res = await app().http().post('/api/user/login?turnstile=bad-token').send({ username: user.username, password: user.password });
    expect(res.body.success).toBe(false);
    expect(res.body.message).toContain('Turnstile');
    const reg = await app().http().post('/api/user/register?turnstile=bad-token').send({ username: 'tsuser', password: '12345678', password2: '12345678' });
    expect(reg.body.success).toBe(false);
    expect(await app().knex('users').where({ username: 'tsuser' }).first()).toBeUndefined();
  });

  it('accepts a verified token, posting secret, response and remote IP form-encoded', async () => {
    const before = verify.calls.length;
    const res = await app().http().post('/api/user/login?turnstile=good-token').send({ username: user.username, password: user.password });
    expect(res.body).toMatchObject({ success: true, data: { id: user.id } });
    const call = verify.calls[before]!;
    expect(call.contentType).toContain('application/x-www-form-urlencoded');
    expect(call.form.get('secret')).toBe('ts-secret');
    expect(call.form.get('response')).toBe('good-token');
    expect(call.form.get('remoteip')).toMatch(/127\.0\.0\.1/);
    const reg = await app().http().post('/api/user/register?turnstile=good-token').send({ username: 'tsuser', password: '12345678', password2: '12345678' });
    expect(reg.body.success).toBe(true);
  });

  it('remembers a verified browser session, like new-api', async () => {
    const agent = app().http();
    expect((await agent.post('/api/user/login?turnstile=good-token').send({ username: user.username, password: user.password })).body.success).toBe(true);
    const calls = verify.calls.length;
    const reg = await agent.post('/api/user/register').send({ username: 'tsuser2', password: '12345678', password2: '12345678' });
    expect(reg.body.success).toBe(true);
    expect(verify.calls.length).toBe(calls);
    await agent.get('/api/user/logout');
    const again = await agent.post('/api/user/login').send({ username: user.username, password: user.password });
    expect(again.body.success).toBe(false); // logout cleared the session, so the check applies again
    expect(again.body.message).toBe(MISSING);
  });

  it('fails closed when the verify endpoint is unreachable', async () => {
    await app().ctx.options.set('TurnstileVerifyURL', 'http://127.0.0.1:1/siteverify');
    const res = await app().http().post('/api/user/login?turnstile=good-token').send({ username: user.username, password: user.password });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(false);
    await app().ctx.options.set('TurnstileVerifyURL', verify.url);
  });

  it('is not asked for when switched off', async () => {
    await app().ctx.options.set('TurnstileCheckEnabled', 'false');
    const res = await app().http().post('/api/user/login').send({ username: user.username, password: user.password });
    expect(res.body.success).toBe(true);
    await app().ctx.options.set('TurnstileCheckEnabled', 'true');
  });
});
