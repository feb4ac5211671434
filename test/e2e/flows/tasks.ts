import { seedChannel, seedToken, setOptions } from '../../mock-upstream/seed';
import { startTaskMock, type TaskMock } from '../../mock-upstream/tasks';
import { taskPoller } from '../../../server/src/tasks';
import { CHANNEL_TYPE } from '../../../server/src/channels/kinds';
import { createAccount } from '../../../server/src/services/accounts';
import { usageBatcher } from '../../../server/src/ledger/usage';
import { assert, loginElsewhere, shot, step } from '../lib';
import type { Flow } from './types';

/**
 * Asynchronous tasks end to end: a Midjourney drawing, a Suno song and an OpenAI video submitted
 * through the relay to mock upstreams, the poller ticked in between, and the drawing log and task
 * log showing the real records: progress while running, the result image in the viewer, the
 * failure reason of a failed drawing (refunded exactly once), the song's record as JSON, the
 * video with its platform; another user's console shows only that user's own tasks.
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
    let rootId = 0;
    const call = async (path: string, body: unknown, headers: Record<string, string>) => {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      return (await res.json()) as { code: unknown; result?: string; data?: string };
    };

    try {
      const ok = await step('tasks: Midjourney and Suno channels on mock upstreams, a priced key', async () => {
        mock = await startTaskMock();
        await seedChannel(app, { name: 'e2e-mj', type: CHANNEL_TYPE.Midjourney, key: mock.keys.mj, base_url: mock.url, models: 'mj_imagine' });
        await seedChannel(app, { name: 'e2e-suno', type: CHANNEL_TYPE.Suno, key: mock.keys.suno, base_url: mock.url, models: 'suno_music' });
        await seedChannel(app, { name: 'e2e-video', type: CHANNEL_TYPE.OpenAI, key: mock.keys.video, base_url: mock.url, models: 'e2e-sora' });
        const prices = JSON.parse(stack.app.ctx.options.get('ModelPrice') || '{}') as Record<string, number>;
        await setOptions(app, {
          ModelPrice: JSON.stringify({ ...prices, mj_imagine: 0.1, suno_music: 0.2, 'e2e-sora': 0.05 }),
          DrawingEnabled: 'true',
          TaskEnabled: 'true',
        });
        const root = await app.knex('users').where({ username: ctx.admin.username }).first('id');
        rootId = Number(root.id);
        await app.knex('users').where({ id: root.id }).update({ quota: 100_000_000 });
        key = (await seedToken(app, rootId, { name: 'e2e-tasks' })).key;
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

      await step('tasks: a failed drawing shows its failure reason and is refunded exactly once', async () => {
        const quota = async () => Number((await app.knex('users').where({ id: rootId }).first('quota')).quota);
        const before = await quota();
        const r = await call('/mj/submit/imagine', { prompt: 'an e2e fox that will fail' }, { 'mj-api-secret': key });
        failed = String(r.result);
        // mj_imagine at $0.1, the default 500 000 quota per dollar.
        assert((await quota()) === before - 50_000, 'the drawing was billed on accept');
        await tick();
        await tick();
        await tick();
        assert((await quota()) === before, `the refund gave back exactly the price: ${before} → ${await quota()}`);
        await usageBatcher(stack.app.ctx).flush();
        const refunds = await app.knex('logs').where({ user_id: rootId, type: 4 }).andWhere('content', 'like', `%${failed}%`);
        assert(refunds.length === 1 && Number(refunds[0].quota) === 50_000, `one refund log row: ${JSON.stringify(refunds)}`);
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
        await dialog.waitFor({ state: 'detached' });
      });

      await step('tasks: an OpenAI video in the task log with its platform, type and progress', async () => {
        const res = await fetch(`${base}/v1/videos`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', Authorization: `Bearer ${key}` },
          body: JSON.stringify({ model: 'e2e-sora', prompt: 'an e2e fox video', seconds: '4' }),
        });
        const v = (await res.json()) as { id?: string; status?: string };
        assert(res.status === 200 && typeof v.id === 'string' && v.status === 'queued', `video not accepted: ${JSON.stringify(v)}`);
        await tick();
        await page.goto(`${base}/task`);
        let row = page.locator('tr', { hasText: v.id });
        await row.getByText('OpenAI', { exact: true }).waitFor();
        await row.getByText('生成视频').waitFor();
        await row.getByText('执行中').waitFor();
        await row.getByText('50%').waitFor();
        await tick();
        await page.reload();
        row = page.locator('tr', { hasText: v.id });
        await row.getByText('成功').waitFor();
        await row.getByText('100%').waitFor();
        await shot(page, 'tasks-video');
      });

      await step("tasks: another user's console shows only that user's own drawing and song", async () => {
        const user = await createAccount(stack.app.ctx, { username: 'e2etasks', password: 'e2e-tasks-pass-1' });
        await app.knex('users').where({ id: user.id }).update({ quota: 10_000_000 });
        const userKey = (await seedToken(app, user.id, { name: 'e2e-tasks-user' })).key;
        const d = await call('/mj/submit/imagine', { prompt: 'a fox of another user' }, { 'mj-api-secret': userKey });
        const s2 = await call('/suno/submit/music', { prompt: '[Verse] another user' }, { Authorization: `Bearer ${userKey}` });
        assert(d.code === 1 && s2.code === 'success', `the user's tasks not accepted: ${JSON.stringify([d, s2])}`);
        await tick();
        // Through the relay too: the root's drawing is not the user's to fetch.
        const other = await fetch(`${base}/mj/task/${drawing}/fetch`, { headers: { 'mj-api-secret': userKey } });
        assert(other.status === 404, `another user's drawing answered ${other.status}`);
        const { context: uctx, page: up } = await loginElsewhere(page, base, 'e2etasks', 'e2e-tasks-pass-1');
        try {
          await up.goto(`${base}/midjourney`);
          const table = up.getByTestId('mj-table');
          await table.getByText(String(d.result)).waitFor();
          assert((await table.locator('tbody tr').count()) === 1, 'only the own drawing');
          assert((await table.getByText(drawing).count()) === 0 && (await table.getByText(failed).count()) === 0, "the root's drawings shown");
          await shot(up, 'tasks-user-drawings');
          await up.goto(`${base}/task`);
          const own = up.locator('tr', { hasText: String(s2.data) });
          await own.getByText('排队中').waitFor();
          assert((await up.locator('tr', { hasText: song }).count()) === 0, "the root's song shown");
          assert((await up.locator('tbody tr').count()) === 1, 'only the own task');
          await shot(up, 'tasks-user-tasks');
        } finally {
          await uctx.close();
        }
        // The admin sees everyone's.
        await page.goto(`${base}/midjourney`);
        await page.locator('tr', { hasText: String(d.result) }).waitFor();
        await page.locator('tr', { hasText: drawing }).waitFor();
      });
    } finally {
      await mock?.close();
    }
  },
};
