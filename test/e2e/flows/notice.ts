import { assert, shot, step } from '../lib';
import { insertLogs } from '../../../server/src/repositories/logs';
import type { Flow } from './types';

const FIRST = '# E2E 公告\n第一版：今晚 **22:00** 维护';
const SECOND = '# E2E 公告\n第二版：维护推迟到明晚';
const ERR_MODEL = 'e2e-err-model';

/** End-to-end steps of the home-page notice dialog, the usage log's error filter and the test-all summary. */
export const flow: Flow = {
  name: 'notice',
  async run(ctx) {
    const { page, base } = ctx;
    const options = ctx.stack.app.ctx.options;
    const dialog = page.getByTestId('notice-dialog');

    await step('notice: the home page shows the notice (Markdown) in a dialog, once', async () => {
      await options.set('Notice', FIRST);
      await page.goto(`${base}/`);
      await dialog.getByText('第一版').waitFor();
      assert((await dialog.locator('h1', { hasText: 'E2E 公告' }).count()) === 1, 'the notice is rendered as Markdown');
      assert((await dialog.locator('strong', { hasText: '22:00' }).count()) === 1, 'bold text rendered');
      await shot(page, 'notice-01-dialog');
      await page.getByTestId('notice-close').click();
      await dialog.waitFor({ state: 'detached' });
      // Reloaded: once the notice has been fetched, give the dialog a moment to (not) open.
      await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/notice')), page.reload()]);
      await page.waitForTimeout(500);
      assert((await dialog.count()) === 0, 'a dismissed notice is not shown again');
    });

    await step('notice: a changed notice is shown again', async () => {
      await options.set('Notice', SECOND);
      await page.reload();
      await dialog.getByText('第二版').waitFor();
      await shot(page, 'notice-02-changed');
      await page.getByTestId('notice-close').click();
      await dialog.waitFor({ state: 'detached' });
      // Other flows start on a page without the dialog.
      await options.set('Notice', '');
    });

    await step('logs: the type filter "错误" lists the failed calls only', async () => {
      const now = Math.floor(Date.now() / 1000);
      await insertLogs(ctx.stack.app.ctx.knex, [
        {
          type: 5,
          user_id: 99_002,
          username: 'e2e-err-user',
          model_name: ERR_MODEL,
          channel_id: 1,
          channel_name: 'e2e-err-channel',
          content: 'upstream exploded (status 500)',
          other: JSON.stringify({ status_code: 500, error_code: 'upstream_error' }),
          created_at: now - 5,
        },
        { type: 2, user_id: 99_002, username: 'e2e-err-user', model_name: 'e2e-ok-model', quota: 10, created_at: now - 4 },
      ]);
      await page.goto(`${base}/log`);
      await page.locator('tr', { hasText: 'e2e-ok-model' }).first().waitFor();
      await page.getByRole('combobox', { name: '类型' }).click();
      await page.getByRole('option', { name: '错误', exact: true }).click();
      await page.getByRole('button', { name: '查询', exact: true }).click();
      await page.waitForURL((u) => decodeURIComponent(u.search).includes('"type":5'));
      await page.locator('tr', { hasText: ERR_MODEL }).first().waitFor();
      await page.locator('tr', { hasText: 'e2e-ok-model' }).waitFor({ state: 'detached' });
      await page.locator('tr', { hasText: ERR_MODEL }).first().getByText('错误', { exact: true }).waitFor();
      await shot(page, 'logs-error-filter');
    });

    await step('channels: "test all channels" ends with a per-channel summary', async () => {
      const channels = await ctx.stack.app.ctx.knex('channels').whereIn('status', [1, 3]).select('name');
      await page.goto(`${base}/channel`);
      await page.getByRole('button', { name: '测试所有通道' }).click();
      await page.getByRole('dialog').getByRole('button', { name: '确认' }).click();
      const chip = page.getByTestId('channel-test-summary');
      await chip.filter({ hasText: '上次测试' }).waitFor({ timeout: 30_000 });
      const text = (await chip.textContent()) ?? '';
      const m = /成功 (\d+)，失败 (\d+)/.exec(text);
      assert(m && Number(m[1]) + Number(m[2]) === channels.length, `summary ${text} vs ${channels.length} channels`);
      await chip.click();
      const dialog = page.getByRole('dialog');
      await dialog.getByText('上次测试所有通道的结果').waitFor();
      assert((await dialog.locator('tbody tr').count()) === channels.length, 'one row per channel');
      await shot(page, 'channels-test-summary');
      await dialog.getByRole('button', { name: '关闭' }).click();
    });
  },
};
