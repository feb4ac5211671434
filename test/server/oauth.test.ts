import type request from 'supertest';
import { ALL_TARGETS, DB_TARGETS, KV_TARGETS, describeEach, loginAgent, makeUser, setupRoot, type TestApp } from '../helpers/app';
import {
  startGitHubFake,
  startLinuxDOFake,
  startWeChatFake,
  telegramAuthData,
  type GitHubUser,
  type LinuxDOUser,
  type OAuthFake,
  type WeChatFake,
} from '../helpers/oauthFakes';
import { issueCode } from '../../server/src/services/verification';
import { OAUTH_RATE_LIMIT } from '../../server/src/api/oauth';

/**
 * Third-party identity: state handling, GitHub and LinuxDO (local fakes of their OAuth
 * endpoints), WeChat (fake WeChat server), Telegram (widget hashes signed with a test bot token)
 * and email binding.
 */
const GH = { clientId: 'gh-client', clientSecret: 'gh-secret' };
const LD = { clientId: 'ld-client', clientSecret: 'ld-secret' };
const WECHAT_TOKEN = 'wechat-server-token';
const BOT_TOKEN = '123456:TEST-bot-token';
const BAD_STATE = 'state 参数无效或已使用，请重新发起登录';

let github: OAuthFake<GitHubUser>;
let linuxdo: OAuthFake<LinuxDOUser>;
let wechat: WeChatFake;
let seq = 1000;
const nextId = () => ++seq;

beforeAll(async () => {
  github = await startGitHubFake(GH);
  linuxdo = await startLinuxDOFake(LD);
  wechat = await startWeChatFake(WECHAT_TOKEN);
});
afterAll(async () => {
  await Promise.all([github?.close(), linuxdo?.close(), wechat?.close()]);
});

async function configure(app: TestApp) {
  const o = app.ctx.options;
  const set: Record<string, string> = {
    ServerAddress: 'http://gateway.test',
    GitHubOAuthEnabled: 'true',
    GitHubClientId: GH.clientId,
    GitHubClientSecret: GH.clientSecret,
    GitHubOAuthBaseURL: github.url,
    GitHubAPIBaseURL: github.url,
    LinuxDOOAuthEnabled: 'true',
    LinuxDOClientId: LD.clientId,
    LinuxDOClientSecret: LD.clientSecret,
    LinuxDOAuthorizationEndpoint: `${linuxdo.url}/oauth2/authorize`,
    LinuxDOTokenEndpoint: `${linuxdo.url}/oauth2/token`,
    LinuxDOUserInfoEndpoint: `${linuxdo.url}/api/user`,
    WeChatAuthEnabled: 'true',
    WeChatServerAddress: wechat.url,
    WeChatServerToken: WECHAT_TOKEN,
    TelegramOAuthEnabled: 'true',
    TelegramBotToken: BOT_TOKEN,
    TelegramBotName: 'test_bot',
  };
  for (const [k, v] of Object.entries(set)) await o.set(k, v);
}

const count = async (app: TestApp) => Number(((await app.knex('users').count({ n: '*' }).first()) as { n: number | string }).n);

async function stateFor(agent: request.Agent, aff = ''): Promise<string> {
  const res = await agent.get(`/api/oauth/state${aff ? `?aff=${aff}` : ''}`);
  expect(res.body.success).toBe(true);
  expect(typeof res.body.data).toBe('string');
  return res.body.data as string;
}

/** A browser session logged in as a fresh user (through a Telegram login of a pre-bound id). */
async function loggedIn(app: TestApp) {
  const user = await makeUser(app);
  const tg = String(nextId());
  await app.knex('users').where({ id: user.id }).update({ telegram_id: tg });
  const agent = app.http();
  const res = await agent.get('/api/oauth/telegram/login').query(telegramAuthData(BOT_TOKEN, { id: tg, first_name: 'T' }));
  expect(res.body).toMatchObject({ success: true, data: { id: user.id } });
  return {
    agent,
    id: user.id,
    get: (url: string) => agent.get(url).set('New-Api-User', String(user.id)),
    post: (url: string) => agent.post(url).set('New-Api-User', String(user.id)),
  };
}

/** What the console does before showing the bind widget: a one-time state for this session. */
async function bindState(me: Awaited<ReturnType<typeof loggedIn>>): Promise<string> {
  const res = await me.post('/api/oauth/telegram/bind_state');
  expect(res.body).toMatchObject({ success: true });
  return res.body.data as string;
}

async function githubLogin(agent: request.Agent, user: GitHubUser, aff = '') {
  const state = await stateFor(agent, aff);
  const code = `gh-code-${nextId()}`;
  github.addCode(code, user);
  return agent.get(`/api/oauth/github?code=${code}&state=${state}`);
}

