import type { Page } from 'playwright-core';
import { assert, expectText, loginElsewhere, shot, step } from '../lib';
import { formatQuota } from '../../../admin/src/resources/shared/format';
import { insertLogs } from '../../../server/src/repositories/logs';
import { createAccount } from '../../../server/src/services/accounts';
import type { Flow, FlowContext } from './types';

const DASH_USER = 'e2e-dash-user';
const IMG = `data:image/svg+xml;utf8,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#1976d2"/></svg>')}`;
const LONG_REASON = 'upstream refused the prompt: banned word detected in the prompt text, please rephrase and try again';

function shown(ctx: FlowContext, quota: number): string {
  const o = ctx.stack.app.ctx.options;
  return formatQuota(quota, { displayInCurrency: o.bool('DisplayInCurrencyEnabled'), quotaPerUnit: o.quotaPerUnit });
}

async function testIdText(page: Page, id: string): Promise<string> {
  return ((await page.getByTestId(id).textContent()) ?? '').trim();
}

/** Seeds consume logs, drawing tasks and creative tasks straight into the database. */
async function seed(ctx: FlowContext): Promise<{ quota: number; count: number; tokens: number }> {
  const app = ctx.stack.app.ctx;
  const now = Math.floor(Date.now() / 1000);
  const qpu = app.options.quotaPerUnit;
  const logs = [
    { model_name: 'dash-model-a', quota: qpu, prompt_tokens: 1000, completion_tokens: 500, created_at: now - 2 * 3600 },
    { model_name: 'dash-model-a', quota: qpu / 2, prompt_tokens: 300, completion_tokens: 200, created_at: now - 3600 },
    { model_name: 'dash-model-b', quota: qpu / 4, prompt_tokens: 100, completion_tokens: 100, created_at: now - 600 },
  ];
  await insertLogs(
    app.knex,
    logs.map((l) => ({ ...l, type: 2, user_id: 99_001, username: DASH_USER, token_name: 'dash', channel_id: 1 })),
  );
  const root = await app.knex('users').where({ username: ctx.admin.username }).first('id');
  const uid = Number(root?.id ?? 1);
  const nowMs = Date.now();
  const mj = Array.from({ length: 12 }, (_, i) => ({
    user_id: uid,
    code: i === 11 ? 22 : 1,
    action: i % 3 === 0 ? 'UPSCALE' : 'IMAGINE',
    mj_id: `e2e-mj-${String(i + 1).padStart(2, '0')}`,
    prompt: `a blue square ${i + 1}`,
    prompt_en: `a blue square ${i + 1}`,
    status: i === 10 ? 'FAILURE' : 'SUCCESS',
    progress: i === 10 ? '40%' : '100%',
    submit_time: nowMs - (20 - i) * 60_000,
    finish_time: nowMs - (20 - i) * 60_000 + (i === 9 ? 90_000 : 30_000),
    image_url: i === 10 ? '' : IMG,
    fail_reason: i === 10 ? LONG_REASON : '',
    channel_id: 3,
    created_at: now,
  }));
  await app.knex('midjourneys').insert(mj);
  await app.knex('tasks').insert([
    {
      user_id: uid,
      task_id: 'e2e-task-music',
      platform: 'suno',
      action: 'MUSIC',
      status: 'SUCCESS',
      progress: '100%',
      channel_id: 4,
      submit_time: now - 5,
      finish_time: now,
      created_at: now,
      data: JSON.stringify({ clips: [{ id: 'clip-123', title: 'e2e song' }] }),
    },
    {
      user_id: uid,
      task_id: 'e2e-task-lyrics',
      platform: 'suno',
      action: 'LYRICS',
      status: 'IN_PROGRESS',
      progress: '50%',
      channel_id: 4,
      submit_time: now - 3,
      finish_time: 0,
      created_at: now,
      data: '',
    },
  ]);
  return {
    quota: logs.reduce((s, l) => s + l.quota, 0),
    count: logs.length,
    tokens: logs.reduce((s, l) => s + l.prompt_tokens + l.completion_tokens, 0),
  };
}

