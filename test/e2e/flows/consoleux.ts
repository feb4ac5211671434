import type { Page, Response } from 'playwright-core';
import { seedChannel, seedToken, setOptions, setUser } from '../../mock-upstream/seed';
import { insertLogs } from '../../../server/src/repositories/logs';
import { formatQuota } from '../../../admin/src/resources/shared/format';
import { assert, expectPath, expectText, shot, step } from '../lib';
import type { Flow } from './types';

const PRICED = 'e2e-cux-priced';
/** The username of the dashboard step's logs. */
const DASH_USER = 'e2e-cux-dash';
const UNPRICED = 'e2e-cux-unpriced';
const VIEWPORTS = [
  { width: 1440, height: 900 },
  { width: 1280, height: 720 },
  { width: 390, height: 844 },
];
/** The main lists; each waits for something that shows the page has loaded. */
const PAGES: Array<{ name: string; path: string; ready: (p: Page) => Promise<unknown> }> = [
  { name: 'logs', path: '/log', ready: (p) => p.locator('tbody tr').first().waitFor() },
  { name: 'channels', path: '/channel', ready: (p) => p.locator('tbody tr').first().waitFor() },
  { name: 'tokens', path: '/token', ready: (p) => p.locator('#react-admin-title').getByText('令牌管理').waitFor() },
  { name: 'users', path: '/user', ready: (p) => p.locator('tbody tr').first().waitFor() },
  { name: 'redemptions', path: '/redemption', ready: (p) => p.locator('#react-admin-title').getByText('兑换码管理').waitFor() },
  { name: 'pricing', path: '/pricing', ready: (p) => p.getByTestId(`pricing-row-${PRICED}`).waitFor() },
  { name: 'wallet', path: '/topup', ready: (p) => p.getByTestId('topup-balance').waitFor() },
  { name: 'dashboard', path: '/detail', ready: (p) => p.getByTestId('total-quota').waitFor() },
];

/** How far the page scrolls sideways (0 when it fits). */
const sideways = (page: Page) => page.evaluate(() => document.scrollingElement!.scrollWidth - document.scrollingElement!.clientWidth);

/**
 * The console as operators live in it: every main list fits the viewport (desktop, laptop, phone),
 * money is shown with its precision and availability, the log table fits and opens whole records,
 * visitors are sent to login quietly, and the built-in texts follow the language.
 */
