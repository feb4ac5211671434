import type Router from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import type { AppContext } from '../context';
import { currentUser, requireAdmin } from '../middleware/auth';
import { audienceOf } from '../services/channelTargets';
import { parse } from '../lib/validate';
import { UpstreamError } from '../relay/errors';
import { channelEntry } from '../relay/routing';
import {
  channelInfoFrom,
  fetchUpstreamModels,
  testAllChannels,
  testChannel,
  updateAllBalances,
  updateChannelBalance,
} from '../relay/channelOps';

/**
 * Channel calls that reach the upstream: test, fetch models, balance (admin). Mounted before
 * api/channel.ts so these fixed paths win over `/api/channel/:id`. Each call applies the channel
 * rule of the caller (services/channelTargets.ts): an admin cannot reach a private address
 * through a stored channel or a URL typed in the form; the sweeps run under the rule of whoever
 * started them.
 */
const idOf = (raw: string | undefined): number | undefined => (raw && /^\d{1,10}$/.test(raw) ? Number(raw) : undefined);

const fetchBody = z.object({
  base_url: z.string().max(512).optional().default(''),
  type: z.coerce.number().int().min(1).max(1000),
  key: z.string().min(1, '请填写密钥').max(65536),
  other: z.string().max(4096).optional(),
  openai_organization: z.string().max(128).optional(),
});

function fail(ctx: Koa.Context, err: unknown) {
  if (err instanceof UpstreamError) {
    ctx.body = { success: false, message: err.message, data: null };
    return;
  }
  throw err;
}

export function register(router: Router, app: AppContext): void {
  const admin = requireAdmin(app);

  router.get('/api/channel/test', admin, async (ctx) => {
    const started = testAllChannels(app, audienceOf(currentUser(ctx).role));
    ctx.body = { success: true, message: started ? '' : '测试已在运行中', data: null };
  });

  router.get('/api/channel/test/:id', admin, async (ctx) => {
    const id = idOf(ctx.params.id);
    if (id === undefined) {
      ctx.body = { success: false, message: '无效的渠道 ID', time: 0 };
      return;
    }
    const model = typeof ctx.query.model === 'string' ? ctx.query.model : undefined;
    const r = await testChannel(app, id, model, audienceOf(currentUser(ctx).role));
    ctx.body = { success: r.success, message: r.message, time: r.time, data: null };
  });

  router.get('/api/channel/fetch_models/:id', admin, async (ctx) => {
    const id = idOf(ctx.params.id);
    const row = id === undefined ? undefined : await app.knex('channels').where({ id }).first();
    if (!row) {
      ctx.body = { success: false, message: '渠道不存在', data: null };
      return;
    }
    try {
      ctx.body = { success: true, message: '', data: await fetchUpstreamModels(app, channelEntry(row).info, audienceOf(currentUser(ctx).role)) };
    } catch (err) {
      fail(ctx, err);
    }
  });

  router.post('/api/channel/fetch_models', admin, async (ctx) => {
    const b = parse(fetchBody, ctx.request.body ?? {});
    try {
      ctx.body = { success: true, message: '', data: await fetchUpstreamModels(app, channelInfoFrom(b), audienceOf(currentUser(ctx).role)) };
    } catch (err) {
      fail(ctx, err);
    }
  });

  router.get('/api/channel/update_balance', admin, async (ctx) => {
    const started = updateAllBalances(app, audienceOf(currentUser(ctx).role));
    ctx.body = { success: true, message: started ? '' : '余额更新已在运行中', data: null };
  });

  router.get('/api/channel/update_balance/:id', admin, async (ctx) => {
    const id = idOf(ctx.params.id);
    if (id === undefined) {
      ctx.body = { success: false, message: '无效的渠道 ID', data: null };
      return;
    }
    try {
      const balance = await updateChannelBalance(app, id, audienceOf(currentUser(ctx).role));
      ctx.body = { success: true, message: '', balance, data: balance };
    } catch (err) {
      fail(ctx, err);
    }
  });
}
