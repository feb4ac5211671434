import crypto from 'node:crypto';
import type { Page, Request } from 'playwright-core';
import { assert, expectText, shot, step } from '../lib';
import { formatQuota } from '../../../admin/src/resources/shared/format';
import type { Flow, FlowContext } from './types';

/** The wallet page's balance, as the console shows it for a quota. */
function shown(ctx: FlowContext, quota: number): string {
  const o = ctx.stack.app.ctx.options;
  return formatQuota(quota, { displayInCurrency: o.bool('DisplayInCurrencyEnabled'), quotaPerUnit: o.quotaPerUnit });
}

async function rootQuota(ctx: FlowContext): Promise<number> {
  const row = await ctx.stack.app.ctx.knex('users').where({ username: ctx.admin.username }).first('quota');
  return Number(row?.quota ?? 0);
}

async function until(check: () => Promise<boolean>, what: string, timeout = 10_000): Promise<void> {
  const end = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function balanceText(page: Page): Promise<string> {
  return (await page.getByTestId('topup-balance').textContent())?.trim() ?? '';
}

/** End-to-end steps of the wallet page (/topup). */
export const flow: Flow = {
  name: 'wallet',
  async run(ctx) {
    const { page, base } = ctx;
    const app = ctx.stack.app.ctx;
    const opts = ['PayAddress', 'EpayId', 'EpayKey', 'ServerAddress', 'MinTopUp', 'TopUpLink'] as const;
    const saved = Object.fromEntries(opts.map((k) => [k, app.options.get(k)]));

    await step('wallet: the page shows the current balance', async () => {
      await page.goto(`${base}/topup`);
      const expected = shown(ctx, await rootQuota(ctx));
      await page.getByTestId('topup-balance').filter({ hasText: expected }).waitFor();
      await shot(page, 'wallet-01-page');
    });

    await step('wallet: an empty code is refused, a redemption code raises the shown balance', async () => {
      await page.getByTestId('redeem-submit').click();
      await expectText(page, '请输入兑换码！');
      const qpu = app.options.quotaPerUnit;
      const key = crypto.randomBytes(16).toString('hex');
      await app.knex('redemptions').insert({ user_id: 1, key, status: 1, name: 'e2e-wallet', quota: 2 * qpu, created_time: Math.floor(Date.now() / 1000) });
      const before = await rootQuota(ctx);
      assert((await balanceText(page)) === shown(ctx, before), `balance before: ${await balanceText(page)} vs ${shown(ctx, before)}`);
      await page.getByTestId('redeem-code').fill(key);
      await page.getByTestId('redeem-submit').click();
      await expectText(page, /兑换成功！/);
      const after = before + 2 * qpu;
      await page
        .getByTestId('topup-balance')
        .filter({ hasText: shown(ctx, after) })
        .waitFor();
      assert((await rootQuota(ctx)) === after, 'the database balance rose by the code quota');
      assert((await page.getByTestId('redeem-code').inputValue()) === '', 'the code field is cleared');
      // the same code twice: the server's message, balance unchanged
      await page.getByTestId('redeem-code').fill(key);
      await page.getByTestId('redeem-submit').click();
      await expectText(page, '该兑换码已被使用');
      assert((await rootQuota(ctx)) === after, 'a used code adds nothing');
      // The redeemed code is in the top-up history, with its amount.
      const redeemedRow = page.getByTestId('topup-records').locator('tr', { hasText: 'e2e-wallet' });
      await redeemedRow.getByText('兑换码', { exact: true }).waitFor();
      await redeemedRow.getByText(shown(ctx, 2 * qpu), { exact: true }).waitFor();
      await shot(page, 'wallet-02-redeemed');
    });

    await step('wallet: online top-up off and no top-up link give the product messages', async () => {
      // Payment buttons are disabled while online top-up is off, and say why.
      assert(await page.getByTestId('pay-zfb').isDisabled(), 'zfb disabled while online top-up is off');
      assert(await page.getByTestId('pay-wx').isDisabled(), 'wx disabled while online top-up is off');
      await page.getByTestId('pay-disabled-reason').getByText('在线充值未开启').waitFor();
      await page.getByTestId('topup-link').click();
      await expectText(page, '超级管理员未设置充值链接！');
    });

    await step('wallet: with epay configured, the minimum, the yuan preview, and a POST form to the payment page in a new tab', async () => {
      await app.options.set('PayAddress', base);
      await app.options.set('EpayId', '1001');
      await app.options.set('EpayKey', 'e2e-epay-key');
      await app.options.set('ServerAddress', base);
      await app.options.set('MinTopUp', '3');
      await page.goto(`${base}/topup`);
      // the amount starts at the minimum and the price (7.3 yuan per dollar by default) is previewed
      await until(async () => (await page.getByTestId('topup-amount').inputValue()) === '3', 'the amount starts at the minimum');
      const price = (3 * app.options.num('Price', 7.3)).toFixed(2);
      await page.getByTestId('topup-price').filter({ hasText: price }).waitFor();
      await page.getByTestId('topup-amount').fill('2');
      await page.getByTestId('pay-wx').click();
      await expectText(page, '充值数量不能小于 3');
      // typing 0 is forced up to 1
      await page.getByTestId('topup-amount').fill('0');
      assert((await page.getByTestId('topup-amount').inputValue()) === '1', 'amount forced to at least 1');
      await page.getByTestId('topup-amount').fill('4');
      await page
        .getByTestId('topup-price')
        .filter({ hasText: (4 * app.options.num('Price', 7.3)).toFixed(2) })
        .waitFor();
      await page.getByTestId('pay-zfb').click();
      await expectText(page, '确认充值');
      await shot(page, 'wallet-03-confirm');
      const popup = page.context().waitForEvent('page');
      const submitted = page.context().waitForEvent('request', { predicate: (r: Request) => r.url().includes('/submit.php'), timeout: 10_000 });
      await page.getByTestId('pay-confirm').click();
      const tab = await popup;
      const req = await submitted;
      assert(req && req.url() === `${base}/submit.php`, `payment url: ${req?.url()}`);
      assert(req.method() === 'POST', `payment method: ${req.method()}`);
      const form = new URLSearchParams(req.postData() ?? '');
      assert(
        form.get('pid') === '1001' &&
          form.get('type') === 'alipay' &&
          form.get('money') === (4 * app.options.num('Price', 7.3)).toFixed(2) &&
          !!form.get('sign'),
        `payment fields: ${req.postData()}`,
      );
      await tab.close();
      const order = await app
        .knex('top_ups')
        .where({ trade_no: form.get('out_trade_no') ?? '' })
        .first();
      assert(order && Number(order.amount) === 4 && order.status === 'pending', 'a pending order was recorded');
      await page
        .getByTestId('topup-records')
        .getByText(String(form.get('out_trade_no')))
        .waitFor();
      await shot(page, 'wallet-04-records');
    });

    await step('wallet: the top-up link opens in a new tab', async () => {
      await app.options.set('TopUpLink', `${base}/about`);
      await page.goto(`${base}/topup`);
      const popup = page.context().waitForEvent('page');
      await page.getByTestId('topup-link').click();
      const tab = await popup;
      await tab.waitForURL(`${base}/about`);
      await tab.close();
    });

    await step('wallet: English, dark and mobile views', async () => {
      await page.evaluate(() => {
        localStorage.setItem('i18nextLng', 'en');
        localStorage.setItem('theme-mode', 'dark');
      });
      await page.goto(`${base}/topup`);
      await expectText(page, 'Redeem a code');
      // The server answers the English console in English (Accept-Language from the console's language).
      await page.getByTestId('redeem-code').fill('no-such-code-e2e');
      await page.getByTestId('redeem-submit').click();
      await expectText(page, 'Invalid redemption code');
      await shot(page, 'wallet-05-en-dark');
      await page.setViewportSize({ width: 390, height: 844 });
      await page.evaluate(() => {
        localStorage.setItem('i18nextLng', 'zh');
        localStorage.setItem('theme-mode', 'light');
      });
      await page.goto(`${base}/topup`);
      await expectText(page, '兑换码充值');
      // The page itself fits the phone (wide tables scroll inside their card; the top bar is the shell's).
      const overflow = await page.evaluate(
        `(function () { var el = document.querySelector('[data-testid="topup-page"]'); var r = el.getBoundingClientRect(); return Math.max(el.scrollWidth - el.clientWidth, Math.round(r.right - window.innerWidth)); })()`,
      );
      assert(Number(overflow) <= 1, `the page overflows the phone width by ${overflow}px`);
      await shot(page, 'wallet-06-mobile');
      await page.setViewportSize({ width: 1366, height: 820 });
    });

    for (const k of opts) await app.options.set(k, saved[k]);
  },
};
