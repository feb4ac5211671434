import request from 'supertest';
import { DB_TARGETS, describeEach, makeUser, setupRoot, type TestApp } from '../helpers/app';
import { startOidcProvider, type OidcProviderProcess } from '../helpers/oauthFakes';

/**
 * OIDC login against a real OpenID provider (oidc-provider in a child process), driven through
 * the whole redirect flow: our /api/oauth/oidc/authorize → provider login + consent → code →
 * our callback. The provider requires PKCE, so a success also proves the verifier round trip.
 */
const APP_ORIGIN = 'http://gateway.test';
let op: OidcProviderProcess;

beforeAll(async () => {
  op = await startOidcProvider(`${APP_ORIGIN}/oauth/oidc`);
});
afterAll(async () => {
  await op?.close();
});

async function configure(app: TestApp) {
  const o = app.ctx.options;
  await o.set('ServerAddress', APP_ORIGIN);
  await o.set('oidc.enabled', 'true');
  await o.set('oidc.client_id', op.clientId);
  await o.set('oidc.client_secret', op.clientSecret);
  await o.set('oidc.well_known', `${op.issuer}/.well-known/openid-configuration`);
  for (const k of ['oidc.authorization_endpoint', 'oidc.token_endpoint', 'oidc.user_info_endpoint']) await o.set(k, '');
}

/**
 * Plays the browser at the provider: follows redirects, signs in as `login` and consents, and
 * returns the final redirect to our callback page (code + state in its query).
 */
async function authorizeAtProvider(authorizeUrl: string, login: string): Promise<URL> {
  const browser = request.agent(op.issuer);
  let url = new URL(authorizeUrl);
  for (let step = 0; step < 12; step++) {
    if (url.href.startsWith(`${APP_ORIGIN}/oauth/oidc`)) return url;
    const page = await browser.get(url.pathname + url.search).redirects(0);
    if (page.status >= 300 && page.status < 400) {
      url = new URL(page.headers.location, url);
      continue;
    }
    expect(page.status).toBe(200);
    const action = /action="([^"]+)"/.exec(page.text)?.[1];
    if (!action) throw new Error(`unexpected provider page: ${page.text.slice(0, 300)}`);
    const form = page.text.includes('name="login"') ? { prompt: 'login', login, password: 'any' } : { prompt: 'consent' };
    const done = await browser.post(new URL(action, url).pathname).type('form').send(form).redirects(0);
    expect([302, 303]).toContain(done.status);
    url = new URL(done.headers.location, url);
  }
  throw new Error('too many redirects at the provider');
}

/** Runs the whole flow with the app agent `agent` (keeps our session cookie). */
async function oidcFlow(agent: request.Agent, login: string, aff = '') {
  const start = await agent.get(`/api/oauth/oidc/authorize${aff ? `?aff=${aff}` : ''}`).redirects(0);
  expect(start.status).toBe(302);
  const authUrl = new URL(start.headers.location);
  expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authUrl.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(authUrl.searchParams.get('redirect_uri')).toBe(`${APP_ORIGIN}/oauth/oidc`);
  const back = await authorizeAtProvider(start.headers.location, login);
  const code = back.searchParams.get('code');
  const state = back.searchParams.get('state');
  expect(code).toBeTruthy();
  expect(state).toBe(authUrl.searchParams.get('state'));
  return { code: code!, state: state!, res: await agent.get(`/api/oauth/oidc?code=${encodeURIComponent(code!)}&state=${encodeURIComponent(state!)}`) };
}

