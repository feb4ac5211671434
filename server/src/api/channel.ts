import type Router from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import type { AppContext } from '../context';
import { currentUser, requireAdmin } from '../middleware/auth';
import { BadRequestError } from '../lib/errors';
import { parse, parsePaging, qBool, qIntOpt, qStr } from '../lib/validate';
import {
  allModelNames, batchIdsBody, batchSetTag, copyChannel, createChannels, deleteChannel, deleteChannels, deleteDisabledChannels, editTag,
  enabledModelNames, fixAbilities, getChannel, listChannels, setTagStatus, updateChannel,
} from '../services/channels';
import { consoleChannelTypes } from '../channels/catalogue';

/** Built once: the catalogue does not change at run time. */
const CONSOLE_TYPES = consoleChannelTypes();

const listQuery = z.object({
  id_sort: qBool(),
  tag_mode: qBool(),
  keyword: qStr(),
  group: qStr(),
  model: qStr(),
  status: qIntOpt(),
  type: qIntOpt(),
});

const copyQuery = z.object({ suffix: z.string().max(64, 'suffix 过长').optional().default('_复制') });

const ok = (ctx: Koa.Context, data: unknown, message = '') => {
  ctx.body = { success: true, message, data };
};

/** Numeric path id, or undefined (then the route falls through to other handlers). */
const numericId = (raw: string | undefined): number | undefined => (raw && /^\d{1,10}$/.test(raw) && Number(raw) > 0 && Number(raw) < 2 ** 31 ? Number(raw) : undefined);

/** Channel administration (admin ≥ 10). Upstream calls (test, fetch_models, balance) live in channelUpstream.ts. */
export function register(router: Router, app: AppContext): void {
  const admin = requireAdmin(app);

  const list = async (ctx: Koa.Context) => {
    const q = parse(listQuery, ctx.query);
    ok(ctx, await listChannels(app, q, parsePaging(ctx.query), currentUser(ctx).role));
  };
  router.get('/api/channel', admin, list);
  router.get('/api/channel/search', admin, list);

  router.get('/api/channel/models', admin, async (ctx) => {
    ok(ctx, (await allModelNames(app)).map((id) => ({ id })));
  });
  router.get('/api/channel/models_enabled', admin, async (ctx) => {
    ok(ctx, await enabledModelNames(app));
  });
  /** The channel-type catalogue's console-facing facts (labels, colours, form fields); static. */
  router.get('/api/channel/types', admin, async (ctx) => {
    ok(ctx, CONSOLE_TYPES);
  });

  router.post('/api/channel', admin, async (ctx) => {
    const { batch, channels } = await createChannels(app, ctx.request.body, currentUser(ctx).role);
    ok(ctx, batch ? channels : channels[0], '渠道创建成功！');
  });
  router.put('/api/channel', admin, async (ctx) => {
    ok(ctx, await updateChannel(app, ctx.request.body, currentUser(ctx).role), '渠道更新成功！');
  });

  /** Copy on the server: admins only see masked keys, so the console cannot copy by reading one. */
  router.post('/api/channel/copy/:id', admin, async (ctx) => {
    const id = numericId(ctx.params.id);
    if (id === undefined) throw new BadRequestError('无效的渠道 ID');
    const q = parse(copyQuery, ctx.query);
    ok(ctx, await copyChannel(app, id, currentUser(ctx).role, q.suffix), '渠道复制成功！');
  });

  router.delete('/api/channel/disabled', admin, async (ctx) => {
    ok(ctx, await deleteDisabledChannels(app));
  });
  router.post('/api/channel/batch', admin, async (ctx) => {
    const { ids } = parse(batchIdsBody, ctx.request.body ?? {});
    ok(ctx, await deleteChannels(app, ids));
  });
  router.post('/api/channel/fix', admin, async (ctx) => {
    ok(ctx, await fixAbilities(app));
  });
  router.put('/api/channel/tag', admin, async (ctx) => {
    ok(ctx, await editTag(app, ctx.request.body), '操作成功完成！');
  });
  router.post('/api/channel/tag/enabled', admin, async (ctx) => {
    ok(ctx, await setTagStatus(app, ctx.request.body, 1), '操作成功完成！');
  });
  router.post('/api/channel/tag/disabled', admin, async (ctx) => {
    ok(ctx, await setTagStatus(app, ctx.request.body, 2), '操作成功完成！');
  });
  router.post('/api/channel/batch/tag', admin, async (ctx) => {
    ok(ctx, await batchSetTag(app, ctx.request.body), '操作成功完成！');
  });

  // Numeric ids only: anything else falls through (e.g. routes of other modules).
  router.get('/api/channel/:id', async (ctx, next) => {
    const id = numericId(ctx.params.id);
    if (id === undefined) return next();
    await admin(ctx, async () => ok(ctx, await getChannel(app, id, currentUser(ctx).role)));
  });
  router.delete('/api/channel/:id', async (ctx, next) => {
    const id = numericId(ctx.params.id);
    if (id === undefined) return next();
    await admin(ctx, async () => {
      await deleteChannel(app, id);
      ok(ctx, null);
    });
  });
}