describeEach(ALL_TARGETS, 'OAuth state and GitHub login', (app) => {
  beforeAll(async () => {
    await setupRoot(app());
    await configure(app());
  });

  it('issues a fresh state per call', async () => {
    const agent = app().http();
    const a = await stateFor(agent);
    const b = await stateFor(agent);
    expect(a).not.toBe(b);
    expect(a.length).toBeGreaterThanOrEqual(16);
  });

  it('registers a new GitHub user with the new-user gift and inviter rewards, and logs the session in', async () => {
    const o = app().ctx.options;
    await o.set('QuotaForNewUser', '500');
    await o.set('QuotaForInvitee', '100');
    await o.set('QuotaForInviter', '70');
    const inviter = await makeUser(app());
    const { aff_code: aff } = await app().knex('users').where({ id: inviter.id }).first();
    const agent = app().http();
    const ghUser = { id: nextId(), login: 'octocat', name: 'The Octocat', email: 'octo@example.com' };
    const res = await githubLogin(agent, ghUser, aff);
    expect(res.body).toMatchObject({ success: true, message: '' });
    const u = res.body.data;
    expect(u.username).toMatch(/^github_\d+/);
    expect(u.display_name).toBe('The Octocat');
    expect(u.github_id).toBe(String(ghUser.id));
    expect(u.email).toBe('octo@example.com');
    expect(u.quota).toBe(600);
    expect(u.inviter_id).toBe(inviter.id);
    expect(u).not.toHaveProperty('password');
    expect(u).not.toHaveProperty('access_token');
    const inv = await app().knex('users').where({ id: inviter.id }).first();
    expect([Number(inv.aff_count), Number(inv.aff_quota), Number(inv.aff_history_quota)]).toEqual([1, 70, 70]);
    const logs = await app().knex('logs').where({ user_id: u.id }).select('content');
    expect(logs.map((l: { content: string }) => l.content).join('|')).toMatch(/新用户注册赠送/);
    // The session is that user's: an authenticated endpoint answers instead of 401.
    const me = await agent.get('/api/oauth/email/bind').set('New-Api-User', String(u.id));
    expect(me.status).toBe(200);
    expect(me.body.message).toBe('Please enter email!');

    // Logging in again (new browser) finds the same account; nothing new is created.
    const before = await count(app());
    const again = await githubLogin(app().http(), ghUser);
    expect(again.body).toMatchObject({ success: true, data: { id: u.id } });
    expect(await count(app())).toBe(before);
    await o.set('QuotaForNewUser', '0');
    await o.set('QuotaForInvitee', '0');
    await o.set('QuotaForInviter', '0');
  });

  it('creates one account when the same new identity calls back many times at once', async () => {
    const ghUser = { id: nextId(), login: 'racer', name: 'Racer' };
    const before = await count(app());
    const browsers = Array.from({ length: 8 }, () => app().http());
    const states = await Promise.all(browsers.map((b) => stateFor(b)));
    github.holdUserAnswers(browsers.length);
    const results = await Promise.all(
      browsers.map((b, i) => {
        github.addCode(`race-${ghUser.id}-${i}`, ghUser);
        return b.get(`/api/oauth/github?code=race-${ghUser.id}-${i}&state=${states[i]}`);
      }),
    );
    for (const r of results) expect(r.body.success).toBe(true);
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
    expect(await count(app())).toBe(before + 1);
    expect(
      (
        await app()
          .knex('users')
          .where({ github_id: String(ghUser.id) })
      ).length,
    ).toBe(1);
  });

  it('refuses a missing, foreign, wrong or reused state without calling GitHub or creating a user', async () => {
    const before = await count(app());
    const calls = github.calls.length;
    const ghUser = { id: nextId(), login: 'eve', name: 'Eve' };
    github.addCode('csrf-code', ghUser);
    const agent = app().http();
    // No state at all, or a state while the session has none.
    expect((await agent.get('/api/oauth/github?code=csrf-code')).body).toMatchObject({ success: false, message: BAD_STATE });
    const foreign = await stateFor(app().http());
    expect((await agent.get(`/api/oauth/github?code=csrf-code&state=${foreign}`)).body).toMatchObject({ success: false, message: BAD_STATE });
    // A wrong state for this session.
    await stateFor(agent);
    expect((await agent.get('/api/oauth/github?code=csrf-code&state=not-the-state')).body).toMatchObject({ success: false, message: BAD_STATE });
    expect(github.calls.length).toBe(calls);
    expect(await count(app())).toBe(before);

    // A later state supersedes an earlier one in the same session.
    const superseded = await stateFor(agent);
    await stateFor(agent);
    expect((await agent.get(`/api/oauth/github?code=csrf-code&state=${superseded}`)).body).toMatchObject({ success: false, message: BAD_STATE });
    expect(github.calls.length).toBe(calls);
    // A state can be used once.
    const fresh = await stateFor(agent);
    const first = await agent.get(`/api/oauth/github?code=csrf-code&state=${fresh}`);
    expect(first.body.success).toBe(true);
    github.addCode('csrf-code-2', ghUser);
    const reuse = await app().http().get(`/api/oauth/github?code=csrf-code-2&state=${fresh}`);
    expect(reuse.body).toMatchObject({ success: false, message: BAD_STATE });
  });

  it('rejects a replayed state even with a copy of the session cookie that still holds it', async () => {
    const agent = app().http();
    const stateRes = await agent.get('/api/oauth/state');
    const state = stateRes.body.data;
    const cookies = ([] as string[])
      .concat(stateRes.headers['set-cookie'] ?? [])
      .map((c) => c.split(';')[0])
      .join('; ');
    github.addCode('replay-1', { id: nextId(), login: 'rp' });
    const first = await agent.get(`/api/oauth/github?code=replay-1&state=${state}`);
    expect(first.body.success).toBe(true);
    const before = await count(app());
    github.addCode('replay-2', { id: nextId(), login: 'rp2' });
    const replay = await app().http().get(`/api/oauth/github?code=replay-2&state=${state}`).set('Cookie', cookies);
    expect(replay.body).toMatchObject({ success: false, message: BAD_STATE });
    expect(await count(app())).toBe(before);
  });

  it('answers a bad or used code with the provider error and creates nothing', async () => {
    const before = await count(app());
    const agent = app().http();
    const state = await stateFor(agent);
    const res = await agent.get(`/api/oauth/github?code=never-issued&state=${state}`);
    expect(res.body.success).toBe(false);
    expect(res.body.message).toContain('The code passed is incorrect or expired.');
    expect(res.body.message).not.toContain(GH.clientSecret);
    expect(await count(app())).toBe(before);
  });

  it('binds GitHub to the logged-in user (message bind) and refuses an identity bound elsewhere', async () => {
    const me = await loggedIn(app());
    const ghUser = { id: nextId(), login: 'binder', name: 'Binder' };
    const before = await count(app());
    const res = await githubLogin(me.agent, ghUser);
    expect(res.body).toMatchObject({ success: true, message: 'bind' });
    expect((await app().knex('users').where({ id: me.id }).first()).github_id).toBe(String(ghUser.id));
    expect(await count(app())).toBe(before);

    const other = await loggedIn(app());
    const conflict = await githubLogin(other.agent, ghUser);
    expect(conflict.body).toMatchObject({ success: false, message: '该 GitHub 账户已被绑定' });
    expect((await app().knex('users').where({ id: other.id }).first()).github_id).toBe('');
  });

  it('shares the session with the password login: OAuth login reads /api/user/self, a password session binds', async () => {
    const agent = app().http();
    const res = await githubLogin(agent, { id: nextId(), login: 'selfie', name: 'Selfie' });
    expect(res.body.success).toBe(true);
    const self = await agent.get('/api/user/self').set('New-Api-User', String(res.body.data.id));
    expect(self.body).toMatchObject({ success: true, data: { id: res.body.data.id, username: res.body.data.username } });

    const pw = await makeUser(app());
    const me = await loginAgent(app(), pw.username, pw.password);
    const ghUser = { id: nextId(), login: 'pwbinder' };
    const bind = await githubLogin(me.agent, ghUser);
    expect(bind.body).toMatchObject({ success: true, message: 'bind' });
    expect((await me.get('/api/user/self')).body.data.github_id).toBe(String(ghUser.id));
  });

  it('refuses a banned or deregistered user, and registration when it is closed', async () => {
    const banned = { id: nextId(), login: 'banned' };
    const res = await githubLogin(app().http(), banned);
    expect(res.body.success).toBe(true);
    await app().knex('users').where({ id: res.body.data.id }).update({ status: 2 });
    expect((await githubLogin(app().http(), banned)).body).toMatchObject({ success: false, message: '用户已被封禁' });

    const gone = { id: nextId(), login: 'gone' };
    const g = await githubLogin(app().http(), gone);
    await app()
      .knex('users')
      .where({ id: g.body.data.id })
      .update({ deleted_at: Math.floor(Date.now() / 1000) });
    const before = await count(app());
    expect((await githubLogin(app().http(), gone)).body).toMatchObject({ success: false, message: '用户已注销' });
    expect(await count(app())).toBe(before);

    await app().ctx.options.set('RegisterEnabled', 'false');
    try {
      const closed = await githubLogin(app().http(), { id: nextId(), login: 'late' });
      expect(closed.body).toMatchObject({ success: false, message: '管理员关闭了新用户注册' });
      expect(await count(app())).toBe(before);
      // Existing accounts still log in.
      await app().knex('users').where({ id: res.body.data.id }).update({ status: 1 });
      expect((await githubLogin(app().http(), banned)).body.success).toBe(true);
    } finally {
      await app().ctx.options.set('RegisterEnabled', 'true');
    }
  });

  it('refuses everything when GitHub login is disabled', async () => {
    await app().ctx.options.set('GitHubOAuthEnabled', 'false');
    try {
      const before = await count(app());
      const res = await githubLogin(app().http(), { id: nextId(), login: 'off' });
      expect(res.body).toMatchObject({ success: false, message: '管理员未开启通过 GitHub 登录以及注册' });
      expect(await count(app())).toBe(before);
      const start = await app().http().get('/api/oauth/github/authorize');
      expect(start.body.success).toBe(false);
    } finally {
      await app().ctx.options.set('GitHubOAuthEnabled', 'true');
    }
  });

  it('builds the authorization redirect server-side with a session-bound state', async () => {
    const agent = app().http();
    const start = await agent.get('/api/oauth/github/authorize').redirects(0);
    expect(start.status).toBe(302);
    const url = new URL(start.headers.location);
    expect(url.origin + url.pathname).toBe(`${github.url}/login/oauth/authorize`);
    expect(url.searchParams.get('client_id')).toBe(GH.clientId);
    expect(url.searchParams.get('redirect_uri')).toBe('http://gateway.test/oauth/github');
    const state = url.searchParams.get('state')!;
    github.addCode('redir-code', { id: nextId(), login: 'redir' });
    // Only for github: a linuxdo callback with a github state is refused.
    await app().ctx.options.set('LinuxDOOAuthEnabled', 'true');
    const cross = await agent.get(`/api/oauth/linuxdo?code=x&state=${state}`);
    expect(cross.body).toMatchObject({ success: false, message: BAD_STATE });
    const start2 = await agent.get('/api/oauth/github/authorize').redirects(0);
    const state2 = new URL(start2.headers.location).searchParams.get('state')!;
    const res = await agent.get(`/api/oauth/github?code=redir-code&state=${state2}`);
    expect(res.body).toMatchObject({ success: true, data: { github_id: expect.any(String) } });
  });
});

