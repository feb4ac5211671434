import { seedChannel, seedToken, setOptions } from '../../mock-upstream/seed';
import { startTaskMock, type TaskMock } from '../../mock-upstream/tasks';
import { taskPoller } from '../../../server/src/tasks';
import { CHANNEL_TYPE } from '../../../server/src/channels/catalogue';
import { assert, shot, step } from '../lib';
import type { Flow } from './types';

/**
 * Asynchronous tasks end to end: a Midjourney drawing and a Suno song submitted through the relay
 * to mock upstreams, the poller ticked in between, and the drawing log and task log showing the
 * real records: progress while running, the result image in the viewer, the failure reason of a
 * failed drawing, the song's record as JSON.
 */
export const flow: Flow = {
  name: 'tasks',
  async run(ctx) {
    const { page, base, stack } = ctx;
    const app = { knex: stack.app.ctx.knex, ctx: stack.app.ctx };
    const tick = () => taskPoller(stack.app.ctx).tick();
    let mock: TaskMock | undefined;
    let key = '';
    let drawing = '';
    let failed = '';
    let song = '';
    const call = async (path: string, body: unknown, headers: Record<string, string>) => {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      return (await res.json()) as { code: unknown; result?: string; data?: string };
    };

    try {
      const ok = await step('tasks: Midjourney and Suno channels on mock upstreams, a priced key', async () => {
        mock = await startTaskMock();
        await seedChannel(app, { name: 'e2e-mj', type: CHANNEL_TYPE.Midjourney, key: mock.keys.mj, base_url: mock.url, models: 'mj_imagine' });
        await seedChannel(app, { name: 'e2e-suno', type: CHANNEL_TYPE.Suno, key: mock.keys.suno, base_url: mock.url, models: 'suno_music' });
        const prices = JSON.parse(stack.app.ctx.options.get('ModelPrice') || '{}') as Record<string, number>;
        await setOptions(app, { ModelPrice: JSON.stringify({ ...prices, mj_imagine: 0.1, suno_music: 0.2 }), DrawingEnabled: 'true', TaskEnabled: 'true' });
        const root = await app.knex('users').where({ username: ctx.admin.username }).first('id');
        await app.knex('users').where({ id: root.id }).update({ quota: 100_000_000 });
        key = (await seedToken(app, Number(root.id), { name: 'e2e-tasks' })).key;
      });
      if (!ok) return;

      await step('tasks: a drawing in progress shows its progress bar in the drawing log', async () => {
        const r = await call('/mj/submit/imagine', { prompt: 'an e2e red fox' }, { 'mj-api-secret': key });
        assert(r.code === 1 && typeof r.result === 'string', `imagine not accepted: ${JSON.stringify(r)}`);
        drawing = r.result;
        await tick();
        await page.goto(`${base}/midjourney`);
        const row = page.locator('tr', { hasText: drawing });
        await row.waitFor();
        await row.getByText('执行中').waitFor();
        await row.getByText('50%').waitFor();
        assert((await row.locator('[role="progressbar"]').getAttribute('aria-valuenow')) === '50', 'progress bar not at 50');
        await shot(page, 'tasks-drawing-progress');
      });

      await step('tasks: the finished drawing shows its image in the viewer and its prompts', async () => {
        await tick();
        await page.reload();
        const row = page.locator('tr', { hasText: drawing });
        await row.getByText('成功').waitFor();
        await row.getByText('100%').waitFor();
        await row.getByText('an e2e red fox (en)').waitFor();
        await row.getByTestId('view-image').click();
        const viewer = page.getByTestId('image-viewer');
        await viewer.waitFor();
        const src = await viewer.locator('img').getAttribute('src');
        assert(src === `${mock!.url}/images/${drawing}.png`, `viewer shows ${src}`);
        await shot(page, 'tasks-drawing-image');
        await page.keyboard.press('Escape');
        await viewer.waitFor({ state: 'detached' });
      });

      await step('tasks: a failed drawing shows its failure reason', async () => {
        const r = await call('/mj/submit/imagine', { prompt: 'an e2e fox that will fail' }, { 'mj-api-secret': key });
        failed = String(r.result);
        await tick();
        await tick();
        await page.reload();
        const row = page.locator('tr', { hasText: failed });
        await row.getByText('失败', { exact: true }).waitFor();
        // Long reasons are cut in the table and open in full in a dialog.
        await row.getByText('Banned prompt detect').click();
        const dialog = page.getByTestId('text-dialog');
        await dialog.getByText('Banned prompt detected by the mock').waitFor();
        await shot(page, 'tasks-drawing-failure');
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'detached' });
      });

      await step('tasks: a Suno song in the task log, queued then done, its record as JSON', async () => {
        const r = await call('/suno/submit/music', { prompt: '[Verse] e2e song', tags: 'pop' }, { Authorization: `Bearer ${key}` });
        assert(r.code === 'success' && typeof r.data === 'string', `music not accepted: ${JSON.stringify(r)}`);
        song = r.data;
        await tick();
        await page.goto(`${base}/task`);
        let row = page.locator('tr', { hasText: song });
        await row.getByText('排队中').waitFor();
        await row.getByText('Suno', { exact: true }).waitFor();
        await row.getByText('生成音乐').waitFor();
        await shot(page, 'tasks-song-queued');
        await tick();
        await tick();
        await page.reload();
        row = page.locator('tr', { hasText: song });
        await row.getByText('成功').waitFor();
        await row.getByTestId('task-detail').click();
        const dialog = page.getByTestId('json-dialog');
        await dialog.waitFor();
        await dialog.getByText(`${song}-clip1`).first().waitFor();
        await shot(page, 'tasks-song-detail');
        await page.keyboard.press('Escape');
      });
    } finally {
      await mock?.close();
    }
  },
};
