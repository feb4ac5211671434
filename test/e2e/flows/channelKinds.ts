import { seedChannel } from '../../mock-upstream/seed';
import { assert, shot, step } from '../lib';
import type { Flow } from './types';

/** "Update all balances" shows what happened per channel; PaLM2 is listed as retired in the type menu. */
export const flow: Flow = {
  name: 'channel-kinds',
  async run(ctx) {
    const { page, base, stack } = ctx;
    const app = { knex: stack.app.ctx.knex, ctx: stack.app.ctx };

    const ok = await step('kinds: seed a billing channel, one whose lookup fails and one without a balance endpoint', async () => {
      await seedChannel(app, { name: 'e2e-bal-ok', type: 1, key: 'sk-e2e', base_url: stack.mock.url, models: 'e2e-bal' });
      await seedChannel(app, { name: 'e2e-bal-fail', type: 25, key: 'sk-e2e', base_url: `${stack.mock.url}/nowhere`, models: 'e2e-bal' });
      await seedChannel(app, { name: 'e2e-bal-none', type: 14, key: 'sk-e2e', base_url: stack.mock.url, models: 'e2e-bal' });
    });
    if (!ok) return;

    await step('kinds: update all balances answers a per-channel summary, failures first', async () => {
      await page.goto(`${base}/channel`);
      await page.locator('tr', { hasText: 'e2e-bal-ok' }).first().waitFor();
      await page.getByRole('button', { name: '更新所有已启用通道余额' }).click();
      await page
        .getByRole('dialog')
        .getByRole('button', { name: /确认|确定/ })
        .click();
      const dialog = page.getByRole('dialog', { name: '余额更新结果' });
      await dialog.waitFor();
      const row = (name: string) => dialog.locator('tr', { hasText: name });
      await row('e2e-bal-ok').getByText('已更新', { exact: true }).waitFor();
      assert((await row('e2e-bal-ok').innerText()).includes('$75.00'), 'the balance is not shown');
      await row('e2e-bal-fail').getByText('失败', { exact: true }).waitFor();
      assert((await row('e2e-bal-fail').innerText()).includes('404'), 'the failure reason is not shown');
      await row('e2e-bal-none').getByText('不支持', { exact: true }).waitFor();
      const text = await dialog.innerText();
      assert(text.indexOf('e2e-bal-fail') < text.indexOf('e2e-bal-ok'), 'failures are not listed first');
      await shot(page, 'channel-kinds-balances');
      await dialog.getByRole('button', { name: /关闭|Close/ }).click();
      await dialog.waitFor({ state: 'detached' });
    });

    await step('kinds: the type menu lists PaLM2 as retired and not selectable for a new channel', async () => {
      await page.goto(`${base}/channel/create`);
      const drawer = page.getByRole('dialog').or(page.locator('.MuiDrawer-paper')).first();
      await drawer.getByLabel(/^名称/).first().waitFor();
      await drawer.getByRole('combobox').first().click();
      const palm = page.getByRole('option', { name: /PaLM2（已停止服务）/ });
      await palm.waitFor();
      assert((await palm.getAttribute('aria-disabled')) === 'true', 'PaLM2 is selectable');
      await shot(page, 'channel-kinds-palm-retired');
      await page.keyboard.press('Escape');
    });
  },
};