export const flow: Flow = {
  name: 'consoleux',
  async run({ page, base, stack }) {
    const app = { knex: stack.app.ctx.knex, ctx: stack.app.ctx };
    const o = stack.app.ctx.options;
    const saved = { ModelRatio: o.get('ModelRatio'), ModelPrice: o.get('ModelPrice'), SelfUseModeEnabled: o.get('SelfUseModeEnabled') };
    const money = (quota: number) => formatQuota(quota, { displayInCurrency: o.bool('DisplayInCurrencyEnabled'), quotaPerUnit: o.quotaPerUnit });
    let channelId = 0;
    const rootRow = () => app.knex('users').where({ username: 'root' }).first('id', 'setting');
    const savedSetting = String((await rootRow())?.setting ?? '');
    const acceptUnset = async (on: boolean) => {
      const root = await rootRow();
      const setting = JSON.parse(String(root?.setting || '{}')) as object;
      await setUser(app, Number(root?.id), { setting: JSON.stringify({ ...setting, accept_unset_model_ratio_model: on }) });
    };
    try {
      const ok = await step('consoleux: seed a channel serving a priced and an unpriced model, and a cheap log', async () => {
        channelId = await seedChannel(app, { name: 'e2e-cux', base_url: stack.mock.url, models: `${PRICED},${UNPRICED}`, group: 'default' });
        const ratios = o.json<Record<string, number>>('ModelRatio', {});
        delete ratios[UNPRICED];
        await setOptions(app, { ModelRatio: JSON.stringify({ ...ratios, [PRICED]: 1 }) });
        const root = await app.knex('users').where({ username: 'root' }).first();
        await insertLogs(app.knex, [
          {
            type: 2,
            user_id: Number(root.id),
            username: 'root',
            token_name: 'e2e-cux-token',
            model_name: PRICED,
            // 65 quota at 500 000 per dollar: $0.00013, which must not read "$0.01".
            quota: 65,
            prompt_tokens: 40,
            completion_tokens: 12,
            channel_id: channelId,
            content: '',
            other: JSON.stringify({
              model_ratio: 1,
              group_ratio: 1,
              completion_ratio: 1,
              frt: 850,
              admin_info: { use_channel: [channelId, channelId + 1000] },
            }),
            created_at: Math.floor(Date.now() / 1000) - 30,
          },
          // For the dashboard (whose range ends on the DataExportInterval grid, so two hours back): the
          // priced model spends more in one call, a second model spends less in three calls, so the
          // chart tabs order the two differently. Under a username of their own: the chart keeps the
          // top models of what it is asked, and other flows' logs spend more.
          {
            type: 2,
            user_id: Number(root.id),
            username: DASH_USER,
            token_name: 'e2e-cux-token-b',
            model_name: PRICED,
            quota: 65,
            prompt_tokens: 40,
            completion_tokens: 12,
            channel_id: channelId,
            content: '',
            other: '{}',
            created_at: Math.floor(Date.now() / 1000) - 7200,
          },
          ...[0, 1, 2].map((i) => ({
            type: 2,
            user_id: Number(root.id),
            username: DASH_USER,
            token_name: 'e2e-cux-token-b',
            model_name: 'e2e-cux-small',
            quota: 10,
            prompt_tokens: 5,
            completion_tokens: 1,
            channel_id: channelId,
            content: '',
            other: '{}',
            created_at: Math.floor(Date.now() / 1000) - 7200 - i,
          })),
        ]);
      });
      if (!ok) return;

      await step('consoleux: a visitor opening /token, /channel or /log goes to login without 401s or "login expired"', async () => {
        const vctx = await page
          .context()
          .browser()!
          .newContext({ viewport: { width: 1440, height: 900 }, locale: 'zh-CN' });
        try {
          const vp = await vctx.newPage();
          const unauthorized: string[] = [];
          vp.on('response', (r: Response) => {
            if (r.status() === 401) unauthorized.push(r.url());
          });
          for (const path of ['/token', '/channel', '/log']) {
            await vp.goto(`${base}${path}`);
            await expectPath(vp, '/login');
            await vp.getByTestId('login-submit').waitFor();
            await vp.waitForTimeout(300);
            assert(unauthorized.length === 0, `401 answers: ${unauthorized.join(', ')}`);
            assert(!vp.url().includes('expired'), `${path}: sent to ${vp.url()}`);
          }
          assert((await vp.getByText('未登录或登录已过期').count()) === 0, 'no "login expired" notice');
          await shot(vp, 'consoleux-visitor-redirect');
        } finally {
          await vctx.close();
        }
      });

      await step('consoleux: the pricing page shows the unpriced model as unavailable with why, and links admins to the ratios', async () => {
        // Self-use mode (turned on by the core flow) and root's accept-unset setting (the personal
        // flow turns it on) let unpriced models through: both off for this step.
        await setOptions(app, { SelfUseModeEnabled: 'false' });
        await acceptUnset(false);
        await page.setViewportSize({ width: 1440, height: 900 });
        await page.goto(`${base}/pricing`);
        await page.getByTestId(`pricing-ok-${PRICED}`).waitFor();
        await page.getByTestId(`pricing-unavailable-${UNPRICED}`).waitFor();
        const cell = page.getByTestId(`pricing-unpriced-${UNPRICED}`);
        await cell.getByText('未配置价格，不可用').waitFor();
        assert(!(await page.getByTestId(`pricing-price-${UNPRICED}`).innerText()).includes('$0.00'), 'no "$0.00" for an unpriced model');
        await shot(page, 'consoleux-pricing-unpriced');
        await page.getByTestId(`pricing-fix-${UNPRICED}`).click();
        await page.waitForURL((u) => u.pathname === '/setting' && u.searchParams.get('tab') === 'operation');
      });

      await step('consoleux: with the personal setting accepting unpriced models, the pricing page shows them callable at the default ratio', async () => {
        await acceptUnset(true);
        await page.goto(`${base}/pricing`);
        await page.getByTestId(`pricing-ok-${UNPRICED}`).waitFor();
        // What the relay bills: the default model ratio 37.5, i.e. $75 per 1M prompt tokens at group ratio 1.
        await page.getByTestId(`pricing-default-${UNPRICED}`).getByText('未配置价格：按默认模型倍率 37.5 计费').waitFor();
        await page.getByTestId(`pricing-price-${UNPRICED}`).getByText('提示 $75.00 / 1M tokens').waitFor();
        await page.getByTestId(`pricing-row-${UNPRICED}`).getByText('模型倍率：37.5（默认）').waitFor();
        assert((await page.getByTestId(`pricing-unpriced-${UNPRICED}`).count()) === 0, 'still shown as not available');
        await shot(page, 'consoleux-pricing-accept-unset');
        await acceptUnset(false);
        await setOptions(app, { SelfUseModeEnabled: saved.SelfUseModeEnabled ?? 'false' });
      });

      await step('consoleux: the usage log fits its box at 1440×900, shows $0.00013, and a row opens the whole record', async () => {
        await page.goto(`${base}/log`);
        const row = page.locator('tbody tr', { hasText: 'e2e-cux-token' }).first();
        await row.waitFor();
        assert(money(65) === '$0.00013' || !o.bool('DisplayInCurrencyEnabled'), `65 quota reads ${money(65)}`);
        await row.getByText(money(65), { exact: true }).waitFor();
        const fit = await page.locator('.RaDataTable-tableWrapper').evaluate((w) => ({ scroll: w.scrollWidth, client: w.clientWidth }));
        assert(fit.scroll <= fit.client + 1, `log table ${fit.scroll}px in a ${fit.client}px box`);
        for (const header of ['详情', '重试']) {
          const box = await page.locator('thead th', { hasText: header }).boundingBox();
          assert(box && box.x + box.width <= 1440, `${header} header visible: ${JSON.stringify(box)}`);
        }
        await shot(page, 'consoleux-log-1440');
        await row.click();
        const dialog = page.getByTestId('log-detail');
        await dialog.waitFor();
        await dialog
          .getByTestId('log-detail-quota')
          .getByText(`${money(65)} (65)`)
          .waitFor();
        await dialog.getByTestId('log-detail-token_name').getByText('e2e-cux-token').waitFor();
        assert((await dialog.getByTestId('log-detail-other').innerText()).includes('"use_channel"'), 'the record includes other');
        await shot(page, 'consoleux-log-detail');
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'detached' });
      });

      await step('consoleux: a model keeps one colour across the dashboard tabs and its table', async () => {
        // The dashboard keeps each answer until the next DataExportInterval boundary, and an earlier
        // flow may have asked it before these logs (dated two hours back) were seeded: another
        // interval is another question.
        const interval = app.ctx.options.get('DataExportInterval');
        await app.ctx.options.set('DataExportInterval', String(Number(interval || 5) + 1));
        await page.goto(`${base}/detail`);
        await page.locator('input[name="username"]').fill(DASH_USER);
        await page.locator('input[name="username"]').press('Enter');
        // Each legend is waited for on its own: a tab switch re-renders the chart, and the legend
        // of one model may be a frame behind the other's.
        const read = async () => {
          const out: string[] = [];
          for (const n of [PRICED, 'e2e-cux-small']) {
            const legend = page.getByTestId(`legend-${n}`);
            await legend.waitFor();
            out.push(await legend.evaluate((e) => getComputedStyle(e).backgroundColor));
          }
          return out;
        };
        // The chart may draw once from an earlier answer and again when the fresh one arrives (a
        // full run's CI once read the two frames apart): the colours once two reads agree.
        const colours = async () => {
          let last = await read();
          for (let i = 0; i < 10; i++) {
            await page.waitForTimeout(300);
            const now = await read();
            if (JSON.stringify(now) === JSON.stringify(last)) return now;
            last = now;
          }
          return last;
        };
        const byQuota = await colours();
        await page.getByRole('tab', { name: '调用次数' }).click();
        await page.getByRole('tab', { name: '调用次数', selected: true }).waitFor();
        const byCount = await colours();
        assert(byQuota[0] !== byQuota[1], `two models, two colours: ${byQuota.join(' / ')}`);
        assert(JSON.stringify(byQuota) === JSON.stringify(byCount), `quota tab ${byQuota.join(' / ')} vs count tab ${byCount.join(' / ')}`);
        const tag = await page.getByTestId(`model-tag-${PRICED}`).evaluate((e) => getComputedStyle(e).color);
        assert(tag === byQuota[0], `table tag ${tag} vs chart ${byQuota[0]}`);
        // The small model spent 30 quota ($0.00006): the table shows that, not "$0.00".
        assert(money(30) !== '$0.00', `30 quota reads ${money(30)}`);
        await page.getByTestId('model-table').locator('tr', { hasText: 'e2e-cux-small' }).getByText(money(30), { exact: true }).waitFor();
        await shot(page, 'consoleux-dashboard-colours');
        await app.ctx.options.set('DataExportInterval', interval || '5');
      });

      await step('consoleux: redemption amounts are entered in dollars with presets and shown in both units', async () => {
        const qpu = o.quotaPerUnit;
        await page.goto(`${base}/redemption/create`);
        const amount = page.getByTestId('redemption-amount');
        await amount.waitFor();
        assert((await amount.inputValue()) === '10', `default amount ${await amount.inputValue()}`);
        const units = page.getByLabel('额度（单位）');
        assert(Number(await units.inputValue()) === 10 * qpu, `default units ${await units.inputValue()}`);
        await amount.fill('2.5');
        assert(Number(await units.inputValue()) === 2.5 * qpu, `units for $2.5: ${await units.inputValue()}`);
        await page.getByTestId('redemption-preset-20').click();
        assert(Number(await units.inputValue()) === 20 * qpu, `units for the $20 preset: ${await units.inputValue()}`);
        assert((await amount.inputValue()) === '20', `amount after the preset: ${await amount.inputValue()}`);
        await expectText(page, `${(20 * qpu).toLocaleString('en-US')} 单位 = $20.00`);
        await page.getByRole('textbox', { name: '名称', exact: true }).fill('e2e-cux-code');
        await shot(page, 'consoleux-redemption-amount');
        await page.getByRole('button', { name: '提交' }).click();
        await expectText(page, '创建成功');
        const code = await app.knex('redemptions').where({ name: 'e2e-cux-code' }).first();
        assert(code && Number(code.quota) === 20 * qpu, `stored quota ${code?.quota}`);
      });

      await step('consoleux: fix abilities is in the channel actions and shows its result', async () => {
        await app.knex('abilities').where({ channel_id: channelId }).delete();
        await page.goto(`${base}/channel`);
        await page.getByTestId('channel-fix-abilities').click();
        // The confirm dialog's cancel button is plain (no warning icon); confirm keeps its icon.
        const cancel = page.getByRole('dialog').getByRole('button', { name: '取消' });
        await cancel.waitFor();
        assert((await cancel.locator('svg:visible').count()) === 0, 'cancel shows no icon');
        await page.getByRole('button', { name: '确认' }).click();
        const result = page.getByTestId('bulk-result');
        await result.getByText(/已按 \d+ 个渠道重建能力表/).waitFor();
        await shot(page, 'consoleux-fix-abilities');
        await result.getByRole('button', { name: '关闭' }).click();
        const n = await app.knex('abilities').where({ channel_id: channelId }).count({ n: '*' });
        assert(Number(n[0]!.n) === 2, `abilities rebuilt: ${n[0]!.n}`);
      });

      await step("consoleux: fetching a channel's models warns which of them have no price", async () => {
        const ratios = o.json<Record<string, number>>('ModelRatio', {});
        const prices = o.json<Record<string, number>>('ModelPrice', {});
        delete ratios['text-embedding-3-small'];
        delete prices['text-embedding-3-small'];
        await setOptions(app, { ModelRatio: JSON.stringify(ratios), ModelPrice: JSON.stringify(prices) });
        await page.goto(`${base}/channel/${channelId}`);
        await page.getByRole('button', { name: '获取模型列表' }).click();
        const warning = page.getByTestId('channel-unpriced-warning');
        await warning.getByText(/text-embedding-3-small/).waitFor();
        assert(!(await warning.innerText()).includes('gpt-4o-mini'), 'a priced model is not listed');
        await shot(page, 'consoleux-fetch-models-unpriced');
      });

      await step('consoleux: a bulk delete tries every item and reports which failed', async () => {
        const a = await seedToken(app, 1, { name: 'e2e-cux-bulk-a' });
        const b = await seedToken(app, 1, { name: 'e2e-cux-bulk-b' });
        await page.goto(`${base}/token`);
        for (const name of ['e2e-cux-bulk-a', 'e2e-cux-bulk-b']) await page.locator('tbody tr', { hasText: name }).getByRole('checkbox').check();
        // b goes away behind the console's back: its delete fails, a's must still happen.
        await app
          .knex('tokens')
          .where({ id: b.id })
          .update({ deleted_at: Math.floor(Date.now() / 1000) });
        await page.getByRole('button', { name: '删除所选' }).click();
        await page.getByRole('button', { name: '确认' }).click();
        await expectText(page, new RegExp(`成功 1 项，失败 1 项: #${b.id} `));
        await shot(page, 'consoleux-bulk-report');
        const left = await app.knex('tokens').where({ id: a.id }).first();
        assert(left && left.deleted_at != null, 'the other token was deleted');
        await page.locator('tbody tr', { hasText: 'e2e-cux-bulk-a' }).waitFor({ state: 'detached' });
      });

      await step('consoleux: drawer actions stay visible at 900 px height (user edit)', async () => {
        await page.goto(`${base}/user/1`);
        const actions = page.getByTestId('drawer-actions');
        await actions.waitFor();
        const box = await actions.boundingBox();
        assert(box && box.y >= 0 && box.y + box.height <= 900, `actions at ${JSON.stringify(box)}`);
        await actions.getByRole('button', { name: '提交' }).waitFor();
        await shot(page, 'consoleux-user-drawer');
        await page.keyboard.press('Escape');
      });

      await step('consoleux: the chat page title is padded like the other pages', async () => {
        await page.goto(`${base}/chat/0`);
        const title = page.locator('#react-admin-title');
        await title.getByText(/\S/).first().waitFor();
        const pad = await title.evaluate((e) => parseFloat(getComputedStyle(e).paddingLeft));
        assert(pad >= 8, `chat title padding-left ${pad}px`);
      });

      await step('consoleux: the user list labels its statistic chips', async () => {
        await page.goto(`${base}/user`);
        const stats = page.getByTestId('user-stats').first();
        await stats.getByText(/^余额 /).waitFor();
        await stats.getByText(/^已用 /).waitFor();
        await stats.getByText(/^调用 /).waitFor();
      });

      for (const vp of VIEWPORTS) {
        await step(`consoleux: the main lists do not scroll sideways at ${vp.width}×${vp.height}`, async () => {
          await page.setViewportSize(vp);
          const wide: string[] = [];
          for (const p of PAGES) {
            await page.goto(`${base}${p.path}`);
            await p.ready(page);
            await page.waitForTimeout(300);
            const over = await sideways(page);
            if (over > 0) wide.push(`${p.name} +${over}px`);
            await shot(page, `consoleux-${vp.width}x${vp.height}-${p.name}`);
          }
          assert(wide.length === 0, `pages scrolling sideways: ${wide.join(', ')}`);
        });
      }

      await step('consoleux: pagination built-ins follow the language (zh, then en)', async () => {
        await page.setViewportSize({ width: 1440, height: 900 });
        await page.goto(`${base}/log`);
        await page.locator('button[title="下一页"]').first().waitFor();
        await page.evaluate(() => localStorage.setItem('i18nextLng', 'en'));
        await page.reload();
        await page.locator('button[title="Go to next page"]').first().waitFor();
        await expectText(page, 'Rows per page');
        await shot(page, 'consoleux-log-en');
        await page.evaluate(() => localStorage.setItem('i18nextLng', 'zh'));
        await page.reload();
        await page.locator('button[title="下一页"]').first().waitFor();
      });
    } finally {
      await setUser(app, Number((await rootRow())?.id), { setting: savedSetting });
      await setOptions(app, {
        ModelRatio: saved.ModelRatio ?? '{}',
        ModelPrice: saved.ModelPrice ?? '{}',
        SelfUseModeEnabled: saved.SelfUseModeEnabled ?? 'false',
      });
      await page.setViewportSize({ width: 1366, height: 820 });
    }
  },
};