/** End-to-end steps of the dashboard, drawing log, task log and metrics pages. */
export const flow: Flow = {
  name: 'dashboard',
  async run(ctx) {
    const { page, base } = ctx;
    let expected = { quota: 0, count: 0, tokens: 0 };

    await step('dashboard: seed consume logs, drawings and tasks', async () => {
      expected = await seed(ctx);
    });

    await step('dashboard: the totals of a user match the seeded consume logs, with a chart and the models', async () => {
      await page.goto(`${base}/detail`);
      await page.getByTestId('total-quota').waitFor();
      await page.locator('input[name="username"]').fill(DASH_USER);
      await page.getByRole('button', { name: '查询' }).click();
      await page
        .getByTestId('total-count')
        .filter({ hasText: new RegExp(`^${expected.count}$`) })
        .waitFor();
      assert(
        (await testIdText(page, 'total-quota')) === shown(ctx, expected.quota),
        `quota: ${await testIdText(page, 'total-quota')} vs ${shown(ctx, expected.quota)}`,
      );
      assert((await testIdText(page, 'total-tokens')) === String(expected.tokens), `tokens: ${await testIdText(page, 'total-tokens')}`);
      await page.getByTestId('model-table').getByText('dash-model-a').waitFor();
      await page.getByTestId('model-table').getByText('dash-model-b').waitFor();
      assert((await page.locator('svg[role="img"] rect').count()) > 3, 'the chart draws bars');
      await page.getByRole('tab', { name: '调用次数' }).click();
      await page.locator('svg[role="img"]').waitFor();
      await shot(page, 'dashboard-01-detail');
    });

    await step('dashboard: an unknown user has no data', async () => {
      await page.locator('input[name="username"]').fill('nobody-here');
      await page.getByRole('button', { name: '查询' }).click();
      await page.getByTestId('total-count').filter({ hasText: /^0$/ }).waitFor();
      await page.getByTestId('chart-empty').waitFor();
    });

    await step('drawing log: admins see the callback banner, the seeded tasks and the channel column', async () => {
      await page.goto(`${base}/midjourney`);
      await page.getByTestId('callback-banner').waitFor();
      const table = page.getByTestId('mj-table');
      await table.getByText('e2e-mj-12').waitFor();
      await table.getByText('重复提交').waitFor();
      await table.getByRole('columnheader', { name: '渠道' }).waitFor();
      assert((await table.locator('tbody tr').count()) === 10, 'ten rows on the first page');
      await shot(page, 'dashboard-02-midjourney');
    });

    await step('drawing log: the next page is fetched lazily from the server', async () => {
      const table = page.getByTestId('mj-table');
      const req = page.waitForRequest((r) => r.url().includes('/api/mj/') && r.url().includes('p=2'));
      await page.getByRole('button', { name: '下一页' }).click();
      await req;
      await table.getByText('e2e-mj-01').waitFor();
      assert((await table.locator('tbody tr').count()) === 2, 'two rows on the second page');
    });

    await step('drawing log: the image viewer opens, the long failure reason opens a dialog', async () => {
      const table = page.getByTestId('mj-table');
      await table.getByTestId('view-image').first().click();
      await page.getByTestId('image-viewer').locator('img').waitFor();
      await shot(page, 'dashboard-03-image');
      await page.getByTestId('image-viewer').getByRole('button', { name: '关闭' }).click();
      await page.getByTestId('image-viewer').waitFor({ state: 'hidden' });
      await page.getByRole('button', { name: '上一页' }).click();
      await table.getByText('e2e-mj-11').waitFor();
      await table.getByRole('button', { name: /upstream refused/ }).click();
      await page.getByTestId('text-dialog').getByText(LONG_REASON).waitFor();
      await page.getByTestId('text-dialog').getByRole('button', { name: '关闭' }).click();
    });

    await step('drawing log: the task id filter narrows the list', async () => {
      await page.locator('input[name="task_id"]').fill('e2e-mj-05');
      await page.getByRole('button', { name: '查询' }).click();
      const table = page.getByTestId('mj-table');
      await table.getByText('e2e-mj-05').waitFor();
      await table.getByText('e2e-mj-12').waitFor({ state: 'detached' });
      assert((await table.locator('tbody tr').count()) === 1, 'one row');
    });

    await step('task log: the seeded tasks, and the JSON dialog of a task', async () => {
      await page.goto(`${base}/task`);
      const table = page.getByTestId('task-table');
      await table.getByText('e2e-task-lyrics').waitFor();
      await table.getByText('生成歌词').waitFor();
      await table.getByText('执行中').waitFor();
      await table.getByRole('button', { name: 'e2e-task-music' }).click();
      const dialog = page.getByTestId('json-dialog');
      await dialog.getByText(/"task_id": "e2e-task-music"/).waitFor();
      await dialog.getByText(/"title": "e2e song"/).waitFor();
      await shot(page, 'dashboard-04-task-json');
      await dialog.getByRole('button', { name: '关闭' }).click();
    });

    await step('an ordinary user: own drawings only from the self endpoint, no channel column, own dashboard, no metrics', async () => {
      const app = ctx.stack.app.ctx;
      const user = await createAccount(app, { username: 'e2edash', password: 'e2e-dash-pass-1' });
      const nowMs = Date.now();
      await app.knex('midjourneys').insert({
        user_id: user.id,
        code: 1,
        action: 'IMAGINE',
        mj_id: 'e2e-user-mj',
        status: 'IN_PROGRESS',
        progress: '30%',
        submit_time: nowMs - 5000,
        channel_id: 3,
        created_at: Math.floor(nowMs / 1000),
      });
      await insertLogs(app.knex, [
        {
          type: 2,
          user_id: user.id,
          username: 'e2edash',
          model_name: 'dash-user-model',
          quota: 1000,
          prompt_tokens: 7,
          completion_tokens: 3,
          // Before the last DataExportInterval boundary: the dashboard ends there.
          created_at: Math.floor(nowMs / 1000) - 7200,
        },
      ]);
      const { context: uctx, page: up } = await loginElsewhere(page, base, 'e2edash', 'e2e-dash-pass-1');
      try {
        const selfCall = up.waitForRequest((r) => r.url().includes('/api/mj/self/'));
        await up.goto(`${base}/midjourney`);
        await selfCall;
        const table = up.getByTestId('mj-table');
        await table.getByText('e2e-user-mj').waitFor();
        assert((await table.locator('tbody tr').count()) === 1, 'only the own drawing');
        assert((await table.getByRole('columnheader', { name: '渠道' }).count()) === 0, 'no channel column');
        assert((await up.locator('input[name="channel"]').count()) === 0, 'no channel filter');
        assert((await up.getByTestId('callback-banner').count()) === 0, 'no callback banner for users');
        await up.goto(`${base}/detail`);
        await up.getByTestId('total-count').filter({ hasText: /^1$/ }).waitFor();
        assert((await up.locator('input[name="username"]').count()) === 0, 'no username filter for users');
        await up.getByTestId('model-table').getByText('dash-user-model').waitFor();
        await up.goto(`${base}/performance`);
        await expectText(up, '仅管理员可查看系统监控');
      } finally {
        await uctx.close();
      }
    });

    await step('performance: the metrics page shows the process and the database kind', async () => {
      await page.goto(`${base}/performance`);
      await page.getByTestId('perf-db').getByText('sqlite').waitFor();
      await page.getByTestId('perf-rss').filter({ hasText: /MB|GB/ }).waitFor();
      await page.getByRole('button', { name: '刷新' }).click();
      await page.getByTestId('perf-cpu').filter({ hasText: /%/ }).waitFor();
      await expectText(page, '事件循环延迟');
      await shot(page, 'dashboard-05-performance');
    });
  },
};
