import { msg, requestLang, verbatim } from '../../i18n';
import { currentUser } from '../../middleware/auth';
import { audienceOf } from '../../services/channelTargets';
import { BadRequestError, NotFoundError } from '../../lib/errors';
import { findChannel } from '../../repositories/channels';
import { UpstreamError } from '../../relay/errors';
import { channelEntry } from '../../channels/routeTable';
import { channelInfoFrom, fetchUpstreamModels, testAllChannels, testChannel } from '../../channels/operations';
import { updateAllBalances, updateChannelBalance } from '../../channels/balance';
import { answeredIdParams, ok, reply, type ConsoleRoutes } from '../route';
import { channelTestSummary } from '../../channels/testSummary';
import { fetchModelsBody, testQuery } from './schema';

/** An upstream failure is a handled outcome (a bad-request answer with its wording); anything else is unexpected. */
function fail(err: unknown): never {
  if (err instanceof UpstreamError) throw new BadRequestError(err.msg ?? verbatim(err.message));
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
      params: answeredIdParams,
      query: testQuery,
    },
    async (ctx) => {
      // A test answers `time` in every outcome (a bad id: 0, and no `data`), so it is not thrown.
      const { id } = ctx.input.params;
      if (id === undefined) {
        reply(ctx, false, 'channel.invalid_id', { time: 0 });
        return;
      }
      const r = await testChannel(app, id, ctx.input.query.model, audienceOf(currentUser(ctx).role), requestLang(ctx));
      reply(ctx, r.success, verbatim(r.message), { time: r.time, data: null });
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/channel/fetch_models/:id',
      summary: "Ask a stored channel's upstream for its models.",
      access: 'admin',
      params: answeredIdParams,
    },
    async (ctx) => {
      const { id } = ctx.input.params;
      const row = id === undefined ? undefined : await findChannel(app.knex, id);
      if (!row) throw new NotFoundError('channel.not_found');
      try {
        ok(ctx, await fetchUpstreamModels(app, channelEntry(row).info, audienceOf(currentUser(ctx).role)));
      } catch (err) {
        fail(err);
      }
    },
  );

  api.route(
    { method: 'post', path: '/api/channel/fetch_models', summary: 'Ask an upstream typed in the form for its models.', access: 'admin', body: fetchModelsBody },
    async (ctx) => {
      try {
        ok(ctx, await fetchUpstreamModels(app, channelInfoFrom(ctx.input.body), audienceOf(currentUser(ctx).role)));
      } catch (err) {
        fail(err);
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
      params: answeredIdParams,
    },
    async (ctx) => {
      const { id } = ctx.input.params;
      if (id === undefined) throw new BadRequestError('channel.invalid_id');
      try {
        const balance = await updateChannelBalance(app, id, audienceOf(currentUser(ctx).role));
        // The balance also as `balance`, ahead of `data` (the answer's order so far).
        reply(ctx, true, undefined, { balance, data: balance });
      } catch (err) {
        fail(err);
      }
    },
  );
}
