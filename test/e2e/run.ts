/**
 * End-to-end suite: headless Chromium against the real server (in-process, temp SQLite file, the
 * built console) and the mock upstream. Flow: setup → login → create a channel pointing at the
 * mock → test it → create a token → see it in the list → switch language to en and back → logout,
 * plus the guards (private routes, not-found, session expiry). Screenshots go to
 * test/e2e/screenshots/. Prints "N passed, M failed" and exits non-zero on any failure.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startStack, type Stack } from './stack';
import { ADMIN, SHOTS, TIMEOUT, active, assert, counts, expectPath, expectText, failures, shot, step } from './lib';
import { FLOWS } from './flows';
import { issueCode } from '../../server/src/services/verification';

async function main(): Promise<void> {
  fs.mkdirSync(SHOTS, { recursive: true });
  let stack: Stack | undefined;
  let browser: Browser | undefined;
  try {
    stack = await startStack();
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    const context = await browser.newContext({ viewport: { width: 1366, height: 820 }, locale: 'zh-CN' });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    active.page = page;
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    const base = stack.baseUrl;
    const s = stack;

    console.log(`e2e: console at ${base}, mock upstream at ${s.mock.url}`);

    let ok = await step('a fresh install sends every page to /setup', async () => {
      await page.goto(`${base}/token`);
      await expectPath(page, '/setup');
      await expectText(page, '系统初始化');
      await page.getByTestId('sqlite-warning').waitFor();
      await shot(page, '01-setup');
    });

    ok &&= await step('setup validates, then creates the root user (with a starting balance) and logs the operator in', async () => {
      await page.getByLabel('用户名').fill(ADMIN.username);
      await page.getByLabel('密码', { exact: true }).fill('short');
      await page.getByLabel('确认密码').fill('short');
      await page.getByTestId('setup-submit').click();
      await expectText(page, '密码长度至少为8个字符');
      await page.getByLabel('密码', { exact: true }).fill(ADMIN.password);
      await page.getByLabel('确认密码').fill(ADMIN.password + 'x');
      await page.getByTestId('setup-submit').click();
      await expectText(page, '两次输入的密码不一致');
      await page.getByLabel('确认密码').fill(ADMIN.password);
      await page.getByTestId('setup-balance').waitFor();
      await page.getByTestId('mode-external').click();
      await page.getByTestId('setup-submit').click();
      await expectPath(page, '/token', 20_000);
      await page.getByTestId('side-menu').waitFor();
      const self = await page.evaluate(async () => {
        const uid = JSON.parse(localStorage.getItem('user') ?? '{}').id;
        return (await fetch('/api/user/self', { headers: { 'New-Api-User': String(uid) } })).json();
      });
      assert(self.success && self.data.role === 100 && self.data.quota === 100_000_000, `root after setup: ${JSON.stringify(self).slice(0, 200)}`);
      // The visitor steps below start logged out.
      await page.evaluate(async () => {
        await fetch('/api/user/logout');
        localStorage.removeItem('user');
      });
      await page.goto(`${base}/`);
      await page.getByTestId('home').waitFor();
      await shot(page, '02-home');
    });

    if (ok) {
      await step('private pages send a visitor to /login; unknown paths show the not-found page', async () => {
        await page.goto(`${base}/topup`);
        await expectPath(page, '/login');
        await page.goto(`${base}/no/such/page`);
        await expectText(page, '页面不存在，请检查你的浏览器地址是否正确');
        await shot(page, '03-not-found');
      });

      await step('public pages: about, register, reset', async () => {
        await page.goto(`${base}/about`);
        await expectText(page, '管理员暂未设置关于页面内容', TIMEOUT);
        await shot(page, '04-about');
        await page.goto(`${base}/register?aff=ABCD`);
        await page.getByTestId('register-submit').waitFor();
        assert((await page.evaluate(() => localStorage.getItem('aff'))) === 'ABCD', 'aff code not stored');
        await page.getByLabel('用户名').fill('bob');
        await page.getByLabel('密码', { exact: true }).fill('1234567');
        await page.getByLabel('确认密码').fill('1234567');
        await page.getByTestId('register-submit').click();
        await expectText(page, '密码长度不得小于 8 位！');
        await shot(page, '05-register');
        await page.goto(`${base}/reset`);
        await page.getByTestId('reset-submit').waitFor();
        await shot(page, '06-reset');
      });
    }

    ok &&= await step('login: empty fields are refused, then a password login opens /token', async () => {
      await page.goto(`${base}/login`);
      await page.getByTestId('login-submit').click();
      await expectText(page, '请输入用户名和密码！');
      await shot(page, '07-login');
      await page.getByLabel('用户名 / 邮箱').fill(ADMIN.username);
      await page.getByLabel('密码', { exact: true }).fill(ADMIN.password);
      await page.getByTestId('login-submit').click();
      await expectPath(page, '/token');
      const stored = await page.evaluate(() => JSON.parse(localStorage.getItem('user') ?? 'null'));
      assert(stored && stored.username === ADMIN.username && stored.role === 100, `stored user: ${JSON.stringify(stored)}`);
      await page.getByTestId('side-menu').waitFor();
      await expectText(page, '渠道管理');
      await shot(page, '08-token-empty');
    });

    if (ok) {
      const channelName = 'mock-openai';
      const channelOk = await step('create a channel pointing at the mock upstream', async () => {
        await page.getByTestId('menu-channel').click();
        await expectPath(page, '/channel');
        await shot(page, '09-channel-list');
        await createChannel(page, { name: channelName, key: 'sk-mock-key', baseUrl: s.mock.url, models: ['gpt-4o-mini'] });
        await page.locator('tr', { hasText: channelName }).first().waitFor();
        await shot(page, '10-channel-created');
      });

      if (channelOk)
        await step('test the channel: the mock answers and the test succeeds', async () => {
          const before = s.mock.requests.length;
          const row = page.locator('tr', { hasText: channelName }).first();
          await row
            .getByRole('button', { name: /^测试$/ })
            .first()
            .click();
          await expectText(page, new RegExp(`通道 ${channelName} 测试成功`));
          const calls = s.mock.requests.slice(before).filter((r) => /\/v1\/chat\/completions$/.test(r.path));
          assert(calls.length > 0, 'the mock upstream got no chat completion');
          assert(String(calls[0]!.headers.authorization ?? '').includes('sk-mock-key'), 'the channel key was not sent upstream');
          await shot(page, '11-channel-tested');
        });

      const tokenName = 'e2e-token';
      ok &&= await step('create a token and see it in the list', async () => {
        if (!channelOk) await page.goto(`${base}/token`);
        await page.getByTestId('menu-token').click();
        await expectPath(page, '/token');
        await createToken(page, tokenName);
        await page.locator('tr', { hasText: tokenName }).first().waitFor();
        await shot(page, '12-token-list');
      });

      ok &&= await step('the other console screens open', async () => {
        for (const [testId, pathname, name] of [
          ['menu-log', '/log', '13-log'],
          ['menu-redemption', '/redemption', '14-redemption'],
          ['menu-user', '/user', '15-user'],
          ['menu-topup', '/topup', '16-topup'],
        ] as const) {
          await page.getByTestId(testId).click();
          await expectPath(page, pathname);
          await page.waitForLoadState('networkidle');
          await shot(page, name);
        }
      });

      ok &&= await step('collapse the sidebar (remembered), dark theme (theme-mode)', async () => {
        await page.getByTestId('sidebar-toggle').click();
        assert((await page.evaluate(() => localStorage.getItem('sidebar_collapsed'))) === 'true', 'collapse not remembered');
        await waitWidth(page, 60);
        await page.getByTestId('theme-switch').click();
        assert((await page.evaluate(() => localStorage.getItem('theme-mode'))) === 'dark', 'theme-mode not stored');
        await page.getByTestId('menu-token').click();
        await shot(page, '17-dark-collapsed');
        await page.getByTestId('theme-switch').click();
        await page.getByTestId('sidebar-toggle').click();
        await waitWidth(page, 200);
      });

      ok &&= await step('switch the language to English and back', async () => {
        await page.getByTestId('language-menu').click();
        await page.getByRole('menuitem', { name: 'English' }).click();
        await expectText(page, 'API tokens');
        assert((await page.evaluate(() => localStorage.getItem('i18nextLng'))) === 'en', 'i18nextLng not en');
        await shot(page, '18-english');
        await page.reload();
        await expectText(page, 'API tokens');
        await page.getByTestId('language-menu').click();
        await page.getByRole('menuitem', { name: '中文' }).click();
        await expectText(page, '令牌管理');
        assert((await page.evaluate(() => localStorage.getItem('i18nextLng'))) === 'zh', 'i18nextLng not zh');
      });

      ok &&= await step('mobile (≤600 px): no sidebar, the menu opens from the top bar', async () => {
        await page.setViewportSize({ width: 390, height: 800 });
        await page.goto(`${base}/token`);
        await page.locator('tr', { hasText: 'e2e-token' }).first().waitFor();
        assert((await page.getByTestId('side-menu').count()) === 0, 'sidebar shown on mobile');
        await shot(page, '20-mobile-token');
        await page.getByRole('button', { name: '菜单' }).click();
        await page.getByTestId('side-menu').waitFor();
        await shot(page, '21-mobile-menu');
        await page.getByTestId('menu-log').click();
        await expectPath(page, '/log');
        await page.setViewportSize({ width: 1366, height: 820 });
      });

      ok &&= await step('logout clears the user and returns to /login', async () => {
        await page.getByTestId('user-menu').click();
        await page.getByTestId('logout').click();
        await expectPath(page, '/login');
        assert((await page.evaluate(() => localStorage.getItem('user'))) === null, 'user still stored');
        await page.goto(`${base}/token`);
        await expectPath(page, '/login');
      });

      ok &&= await step('a visitor registers; an ordinary user sees no admin screens', async () => {
        await page.goto(`${base}/register`);
        await page.getByLabel('用户名').fill('bob');
        await page.getByLabel('密码', { exact: true }).fill('bob-pass-123');
        await page.getByLabel('确认密码').fill('bob-pass-123');
        await page.getByTestId('register-submit').click();
        await expectText(page, '注册成功！');
        await expectPath(page, '/login');
        await page.getByLabel('用户名 / 邮箱').fill('bob');
        await page.getByLabel('密码', { exact: true }).fill('bob-pass-123');
        await page.getByTestId('login-submit').click();
        await expectPath(page, '/token');
        await page.getByTestId('menu-log').waitFor();
        assert((await page.getByTestId('menu-channel').count()) === 0, 'a user sees the admin group');
        assert((await page.getByTestId('menu-performance').count()) === 0, 'a user sees the metrics entry');
        await shot(page, '22-user-menu');
        await page.goto(`${base}/channel`);
        await expectText(page, '页面不存在，请检查你的浏览器地址是否正确');
        await page.getByTestId('user-menu').click();
        await page.getByTestId('logout').click();
        await expectPath(page, '/login');
      });

      ok &&= await step('password reset confirm: the link shows a new password that logs in', async () => {
        await s.app.ctx.knex('users').where({ username: 'bob' }).update({ email: 'bob@example.com' });
        const token = await issueCode(s.app.ctx, 'reset', 'bob@example.com', 'e2e-reset-token-0001');
        await page.goto(`${base}/user/reset?email=bob%40example.com&token=${token}`);
        // The clipboard refuses: the manual-copy dialog must show the password.
        // (a string: tsx would wrap named functions in a helper the page does not have)
        await page.evaluate(`Object.defineProperty(navigator, 'clipboard', { value: { writeText: function () { return Promise.reject(new Error('denied')); } } });
          document.execCommand = function () { return false; };`);
        await page.getByTestId('reset-confirm').click();
        const field = page.getByTestId('new-password');
        await field.waitFor();
        const pwd = await field.inputValue();
        assert(pwd.length >= 8, `new password: ${pwd}`);
        const dialog = page.getByTestId('copy-dialog');
        await dialog.getByText('无法复制到剪贴板，请手动复制').waitFor();
        assert((await dialog.locator('textarea').first().inputValue()) === pwd, 'the dialog does not show the password');
        await shot(page, '23-reset-copy-dialog');
        await dialog.getByRole('button').click();
        await page.goto(`${base}/login`);
        await page.getByLabel('用户名 / 邮箱').fill('bob');
        await page.getByLabel('密码', { exact: true }).fill(pwd);
        await page.getByTestId('login-submit').click();
        await expectPath(page, '/token');
        await page.getByTestId('user-menu').click();
        await page.getByTestId('logout').click();
        await expectPath(page, '/login');
      });

      ok &&= await step('an expired session (401) goes to /login?expired=true', async () => {
        await page.getByLabel('用户名 / 邮箱').fill(ADMIN.username);
        await page.getByLabel('密码', { exact: true }).fill(ADMIN.password);
        await page.getByTestId('login-submit').click();
        await expectPath(page, '/token');
        await context.clearCookies();
        await page.reload();
        await expectPath(page, /^\/login\?expired=true$/);
        await page.getByTestId('expired-notice').waitFor();
        await shot(page, '19-expired');
      });
    }

    if (ok) {
      await step('site options show: self-use badge, no register entry, docs link, footer HTML, Markdown home, third-party buttons', async () => {
        const o = s.app.ctx.options;
        await o.set('SelfUseModeEnabled', 'true');
        await o.set('general_setting.docs_link', 'https://docs.example.com/');
        await o.set('Footer', '<span data-testid="custom-footer">Custom footer</span>');
        await o.set('HomePageContent', '# Welcome aboard\n\nHello **there**');
        await o.set('GitHubClientId', 'gh-client');
        await o.set('GitHubClientSecret', 'gh-secret');
        await o.set('GitHubOAuthEnabled', 'true');
        await page.goto(`${base}/`);
        await page.locator('h1', { hasText: 'Welcome aboard' }).waitFor();
        await expectText(page, '自用模式');
        await page.getByTestId('custom-footer').waitFor();
        assert((await page.getByTestId('nav-register').count()) === 0, 'register entry shown in self-use mode');
        const docs = page.getByRole('link', { name: '文档' });
        assert((await docs.getAttribute('href')) === 'https://docs.example.com/' && (await docs.getAttribute('target')) === '_blank', 'docs link');
        await shot(page, '24-home-options');
        await page.goto(`${base}/login`);
        const gh = page.getByTestId('oauth-github');
        await gh.waitFor();
        assert((await gh.getAttribute('href')) === '/api/oauth/github/authorize?aff=ABCD', `github link: ${await gh.getAttribute('href')}`);
        const redirect = await fetch(`${base}/api/oauth/github/authorize?aff=ABCD`, { redirect: 'manual' });
        const location = redirect.headers.get('location') ?? '';
        assert(
          redirect.status === 302 && location.startsWith('https://github.com/login/oauth/authorize') && location.includes('client_id=gh-client'),
          `github redirect: ${redirect.status} ${location}`,
        );
        assert((await page.getByText('没有账户？').count()) === 0, 'register link shown in self-use mode');
        await shot(page, '25-login-options');
      });

      await step('menu flags: chat links, drawing and task logs; no dashboard when data export is off', async () => {
        const o = s.app.ctx.options;
        await o.set('Chats', JSON.stringify([{ NextChat: 'https://chat.example/#/?key={key}' }, { Lobe: 'https://lobe.example/?k={key}' }]));
        await o.set('DrawingEnabled', 'true');
        await o.set('TaskEnabled', 'true');
        await o.set('DataExportEnabled', 'false');
        await page.goto(`${base}/login`);
        await page.getByLabel('用户名 / 邮箱').fill(ADMIN.username);
        await page.getByLabel('密码', { exact: true }).fill(ADMIN.password);
        await page.getByTestId('login-submit').click();
        await expectPath(page, '/token');
        for (const id of ['menu-chat', 'menu-chat-0', 'menu-chat-1', 'menu-midjourney', 'menu-task']) await page.getByTestId(id).waitFor();
        assert((await page.getByTestId('menu-detail').count()) === 0, 'dashboard shown with data export off');
        await page.getByTestId('menu-chat-1').click();
        await expectPath(page, '/chat/1');
        // The route changes before React re-renders the frame: wait for the menu to go.
        await page
          .getByTestId('side-menu')
          .waitFor({ state: 'detached', timeout: 5000 })
          .catch(() => undefined);
        assert((await page.getByTestId('side-menu').count()) === 0, 'sidebar shown on a chat page');
        await page.goto(`${base}/task`);
        await shot(page, '26-menu-flags');
      });

      await step('the site default collapses the sidebar until the user chooses', async () => {
        await s.app.ctx.options.set('DefaultCollapseSidebar', 'true');
        await page.evaluate(() => localStorage.removeItem('sidebar_collapsed'));
        await page.goto(`${base}/token`);
        await waitWidth(page, 60);
        await page.getByTestId('sidebar-toggle').click();
        await waitWidth(page, 200);
        await page.reload();
        await page.getByTestId('side-menu').waitFor();
        await waitWidth(page, 200);
      });
    }

    // Feature flows (test/e2e/flows/*): each in a fresh browser context, logged in as root.
    if (ok) {
      // E2E_FLOWS=name,name runs only those feature flows (for working on one screen).
      const only = process.env.E2E_FLOWS?.split(',').map((n) => n.trim());
      for (const flow of FLOWS.filter((f) => !only || only.includes(f.name))) {
        const fctx = await browser.newContext({ viewport: { width: 1366, height: 820 }, locale: 'zh-CN' });
        const fpage = await fctx.newPage();
        fpage.setDefaultTimeout(TIMEOUT);
        fpage.on('pageerror', (e) => pageErrors.push(`${flow.name}: ${e.message}`));
        active.page = fpage;
        const loggedIn = await step(`${flow.name}: log in as root`, async () => {
          await fpage.goto(`${base}/login`);
          await fpage.getByLabel('用户名 / 邮箱').fill(ADMIN.username);
          await fpage.getByLabel('密码', { exact: true }).fill(ADMIN.password);
          await fpage.getByTestId('login-submit').click();
          await expectPath(fpage, '/token');
        });
        if (loggedIn) await flow.run({ page: fpage, base, stack: s, admin: ADMIN });
        await fctx.close();
      }
      active.page = page;
    }

    await step('no uncaught page errors', async () => {
      assert(pageErrors.length === 0, `page errors:\n${pageErrors.slice(0, 5).join('\n')}`);
    });
  } catch (err) {
    counts.failed++;
    failures.push(`harness: ${(err as Error)?.stack ?? String(err)}`);
    console.log(`  ✗ harness: ${(err as Error)?.message ?? String(err)}`);
  } finally {
    await browser?.close().catch(() => undefined);
    await stack?.stop().catch(() => undefined);
  }
  console.log(`\nscreenshots: ${path.relative(process.cwd(), SHOTS)}`);
  console.log(`${counts.passed} passed, ${counts.failed} failed`);
  process.exitCode = counts.failed > 0 || counts.passed === 0 ? 1 : 0;
}

/** Waits for the side menu to reach a width (it animates). */
async function waitWidth(page: Page, px: number): Promise<void> {
  await page.waitForFunction((w) => Math.round(document.querySelector('[data-testid="side-menu"]')?.getBoundingClientRect().width ?? 0) === w, px, {
    timeout: 5000,
  });
}