describeEach(DB_TARGETS, 'OIDC login with a real OpenID provider', (app) => {
  beforeAll(async () => {
    await setupRoot(app());
    await configure(app());
  });

  it('discovers the endpoints from the well-known URL and stores them', async () => {
    const agent = app().http();
    const start = await agent.get('/api/oauth/oidc/authorize').redirects(0);
    expect(start.status).toBe(302);
    const o = app().ctx.options;
    expect(o.get('oidc.authorization_endpoint')).toBe(`${op.issuer}/auth`);
    expect(o.get('oidc.token_endpoint')).toBe(`${op.issuer}/token`);
    expect(o.get('oidc.user_info_endpoint')).toBe(`${op.issuer}/me`);
    expect(start.headers.location.startsWith(`${op.issuer}/auth?`)).toBe(true);
    const status = await app().http().get('/api/status');
    expect(status.body.data.oidc_authorization_endpoint).toBe(`${op.issuer}/auth`);
  });

  it('registers a new user by sub with inviter rewards, logs in, and logs the same user in again', async () => {
    const o = app().ctx.options;
    await o.set('QuotaForNewUser', '1000');
    await o.set('QuotaForInvitee', '200');
    await o.set('QuotaForInviter', '300');
    const inviter = await makeUser(app());
    const inviterRow = await app().knex('users').where({ id: inviter.id }).first();
    const agent = app().http();
    const { res, code, state } = await oidcFlow(agent, 'alice-sub', inviterRow.aff_code);
    expect(res.body.success).toBe(true);
    expect(res.body.message).toBe('');
    const user = res.body.data;
    expect(user.oidc_id).toBe('alice-sub');
    expect(user.username).toMatch(/^oidc_\d+/);
    expect(user.display_name).toBe('Name alice-sub');
    expect(user.email).toBe('alice-sub@oidc.test');
    expect(user.quota).toBe(1200);
    expect(user.inviter_id).toBe(inviter.id);
    expect(user).not.toHaveProperty('password');
    expect(user).not.toHaveProperty('access_token');
    const inv = await app().knex('users').where({ id: inviter.id }).first();
    expect(Number(inv.aff_count)).toBe(1);
    expect(Number(inv.aff_quota)).toBe(300);
    // The session is logged in as the new user.
    const self = await agent.get('/api/oauth/email/bind').set('New-Api-User', String(user.id));
    expect(self.status).toBe(200);
    expect(self.body).toMatchObject({ success: false, message: 'Please enter email!' });
    // Replaying the same state (and code) is refused, nothing new is created.
    const before = await app().knex('users').count({ n: '*' }).first();
    const replay = await agent.get(`/api/oauth/oidc?code=${encodeURIComponent(code)}&state=${encodeURIComponent(state)}`);
    expect(replay.body.success).toBe(false);
    expect(await app().knex('users').count({ n: '*' }).first()).toEqual(before);

    // A second login through a fresh browser finds the same account.
    const again = await oidcFlow(app().http(), 'alice-sub');
    expect(again.res.body.success).toBe(true);
    expect(again.res.body.data.id).toBe(user.id);
    expect((await app().knex('users').where({ oidc_id: 'alice-sub' })).length).toBe(1);
  });

  it('binds the sub to a logged-in user, and refuses a sub bound to another account', async () => {
    // Log in as a fresh OIDC user first (the session), then bind another sub to it.
    const agent = app().http();
    const first = await oidcFlow(agent, 'bob-sub');
    expect(first.res.body.success).toBe(true);
    const bobId = first.res.body.data.id;
    // A plain account logged in via another OIDC identity cannot take alice's sub.
    const taken = await oidcFlow(agent, 'alice-sub');
    expect(taken.res.body).toMatchObject({ success: false, message: '该 OIDC 账户已被绑定' });
    const bob = await app().knex('users').where({ id: bobId }).first();
    expect(bob.oidc_id).toBe('bob-sub');

    // Rebinding bob's session to a new sub moves his binding (answer 'bind').
    const bind = await oidcFlow(agent, 'bob-new-sub');
    expect(bind.res.body).toMatchObject({ success: true, message: 'bind' });
    expect((await app().knex('users').where({ id: bobId }).first()).oidc_id).toBe('bob-new-sub');
    expect((await app().knex('users').where({ oidc_id: 'bob-new-sub' })).length).toBe(1);
  });

  it('refuses a banned user and a closed registration without creating anything', async () => {
    const agent = app().http();
    const carol = await oidcFlow(agent, 'carol-sub');
    expect(carol.res.body.success).toBe(true);
    await app().knex('users').where({ id: carol.res.body.data.id }).update({ status: 2 });
    const banned = await oidcFlow(app().http(), 'carol-sub');
    expect(banned.res.body).toMatchObject({ success: false, message: '用户已被封禁' });

    await app().ctx.options.set('RegisterEnabled', 'false');
    try {
      const before = await app().knex('users').count({ n: '*' }).first();
      const closed = await oidcFlow(app().http(), 'dave-sub');
      expect(closed.res.body).toMatchObject({ success: false, message: '管理员关闭了新用户注册' });
      expect(await app().knex('users').count({ n: '*' }).first()).toEqual(before);
    } finally {
      await app().ctx.options.set('RegisterEnabled', 'true');
    }
  });

  it('refuses a code whose state belongs to another browser session (CSRF)', async () => {
    const victim = app().http();
    const start = await app().http().get('/api/oauth/oidc/authorize').redirects(0);
    const back = await authorizeAtProvider(start.headers.location, 'mallory-sub');
    const res = await victim.get(
      `/api/oauth/oidc?code=${encodeURIComponent(back.searchParams.get('code')!)}&state=${encodeURIComponent(back.searchParams.get('state')!)}`,
    );
    expect(res.body).toMatchObject({ success: false, message: 'state 参数无效或已使用，请重新发起登录' });
    expect(await app().knex('users').where({ oidc_id: 'mallory-sub' }).first()).toBeUndefined();
  });

  it('lets root run discovery explicitly and reports a bad well-known URL', async () => {
    const root = await app().knex('users').where({ role: 100 }).first();
    await app().knex('users').where({ id: root.id }).update({ access_token: 'root-access-token-oidc-test' });
    const plain = await makeUser(app());
    await app().knex('users').where({ id: plain.id }).update({ access_token: 'user-access-token-oidc-test' });
    const asUser = await app()
      .http()
      .post('/api/oauth/oidc/discovery')
      .set('Authorization', 'user-access-token-oidc-test')
      .set('New-Api-User', String(plain.id))
      .send({});
    expect(asUser.status).toBe(403);
    const o = app().ctx.options;
    await o.set('oidc.token_endpoint', 'http://stale.invalid/token');
    const bad = await app()
      .http()
      .post('/api/oauth/oidc/discovery')
      .set('Authorization', 'root-access-token-oidc-test')
      .set('New-Api-User', String(root.id))
      .send({ well_known: `${op.issuer}/not-there` });
    expect(bad.body).toMatchObject({ success: false, message: 'Failed to get OIDC configuration, please check network and Well-Known URL' });
    expect(o.get('oidc.token_endpoint')).toBe('http://stale.invalid/token');
    expect(o.get('oidc.well_known')).toBe(`${op.issuer}/.well-known/openid-configuration`);
    const good = await app()
      .http()
      .post('/api/oauth/oidc/discovery')
      .set('Authorization', 'root-access-token-oidc-test')
      .set('New-Api-User', String(root.id))
      .send({ well_known: `${op.issuer}/.well-known/openid-configuration` });
    expect(good.body).toMatchObject({
      success: true,
      data: { authorization_endpoint: `${op.issuer}/auth`, token_endpoint: `${op.issuer}/token`, user_info_endpoint: `${op.issuer}/me` },
    });
    expect(o.get('oidc.token_endpoint')).toBe(`${op.issuer}/token`);
    expect(o.get('oidc.well_known')).toBe(`${op.issuer}/.well-known/openid-configuration`);
  });

  it('refuses everything when OIDC is disabled', async () => {
    await app().ctx.options.set('oidc.enabled', 'false');
    try {
      const start = await app().http().get('/api/oauth/oidc/authorize').redirects(0);
      expect(start.status).toBe(200);
      expect(start.body).toMatchObject({ success: false, message: '管理员未开启通过 OIDC 登录以及注册' });
      const cb = await app().http().get('/api/oauth/oidc?code=x&state=y');
      expect(cb.body).toMatchObject({ success: false, message: '管理员未开启通过 OIDC 登录以及注册' });
    } finally {
      await app().ctx.options.set('oidc.enabled', 'true');
    }
  });
});
