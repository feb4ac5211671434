import type Koa from 'koa';
import { localize, msg, requestLang, t } from '../../i18n';
import { currentUser } from '../../middleware/auth';
import { audienceOf } from '../../services/channelTargets';
import { parseId } from '../../lib/validate';
import { findChannel } from '../../repositories/channels';
import { UpstreamError } from '../../relay/errors';
import { channelEntry } from '../../relay/routing';
import { channelInfoFrom, fetchUpstreamModels, testAllChannels, testChannel } from '../../relay/channelOps';
import { updateAllBalances, updateChannelBalance } from '../../channels/balance';
import { ok, type ConsoleRoutes } from '../route';
import { channelTestSummary } from '../../relay/testSummary';
import { fetchModelsBody, rawIdParams, testQuery } from './schema';

/** An upstream failure is a handled outcome; anything else goes to the error middleware. */
function fail(ctx: Pick<Koa.Context, 'body' | 'get' | 'state'>, err: unknown) {
  if (err instanceof UpstreamError) {
    ctx.body = { success: false, message: localize(err, requestLang(ctx)), data: null };
    return;
  }
  throw err;
}

/**
 * Channel calls that reach the upstream: test, fetch models, balance (admin). Each call applies
 * the channel rule of the caller (services/channelTargets.ts): an admin cannot reach a private
 * address through a stored channel or a URL typed in the form; the sweeps run under the rule of
 * whoever started them.
 */
export function registerUpstream(api: ConsoleRoutes): void {
  const { app } = api;

  api.route({ method: 'get', path: '/api/channel/test', summary: 'Start testing every channel in the background.', access: 'admin' }, async (ctx) => {
    const started = testAllChannels(app, audienceOf(currentUser(ctx).role));
    ok(ctx, null, started ? undefined : 'channel.test_running');
  });

  api.route(
    { method: 'get', path: '/api/channel/test/summary', summary: 'The last "test all channels" sweep: per channel success or failure.', access: 'admin' },
    async (ctx) => {
      ok(ctx, await channelTestSummary(app));
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/channel/test/:id',
      summary: 'Test one channel; answers `time` (seconds) beside the envelope.',
      access: 'admin',
      params: rawIdParams,
      query: testQuery,
    },
    async (ctx) => {
      const id = parseId(ctx.input.params.id);
      if (id === undefined) {
        ctx.body = { success: false, message: t(requestLang(ctx), 'channel.invalid_id'), time: 0 };
        return;
      }
      const r = await testChannel(app, id, ctx.input.query.model, audienceOf(currentUser(ctx).role), requestLang(ctx));
      ctx.body = { success: r.success, message: r.message, time: r.time, data: null };
    },
  );

  api.route(
    { method: 'get', path: '/api/channel/fetch_models/:id', summary: "Ask a stored channel's upstream for its models.", access: 'admin', params: rawIdParams },
    async (ctx) => {
      const id = parseId(ctx.input.params.id);
      const row = id === undefined ? undefined : await findChannel(app.knex, id);
      if (!row) {
        ctx.body = { success: false, message: t(requestLang(ctx), 'channel.not_found'), data: null };
        return;
      }
      try {
        ok(ctx, await fetchUpstreamModels(app, channelEntry(row).info, audienceOf(currentUser(ctx).role)));
      } catch (err) {
        fail(ctx, err);
      }
    },
  );

  api.route(
    { method: 'post', path: '/api/channel/fetch_models', summary: 'Ask an upstream typed in the form for its models.', access: 'admin', body: fetchModelsBody },
    async (ctx) => {
      try {
        ok(ctx, await fetchUpstreamModels(app, channelInfoFrom(ctx.input.body), audienceOf(currentUser(ctx).role)));
      } catch (err) {
        fail(ctx, err);
      }
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/channel/update_balance',
      summary: "Update every enabled channel's balance; answers per channel what was updated, what failed and why, and which kinds have no balance endpoint.",
      access: 'admin',
    },
    async (ctx) => {
      const s = await updateAllBalances(app, audienceOf(currentUser(ctx).role), requestLang(ctx));
      ok(ctx, s, msg('channel.balances_updated', { updated: s.updated, failed: s.failed, unsupported: s.unsupported }));
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/channel/update_balance/:id',
      summary: "Update one channel's balance (also answered as `balance`).",
      access: 'admin',
      params: rawIdParams,
    },
    async (ctx) => {
      const id = parseId(ctx.input.params.id);
      if (id === undefined) {
        ctx.body = { success: false, message: t(requestLang(ctx), 'channel.invalid_id'), data: null };
        return;
      }
      try {
        const balance = await updateChannelBalance(app, id, audienceOf(currentUser(ctx).role));
        ctx.body = { success: true, message: '', balance, data: balance };
      } catch (err) {
        fail(ctx, err);
      }
    },
  );
}