describeEach(DB_TARGETS, 'LinuxDO login', (app) => {
  beforeAll(async () => {
    await setupRoot(app());
    await configure(app());
  });

  async function linuxdoLogin(agent: request.Agent, user: LinuxDOUser) {
    const state = await stateFor(agent);
    const code = `ld-${nextId()}`;
    linuxdo.addCode(code, user);
    return agent.get(`/api/oauth/linuxdo?code=${code}&state=${state}`);
  }

  it('registers, logs in, binds and refuses conflicts', async () => {
    const ldUser = { id: nextId(), username: 'forum_fan', name: 'Forum Fan' };
    const res = await linuxdoLogin(app().http(), ldUser);
    expect(res.body).toMatchObject({ success: true, data: { linux_do_id: String(ldUser.id), display_name: 'Forum Fan' } });
    expect(res.body.data.username).toMatch(/^linuxdo_\d+/);
    // The token call used Basic client auth and our callback URL.
    const tokenCall = linuxdo.calls.filter((c) => c.path === '/oauth2/token').pop()!;
    expect(new URLSearchParams(tokenCall.body).get('redirect_uri')).toBe('http://gateway.test/oauth/linuxdo');
    const again = await linuxdoLogin(app().http(), ldUser);
    expect(again.body.data.id).toBe(res.body.data.id);

    const me = await loggedIn(app());
    const other = { id: nextId(), username: 'second' };
    expect((await linuxdoLogin(me.agent, other)).body).toMatchObject({ success: true, message: 'bind' });
    expect((await app().knex('users').where({ id: me.id }).first()).linux_do_id).toBe(String(other.id));
    const conflict = await linuxdoLogin(me.agent, ldUser);
    expect(conflict.body).toMatchObject({ success: false, message: '该 LinuxDO 账户已被绑定' });
    expect((await app().knex('users').where({ id: me.id }).first()).linux_do_id).toBe(String(other.id));
  });

  it('refuses a silenced forum account, a trust level below the minimum and a disabled provider', async () => {
    await app().ctx.options.set('LinuxDOMinimumTrustLevel', '2');
    const low = await linuxdoLogin(app().http(), { id: nextId(), username: 'newbie', trust_level: 1 });
    expect(low.body).toMatchObject({ success: false, message: 'LinuxDO 信任等级未达到管理员设置的最低信任等级' });
    const high = await linuxdoLogin(app().http(), { id: nextId(), username: 'regular', trust_level: 3 });
    expect(high.body.success).toBe(true);
    await app().ctx.options.set('LinuxDOMinimumTrustLevel', '0');
    const before = await count(app());
    const silenced = await linuxdoLogin(app().http(), { id: nextId(), username: 'quiet', silenced: true });
    expect(silenced.body.success).toBe(false);
    expect(await count(app())).toBe(before);
    await app().ctx.options.set('LinuxDOOAuthEnabled', 'false');
    try {
      const off = await linuxdoLogin(app().http(), { id: nextId(), username: 'off' });
      expect(off.body).toMatchObject({ success: false, message: '管理员未开启通过 LinuxDO 登录以及注册' });
      expect(await count(app())).toBe(before);
    } finally {
      await app().ctx.options.set('LinuxDOOAuthEnabled', 'true');
    }
  });
});

