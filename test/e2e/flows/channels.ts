import { seedChannel } from '../../mock-upstream/seed';
import { insertLogs } from '../../../server/src/repositories/logs';
import { autoDisableChannel } from '../../../server/src/channels/health';
import { healthBoard } from '../../../server/src/channels/healthBoard';
import { invalidateChannels } from '../../../server/src/services/invalidate';
import { assert, expectText, shot, step } from '../lib';
import type { Flow } from './types';

const TAG = 'e2e-tag';
const MODEL = 'e2e-logs-model';

/** The channel and log lists: URL-kept filters, column selection, tag mode, log stats and user lookup. */
export const flow: Flow = {
  name: 'channels',
  async run(ctx) {
    const { page, base, stack } = ctx;
    const app = { knex: stack.app.ctx.knex, ctx: stack.app.ctx };
    const rows = page.locator('tbody tr');

    let ok = await step('channels: seed two tagged channels and an untagged one', async () => {
      for (const name of ['e2e-ch-a', 'e2e-ch-b']) {
        const id = await seedChannel(app, { name, base_url: stack.mock.url, models: 'e2e-ch-model', group: 'default' });
        await app.knex('channels').where({ id }).update({ tag: TAG });
      }
      await seedChannel(app, { name: 'e2e-ch-c', base_url: stack.mock.url, models: 'e2e-ch-model', group: 'default' });
    });
    if (!ok) return;

    await step('channels: the keyword search is kept in the URL and survives a reload', async () => {
      await page.goto(`${base}/channel`);
      await page.locator('tr', { hasText: 'e2e-ch-c' }).waitFor();
      await page.getByLabel('搜索渠道的 ID，名称和密钥 ...').fill('e2e-ch-a');
      await page.getByRole('button', { name: '查询', exact: true }).click();
      await page.waitForURL((u) => decodeURIComponent(u.search).includes('"keyword":"e2e-ch-a"'));
      await page.locator('tr', { hasText: 'e2e-ch-c' }).waitFor({ state: 'detached' });
      await page.reload();
      await page.locator('tr', { hasText: 'e2e-ch-a' }).waitFor();
      assert((await page.getByLabel('搜索渠道的 ID，名称和密钥 ...').inputValue()) === 'e2e-ch-a', 'keyword not restored from the URL');
      assert((await page.locator('tr', { hasText: 'e2e-ch-c' }).count()) === 0, 'filter not applied after reload');
      await shot(page, 'channels-search');
      await page.getByRole('button', { name: '重置', exact: true }).click();
      await page.locator('tr', { hasText: 'e2e-ch-c' }).waitFor();
      assert(!decodeURIComponent(page.url()).includes('e2e-ch-a'), 'reset left the filter in the URL');
    });

    await step('channels: a hidden column leaves the table and comes back', async () => {
      const typeHeader = page.locator('thead th', { hasText: /^类型$/ });
      await typeHeader.waitFor();
      await page.getByRole('button', { name: '列', exact: true }).click();
      const toggle = page.locator('.MuiPopover-paper').getByLabel('类型', { exact: true });
      await toggle.click();
      await typeHeader.waitFor({ state: 'detached' });
      await shot(page, 'channels-columns');
      await toggle.click();
      await typeHeader.waitFor();
      await page.keyboard.press('Escape');
    });

    await step('channels: tag mode shows one row for the tag, expanding into its channels', async () => {
      await page.getByLabel('标签聚合模式').check();
      const tagRow = page.locator('tr', { hasText: `标签：${TAG}` }).first();
      await tagRow.waitFor();
      assert((await page.locator('tr', { hasText: 'e2e-ch-a' }).count()) === 0, 'tagged channels shown before expanding');
      await tagRow.locator('.RaDataTable-expandIcon').click();
      await page.locator('tr', { hasText: 'e2e-ch-a' }).first().waitFor();
      await page.locator('tr', { hasText: 'e2e-ch-b' }).first().waitFor();
      await shot(page, 'channels-tag-mode');
      await page.getByLabel('标签聚合模式').uncheck();
      await page.locator('tr', { hasText: 'e2e-ch-c' }).waitFor();
      assert((await rows.count()) > 0, 'no rows after leaving tag mode');
    });

    await step('channels: a multi-key channel lists its keys masked; one key is disabled from the dialog', async () => {
      const keys = ['sk-e2e-mk-0000000000000000', 'sk-e2e-mk-1111111111111111', 'sk-e2e-mk-2222222222222222'];
      const id = await seedChannel(app, { name: 'e2e-ch-multi', key: keys.join('\n'), base_url: stack.mock.url, models: 'e2e-ch-model', group: 'default' });
      await app
        .knex('channels')
        .where({ id })
        .update({ channel_info: JSON.stringify({ is_multi_key: true, multi_key_size: 3, multi_key_mode: 'polling' }) });
      await page.goto(`${base}/channel`);
      const row = page.locator('tr', { hasText: 'e2e-ch-multi' });
      await row.waitFor();
      await page.locator('thead th', { hasText: /^健康$/ }).waitFor();
      await row.getByRole('button', { name: 'more' }).click();
      await page.getByRole('menuitem', { name: '密钥管理' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByTestId('key-summary').getByText('共 3 个密钥，3 个已启用，使用顺序：轮询').waitFor();
      const text = await dialog.innerText();
      assert(!text.includes('1111111111111111'), 'a key is shown in full');
      assert(text.includes('sk-e…1111'), 'keys are not shown masked');
      await dialog.getByTestId('key-row-1').getByRole('button', { name: '禁用' }).click();
      await dialog.getByTestId('key-summary').getByText('共 3 个密钥，2 个已启用，使用顺序：轮询').waitFor();
      await dialog.getByTestId('key-row-1').getByText('已禁用').first().waitFor();
      const info = JSON.parse(String((await app.knex('channels').where({ id }).first('channel_info'))?.channel_info ?? '{}'));
      assert(JSON.stringify(info.multi_key_status_list) === '{"1":2}', `key 1 not disabled: ${JSON.stringify(info)}`);
      await shot(page, 'channels-multi-key');
      await dialog.getByTestId('key-row-1').getByRole('button', { name: '启用' }).click();
      await dialog.getByTestId('key-summary').getByText('共 3 个密钥，3 个已启用，使用顺序：轮询').waitFor();
      await dialog.getByRole('button', { name: '关闭' }).click();
    });

    await step('channels: the health column shows an open breaker; the dashboard lists channels open or disabled', async () => {
      const open = await seedChannel(app, { name: 'e2e-ch-open', base_url: stack.mock.url, models: 'e2e-ch-model', group: 'default' });
      const dead = await seedChannel(app, { name: 'e2e-ch-dead', base_url: stack.mock.url, models: 'e2e-ch-model', group: 'default' });
      // An auth error opens a breaker at once; an auto-disable keeps its reason.
      const board = healthBoard(stack.app.ctx);
      board.failure(board.target(open), 'auth', Date.now(), '401 e2e key revoked');
      assert(await autoDisableChannel(stack.app.ctx, dead, 'e2e quota exhausted'), 'channel not auto-disabled');
      try {
        await page.goto(`${base}/channel`);
        await page.getByTestId(`health-${open}`).getByText('熔断中').waitFor();
        await page.getByTestId(`health-${dead}`).getByText('正常').waitFor();
        await page.goto(`${base}/detail`);
        const card = page.getByTestId('channel-alerts');
        await card.getByText('熔断中的渠道').waitFor();
        await card.getByText(`#${open} e2e-ch-open`).waitFor();
        await card.getByText('401 e2e key revoked', { exact: false }).waitFor();
        await card.getByText('已禁用的渠道').waitFor();
        await card.getByText(`#${dead} e2e-ch-dead`).waitFor();
        await card.getByText('e2e quota exhausted', { exact: false }).waitFor();
        await shot(page, 'dashboard-channel-alerts');
      } finally {
        board.reset(board.target(open));
        await app.knex('abilities').whereIn('channel_id', [open, dead]).delete();
        await app.knex('channels').whereIn('id', [open, dead]).delete();
        await invalidateChannels(stack.app.ctx);
      }
    });

    await step('channels: batch delete reports per channel what was deleted and what was missing', async () => {
      const keep = await seedChannel(app, { name: 'e2e-ch-del-a', base_url: stack.mock.url, models: 'e2e-ch-model', group: 'default' });
      const gone = await seedChannel(app, { name: 'e2e-ch-del-b', base_url: stack.mock.url, models: 'e2e-ch-model', group: 'default' });
      await page.goto(`${base}/channel`);
      for (const name of ['e2e-ch-del-a', 'e2e-ch-del-b']) await page.locator('tbody tr', { hasText: name }).getByRole('checkbox').check();
      // b goes away behind the console's back: the report names it as missing, a is still deleted.
      await app.knex('channels').where({ id: gone }).delete();
      await page.getByRole('button', { name: /删除所选通道/ }).click();
      await page.getByRole('button', { name: '确认' }).click();
      const report = page.getByTestId('bulk-result');
      await report.getByText('成功 1 项，失败 1 项').waitFor();
      await report.getByText('已删除 1 个通道！').waitFor();
      await report
        .locator('li', { hasText: `#${keep} e2e-ch-del-a` })
        .getByText('已删除', { exact: true })
        .waitFor();
      await report
        .locator('li', { hasText: `#${gone} e2e-ch-del-b` })
        .getByText('渠道不存在（可能已被删除）')
        .waitFor();
      await shot(page, 'channels-batch-delete-report');
      await report.getByRole('button', { name: '关闭' }).click();
      assert(!(await app.knex('channels').where({ id: keep }).first()), 'the selected channel was not deleted');
      await page.locator('tbody tr', { hasText: 'e2e-ch-del-a' }).waitFor({ state: 'detached' });
    });

    await step('channels: batch tag reports per channel what was tagged and what was missing', async () => {
      const keep = await seedChannel(app, { name: 'e2e-ch-bt-a', base_url: stack.mock.url, models: 'e2e-ch-model', group: 'default' });
      const gone = await seedChannel(app, { name: 'e2e-ch-bt-b', base_url: stack.mock.url, models: 'e2e-ch-model', group: 'default' });
      await page.goto(`${base}/channel`);
      for (const name of ['e2e-ch-bt-a', 'e2e-ch-bt-b']) await page.locator('tbody tr', { hasText: name }).getByRole('checkbox').check();
      await app.knex('channels').where({ id: gone }).delete();
      await page.getByRole('button', { name: '批量设置标签' }).click();
      await page.getByRole('dialog').getByLabel('标签').fill('e2e-bt');
      await page.getByRole('dialog').getByRole('button', { name: '确定' }).click();
      const report = page.getByTestId('bulk-result');
      await report.getByText('成功 1 项，失败 1 项').waitFor();
      await report
        .locator('li', { hasText: `#${keep} e2e-ch-bt-a` })
        .getByText('已设置标签')
        .waitFor();
      await report
        .locator('li', { hasText: `#${gone} e2e-ch-bt-b` })
        .getByText('渠道不存在（可能已被删除）')
        .waitFor();
      await report.getByRole('button', { name: '关闭' }).click();
      const row = await app.knex('channels').where({ id: keep }).first('tag');
      assert(row?.tag === 'e2e-bt', `tag stored: ${row?.tag}`);
    });

    ok = await step('logs: seed consumption logs of two models', async () => {
      const root = await app.knex('users').where({ username: ctx.admin.username }).first('id');
      const now = Math.floor(Date.now() / 1000);
      await insertLogs(app.knex, [
        {
          type: 2,
          user_id: Number(root?.id ?? 1),
          username: ctx.admin.username,
          token_name: 'e2e-logs',
          model_name: MODEL,
          quota: 1000,
          prompt_tokens: 10,
          completion_tokens: 5,
          channel_id: 1,
          created_at: now - 60,
        },
        {
          type: 2,
          user_id: Number(root?.id ?? 1),
          username: ctx.admin.username,
          token_name: 'e2e-logs',
          model_name: 'e2e-logs-other',
          quota: 500,
          prompt_tokens: 10,
          completion_tokens: 5,
          channel_id: 1,
          created_at: now - 30,
        },
      ]);
    });
    if (!ok) return;

    await step('logs: the model filter is kept in the URL and narrows the list', async () => {
      await page.goto(`${base}/log`);
      await page.locator('tr', { hasText: 'e2e-logs-other' }).first().waitFor();
      await page.getByLabel('模型', { exact: true }).fill(MODEL);
      await page.getByRole('button', { name: '查询', exact: true }).click();
      await page.waitForURL((u) => decodeURIComponent(u.search).includes(`"model_name":"${MODEL}"`));
      await page.locator('tr', { hasText: 'e2e-logs-other' }).waitFor({ state: 'detached' });
      await page.reload();
      await page.locator('tr', { hasText: MODEL }).first().waitFor();
      assert((await page.getByLabel('模型', { exact: true }).inputValue()) === MODEL, 'model not restored from the URL');
      await shot(page, 'logs-filtered');
    });

    await step('logs: clicking a username opens the user information', async () => {
      await page.locator('tr', { hasText: MODEL }).first().getByRole('button', { name: ctx.admin.username }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByText('用户信息').waitFor();
      await dialog.getByText(new RegExp(`用户名.*${ctx.admin.username}`)).waitFor();
      await dialog.getByRole('button', { name: '关闭' }).click();
      await expectText(page, MODEL);
    });
  },
};
