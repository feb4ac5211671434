import type { Page } from 'playwright-core';
import { assert, expectPath, expectText, shot, step } from '../lib';
import type { Flow } from './types';

/** The drawer holding the create/edit form. */
function drawer(page: Page) {
  return page.locator('.MuiDrawer-paper').first();
}

/** Waits for the list call whose URL matches, while `act` runs. */
async function listCall(page: Page, match: (url: URL) => boolean, act: () => Promise<void>): Promise<URL> {
  const [req] = await Promise.all([page.waitForRequest((r) => r.method() === 'GET' && match(new URL(r.url()))), act()]);
  return new URL(req.url());
}

/** End-to-end steps of the token, redemption code and user screens (lists, filters, forms). */
export const flow: Flow = {
  name: 'resources',
  async run(ctx) {
    const { page, base } = ctx;
    const knex = ctx.stack.app.ctx.knex;

    await step('tokens: a name search asks /api/token/search and stays in the URL across a reload', async () => {
      await page.goto(`${base}/token`);
      await page.locator('tr', { hasText: 'e2e-token' }).first().waitFor();
      const url = await listCall(
        page,
        (u) => u.pathname === '/api/token/search',
        () => page.getByLabel('搜索令牌名称').fill('  e2e-tok '),
      );
      assert(url.searchParams.get('keyword') === 'e2e-tok' && url.searchParams.get('p') === '1', `search call: ${url.search}`);
      await page.waitForURL((u) => JSON.parse(u.searchParams.get('filter') ?? '{}').keyword === '  e2e-tok ');
      await page.reload();
      await page.locator('tr', { hasText: 'e2e-token' }).first().waitFor();
      assert((await page.getByLabel('搜索令牌名称').inputValue()) === '  e2e-tok ', 'the search field is restored from the URL');
      await page.getByLabel('搜索令牌名称').fill('no-such-token');
      await expectText(page, '暂无令牌');
      await page.getByLabel('搜索令牌名称').fill('');
      await page.locator('tr', { hasText: 'e2e-token' }).first().waitFor();
    });

    await step('tokens: a pasted sk- key is searched without its prefix', async () => {
      const row = await knex('tokens').where({ name: 'e2e-token' }).first('key');
      const url = await listCall(
        page,
        (u) => u.pathname === '/api/token/search',
        () => page.getByLabel('搜索令牌的 key').fill(`sk-${row.key}`),
      );
      assert(url.searchParams.get('token') === row.key, `token search: ${url.search}`);
      await page.locator('tr', { hasText: 'e2e-token' }).first().waitFor();
      await page.getByLabel('搜索令牌的 key').fill('');
    });

    await step('tokens: the list shows keys masked; the copy button copies the whole key, asked for by id', async () => {
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      const token = await knex('tokens').where({ name: 'e2e-token' }).first('id', 'key');
      const copyButton = page.getByTestId(`token-copy-${token.id}`);
      const row = page.locator('tr', { has: copyButton });
      await row.getByText(`sk-${token.key.slice(0, 4)}…${token.key.slice(-4)}`).waitFor();
      assert(!(await page.locator('table').innerText()).includes(token.key), 'the list never shows the whole key');
      const [req] = await Promise.all([
        page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === `/api/token/${token.id}/key`),
        copyButton.click(),
      ]);
      assert(req.headers()['new-api-user'] !== undefined, 'the key call names the user');
      await expectText(page, '已复制到剪贴板！');
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      assert(copied === `sk-${token.key}`, 'the clipboard holds the whole key');
    });

    await step('tokens: the columns button hides and shows a column', async () => {
      const header = page.locator('thead th', { hasText: '过期时间' });
      await header.waitFor();
      await page.getByRole('button', { name: '列' }).click();
      const item = page.locator('.MuiPopover-paper').getByText('过期时间');
      await item.click();
      await header.waitFor({ state: 'detached' });
      await item.click();
      await header.waitFor();
      await page.keyboard.press('Escape');
    });

    await step('tokens: the form shows its checks under the fields, then edits the token', async () => {
      await page.getByRole('button', { name: '添加令牌' }).click();
      await expectPath(page, '/token/create');
      await drawer(page).getByRole('button', { name: '提交' }).click();
      await drawer(page).getByText('请输入令牌名称！').waitFor();
      await drawer(page).getByLabel(/^名称/).fill('e2e-token-2');
      await drawer(page).getByLabel('过期时间').fill('soon');
      await drawer(page).getByRole('button', { name: '提交' }).click();
      await drawer(page).getByText('过期时间格式错误！').waitFor();
      await drawer(page).getByRole('button', { name: '永不过期' }).click();
      await drawer(page).getByRole('button', { name: '提交' }).click();
      await expectText(page, /令牌创建成功/);
      await expectPath(page, '/token');
      const created = await knex('tokens').where({ name: 'e2e-token-2' }).first();
      assert(created && Number(created.expired_time) === -1, `created token: ${JSON.stringify(created)}`);
      await page.locator('tr', { hasText: 'e2e-token-2' }).getByRole('button', { name: '编辑' }).click();
      await expectPath(page, `/token/${created.id}`);
      await drawer(page).getByLabel(/^名称/).waitFor();
      assert((await drawer(page).getByLabel(/^名称/).inputValue()) === 'e2e-token-2', 'the edit form is filled from the record');
      await drawer(page).getByLabel(/^名称/).fill('e2e-token-2b');
      await drawer(page).getByRole('button', { name: '提交' }).click();
      await expectText(page, '令牌更新成功！');
      await page.locator('tr', { hasText: 'e2e-token-2b' }).first().waitFor();
      await shot(page, 'resources-01-tokens');
    });

    await step('tokens: an emptied quota and count are refused under their fields; a batch makes one token per name', async () => {
      await page.goto(`${base}/token/create`);
      await drawer(page).getByLabel(/^名称/).fill('e2e-batch');
      await drawer(page).getByLabel(/^额度/).fill('');
      await drawer(page)
        .getByLabel(/^新建数量/)
        .fill('');
      await drawer(page).getByRole('button', { name: '提交' }).click();
      await drawer(page).getByText('额度必须是整数！').waitFor();
      await drawer(page).getByText('新建数量必须是正整数！').waitFor();
      await drawer(page).getByLabel(/^额度/).fill('1000');
      await drawer(page)
        .getByLabel(/^新建数量/)
        .fill('3');
      await drawer(page).getByRole('button', { name: '提交' }).click();
      await expectText(page, /令牌创建成功/);
      await expectPath(page, '/token');
      const made = await knex('tokens').where('name', 'like', 'e2e-batch%').select('name', 'remain_quota');
      assert(made.length === 3, `batch: ${JSON.stringify(made)}`);
      assert(
        made.some((t: { name: string }) => t.name === 'e2e-batch'),
        'the first keeps the name',
      );
      assert(
        made.every((t: { name: string; remain_quota: number }) => /^e2e-batch(-[A-Za-z0-9]{6})?$/.test(t.name) && Number(t.remain_quota) === 1000),
        `names ${made.map((t: { name: string }) => t.name)}`,
      );
    });

    await step('redemptions: the form refuses 101 codes, creates 2, and the list searches them', async () => {
      await page.goto(`${base}/redemption`);
      await page.getByRole('button', { name: '添加兑换码' }).click();
      await drawer(page).getByLabel('名称').fill('e2e-codes');
      await drawer(page).getByLabel('生成数量').fill('101');
      await drawer(page).getByRole('button', { name: '提交' }).click();
      await drawer(page).getByText('生成数量必须在 1 到 100 之间！').waitFor();
      await drawer(page).getByLabel('生成数量').fill('2');
      const download = page.waitForEvent('download');
      await drawer(page).getByRole('button', { name: '提交' }).click();
      await expectText(page, '创建成功');
      assert((await knex('redemptions').where({ name: 'e2e-codes' }).count({ n: '*' }))[0].n == 2, 'two codes created');
      assert((await download).suggestedFilename() === 'e2e-codes.txt', 'the codes are offered as e2e-codes.txt');
      const url = await listCall(
        page,
        (u) => u.pathname === '/api/redemption/search',
        () => page.getByLabel('搜索兑换码的 ID 和名称').fill('e2e-codes'),
      );
      assert(url.searchParams.get('keyword') === 'e2e-codes', `search call: ${url.search}`);
      await page.locator('tbody tr', { hasText: 'e2e-codes' }).nth(1).waitFor();
      await shot(page, 'resources-02-redemptions');
      // An edit loads the code and saves a new name.
      const code = await knex('redemptions').where({ name: 'e2e-codes' }).first();
      await page.goto(`${base}/redemption/${code.id}`);
      await drawer(page).getByLabel('名称').waitFor();
      assert((await drawer(page).getByLabel('名称').inputValue()) === 'e2e-codes', 'the edit form is filled from the record');
      await drawer(page).getByLabel('名称').fill('e2e-codes-renamed');
      await drawer(page).getByRole('button', { name: '提交' }).click();
      await expectText(page, '兑换码更新成功！');
      assert((await knex('redemptions').where({ id: code.id }).first()).name === 'e2e-codes-renamed', 'the new name is stored');
    });

    await step('users: create, search by group in the URL, edit with the password check', async () => {
      await page.goto(`${base}/user`);
      await page.getByRole('button', { name: '添加用户' }).click();
      await drawer(page).getByRole('button', { name: '提交' }).click();
      // The message sits under both empty fields.
      await drawer(page).getByText('用户名和密码不能为空！').nth(1).waitFor();
      await drawer(page)
        .getByLabel(/^用户名/)
        .fill('e2e-user');
      await drawer(page).getByLabel(/^密码/).fill('e2e-user-pass');
      await drawer(page).getByRole('button', { name: '提交' }).click();
      await expectText(page, '用户账户创建成功！');
      await expectPath(page, '/user');
      const url = await listCall(
        page,
        (u) => u.pathname === '/api/user/search',
        () => page.getByLabel(/^搜索用户/).fill('e2e-user'),
      );
      assert(url.searchParams.get('keyword') === 'e2e-user', `search call: ${url.search}`);
      await page.waitForURL((u) => JSON.parse(u.searchParams.get('filter') ?? '{}').keyword === 'e2e-user');
      const row = page.locator('tr', { hasText: 'e2e-user' }).first();
      await row.getByRole('button', { name: '编辑' }).click();
      await drawer(page).getByLabel('显示名称').waitFor();
      await drawer(page).getByLabel(/^密码/).fill('short');
      await drawer(page).getByRole('button', { name: '提交' }).click();
      await drawer(page).getByText('密码长度不得小于 8 位！').waitFor();
      await drawer(page).getByLabel(/^密码/).fill('');
      await drawer(page).getByLabel('显示名称').fill('E2E Person');
      await drawer(page).getByRole('button', { name: '提交' }).click();
      await expectText(page, '用户信息更新成功！');
      await page.locator('tr', { hasText: 'E2E Person' }).first().waitFor();
      const saved = await knex('users').where({ username: 'e2e-user' }).first('display_name');
      assert(saved?.display_name === 'E2E Person', `display name: ${JSON.stringify(saved)}`);
      await shot(page, 'resources-03-users');
    });
  },
};