/** Fills the channel drawer (built by the resource screens) and saves. */
async function createChannel(page: Page, c: { name: string; key: string; baseUrl: string; models: string[] }): Promise<void> {
  await page
    .getByRole('button', { name: /添加渠道|新建|创建/ })
    .first()
    .click();
  await expectPath(page, '/channel/create');
  const drawer = page.getByRole('dialog').or(page.locator('.MuiDrawer-paper')).first();
  await drawer.getByLabel(/^名称/).first().fill(c.name);
  await drawer.getByLabel('代理地址', { exact: true }).first().fill(c.baseUrl);
  await drawer.getByLabel(/^密钥/).first().fill(c.key);
  for (const m of c.models) {
    const input = drawer.getByLabel('自定义模型名称', { exact: true }).first();
    await input.fill(m);
    await input.press('Enter');
  }
  await drawer
    .getByRole('button', { name: /提交|保存/ })
    .first()
    .click();
  await expectText(page, /渠道创建成功|已创建/);
}

/** Fills the token drawer and saves. */
async function createToken(page: Page, name: string): Promise<void> {
  await page
    .getByRole('button', { name: /添加令牌|新建|创建/ })
    .first()
    .click();
  await expectPath(page, '/token/create');
  const drawer = page.getByRole('dialog').or(page.locator('.MuiDrawer-paper')).first();
  await drawer.getByLabel(/^名称/).first().fill(name);
  await drawer
    .getByRole('button', { name: /提交|保存/ })
    .first()
    .click();
  await expectText(page, /令牌创建成功|已创建/);
}

void main();
