import { assert, expectText, loginElsewhere, shot, step } from '../lib';
import { seedChannel } from '../../mock-upstream/seed';
import { invalidateChannels } from '../../../server/src/services/invalidate';
import { formatQuota } from '../../../admin/src/resources/shared/format';
import crypto from 'node:crypto';
import { issueCode } from '../../../server/src/services/verification';
import { createAccount } from '../../../server/src/services/accounts';
import { expectPath } from '../lib';
import type { Flow } from './types';

async function until(check: () => Promise<boolean>, what: string, timeout = 10_000): Promise<void> {
  const end = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** End-to-end steps of the personal settings page (/personal). */
export const flow: Flow = {
  name: 'personal',
  async run(ctx) {
    const { page, base } = ctx;
    const knex = ctx.stack.app.ctx.knex;
    const root = () => knex('users').where({ username: ctx.admin.username }).first();

    await step('personal: account card, models, invitation link', async () => {
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      await page.goto(`${base}/personal`);
      await page.getByTestId('personal-account').getByText(ctx.admin.username).first().waitFor();
      await page.getByTestId('personal-role').filter({ hasText: '超级管理员' }).waitFor();
      await until(async () => (await page.getByTestId('personal-aff-link').inputValue()).startsWith(`${base}/register?aff=`), 'the invitation link');
      const link = await page.getByTestId('personal-aff-link').inputValue();
      const row = await root();
      assert(row.aff_code && link === `${base}/register?aff=${row.aff_code}`, `invitation link ${link} vs code ${row.aff_code}`);
      await shot(page, 'personal-01-page');
    });

    await step('personal: generating the access token copies it (the token authenticates the API)', async () => {
      await page.getByTestId('personal-token').click();
      // A new token needs a fresh re-verification (root has only its password).
      await page.getByTestId('verify-input').fill(ctx.admin.password);
      await page.getByTestId('verify-submit').click();
      await expectText(page, '令牌已重置并已复制到剪贴板');
      const shownToken = await page.getByTestId('personal-token-value').inputValue();
      const row = await root();
      assert(shownToken.length > 0 && shownToken === row.access_token, 'the shown token is the stored one');
      const clip = await page.evaluate(() => navigator.clipboard.readText());
      assert(clip === shownToken, 'the clipboard holds the token');
      const res = await page.request.get(`${base}/api/user/self`, { headers: { Authorization: shownToken, 'New-Api-User': String(row.id) } });
      const body = await res.json();
      assert(body.success === true && body.data?.username === ctx.admin.username, `token login: ${JSON.stringify(body).slice(0, 200)}`);
    });

    await step('personal: notification settings (https webhook required, threshold preset) are saved', async () => {
      await page.getByTestId('personal-notify-webhook').click();
      await page.getByTestId('personal-webhook-url').fill('http://hooks.example/notify');
      await page.getByTestId('personal-settings-save').click();
      await expectText(page, 'Webhook地址必须以https://开头');
      await page.getByTestId('personal-webhook-url').fill('https://hooks.example/notify');
      await page.getByTestId('personal-webhook-secret').fill('e2e-secret');
      await page.getByTestId('personal-threshold-1000000').click();
      assert((await page.getByTestId('personal-threshold').inputValue()) === '1000000', 'preset fills the threshold');
      await page.getByTestId('personal-settings-save').click();
      await expectText(page, '通知设置已更新');
      const setting = JSON.parse((await root()).setting || '{}');
      assert(
        setting.notify_type === 'webhook' &&
          Number(setting.quota_warning_threshold) === 1000000 &&
          setting.webhook_url === 'https://hooks.example/notify' &&
          setting.webhook_secret === 'e2e-secret',
        `stored setting: ${JSON.stringify(setting)}`,
      );
      // price tab: the same PUT keeps the notification fields
      await page.getByTestId('personal-tab-price').click();
      await page.getByTestId('personal-accept-unset').click();
      await page.getByTestId('personal-settings-save').click();
      await until(async () => JSON.parse((await root()).setting || '{}').accept_unset_model_ratio_model === true, 'accept_unset saved');
      const after = JSON.parse((await root()).setting || '{}');
      assert(after.notify_type === 'webhook' && Number(after.quota_warning_threshold) === 1000000, 'notification fields kept');
      // survives a reload
      await page.reload();
      await until(async () => (await page.getByTestId('personal-threshold').inputValue()) === '1000000', 'threshold after reload');
      assert((await page.getByTestId('personal-webhook-url').inputValue()) === 'https://hooks.example/notify', 'webhook url after reload');
      await shot(page, 'personal-02-notify');
    });

    await step('personal: a wrong delete confirmation and mismatched passwords are refused', async () => {
      await page.getByTestId('personal-delete').click();
      await page.getByTestId('personal-delete-input').fill(`${ctx.admin.username}x`);
      await page.getByTestId('personal-delete-confirm').click();
      await expectText(page, '请输入你的账户名以确认删除！');
      await shot(page, 'personal-03-delete');
      await page.keyboard.press('Escape');
      assert((await root()).deleted_at == null, 'the account still exists');
      await page.getByTestId('personal-password').click();
      await page.getByTestId('personal-pw-original').fill(ctx.admin.password);
      await page.getByTestId('personal-pw-new').fill('new-pass-123');
      await page.getByTestId('personal-pw-confirm').fill('new-pass-124');
      await page.getByTestId('personal-pw-submit').click();
      await expectText(page, '两次输入的密码不一致！');
      await page.keyboard.press('Escape');
    });

    await step('personal: invitation transfer refuses less than the quota per unit, then moves earnings to the balance', async () => {
      const o = ctx.stack.app.ctx.options;
      const qpu = o.quotaPerUnit;
      const money = (q: number) => formatQuota(q, { displayInCurrency: o.bool('DisplayInCurrencyEnabled'), quotaPerUnit: qpu });
      await knex('users')
        .where({ username: ctx.admin.username })
        .update({ aff_quota: 3 * qpu });
      const before = Number((await root()).quota);
      await page.reload();
      await page
        .getByTestId('personal-aff-quota')
        .filter({ hasText: money(3 * qpu) })
        .waitFor();
      await page.getByTestId('personal-aff-transfer').click();
      await page.getByTestId('personal-aff-amount').fill(String(qpu - 1));
      await page.getByTestId('personal-aff-confirm').click();
      await expectText(page, `划转金额最低为 ${money(qpu)}`);
      await page.getByTestId('personal-aff-amount').fill(String(2 * qpu));
      await page.getByTestId('personal-aff-confirm').click();
      await expectText(page, '划转成功');
      await page
        .getByTestId('personal-aff-quota')
        .filter({ hasText: money(qpu) })
        .waitFor();
      await page
        .getByTestId('personal-balance')
        .filter({ hasText: money(before + 2 * qpu) })
        .waitFor();
      const row = await root();
      assert(Number(row.quota) === before + 2 * qpu && Number(row.aff_quota) === qpu, 'the transfer moved the quota');
    });

    await step('personal: the model list shows 10, expands to all, and a click copies a name', async () => {
      const models = Array.from({ length: 12 }, (_, i) => `e2e-personal-model-${String(i + 1).padStart(2, '0')}`);
      const channelId = await seedChannel(
        { knex, ctx: ctx.stack.app.ctx },
        { name: 'e2e-personal', base_url: ctx.stack.mock.url, models: models.join(','), group: 'default' },
      );
      try {
        await page.reload();
        const chips = page.getByTestId('personal-model');
        await chips.first().waitFor();
        const total = (await page.request.get(`${base}/api/user/models`, { headers: { 'New-Api-User': String((await root()).id) } }).then((r) => r.json())).data
          .length as number;
        assert(total >= 12, `models available: ${total}`);
        assert((await chips.count()) === 10, `collapsed count ${await chips.count()}`);
        await page.getByTestId('personal-models-toggle').click();
        await until(async () => (await chips.count()) === total, 'all models shown');
        await page.getByText('e2e-personal-model-12', { exact: true }).click();
        await expectText(page, '已复制到剪贴板！');
        assert((await page.evaluate(() => navigator.clipboard.readText())) === 'e2e-personal-model-12', 'the model name was copied');
        await page.getByTestId('personal-models-toggle').click();
        await until(async () => (await chips.count()) === 10, 'collapsed again');
      } finally {
        // leave the other flows the channels they expect
        await knex('abilities').where({ channel_id: channelId }).del();
        await knex('channels').where({ id: channelId }).del();
        await invalidateChannels(ctx.stack.app.ctx);
      }
    });

    await step('personal: email binding (validations, code, bound address) and provider bind buttons', async () => {
      const app = ctx.stack.app.ctx;
      const o = app.options;
      const keys = ['GitHubOAuthEnabled', 'GitHubClientId', 'GitHubClientSecret', 'WeChatAuthEnabled', 'WeChatAccountQRCodeImageURL'] as const;
      const saved = Object.fromEntries(keys.map((k) => [k, o.get(k)]));
      const savedEmail = (await root()).email;
      try {
        await o.set('GitHubClientId', 'gh-client');
        await o.set('GitHubClientSecret', 'gh-secret');
        await o.set('GitHubOAuthEnabled', 'true');
        await o.set('WeChatAuthEnabled', 'true');
        await page.reload();
        await page.getByTestId('personal-bind-github').waitFor();
        assert((await page.getByTestId('personal-bind-github').getAttribute('href')) === '/api/oauth/github/authorize', 'github bind redirect');
        await page.getByTestId('personal-bind-wechat').click();
        await expectText(page, '绑定微信');
        await page.keyboard.press('Escape');
        await page.getByTestId('personal-bind-email').click();
        await page.getByTestId('personal-bind-email-confirm').click();
        await expectText(page, '请输入邮箱！');
        await page.getByTestId('personal-bind-email-input').fill('root-e2e@example.com');
        await page.getByTestId('personal-bind-email-confirm').click();
        await expectText(page, '请输入邮箱验证码！');
        await issueCode(app, 'email', 'root-e2e@example.com', '246810');
        await page.getByTestId('personal-bind-code-input').fill('246810');
        await page.getByTestId('personal-bind-email-confirm').click();
        await expectText(page, '邮箱账户绑定成功！');
        await page.getByTestId('personal-bind-email-row').getByText('root-e2e@example.com').waitFor();
        assert((await root()).email === 'root-e2e@example.com', 'the email is bound');
        await shot(page, 'personal-04-bindings');
      } finally {
        for (const k of keys) await o.set(k, saved[k]);
        await knex('users')
          .where({ username: ctx.admin.username })
          .update({ email: savedEmail ?? '' });
      }
    });

    await step('personal: an ordinary user changes the password, then deletes the account (→ /login, stored user cleared)', async () => {
      const app = ctx.stack.app.ctx;
      const username = `pd${crypto.randomBytes(3).toString('hex')}`;
      await createAccount(app, { username, password: 'first-pass-1' });
      const { context: uctx, page: up } = await loginElsewhere(page, base, username, 'first-pass-1');
      try {
        await up.goto(`${base}/personal`);
        await up.getByTestId('personal-role').filter({ hasText: '普通用户' }).waitFor();
        // change password: a wrong original is refused by the server, the right one works
        await up.getByTestId('personal-password').click();
        await up.getByTestId('personal-pw-original').fill('not-the-password');
        await up.getByTestId('personal-pw-new').fill('second-pass-2');
        await up.getByTestId('personal-pw-confirm').fill('second-pass-2');
        await up.getByTestId('personal-pw-submit').click();
        await expectText(up, '原密码错误');
        await up.getByTestId('personal-pw-original').fill('first-pass-1');
        await up.getByTestId('personal-pw-submit').click();
        await expectText(up, '密码修改成功！');
        const login = await up.request.post(`${base}/api/user/login`, { data: { username, password: 'second-pass-2' } });
        assert((await login.json()).success === true, 'the new password logs in');
        // delete: wrong name refused, own name deletes
        await up.getByTestId('personal-delete').click();
        await up.getByTestId('personal-delete-input').fill('someone-else');
        await up.getByTestId('personal-delete-confirm').click();
        await expectText(up, '请输入你的账户名以确认删除！');
        await up.getByTestId('personal-delete-input').fill(username);
        await up.getByTestId('personal-delete-confirm').click();
        await up.getByTestId('verify-input').fill('second-pass-2');
        await up.getByTestId('verify-submit').click();
        await expectPath(up, '/login');
        await expectText(up, '账户已删除！');
        assert((await up.evaluate(() => localStorage.getItem('user'))) === null, 'the stored user is cleared');
        const row = await knex('users').where({ username }).first();
        assert(row && row.deleted_at != null, 'the account is deregistered');
      } finally {
        await uctx.close();
      }
    });

    await step('personal: log out everywhere ends the sessions of every browser (→ /login)', async () => {
      const app = ctx.stack.app.ctx;
      const username = `lo${crypto.randomBytes(3).toString('hex')}`;
      const created = await createAccount(app, { username, password: 'first-pass-1' });
      const browser = page.context().browser();
      assert(browser, 'browser');
      const a = await browser.newContext({ viewport: { width: 1366, height: 820 }, locale: 'zh-CN' });
      const b = await browser.newContext();
      try {
        const other = await b.request.post(`${base}/api/user/login`, { data: { username, password: 'first-pass-1' } });
        assert((await other.json()).success === true, 'the second browser logs in');
        const selfOf = async () => (await b.request.get(`${base}/api/user/self`, { headers: { 'New-Api-User': String(created.id) } })).status();
        assert((await selfOf()) === 200, 'the second browser is logged in');
        const up = await a.newPage();
        await up.goto(`${base}/login`);
        await up.getByLabel('用户名 / 邮箱').fill(username);
        await up.getByLabel('密码', { exact: true }).fill('first-pass-1');
        await up.getByTestId('login-submit').click();
        await expectPath(up, '/token');
        await up.goto(`${base}/personal`);
        await up.getByTestId('personal-logout-all').click();
        await up.getByTestId('personal-logout-all-confirm').click();
        await expectPath(up, '/login');
        await expectText(up, '已退出所有设备的登录');
        assert((await selfOf()) === 401, 'the second browser is logged out too');
      } finally {
        await a.close();
        await b.close();
      }
    });

    await step('personal: English, dark and mobile views', async () => {
      await page.evaluate(() => {
        localStorage.setItem('i18nextLng', 'en');
        localStorage.setItem('theme-mode', 'dark');
      });
      await page.goto(`${base}/personal`);
      await expectText(page, 'Notification settings');
      await shot(page, 'personal-05-en-dark');
      await page.setViewportSize({ width: 390, height: 844 });
      await page.evaluate(() => {
        localStorage.setItem('i18nextLng', 'zh');
        localStorage.setItem('theme-mode', 'light');
      });
      await page.goto(`${base}/personal`);
      await expectText(page, '可用模型');
      // The page itself fits the phone (wide tables scroll inside their card; the top bar is the shell's).
      const overflow = await page.evaluate(
        `(function () { var el = document.querySelector('[data-testid="personal-page"]'); var r = el.getBoundingClientRect(); return Math.max(el.scrollWidth - el.clientWidth, Math.round(r.right - window.innerWidth)); })()`,
      );
      assert(Number(overflow) <= 1, `the page overflows the phone width by ${overflow}px`);
      await shot(page, 'personal-06-mobile');
      await page.setViewportSize({ width: 1366, height: 820 });
    });
  },
};