describeEach(DB_TARGETS, 'WeChat login and binding', (app) => {
  beforeAll(async () => {
    await setupRoot(app());
    await configure(app());
  });

  it('registers on first login and logs in the same user afterwards; codes are single-use and expire', async () => {
    const openId = `o_${nextId()}`;
    wechat.addCode('111111', openId);
    const agent = app().http();
    const res = await agent.get('/api/oauth/wechat?code=111111');
    expect(res.body).toMatchObject({ success: true, data: { wechat_id: openId } });
    expect(res.body.data.username).toMatch(/^wechat_\d+/);
    expect(wechat.calls.pop()!.headers.authorization).toBe(WECHAT_TOKEN);
    const before = await count(app());
    const used = await app().http().get('/api/oauth/wechat?code=111111');
    expect(used.body).toMatchObject({ success: false, message: '验证码错误或已过期' });
    wechat.addCode('222222', openId, 181);
    expect((await app().http().get('/api/oauth/wechat?code=222222')).body).toMatchObject({ success: false, message: '验证码错误或已过期' });
    wechat.addCode('333333', openId, 170);
    expect((await app().http().get('/api/oauth/wechat?code=333333')).body).toMatchObject({ success: true, data: { id: res.body.data.id } });
    expect(await count(app())).toBe(before);
    expect((await app().http().get('/api/oauth/wechat')).body.success).toBe(false);
  });

  it('gives inviter rewards to a WeChat registration with ?aff=', async () => {
    await app().ctx.options.set('QuotaForInviter', '40');
    try {
      const inviter = await makeUser(app());
      const { aff_code: aff } = await app().knex('users').where({ id: inviter.id }).first();
      wechat.addCode('121212', `o_${nextId()}`);
      const res = await app().http().get(`/api/oauth/wechat?code=121212&aff=${aff}`);
      expect(res.body).toMatchObject({ success: true, data: { inviter_id: inviter.id } });
      const inv = await app().knex('users').where({ id: inviter.id }).first();
      expect([Number(inv.aff_count), Number(inv.aff_quota)]).toEqual([1, 40]);
    } finally {
      await app().ctx.options.set('QuotaForInviter', '0');
    }
  });

  it('reports a wrong server token, RegisterEnabled=false and a disabled switch', async () => {
    const before = await count(app());
    await app().ctx.options.set('WeChatServerToken', 'wrong');
    wechat.addCode('444444', `o_${nextId()}`);
    expect((await app().http().get('/api/oauth/wechat?code=444444')).body).toMatchObject({ success: false, message: '无权进行此操作，Token 无效' });
    await app().ctx.options.set('WeChatServerToken', WECHAT_TOKEN);
    await app().ctx.options.set('RegisterEnabled', 'false');
    wechat.addCode('555555', `o_${nextId()}`);
    expect((await app().http().get('/api/oauth/wechat?code=555555')).body).toMatchObject({ success: false, message: '管理员关闭了新用户注册' });
    await app().ctx.options.set('RegisterEnabled', 'true');
    await app().ctx.options.set('WeChatAuthEnabled', 'false');
    wechat.addCode('666666', `o_${nextId()}`);
    expect((await app().http().get('/api/oauth/wechat?code=666666')).body).toMatchObject({ success: false, message: '管理员未开启通过 微信 登录以及注册' });
    await app().ctx.options.set('WeChatAuthEnabled', 'true');
    expect(await count(app())).toBe(before);
  });

  it('binds for a logged-in user only, and refuses an openid bound to another account', async () => {
    wechat.addCode('777777', 'o_anon');
    expect((await app().http().get('/api/oauth/wechat/bind?code=777777')).status).toBe(401);
    const me = await loggedIn(app());
    const openId = `o_${nextId()}`;
    wechat.addCode('888888', openId);
    expect((await me.get('/api/oauth/wechat/bind?code=888888')).body).toMatchObject({ success: true });
    expect((await app().knex('users').where({ id: me.id }).first()).wechat_id).toBe(openId);
    const other = await loggedIn(app());
    wechat.addCode('999999', openId);
    expect((await other.get('/api/oauth/wechat/bind?code=999999')).body).toMatchObject({ success: false, message: '该 微信 账户已被绑定' });
    expect((await app().knex('users').where({ id: other.id }).first()).wechat_id).toBe('');
  });
});

