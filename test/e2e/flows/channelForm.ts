import type { Page } from 'playwright-core';
import { createAccount } from '../../../server/src/services/accounts';
import { seedChannel } from '../../mock-upstream/seed';
import { assert, expectPath, expectText, loginElsewhere, shot, step } from '../lib';
import type { Flow } from './types';

const drawer = (page: Page) => page.locator('.MuiDrawer-paper').first();
/** The message shown under one input (its helper text), found from the input's label. */
const fieldError = (page: Page, label: RegExp | string, text: string) =>
  drawer(page)
    .locator('.MuiFormControl-root', { has: page.getByLabel(label) })
    .getByText(text, { exact: true });

/**
 * The channel drawer as a react-admin form: each input's message beside it, the type-dependent
 * fields, the /v1 confirmation, typed models, and an admin's re-pointing edit that must carry the key.
 */
export const flow: Flow = {
  name: 'channelForm',
  async run(ctx) {
    const { page, base, stack } = ctx;
    const knex = stack.app.ctx.knex;
    const d = drawer(page);

    await step('channel form: an empty submit shows each message under its field', async () => {
      await page.goto(`${base}/channel/create`);
      await d.getByLabel(/^名称/).waitFor();
      await d.getByRole('button', { name: '提交' }).click();
      await fieldError(page, /^名称/, '请填写渠道名称和渠道密钥！').waitFor();
      await fieldError(page, /^密钥/, '请填写渠道名称和渠道密钥！').waitFor();
      await fieldError(page, /^模型/, '请至少选择一个模型！').waitFor();
      await shot(page, 'channel-form-required');
    });

    await step('channel form: Azure relabels the base URL (required) and asks for the API version', async () => {
      await d.getByRole('combobox').first().click();
      await page.getByRole('option', { name: /^Azure OpenAI/ }).click();
      await d.getByLabel(/^AZURE_OPENAI_ENDPOINT/).waitFor();
      await d.getByLabel(/^默认 API 版本/).waitFor();
      await d.getByRole('button', { name: '提交' }).click();
      await fieldError(page, /^AZURE_OPENAI_ENDPOINT/, '必填').waitFor();
      // Back to OpenAI: the API version field goes away.
      await d.getByRole('combobox').first().click();
      await page.getByRole('option', { name: /^OpenAI$/ }).click();
      await d.getByLabel('代理地址', { exact: true }).waitFor();
      assert((await d.getByLabel(/^默认 API 版本/).count()) === 0, 'the API version field stays for OpenAI');
    });

    await step('channel form: a broken mapping is refused under its field; /v1 asks first; the channel is saved', async () => {
      await d.getByLabel(/^名称/).fill('e2e-form-a');
      await d.getByLabel(/^密钥/).fill('sk-form-a');
      await d.getByLabel('代理地址', { exact: true }).fill(`${stack.mock.url}/v1/`);
      // A model typed into the picker (Enter adds it), another through the custom field.
      const picker = d.getByRole('combobox', { name: /^模型/ });
      await picker.fill('e2e-form-model');
      await picker.press('Enter');
      const custom = d.getByLabel('自定义模型名称', { exact: true });
      await custom.fill('e2e-form-model-2, e2e-form-model');
      await custom.press('Enter');
      await expectText(page, '某些模型已存在！');
      await d.getByLabel(/^模型重定向/).fill('{"a":');
      await d.getByRole('button', { name: '提交' }).click();
      await fieldError(page, /^模型重定向/, '模型映射必须是合法的 JSON 格式！').waitFor();
      await d.getByLabel(/^模型重定向/).fill('{"e2e-form-model": "gpt-4o-mini"}');
      await d.getByRole('button', { name: '提交' }).click();
      await page
        .getByRole('dialog')
        .getByText(/以 \/v1 结尾/)
        .waitFor();
      await shot(page, 'channel-form-v1');
      await page.getByRole('button', { name: '确认' }).click();
      await expectText(page, '渠道创建成功！');
      await expectPath(page, '/channel');
      const row = await knex('channels').where({ name: 'e2e-form-a' }).first();
      assert(row, 'the channel is stored');
      assert(
        row.key === 'sk-form-a' && row.models === 'e2e-form-model,e2e-form-model-2' && row.group === 'default',
        `stored ${JSON.stringify(row).slice(0, 300)}`,
      );
      assert(
        row.base_url === `${stack.mock.url}/v1` && JSON.parse(row.model_mapping)['e2e-form-model'] === 'gpt-4o-mini',
        `base ${row.base_url} mapping ${row.model_mapping}`,
      );
    });

    await step('channel form: an edit loads the record, keeps the key when left empty and saves other fields', async () => {
      const row = await knex('channels').where({ name: 'e2e-form-a' }).first();
      await page.goto(`${base}/channel/${row.id}`);
      await d.getByLabel(/^名称/).waitFor();
      assert((await d.getByLabel(/^名称/).inputValue()) === 'e2e-form-a', 'the name is loaded');
      assert((await d.getByLabel(/^密钥/).inputValue()) === '', 'the key starts empty');
      await d.getByLabel(/^标签/).fill('e2e-form-tag');
      await d.getByLabel(/^优先级/).fill('7');
      await d.getByRole('button', { name: '提交' }).click();
      await page.getByRole('button', { name: '确认' }).click();
      await expectText(page, '渠道更新成功！');
      const saved = await knex('channels').where({ id: row.id }).first();
      assert(saved.key === 'sk-form-a' && saved.tag === 'e2e-form-tag' && Number(saved.priority) === 7, `saved ${JSON.stringify(saved).slice(0, 300)}`);
    });

    await step('channel form: an admin who changes the base URL must type the key again', async () => {
      const id = await seedChannel(
        { knex, ctx: stack.app.ctx },
        { name: 'e2e-form-admin', base_url: stack.mock.url, models: 'gpt-4o-mini', key: 'sk-form-old' },
      );
      await createAccount(stack.app.ctx, { username: 'e2e-form-admin', password: 'e2e-form-pass-1', role: 10 });
      const { context, page: ap } = await loginElsewhere(page, base, 'e2e-form-admin', 'e2e-form-pass-1');
      try {
        const ad = drawer(ap);
        await ap.goto(`${base}/channel/${id}`);
        await ad.getByLabel(/^名称/).waitFor();
        await ad.getByLabel('代理地址', { exact: true }).fill('https://elsewhere.example.com');
        await ad.getByText('已修改地址、代理或类型：请重新填写密钥（只有超级管理员可以不填密钥把渠道指向新的地址）').waitFor();
        await ad.getByRole('button', { name: '提交' }).click();
        await fieldError(ap, /^密钥/, '修改了渠道的地址、代理或类型，请重新填写密钥').waitFor();
        await shot(ap, 'channel-form-admin-key');
        // Back to the stored address: the key is no longer needed.
        await ad.getByLabel('代理地址', { exact: true }).fill(stack.mock.url);
        await ad.getByLabel(/^名称/).fill('e2e-form-admin-2');
        await ad.getByRole('button', { name: '提交' }).click();
        await expectText(ap, '渠道更新成功！');
        const saved = await knex('channels').where({ id }).first();
        assert(saved.name === 'e2e-form-admin-2' && saved.key === 'sk-form-old', `saved ${saved.name} ${saved.key}`);
      } finally {
        await context.close();
      }
    });
  },
};
