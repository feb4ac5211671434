import { createAccount } from '../../../server/src/services/accounts';
import { formatQuota } from '../../../admin/src/resources/shared/format';
import { assert, expectText, loginElsewhere, shot, step } from '../lib';
import type { Flow } from './types';

const ALICE = 'e2e-to-alice';
const BOB = 'e2e-to-bob';

/** The admin top-up order list: reached from the admin menu, filtered by username, status and time; refused to users. */
export const flow: Flow = {
  name: 'topuporders',
  async run({ page, base, stack }) {
    const app = stack.app.ctx;
    const o = app.options;
    const money = (quota: number) => formatQuota(quota, { displayInCurrency: o.bool('DisplayInCurrencyEnabled'), quotaPerUnit: o.quotaPerUnit });
    const now = Math.floor(Date.now() / 1000);
    // What an order of `amount` credits (services/topup.ts quotaFor).
    const quotaOf = (amount: number) => (o.bool('DisplayInCurrencyEnabled') ? Math.round(amount * o.quotaPerUnit) : amount);

    const ok = await step('topuporders: seed a paid order of one user and a pending one of another', async () => {
      const alice = await createAccount(app, { username: ALICE, password: 'e2e-to-pass-1' });
      const bob = await createAccount(app, { username: BOB, password: 'e2e-to-pass-2' });
      await app.knex('top_ups').insert([
        {
          user_id: alice.id,
          amount: 3,
          money: 21.9,
          trade_no: 'E2E-TO-ALICE-1',
          payment_method: 'zfb',
          create_time: now - 60,
          complete_time: now - 30,
          status: 'success',
        },
        { user_id: bob.id, amount: 5, money: 36.5, trade_no: 'E2E-TO-BOB-1', payment_method: 'wx', create_time: now - 20, complete_time: 0, status: 'pending' },
      ]);
    });
    if (!ok) return;

    await step('topuporders: the admin menu opens the list, titled as the menu, with the seeded rows', async () => {
      await page.goto(`${base}/token`);
      // The sidebar may be collapsed (icons only, the label in a tooltip).
      const entry = page.getByTestId('menu-topup_order');
      await entry.hover();
      await page.getByRole('tooltip').or(entry).getByText('充值订单', { exact: true }).first().waitFor();
      await entry.click();
      await page.waitForURL((u) => u.pathname === '/topup_order');
      await page.locator('#react-admin-title').getByText('充值订单').waitFor();
      const alice = page.locator('tbody tr', { hasText: 'E2E-TO-ALICE-1' });
      await alice.waitFor();
      await alice.getByText(ALICE, { exact: true }).waitFor();
      // The amount in the display currency (the quota the order credits), the paid money, method and status.
      await alice.getByText(money(quotaOf(3)), { exact: true }).waitFor();
      await alice.getByText('21.90 元').waitFor();
      await alice.getByText('支付宝').waitFor();
      await alice.getByText('成功', { exact: true }).waitFor();
      const bob = page.locator('tbody tr', { hasText: 'E2E-TO-BOB-1' });
      await bob.getByText('待支付').waitFor();
      await bob.getByText('微信').waitFor();
      await shot(page, 'topup-orders');
    });

    await step('topuporders: the username filter narrows the list and stays in the URL', async () => {
      await page.getByLabel('用户名', { exact: true }).fill(ALICE);
      await page.locator('tbody tr', { hasText: 'E2E-TO-BOB-1' }).waitFor({ state: 'detached' });
      await page.locator('tbody tr', { hasText: 'E2E-TO-ALICE-1' }).waitFor();
      await page.waitForURL((u) => decodeURIComponent(u.search).includes(`"username":"${ALICE}"`));
      await page.reload();
      await page.locator('tbody tr', { hasText: 'E2E-TO-ALICE-1' }).waitFor();
      assert((await page.locator('tbody tr', { hasText: 'E2E-TO-BOB-1' }).count()) === 0, 'filter lost on reload');
      // A status the user's orders do not have leaves the list empty.
      await page.getByLabel('状态', { exact: true }).click();
      await page.getByRole('option', { name: '待支付' }).click();
      await page.locator('tbody tr', { hasText: 'E2E-TO-ALICE-1' }).waitFor({ state: 'detached' });
      await expectText(page, '暂无充值订单');
      await page.getByLabel('用户名', { exact: true }).fill(BOB);
      await page.locator('tbody tr', { hasText: 'E2E-TO-BOB-1' }).waitFor();
      // A start time after the order (typed as a local date-time, kept as epoch seconds) hides it.
      const later = new Date((now + 3600) * 1000);
      const p2 = (n: number) => String(n).padStart(2, '0');
      const text = `${later.getFullYear()}-${p2(later.getMonth() + 1)}-${p2(later.getDate())}T${p2(later.getHours())}:${p2(later.getMinutes())}`;
      await page.getByLabel('起始时间').fill(text);
      await page.locator('tbody tr', { hasText: 'E2E-TO-BOB-1' }).waitFor({ state: 'detached' });
      await page.waitForURL((u) => /"start_timestamp":\d{10}/.test(decodeURIComponent(u.search)));
      await page.getByLabel('起始时间').fill('');
      await page.locator('tbody tr', { hasText: 'E2E-TO-BOB-1' }).waitFor();
      // The list fits every screen size (a wide table scrolls inside its own box, not the page).
      for (const vp of [
        { width: 1440, height: 900 },
        { width: 1280, height: 720 },
        { width: 390, height: 844 },
      ]) {
        await page.setViewportSize(vp);
        await page.locator('tbody tr', { hasText: 'E2E-TO-BOB-1' }).waitFor();
        await page.waitForTimeout(200);
        const sideways = await page.evaluate(() => document.scrollingElement!.scrollWidth - document.scrollingElement!.clientWidth);
        assert(sideways <= 0, `the page scrolls ${sideways}px sideways at ${vp.width}×${vp.height}`);
        await shot(page, `topup-orders-${vp.width}`);
      }
      await page.setViewportSize({ width: 1366, height: 820 });
    });

    await step('topuporders: an ordinary user has no menu entry, the page does not exist for them, and the server refuses the list', async () => {
      const { context: uctx, page: up } = await loginElsewhere(page, base, ALICE, 'e2e-to-pass-1');
      try {
        await up.getByTestId('menu-token').waitFor();
        assert((await up.getByTestId('menu-topup_order').count()) === 0, 'menu entry shown to a user');
        await up.goto(`${base}/topup_order`);
        await expectText(up, '页面不存在，请检查你的浏览器地址是否正确');
        assert((await up.getByText('E2E-TO-BOB-1').count()) === 0, 'orders shown to a user');
        const uid = await up.evaluate(() => JSON.parse(localStorage.getItem('user') ?? '{}').id as number);
        const res = await up.request.get(`${base}/api/user/topup`, { headers: { 'New-Api-User': String(uid) } });
        assert(res.status() === 403, `server answered ${res.status()}`);
        assert(!(await res.text()).includes('E2E-TO-BOB-1'), 'orders in the refusal');
      } finally {
        await uctx.close();
      }
    });
  },
};
