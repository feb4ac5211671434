import type { Page } from 'playwright-core';
import { seedChannel, setOptions, setUser } from '../../mock-upstream/seed';
import { assert, expectText, shot, step } from '../lib';
import type { Flow, FlowContext } from './types';

const MODEL = 'e2e-pg-model';
/** The mock answers 400 for models named fault-400. */
const FAULTY = 'e2e-pg-fault-400';
/** The mock drips 200 chunks 20 ms apart for models named fault-drip. */
const DRIP = 'e2e-pg-fault-drip';

async function chooseModel(page: Page, model: string): Promise<void> {
  await page.getByTestId('playground-model').getByRole('combobox').click();
  await page.getByRole('option', { name: model, exact: true }).click();
}

const assistant = (page: Page) => page.locator('[data-testid="playground-message"][data-role="assistant"]');

/** End-to-end steps of the playground page: a chat streamed from the mock upstream. */
export const flow: Flow = {
  name: 'playground',
  async run({ page, base, stack }: FlowContext) {
    const app = { knex: stack.app.ctx.knex, ctx: stack.app.ctx };
    let ready = await step('playground: seed a channel to the mock and a price for its model', async () => {
      await seedChannel(app, { name: 'e2e-playground', base_url: stack.mock.url, models: MODEL, group: 'default' });
      await seedChannel(app, { name: 'e2e-playground-faulty', base_url: stack.mock.url, models: FAULTY, group: 'default', auto_ban: 0 });
      const ratios = stack.app.ctx.options.json<Record<string, number>>('ModelRatio', {});
      await seedChannel(app, { name: 'e2e-playground-drip', base_url: stack.mock.url, models: DRIP, group: 'default', auto_ban: 0 });
      await setOptions(app, { ModelRatio: JSON.stringify({ ...ratios, [MODEL]: 1.5, [FAULTY]: 1, [DRIP]: 1 }) });
      const root = await stack.app.ctx.knex('users').where({ username: 'root' }).first();
      await setUser(app, Number(root.id), { quota: 500_000_000 });
    });
    if (!ready) return;

    ready = await step('playground: settings sidebar with the user models, groups and defaults', async () => {
      await page.goto(`${base}/playground`);
      await page.getByTestId('playground-settings').waitFor();
      await expectText(page, '清除上下文');
      const prompt = await page.getByLabel('系统提示词').inputValue();
      assert(prompt === 'You are a helpful assistant.', `system prompt ${prompt}`);
      await chooseModel(page, MODEL);
      await page.getByTestId('playground-group').getByRole('combobox').click();
      await page.getByRole('option', { name: /vip/ }).first().waitFor();
      await page.keyboard.press('Escape');
    });
    if (!ready) return;

    await step('playground: a message streams the mock answer and completes', async () => {
      stack.mock.reset();
      await page.getByTestId('playground-input').fill('Say hello');
      await page.getByTestId('playground-send').click();
      await page.locator('[data-testid="playground-message"][data-role="user"]', { hasText: 'Say hello' }).waitFor();
      await expectText(page, 'Hello from the mock');
      await assistant(page).and(page.locator('[data-status="complete"]')).first().waitFor();
      const sent = stack.mock.received(/chat\/completions/);
      assert(sent.length === 1, `mock received ${sent.length} chat calls`);
      const body = sent[0]!.json as { model?: string; stream?: boolean; messages?: Array<{ role: string; content: string }> };
      assert(body.model === MODEL && body.stream === true, `upstream body ${JSON.stringify(body).slice(0, 200)}`);
      assert(body.messages?.[0]?.role === 'system' && body.messages?.at(-1)?.content === 'Say hello', 'system prompt and question sent');
      await shot(page, 'playground-answer');
    });

    await step('playground: the conversation survives a page change and a reload (kept per model) and clear context empties it', async () => {
      const stored = await page.evaluate(() => localStorage.getItem('playground_chats_by_model'));
      assert(stored && (JSON.parse(stored) as Record<string, unknown[]>)[MODEL] && stored.includes('Hello from the mock'), `stored chat ${stored}`);
      await page.goto(`${base}/token`);
      await page.goto(`${base}/playground`);
      await expectText(page, 'Hello from the mock');
      await page.reload();
      await expectText(page, 'Hello from the mock');
      await page.getByTestId('playground-clear').click();
      await page.getByText('Hello from the mock').waitFor({ state: 'detached' });
      const after = await page.evaluate(() => localStorage.getItem('playground_chats_by_model'));
      assert(after !== null && !(MODEL in (JSON.parse(after) as Record<string, unknown>)), `stored after clear: ${after}`);
    });

    await step('playground: an upstream error is appended to the message, marked error', async () => {
      await chooseModel(page, FAULTY);
      await page.getByTestId('playground-input').fill('will fail');
      await page.getByTestId('playground-send').click();
      await assistant(page).and(page.locator('[data-status="error"]')).first().waitFor();
      const text = (await assistant(page).last().innerText()).trim();
      assert(/mock failure 400|400/.test(text), `error text shown: ${text.slice(0, 200)}`);
      await shot(page, 'playground-error');
      // Each model keeps its own conversation: the other model's is empty, this one's comes back.
      await chooseModel(page, MODEL);
      await page.getByText('will fail').waitFor({ state: 'detached' });
      await chooseModel(page, FAULTY);
      await page.getByText('will fail').first().waitFor();
      await page.getByTestId('playground-clear').click();
      await chooseModel(page, MODEL);
    });

    await step('playground: stop ends a long stream, keeping the partial answer as complete', async () => {
      await chooseModel(page, DRIP);
      await page.getByTestId('playground-input').fill('long answer please');
      await page.getByTestId('playground-send').click();
      await assistant(page).and(page.locator('[data-status="incomplete"]')).first().waitFor();
      await page.getByTestId('playground-stop').click();
      await assistant(page).and(page.locator('[data-status="complete"]')).first().waitFor();
      const text = (await assistant(page).last().innerText()).trim();
      assert(text.length > 0, 'partial answer kept');
      await page.getByTestId('playground-send').waitFor();
      // Clear this model's conversation (each model keeps its own).
      await page.getByTestId('playground-clear').click();
      await chooseModel(page, MODEL);
    });

    await step('playground: corrupt stored chats → 聊天数据解析失败; ?expired shows the notice', async () => {
      await page.evaluate(() => localStorage.setItem('playground_chats_by_model', '{broken'));
      await page.goto(`${base}/playground?expired=true`);
      await expectText(page, '聊天数据解析失败');
      await expectText(page, '未登录或登录已过期，请重新登录！');
    });

    await step('playground: on mobile the settings collapse', async () => {
      await page.setViewportSize({ width: 390, height: 800 });
      await page.goto(`${base}/playground`);
      await page.getByTestId('playground-toggle-settings').waitFor();
      await page.getByLabel('系统提示词').waitFor({ state: 'hidden' });
      await page.getByTestId('playground-toggle-settings').click();
      await page.getByLabel('系统提示词').waitFor({ state: 'visible' });
      await shot(page, 'playground-mobile');
      await page.setViewportSize({ width: 1366, height: 820 });
    });

    // The chat pages (same feature owner): the configured link framed with the first enabled token.
    const savedChats = stack.app.ctx.options.get('Chats');
    try {
      await step('chat: /chat/0 frames the configured link with sk-<first enabled token> and the address', async () => {
        await setOptions(app, { Chats: JSON.stringify([{ LocalChat: '/about?key={key}&address={address}' }, { Broken: '' }]) });
        const root = await stack.app.ctx.knex('users').where({ username: 'root' }).first();
        const token = await stack.app.ctx.knex('tokens').where({ user_id: root.id, status: 1 }).orderBy('id', 'desc').first();
        assert(token, 'root has an enabled token (core flow)');
        await page.goto(`${base}/chat/0`);
        const frame = page.getByTestId('chat-frame');
        await frame.waitFor();
        const src = (await frame.getAttribute('src')) ?? '';
        const url = new URL(src, base);
        assert(url.pathname === '/about', `frame src ${src}`);
        assert(url.searchParams.get('key') === `sk-${String(token.key).replace(/^sk-/, '')}`, `key in ${src}`);
        assert(url.searchParams.get('address') === base, `address in ${src}`);
        await shot(page, 'chat-frame');
      });

      await step('chat: a link without URL → 聊天链接配置错误，请联系管理员; no links → 请联系管理员配置聊天链接', async () => {
        await page.goto(`${base}/chat/1`);
        await expectText(page, '聊天链接配置错误，请联系管理员');
        await page.goto(`${base}/chat/7`);
        await expectText(page, '聊天链接配置错误，请联系管理员');
        await setOptions(app, { Chats: '[]' });
        await page.goto(`${base}/chat/0`);
        await expectText(page, '请联系管理员配置聊天链接');
      });

      await step('chat2link: goes to the first chat link with the key', async () => {
        await setOptions(app, { Chats: JSON.stringify([{ LocalChat: '/about?key={key}' }]) });
        await page.goto(`${base}/chat2link`);
        await page.waitForURL((u) => u.pathname === '/about' && (u.searchParams.get('key') ?? '').startsWith('sk-'));
      });

      await step('chat: no enabled token → the product message, then /token', async () => {
        const root = await stack.app.ctx.knex('users').where({ username: 'root' }).first();
        const enabled: Array<{ id: number }> = await stack.app.ctx.knex('tokens').where({ user_id: root.id, status: 1 }).select('id');
        await stack.app.ctx
          .knex('tokens')
          .whereIn(
            'id',
            enabled.map((t) => t.id),
          )
          .update({ status: 2 });
        try {
          await page.goto(`${base}/chat/0`);
          await expectText(page, '当前没有可用的启用令牌，请确认是否有令牌处于启用状态！');
          await page.waitForURL((u) => u.pathname === '/token');
        } finally {
          await stack.app.ctx
            .knex('tokens')
            .whereIn(
              'id',
              enabled.map((t) => t.id),
            )
            .update({ status: 1 });
        }
      });
    } finally {
      await setOptions(app, { Chats: savedChats });
    }
  },
};