describeEach(DB_TARGETS, 'Telegram login and binding', (app) => {
  beforeAll(async () => {
    await setupRoot(app());
    await configure(app());
  });

  it('logs in a bound account with valid widget data and refuses tampered, stale or unbound data', async () => {
    const user = await makeUser(app());
    const tg = String(nextId());
    await app().knex('users').where({ id: user.id }).update({ telegram_id: tg });
    const data = telegramAuthData(BOT_TOKEN, { id: tg, first_name: 'Ann', username: 'ann' });
    const ok = await app().http().get('/api/oauth/telegram/login').query(data);
    expect(ok.body).toMatchObject({ success: true, data: { id: user.id, telegram_id: tg } });

    // The console's extra `lang` parameter (not signed by Telegram) does not break the check.
    expect(
      (
        await app()
          .http()
          .get('/api/oauth/telegram/login')
          .query({ ...data, lang: 'zh' })
      ).body,
    ).toMatchObject({ success: true, data: { id: user.id } });
    const tampered = await app()
      .http()
      .get('/api/oauth/telegram/login')
      .query({ ...data, username: 'mallory' });
    expect(tampered.body).toMatchObject({ success: false, message: 'Telegram 登录数据校验失败' });
    const otherBot = telegramAuthData('999:other-bot', { id: tg, first_name: 'Ann' });
    expect((await app().http().get('/api/oauth/telegram/login').query(otherBot)).body.success).toBe(false);
    const stale = telegramAuthData(BOT_TOKEN, { id: tg, first_name: 'Ann', auth_date: Math.floor(Date.now() / 1000) - 2 * 86400 });
    expect((await app().http().get('/api/oauth/telegram/login').query(stale)).body).toMatchObject({
      success: false,
      message: 'Telegram 登录数据已过期，请重新登录',
    });
    const before = await count(app());
    const unbound = telegramAuthData(BOT_TOKEN, { id: nextId(), first_name: 'New' });
    const nb = await app().http().get('/api/oauth/telegram/login').query(unbound);
    expect(nb.body.success).toBe(false);
    expect(await count(app())).toBe(before);

    await app().knex('users').where({ id: user.id }).update({ status: 2 });
    expect((await app().http().get('/api/oauth/telegram/login').query(data)).body).toMatchObject({ success: false, message: '用户已被封禁' });
    await app().ctx.options.set('TelegramOAuthEnabled', 'false');
    try {
      expect((await app().http().get('/api/oauth/telegram/login').query(data)).body).toMatchObject({
        success: false,
        message: '管理员未开启通过 Telegram 登录以及注册',
      });
    } finally {
      await app().ctx.options.set('TelegramOAuthEnabled', 'true');
    }
  });

  it('supports the widget navigating the browser to the login URL, through the console callback page', async () => {
    const user = await makeUser(app());
    const tg = String(nextId());
    await app().knex('users').where({ id: user.id }).update({ telegram_id: tg });
    const browser = app().http();
    // The console asks for a state of its session first and puts it in the widget's auth URL.
    const loginState = await stateFor(browser);
    const nav = await browser
      .get('/api/oauth/telegram/login')
      .query({ ...telegramAuthData(BOT_TOKEN, { id: tg, first_name: 'Nav' }), state: loginState })
      .set('Accept', 'text/html')
      .redirects(0);
    expect(nav.status).toBe(302);
    const back = new URL(nav.headers.location, 'http://gateway.test');
    expect(back.pathname).toBe('/oauth/telegram');
    const callback = `/api/oauth/telegram?code=${back.searchParams.get('code')}&state=${back.searchParams.get('state')}`;
    // Another browser cannot use it (state bound to the session).
    expect((await app().http().get(callback)).body).toMatchObject({ success: false, message: BAD_STATE });
    const res = await browser.get(callback);
    expect(res.body).toMatchObject({ success: true, data: { id: user.id } });
    expect((await browser.get(callback)).body.success).toBe(false);
    // Tampered data is only checked at the callback, and refused there.
    const forged = { ...telegramAuthData(BOT_TOKEN, { id: tg, first_name: 'Nav' }), id: String(nextId()) };
    const browser2 = app().http();
    const state2 = await stateFor(browser2);
    const nav2 = await browser2
      .get('/api/oauth/telegram/login')
      .query({ ...forged, state: state2 })
      .set('Accept', 'text/html')
      .redirects(0);
    const b2 = new URL(nav2.headers.location, 'http://gateway.test');
    const agent2 = app().http();
    // The state lives in the cookie of the browser that navigated: replay it with that cookie.
    const cookie = ([] as string[])
      .concat(nav2.headers['set-cookie'] ?? [])
      .map((c) => c.split(';')[0])
      .join('; ');
    const r2 = await agent2.get(`/api/oauth/telegram?code=${b2.searchParams.get('code')}&state=${b2.searchParams.get('state')}`).set('Cookie', cookie);
    expect(r2.body).toMatchObject({ success: false, message: 'Telegram 登录数据校验失败' });
  });

  it("a link on another site cannot log a browser into someone's account through the widget navigation (login CSRF)", async () => {
    const user = await makeUser(app());
    const tg = String(nextId());
    await app().knex('users').where({ id: user.id }).update({ telegram_id: tg });
    const victim = app().http();
    const nav = await victim
      .get('/api/oauth/telegram/login')
      .query(telegramAuthData(BOT_TOKEN, { id: tg, first_name: 'Mallory' }))
      .set('Accept', 'text/html')
      .redirects(0);
    expect(nav.status).toBe(200);
    expect(nav.body).toMatchObject({ success: false, message: BAD_STATE });
    // A state of another browser does not help either.
    const other = app().http();
    const foreign = await stateFor(other);
    const nav2 = await victim
      .get('/api/oauth/telegram/login')
      .query({ ...telegramAuthData(BOT_TOKEN, { id: tg, first_name: 'Mallory' }), state: foreign })
      .set('Accept', 'text/html')
      .redirects(0);
    expect(nav2.body).toMatchObject({ success: false, message: BAD_STATE });
    expect((await victim.get('/api/user/self').set('New-Api-User', String(user.id))).status).toBe(401);
  });

  it('binds through the widget auth URL for the session user and refuses conflicts', async () => {
    const data = telegramAuthData(BOT_TOKEN, { id: nextId(), first_name: 'Bo' });
    expect((await app().http().get('/api/oauth/telegram/bind').query(data)).status).toBe(401);
    const me = await loggedIn(app());
    // The widget navigates the browser: success sends it back to the settings page.
    // (The agent attaches cookies when a request is created: ask for the state first.)
    const state = await bindState(me);
    const nav = await me.agent
      .get('/api/oauth/telegram/bind')
      .query({ ...data, state })
      .set('Accept', 'text/html')
      .redirects(0);
    expect(nav.status).toBe(302);
    expect(nav.headers.location).toBe('/setting');
    expect((await app().knex('users').where({ id: me.id }).first()).telegram_id).toBe(data.id);
    const other = await loggedIn(app());
    const otherState = await bindState(other);
    const conflict = await other.agent.get('/api/oauth/telegram/bind').query({ ...data, state: otherState });
    expect(conflict.body).toMatchObject({ success: false, message: '该 Telegram 账户已被绑定' });
    const badState = await bindState(other);
    const bad = await other.agent.get('/api/oauth/telegram/bind').query({ ...data, hash: '0'.repeat(64), state: badState });
    expect(bad.body.success).toBe(false);
  });

  it('does not bind from a link on another site: the bind needs a state the console asked for', async () => {
    const victim = await loggedIn(app());
    const before = (await app().knex('users').where({ id: victim.id }).first()).telegram_id;
    // The attacker's own signed widget data, sent to the victim's browser by a link (cookie only).
    const attacker = telegramAuthData(BOT_TOKEN, { id: nextId(), first_name: 'Mallory' });
    const noState = await victim.agent.get('/api/oauth/telegram/bind').query(attacker).set('Accept', 'text/html').redirects(0);
    expect(noState.body).toMatchObject({ success: false, message: BAD_STATE });
    const guessed = await victim.agent.get('/api/oauth/telegram/bind').query({ ...attacker, state: 'x'.repeat(32) });
    expect(guessed.body).toMatchObject({ success: false, message: BAD_STATE });
    // The state endpoint itself needs New-Api-User (another site cannot send it)…
    expect((await victim.agent.post('/api/oauth/telegram/bind_state')).status).toBe(401);
    // …and a generic login state of this session (GET /api/oauth/state) does not bind.
    const loginState = (await victim.agent.get('/api/oauth/state')).body.data as string;
    expect((await victim.agent.get('/api/oauth/telegram/bind').query({ ...attacker, state: loginState })).body).toMatchObject({
      success: false,
      message: BAD_STATE,
    });
    // The login navigation flow, started by a link while the victim is logged in, does not bind
    // either: without a state of the victim's session it stops at once…
    const nav = await victim.agent.get('/api/oauth/telegram/login').query(attacker).set('Accept', 'text/html').redirects(0);
    expect(nav.body).toMatchObject({ success: false, message: BAD_STATE });
    // …and even with one (the victim's console asked for it) its callback only logs in.
    const s2 = await stateFor(victim.agent);
    const nav2 = await victim.agent
      .get('/api/oauth/telegram/login')
      .query({ ...attacker, state: s2 })
      .set('Accept', 'text/html')
      .redirects(0);
    const back = new URL(nav2.headers.location, 'http://gateway.test');
    const cb = await victim.get(`/api/oauth/telegram?code=${back.searchParams.get('code')}&state=${back.searchParams.get('state')}`);
    expect(cb.body.success).toBe(false);
    expect((await app().knex('users').where({ id: victim.id }).first()).telegram_id).toBe(before);
    expect(await app().knex('users').where({ telegram_id: attacker.id }).first()).toBeUndefined();
    // A state is single-use and bound to the user that asked for it.
    const state = await bindState(victim);
    const other = await loggedIn(app());
    expect((await other.agent.get('/api/oauth/telegram/bind').query({ ...attacker, state })).body).toMatchObject({ success: false, message: BAD_STATE });
  });
});

