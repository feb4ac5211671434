import { seedChannel, setOptions } from '../../mock-upstream/seed';
import { assert, expectText, shot, step } from '../lib';
import type { Flow, FlowContext } from './types';

const TOKEN_MODEL = 'e2e-price-model';
const CALL_MODEL = 'e2e-call-model';

/** End-to-end steps of the pricing page: per-1M prices, group switch, search, visitors. */
export const flow: Flow = {
  name: 'pricing',
  async run({ page, base, stack }: FlowContext) {
    const app = { knex: stack.app.ctx.knex, ctx: stack.app.ctx };
    const o = stack.app.ctx.options;
    const saved = {
      ModelRatio: o.get('ModelRatio'),
      CompletionRatio: o.get('CompletionRatio'),
      ModelPrice: o.get('ModelPrice'),
      GroupRatio: o.get('GroupRatio'),
    };
    try {
      const ready = await step('pricing: seed models served to default and vip, their ratios and a vip ratio of 2', async () => {
        await seedChannel(app, { name: 'e2e-pricing', base_url: stack.mock.url, models: `${TOKEN_MODEL},${CALL_MODEL}`, group: 'default,vip' });
        await setOptions(app, {
          ModelRatio: JSON.stringify({ ...o.json<Record<string, number>>('ModelRatio', {}), [TOKEN_MODEL]: 2.5 }),
          CompletionRatio: JSON.stringify({ ...o.json<Record<string, number>>('CompletionRatio', {}), [TOKEN_MODEL]: 3 }),
          ModelPrice: JSON.stringify({ ...o.json<Record<string, number>>('ModelPrice', {}), [CALL_MODEL]: 0.04 }),
          GroupRatio: JSON.stringify({ ...o.json<Record<string, number>>('GroupRatio', {}), default: 1, vip: 2 }),
        });
      });
      if (!ready) return;

      await step('pricing: the seeded model shows its per-1M prices for the user group', async () => {
        await page.goto(`${base}/pricing`);
        await expectText(page, '您的分组为：default，分组倍率为：1');
        await expectText(page, '按量计费费用');
        const price = page.getByTestId(`pricing-price-${TOKEN_MODEL}`);
        await price.getByText('提示 $5.00 / 1M tokens').waitFor();
        await price.getByText('补全 $15.00 / 1M tokens').waitFor();
        await page.getByTestId(`pricing-price-${CALL_MODEL}`).getByText('模型价格 $0.04 / 次').waitFor();
        const row = page.getByTestId(`pricing-row-${CALL_MODEL}`);
        await row.getByText('按次计费').waitFor();
        await shot(page, 'pricing');
      });

      await step('pricing: clicking a usable group switches the viewed group and its prices', async () => {
        await page.getByTestId(`pricing-group-${TOKEN_MODEL}-vip`).click();
        await expectText(page, '您的分组为：vip，分组倍率为：2');
        const price = page.getByTestId(`pricing-price-${TOKEN_MODEL}`);
        await price.getByText('提示 $10.00 / 1M tokens').waitFor();
        await price.getByText('补全 $30.00 / 1M tokens').waitFor();
        await page.getByTestId(`pricing-price-${CALL_MODEL}`).getByText('模型价格 $0.08 / 次').waitFor();
      });

      await step('pricing: fuzzy search filters by model name; gpt models come first', async () => {
        await page.getByPlaceholder('模糊搜索模型名称').fill('e2eprice');
        await page.getByTestId(`pricing-row-${CALL_MODEL}`).waitFor({ state: 'detached' });
        await page.getByTestId(`pricing-row-${TOKEN_MODEL}`).waitFor();
        await page.getByPlaceholder('模糊搜索模型名称').fill('');
        const names = await page
          .locator('[data-testid^="pricing-row-"]')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')!.slice('pricing-row-'.length)));
        const firstOther = names.findIndex((n) => !n.toLowerCase().startsWith('gpt'));
        assert(firstOther === -1 || names.slice(firstOther).every((n) => !n.toLowerCase().startsWith('gpt')), `order ${names.join(',')}`);
      });

      await step('pricing: copy the selected models and a model name', async () => {
        await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
        await page.getByTestId(`pricing-row-${TOKEN_MODEL}`).getByRole('checkbox').check();
        await page.getByTestId(`pricing-row-${CALL_MODEL}`).getByRole('checkbox').check();
        await page.getByRole('button', { name: /复制选中模型 \(2\)/ }).click();
        await expectText(page, '已复制到剪贴板！');
        const copied = await page.evaluate(() => navigator.clipboard.readText());
        assert(copied === `${TOKEN_MODEL},${CALL_MODEL}`, `clipboard ${copied}`);
        await page.getByTestId(`pricing-row-${CALL_MODEL}`).getByText(CALL_MODEL, { exact: true }).click();
        await page.waitForFunction((m) => navigator.clipboard.readText().then((t) => t === m), CALL_MODEL);
      });

      await step('pricing: without currency display the prices are quota amounts', async () => {
        const before = o.get('DisplayInCurrencyEnabled');
        await setOptions(app, { DisplayInCurrencyEnabled: 'false' });
        try {
          await page.goto(`${base}/pricing`);
          // $5 per 1M prompt tokens × 500000 quota per unit = 2.5M; completion $15 → 7.5M.
          const price = page.getByTestId(`pricing-price-${TOKEN_MODEL}`);
          await price.getByText('提示 2.5M / 1M tokens').waitFor();
          await price.getByText('补全 7.5M / 1M tokens').waitFor();
        } finally {
          await setOptions(app, { DisplayInCurrencyEnabled: before });
        }
      });

      await step('pricing: visitors see a warning with the default group ratio', async () => {
        const ctx = await page
          .context()
          .browser()!
          .newContext({ viewport: { width: 1366, height: 820 }, locale: 'zh-CN' });
        try {
          const visitor = await ctx.newPage();
          await visitor.goto(`${base}/pricing`);
          await expectText(visitor, '您还未登录，显示的价格为默认分组倍率：1');
          await visitor.getByTestId(`pricing-price-${TOKEN_MODEL}`).getByText('提示 $5.00 / 1M tokens').waitFor();
          await visitor.setViewportSize({ width: 390, height: 800 });
          await shot(visitor, 'pricing-visitor-mobile');
        } finally {
          await ctx.close();
        }
      });
    } finally {
      await setOptions(app, saved);
    }
  },
};
