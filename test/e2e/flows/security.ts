import crypto from 'node:crypto';
import { generateSync } from 'otplib';
import type { BrowserContext, Page } from 'playwright-core';
import { assert, expectPath, expectText, shot, step } from '../lib';
import { createAccount } from '../../../server/src/services/accounts';
import type { Flow } from './types';

/**
 * Two-factor login, passkeys and re-verification in the browser: Chromium's virtual authenticator
 * (DevTools protocol WebAuthn domain: CTAP2, internal transport, resident keys, user verification)
 * registers a passkey and logs in with it; a TOTP enrolment and login are driven with codes
 * computed here from the secret the page shows (otplib). WebAuthn needs a domain for the RP id, so
 * this flow uses http://localhost:<port> (a secure context) and sets ServerAddress to it.
 */
export const flow: Flow = {
  name: 'security',
  async run(ctx) {
    const app = ctx.stack.app.ctx;
    const knex = app.knex;
    const port = new URL(ctx.base).port;
    const base = `http://localhost:${port}`;
    const savedAddress = app.options.get('ServerAddress');
    const username = `sk${crypto.randomBytes(3).toString('hex')}`;
    const password = 'secure-pass-1';
    const user = await createAccount(app, { username, password });
    const browser = ctx.page.context().browser();
    assert(browser, 'browser');
    let context: BrowserContext | undefined;
    let page: Page | undefined;
    let secret = '';
    let backup: string[] = [];
    await app.options.set('ServerAddress', base);
    try {
      context = await browser.newContext({ viewport: { width: 1366, height: 820 }, locale: 'zh-CN' });
      page = await context.newPage();
      const p = page;
      const cdp = await context.newCDPSession(p);
      await cdp.send('WebAuthn.enable');
      const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });

      const passwordLogin = async () => {
        await p.goto(`${base}/login`);
        await p.getByLabel('用户名 / 邮箱').fill(username);
        await p.getByLabel('密码', { exact: true }).fill(password);
        await p.getByTestId('login-submit').click();
      };
      const logout = async () => {
        await p.evaluate(() => fetch('/api/user/logout').then(() => localStorage.removeItem('user')));
      };

      await step('security: registering a passkey asks for the password first, then the virtual authenticator creates it', async () => {
        await passwordLogin();
        await expectPath(p, '/token');
        await p.goto(`${base}/personal`);
        await p.getByTestId('personal-passkey-add').click();
        await p.getByTestId('personal-passkey-name').fill('E2E laptop');
        await p.getByTestId('personal-passkey-save').click();
        // Adding a way to log in is a sensitive change: the re-verification dialog (password: no other factor yet).
        await p.getByTestId('verify-dialog').waitFor();
        await p.getByTestId('verify-input').fill('wrong-password');
        await p.getByTestId('verify-submit').click();
        await expectText(p, '密码错误');
        await p.getByTestId('verify-input').fill(password);
        await p.getByTestId('verify-submit').click();
        await expectText(p, 'Passkey 注册成功');
        await p.getByTestId('personal-passkey').filter({ hasText: 'E2E laptop' }).waitFor();
        const rows = await knex('user_passkeys').where({ user_id: user.id });
        assert(rows.length === 1 && rows[0].name === 'E2E laptop', `stored passkeys: ${rows.length}`);
        const creds = (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
        assert(creds.length === 1 && creds[0]!.isResidentCredential, 'the authenticator holds one discoverable credential');
        await shot(p, 'security-01-passkey');
      });

      await step('security: the login page logs in with the passkey (no username or password)', async () => {
        await logout();
        await p.goto(`${base}/login`);
        await p.getByTestId('login-passkey').click();
        await expectPath(p, '/token');
        const stored = await p.evaluate(() => JSON.parse(localStorage.getItem('user') ?? 'null'));
        assert(stored && stored.username === username, `stored user: ${JSON.stringify(stored)}`);
        const row = await knex('user_passkeys').where({ user_id: user.id }).first();
        assert(row.last_used_at != null, 'the passkey was used');
      });

      await step('security: enrolling TOTP (re-verified with the passkey) shows the QR code, the key and ten backup codes', async () => {
        await p.goto(`${base}/personal`);
        await p.getByTestId('personal-2fa-state').filter({ hasText: '未启用' }).waitFor();
        await p.getByTestId('personal-2fa-enable').click();
        // The account has a passkey now: it re-verifies with it, not with the password.
        await p.getByTestId('verify-passkey').click();
        await p.getByTestId('personal-2fa-qr').waitFor();
        secret = await p.getByTestId('personal-2fa-secret').inputValue();
        assert(/^[A-Z2-7]{32}$/.test(secret), `secret shown: ${secret}`);
        await p.getByTestId('personal-2fa-code').fill('000000');
        await p.getByTestId('personal-2fa-confirm').click();
        await expectText(p, '验证码或备用码错误，请重试');
        await p.getByTestId('personal-2fa-code').fill(generateSync({ secret }));
        await shot(p, 'security-02-totp-setup');
        await p.getByTestId('personal-2fa-confirm').click();
        await expectText(p, '两步验证启用成功');
        const codes = (await p.getByTestId('personal-2fa-backup').innerText()).split('\n').filter(Boolean);
        assert(codes.length === 10 && codes.every((c) => /^[A-Z2-9]{5}-[A-Z2-9]{5}$/.test(c.trim())), `backup codes: ${codes.join(',')}`);
        backup = codes.map((c) => c.trim());
        await shot(p, 'security-03-backup-codes');
        await p.getByTestId('personal-2fa-backup-done').click();
        await p.getByTestId('personal-2fa-state').filter({ hasText: '已启用' }).waitFor();
        const row = await knex('user_two_factor').where({ user_id: user.id }).first();
        assert(row && row.enabled, '2FA is on');
      });

      await step('security: a password login now asks for the TOTP code (a wrong one is refused)', async () => {
        await logout();
        await passwordLogin();
        await p.getByTestId('login-2fa-code').waitFor();
        await shot(p, 'security-04-login-code');
        await p.getByTestId('login-2fa-code').fill('123456');
        await p.getByTestId('login-2fa-submit').click();
        await expectText(p, '验证码或备用码错误，请重试');
        // The enrolment used this time step: the authenticator's next code.
        await p.getByTestId('login-2fa-code').fill(generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
        await p.getByTestId('login-2fa-submit').click();
        await expectPath(p, '/token');
        const stored = await p.evaluate(() => JSON.parse(localStorage.getItem('user') ?? 'null'));
        assert(stored && stored.username === username, 'logged in after the code');
      });

      await step('security: the access token asks for a re-verification; a spent TOTP step is refused, a backup code passes', async () => {
        await p.goto(`${base}/personal`);
        await p.getByTestId('personal-token').click();
        await p.getByTestId('verify-dialog').waitFor();
        await p.getByTestId('verify-tab-2fa').click();
        await p.getByTestId('verify-input').fill(generateSync({ secret, epoch: Math.floor(Date.now() / 1000) - 30 }));
        await p.getByTestId('verify-submit').click();
        // A step before the login's is spent: refused.
        await expectText(p, '验证码或备用码错误，请重试');
        // A backup code passes (the next TOTP step is still in the future).
        await p.getByTestId('verify-input').fill(backup[0]!);
        await p.getByTestId('verify-submit').click();
        await expectText(p, '令牌已重置');
        const token = await p.getByTestId('personal-token-value').inputValue();
        assert(token === (await knex('users').where({ id: user.id }).first()).access_token, 'the shown token is the stored one');
      });
    } finally {
      await context?.close();
      await app.options.set('ServerAddress', savedAddress);
    }

    await step('security: root views a channel key only after re-verifying with the password', async () => {
      const root = ctx.page;
      const channel = await knex('channels').first('id', 'key');
      assert(channel, 'a channel exists (the core flow made one)');
      await root.goto(`${ctx.base}/channel/${channel.id}`);
      await root.getByTestId('channel-show-key').click();
      await root.getByTestId('verify-dialog').waitFor();
      await root.getByTestId('verify-input').fill(ctx.admin.password);
      await root.getByTestId('verify-submit').click();
      const shown = root.getByTestId('channel-key-value');
      await shown.waitFor();
      assert((await shown.inputValue()) === channel.key, 'the full key is shown');
      await shot(root, 'security-05-channel-key');
      await root.keyboard.press('Escape');
    });

    await step("security: root resets a user's two-factor login from the user list", async () => {
      const root = ctx.page;
      const enabled = async () => !!(await knex('user_two_factor').where({ user_id: user.id, enabled: true }).first('user_id'));
      if (!(await enabled())) return; // the TOTP steps above did not run
      await root.goto(`${ctx.base}/user?filter=${encodeURIComponent(JSON.stringify({ keyword: username }))}`);
      await root.getByTestId(`user-reset-2fa-${user.id}`).click();
      await root.getByRole('button', { name: '确认' }).click();
      await expectText(root, '用户的两步验证已重置');
      assert(!(await enabled()), 'two-factor login is off');
    });
  },
};