describeEach(DB_TARGETS, 'Email binding', (app) => {
  beforeAll(async () => {
    await setupRoot(app());
    await configure(app());
  });

  it('needs a login, an email and a code', async () => {
    expect((await app().http().get('/api/oauth/email/bind?email=a@b.co&code=1')).status).toBe(401);
    const me = await loggedIn(app());
    expect((await me.get('/api/oauth/email/bind?code=123456')).body).toMatchObject({ success: false, message: 'Please enter email!' });
    expect((await me.get('/api/oauth/email/bind?email=a@b.co')).body).toMatchObject({ success: false, message: 'Please enter email verification code!' });
    expect((await me.get('/api/oauth/email/bind?email=not-an-email&code=1')).body.success).toBe(false);
  });

  it('binds with the right code once, refuses a wrong code and an email used by someone else', async () => {
    const me = await loggedIn(app());
    const email = `me${nextId()}@example.com`;
    const code = await issueCode(app().ctx, 'email', email);
    const wrong = await me.get(`/api/oauth/email/bind?email=${email}&code=000000${code === '000000' ? '1' : ''}`);
    expect(wrong.body).toMatchObject({ success: false, message: '验证码错误或已过期！' });
    expect((await app().knex('users').where({ id: me.id }).first()).email).toBe('');
    const ok = await me.get(`/api/oauth/email/bind?email=${email}&code=${code}`);
    expect(ok.body).toMatchObject({ success: true });
    expect((await app().knex('users').where({ id: me.id }).first()).email).toBe(email);

    const other = await loggedIn(app());
    const code2 = await issueCode(app().ctx, 'email', email);
    const taken = await other.get(`/api/oauth/email/bind?email=${email}&code=${code2}`);
    expect(taken.body).toMatchObject({ success: false, message: '邮箱地址已被占用' });
    const fresh = `other${nextId()}@example.com`;
    const code3 = await issueCode(app().ctx, 'email', fresh);
    expect((await other.get(`/api/oauth/email/bind?email=${fresh}&code=${code3}`)).body.success).toBe(true);
    expect((await other.get(`/api/oauth/email/bind?email=${fresh}&code=${code3}`)).body).toMatchObject({ success: false, message: '验证码错误或已过期！' });
  });
});

describeEach(KV_TARGETS, 'OAuth rate limit', (app) => {
  it('caps identity calls per IP with 429', async () => {
    const { limit } = OAUTH_RATE_LIMIT;
    for (let i = 0; i < limit; i += 50) {
      const batch = await Promise.all(Array.from({ length: Math.min(50, limit - i) }, () => app().http().get('/api/oauth/state')));
      for (const r of batch) expect(r.status).toBe(200);
    }
    const over = await app().http().get('/api/oauth/github?code=x&state=y');
    expect(over.status).toBe(429);
    // Other areas are not affected.
    expect((await app().http().get('/api/status')).status).toBe(200);
  });
});
