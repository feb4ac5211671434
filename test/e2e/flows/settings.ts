import { seedChannel } from '../../mock-upstream/seed';
import { createAccount } from '../../../server/src/services/accounts';
import { insertLogs } from '../../../server/src/repositories/logs';
import { assert, expectText, loginElsewhere, shot, step } from '../lib';
import type { Flow } from './types';

const MODEL = 'e2e-settings-model';
const UNSET = 'e2e-settings-unset';

/** End-to-end steps of the settings page: visual ratio edit reflected in /api/pricing, nothing-changed warning, validations. */
export const flow: Flow = {
  name: 'settings',
  async run(ctx) {
    const { page, base, stack } = ctx;
    const app = { knex: stack.app.ctx.knex, ctx: stack.app.ctx };
    const o = stack.app.ctx.options;

    const ok = await step('settings: seed a channel serving a priced and an unpriced model', async () => {
      await seedChannel(app, { name: 'e2e-settings', base_url: stack.mock.url, models: `${MODEL},${UNSET}`, group: 'default' });
      const ratios = o.json<Record<string, number>>('ModelRatio', {});
      await o.set('ModelRatio', JSON.stringify({ ...ratios, [MODEL]: 1 }));
    });
    if (!ok) return;

    await step('settings: /setting opens the operation tab with all five tabs for root', async () => {
      await page.goto(`${base}/setting`);
      await page.getByTestId('sec-general').waitFor({ state: 'visible' });
      for (const t of ['operation', 'ratelimit', 'models', 'system', 'other']) assert(await page.getByTestId(`tab-${t}`).isVisible(), `tab ${t} missing`);
      assert((await page.getByTestId('tab-operation').getAttribute('aria-selected')) === 'true', 'operation not selected');
      await shot(page, 'settings-operation');
    });

    await step('settings: clearing the logs older than a month removes them and says how many', async () => {
      const old = Math.floor(Date.now() / 1000) - 40 * 86400;
      await insertLogs(app.knex, [
        { type: 2, user_id: 1, username: 'e2e-old', token_name: 'e2e-old', model_name: MODEL, quota: 1, channel_id: 1, created_at: old },
        { type: 2, user_id: 1, username: 'e2e-old', token_name: 'e2e-old', model_name: MODEL, quota: 1, channel_id: 1, created_at: old - 60 },
      ]);
      const before = Number(
        (
          await app
            .knex('logs')
            .where('created_at', '<', old + 86400)
            .count({ n: '*' })
        )[0]!.n,
      );
      await page.getByRole('button', { name: '清除历史日志' }).click();
      await page.getByRole('button', { name: '确认' }).click();
      await expectText(page, `${before} 条日志已清理！`);
      assert((await app.knex('logs').where({ username: 'e2e-old' }).count({ n: '*' }))[0]!.n == 0, 'the old logs are gone');
    });

    await step('settings: saving the rate limit form unchanged warns 你似乎并没有修改什么', async () => {
      await page.getByTestId('tab-ratelimit').click();
      await page.waitForURL(/tab=ratelimit/);
      await page.getByTestId('sec-ratelimit').getByRole('button', { name: /保存/ }).click();
      await expectText(page, '你似乎并没有修改什么');
      await shot(page, 'settings-ratelimit-nothing');
    });

    await step('settings: an out-of-range success count is refused before any call', async () => {
      const input = page.locator('input[name="ModelRequestRateLimitSuccessCount"]');
      await input.fill('0');
      await input.blur();
      await expectText(page, '不能小于 1');
      await expectText(page, '有未保存的修改');
      await page.getByTestId('sec-ratelimit').getByRole('button', { name: /保存/ }).click();
      await page.waitForTimeout(300);
      assert(o.get('ModelRequestRateLimitSuccessCount') === '1000', 'value was stored');
    });

    await step('settings: a JSON area shows 不是合法的 JSON 字符串 on blur (models tab)', async () => {
      await page.goto(`${base}/setting?tab=models`);
      const area = page.locator('textarea[name="gemini.safety_settings"]');
      await area.fill('{not json');
      await area.blur();
      await expectText(page, '不是合法的 JSON 字符串');
      await shot(page, 'settings-models-json');
    });

    await step('settings: visual ratio editor saves a changed ratio that /api/pricing reflects', async () => {
      await page.goto(`${base}/setting?tab=operation`);
      await page.getByTestId('tab-visual').click();
      const editor = page.getByTestId('ratio-editor');
      await editor.locator('input[name="ratio_search"]').fill(MODEL);
      const ratio = editor.getByLabel(`ratio ${MODEL}`, { exact: true });
      await ratio.waitFor({ state: 'visible' });
      assert((await ratio.inputValue()) === '1', `seeded ratio is ${await ratio.inputValue()}`);
      await ratio.fill('3.5');
      await editor.getByLabel(`completion ${MODEL}`, { exact: true }).fill('2');
      // Derived prices: $7 / 1M input, $14 / 1M output.
      await expectText(page, '$7');
      await expectText(page, '$14');
      await shot(page, 'settings-visual-ratio');
      await page.getByTestId('ratio-save').click();
      await expectText(page, '保存成功');
      const pricing = await page.evaluate(async () => {
        const r = await fetch('/api/pricing', { headers: { 'Cache-Control': 'no-store' } });
        return (await r.json()) as { data: Array<{ model_name: string; model_ratio: number; completion_ratio: number }> };
      });
      const row = pricing.data.find((d) => d.model_name === MODEL);
      assert(row, 'model missing from /api/pricing');
      assert(row.model_ratio === 3.5, `model_ratio is ${row.model_ratio}`);
      assert(row.completion_ratio === 2, `completion_ratio is ${row.completion_ratio}`);
    });

    await step('settings: a duplicate model name gives 模型名称已存在', async () => {
      const editor = page.getByTestId('ratio-editor');
      await editor.locator('input[name="ratio_new_model"]').fill(MODEL);
      await editor.getByRole('button', { name: '添加模型' }).click();
      await expectText(page, '模型名称已存在');
    });

    await step('settings: the unset-ratio list shows the unpriced model and quick-sets it', async () => {
      await page.getByRole('tab', { name: '未设置倍率模型' }).click();
      const box = page.getByTestId('unset-models');
      await box.locator('input[name="unset_search"]').fill(UNSET);
      await box.getByText(UNSET, { exact: true }).click();
      await box.getByRole('textbox').nth(1).fill('0.5');
      await box.getByRole('textbox').nth(2).fill('3');
      await box.getByRole('button', { name: '为所选模型设置' }).click();
      await expectText(page, '保存成功');
      await box.getByText(UNSET, { exact: true }).waitFor({ state: 'detached' });
      assert(o.json<Record<string, number>>('ModelRatio', {})[UNSET] === 0.5, 'unset model ratio not stored');
      assert(o.json<Record<string, number>>('CompletionRatio', {})[UNSET] === 3, 'unset completion ratio not stored');
    });

    await step('settings: turning password login off asks first; cancelling restores the switch', async () => {
      await page.goto(`${base}/setting?tab=system`);
      const sw = page.getByTestId('sec-login').locator('input[name="PasswordLoginEnabled"]');
      await sw.waitFor({ state: 'attached' });
      assert(await sw.isChecked(), 'password login should start on');
      await sw.click();
      await page.getByRole('dialog').waitFor({ state: 'visible' });
      await shot(page, 'settings-system-confirm');
      await page.getByRole('dialog').getByRole('button', { name: '取消' }).click();
      await page.getByRole('dialog').waitFor({ state: 'hidden' });
      assert(await sw.isChecked(), 'switch not restored after cancel');
      assert(o.get('PasswordLoginEnabled') === 'true', 'option changed');
    });

    await step('settings: system tab strips a trailing slash from the server address', async () => {
      const input = page.locator('input[name="ServerAddress"]');
      await input.fill('https://gw.example.com///');
      await page
        .getByRole('button', { name: /保存通用设置/ })
        .first()
        .click();
      await expectText(page, '保存成功');
      assert(o.get('ServerAddress') === 'https://gw.example.com', `stored ${o.get('ServerAddress')}`);
    });

    await step('settings: the options without effect here are not on the page (docs/console-settings.md says why)', async () => {
      for (const tab of ['operation', 'ratelimit', 'models', 'system', 'other']) {
        await page.goto(`${base}/setting?tab=${tab}`);
        await page.getByTestId(`tab-${tab}`).waitFor();
        await page.waitForLoadState('networkidle');
        for (const key of ['WorkerUrl', 'WorkerValidKey', 'StreamCacheQueueLength'])
          assert((await page.locator(`[name="${key}"]`).count()) === 0, `${key} shown on the ${tab} tab`);
      }
    });

    await step('settings: the update check appears once a release feed is set, and compares with it', async () => {
      // This project's feed, served by the mock (a GitHub-style latest-release object).
      stack.mock.route('GET', /^\/e2e-releases\/latest$/, (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ tag_name: 'v99.0.0', html_url: 'https://example.com/releases/v99.0.0' }));
      });
      await o.set('UpdateCheckUrl', '');
      await page.goto(`${base}/setting?tab=other`);
      await page.locator('input[name="UpdateCheckUrl"]').waitFor();
      assert((await page.getByRole('button', { name: '检查更新' }).count()) === 0, 'no feed: no update check');
      await page.locator('input[name="UpdateCheckUrl"]').fill(`${stack.mock.url}/e2e-releases/latest`);
      await page.getByRole('button', { name: /保存版本更新/ }).click();
      await expectText(page, '保存成功');
      await page.reload();
      await page.getByRole('button', { name: '检查更新' }).click();
      await expectText(page, '发现新版本 v99.0.0');
      await page.getByRole('link', { name: 'v99.0.0' }).waitFor();
    });

    await step('settings: other tab shows system info; mobile layout', async () => {
      await page.goto(`${base}/setting?tab=other`);
      await expectText(page, '检查更新');
      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForTimeout(300);
      await shot(page, 'settings-other-mobile');
      await page.goto(`${base}/setting?tab=operation`);
      await page.getByTestId('sec-general').waitFor({ state: 'visible' });
      // The settings page itself fits the screen (wide tables scroll inside their own box).
      const overflow = await page.getByTestId('setting-page').evaluate((el) => el.getBoundingClientRect().right - window.innerWidth);
      assert(overflow <= 1, `settings page overflows by ${overflow}px on mobile`);
      await shot(page, 'settings-operation-mobile');
      await page.setViewportSize({ width: 1280, height: 800 });
    });

    await step('settings: an admin (role 10) gets the operation, rate-limit and model tabs only, and saves a rate limit', async () => {
      await createAccount(stack.app.ctx, { username: 'e2e-set-admin', password: 'e2e-set-pass-1', role: 10 });
      const before = o.get('ModelRequestRateLimitSuccessCount');
      const { context: actx, page: ap } = await loginElsewhere(page, base, 'e2e-set-admin', 'e2e-set-pass-1');
      try {
        await ap.goto(`${base}/setting?tab=ratelimit`);
        await ap.getByTestId('sec-ratelimit').waitFor({ state: 'visible' });
        for (const t of ['operation', 'ratelimit', 'models']) assert(await ap.getByTestId(`tab-${t}`).isVisible(), `tab ${t} missing for an admin`);
        for (const t of ['system', 'other']) assert((await ap.getByTestId(`tab-${t}`).count()) === 0, `tab ${t} shown to an admin`);
        const input = ap.locator('input[name="ModelRequestRateLimitSuccessCount"]');
        await input.fill('999');
        await input.blur();
        await ap.getByTestId('sec-ratelimit').getByRole('button', { name: /保存/ }).click();
        await expectText(ap, '保存成功');
        assert(o.get('ModelRequestRateLimitSuccessCount') === '999', `stored ${o.get('ModelRequestRateLimitSuccessCount')}`);
        await shot(ap, 'settings-admin-ratelimit');
      } finally {
        await actx.close();
        await o.set('ModelRequestRateLimitSuccessCount', before);
      }
    });
  },
};
