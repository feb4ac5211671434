import { currentUser } from '../../middleware/auth';
import { requestLang, t, type Lang } from '../../i18n';
import { BadRequestError } from '../../lib/errors';
import { parsePaging } from '../../lib/validate';
import { allModelNames, enabledModelNames, getChannel, listChannels } from '../../services/channelList';
import {
  batchSetTag,
  channelKey,
  copyChannel,
  createChannels,
  deleteChannel,
  deleteChannels,
  deleteDisabledChannels,
  editTag,
  fixAbilities,
  setTagStatus,
  updateChannel,
} from '../../services/channels';
import { consoleChannelTypes } from '../../channels/catalogue';
import { channelHealth, manageKeys } from '../../services/channelKeys';
import { answeredIdParams, idParams, objectBody, ok, type ConsoleRoutes } from '../route';
import { batchIdsBody, batchTagBody, copyQuery, createBody, listQuery, manageKeysBody, parseChannelCreate, tagBody, tagEditBody, updateBody } from './schema';
import { registerUpstream } from './upstream';
import { requireFreshVerification } from '../../services/secureVerification';

/** Built once: the catalogue does not change at run time. */
/** The catalogue for the console, its retired notes in each language. */

const CONSOLE_TYPES = { zh: consoleChannelTypes('zh'), en: consoleChannelTypes('en') };

/** Channel administration (admin ≥ 10). Upstream calls (test, fetch_models, balance) live in upstream.ts. */
export function register(api: ConsoleRoutes): void {
  const { app } = api;
  // Their fixed paths (`/api/channel/test`) must win over `/api/channel/:id`.
  registerUpstream(api);

  for (const path of ['/api/channel', '/api/channel/search']) {
    api.route({ method: 'get', path, summary: 'List or search channels (paged).', access: 'admin', query: listQuery }, async (ctx) => {
      const { p: _p, page_size: _s, size: _z, ...q } = ctx.input.query;
      ok(ctx, await listChannels(app, q, parsePaging(ctx.query), currentUser(ctx).role));
    });
  }
  api.route({ method: 'get', path: '/api/channel/models', summary: 'Every model name of every channel, as `{ id }`.', access: 'admin' }, async (ctx) => {
    ok(
      ctx,
      (await allModelNames(app)).map((id) => ({ id })),
    );
  });
  api.route({ method: 'get', path: '/api/channel/models_enabled', summary: 'Model names of enabled channels.', access: 'admin' }, async (ctx) => {
    ok(ctx, await enabledModelNames(app));
  });
  api.route(
    {
      method: 'get',
      path: '/api/channel/types',
      summary: "The channel-type catalogue's console-facing facts (labels, colours, form fields).",
      access: 'admin',
    },
    async (ctx) => {
      ok(ctx, CONSOLE_TYPES[requestLang(ctx)]);
    },
  );

  // Parsed here: its shape (one record or a `{ mode, channel }` wrapper) decides how.
  api.route(
    {
      method: 'post',
      path: '/api/channel',
      summary: 'Create a channel, or one per key line (batch).',
      access: 'admin',
      before: [objectBody],
      documentedBody: createBody,
    },
    async (ctx) => {
      const { batch, channels } = await createChannels(app, parseChannelCreate(ctx.request.body as Record<string, unknown>), currentUser(ctx).role);
      ok(ctx, batch ? channels : channels[0], 'channel.created');
    },
  );
  api.route(
    {
      method: 'put',
      path: '/api/channel',
      summary: 'Update a channel; fields left out keep their value.',
      access: 'admin',
      before: [objectBody],
      body: updateBody,
    },
    async (ctx) => {
      ok(ctx, await updateChannel(app, ctx.input.body, currentUser(ctx).role), 'channel.updated');
    },
  );

  /** Copy on the server: admins only see masked keys, so the console cannot copy by reading one. */
  api.route(
    {
      method: 'post',
      path: '/api/channel/copy/:id',
      summary: 'Copy a channel (key included) under a name suffix.',
      access: 'admin',
      params: answeredIdParams,
      query: copyQuery,
    },
    async (ctx) => {
      const { id } = ctx.input.params;
      if (id === undefined) throw new BadRequestError('channel.invalid_id');
      ok(ctx, await copyChannel(app, id, currentUser(ctx).role, ctx.input.query.suffix ?? t(requestLang(ctx), 'channel.copy_suffix')), 'channel.copied');
    },
  );

  api.route({ method: 'delete', path: '/api/channel/disabled', summary: 'Delete every disabled channel.', access: 'admin' }, async (ctx) => {
    ok(ctx, await deleteDisabledChannels(app));
  });
  api.route(
    {
      method: 'post',
      path: '/api/channel/batch',
      summary: 'Delete the listed channels; answers the count as `data` and, beside it, `results`: per id `{id, success, status, message}`.',
      access: 'admin',
      body: batchIdsBody,
    },
    async (ctx) => {
      // `data` stays the count (the documented answer); the per-id report rides beside it.
      const { count, results } = await deleteChannels(app, ctx.input.body.ids);
      ok(ctx, count, undefined, { results: localizeResults(results, requestLang(ctx)) });
    },
  );
  api.route({ method: 'post', path: '/api/channel/fix', summary: 'Rebuild the model abilities of every channel.', access: 'admin' }, async (ctx) => {
    ok(ctx, await fixAbilities(app));
  });
  api.route({ method: 'put', path: '/api/channel/tag', summary: 'Edit every channel of a tag.', access: 'admin', body: tagEditBody }, async (ctx) => {
    ok(ctx, await editTag(app, ctx.input.body), 'common.done');
  });
  api.route({ method: 'post', path: '/api/channel/tag/enabled', summary: 'Enable every channel of a tag.', access: 'admin', body: tagBody }, async (ctx) => {
    ok(ctx, await setTagStatus(app, ctx.input.body.tag, 1), 'common.done');
  });
  api.route({ method: 'post', path: '/api/channel/tag/disabled', summary: 'Disable every channel of a tag.', access: 'admin', body: tagBody }, async (ctx) => {
    ok(ctx, await setTagStatus(app, ctx.input.body.tag, 2), 'common.done');
  });
  api.route(
    {
      method: 'post',
      path: '/api/channel/batch/tag',
      summary: 'Set (or clear) the tag of the listed channels; answers the count as `data` and per id `results` beside it.',
      access: 'admin',
      body: batchTagBody,
    },
    async (ctx) => {
      const { count, results } = await batchSetTag(app, ctx.input.body);
      ok(ctx, count, 'common.done', { results: localizeResults(results, requestLang(ctx)) });
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/channel/health',
      summary: 'Breaker state, error rate, latency and last failure per channel; channels open or disabled now.',
      access: 'admin',
    },
    async (ctx) => {
      ok(ctx, await channelHealth(app));
    },
  );
  api.route(
    {
      method: 'post',
      path: '/api/channel/multi_key/manage',
      summary: "A multi-key channel's keys: list them (masked) with their state, enable, disable or delete one or all.",
      access: 'admin',
      body: manageKeysBody,
    },
    async (ctx) => {
      ok(ctx, await manageKeys(app, ctx.input.body), 'common.done');
    },
  );

  // Numeric ids only: anything else falls through (e.g. routes of other areas).
  api.route({ method: 'get', path: '/api/channel/:id', summary: 'One channel (key masked).', access: 'admin', params: idParams }, async (ctx) => {
    ok(ctx, await getChannel(app, ctx.input.params.id, currentUser(ctx).role));
  });
  // The full key: root only, after a fresh re-verification (2FA code, passkey or password).
  api.route(
    { method: 'post', path: '/api/channel/:id/key', summary: "A channel's full key (root, needs re-verification).", access: 'root', params: idParams },
    async (ctx) => {
      await requireFreshVerification(app, ctx, currentUser(ctx));
      ctx.set('Cache-Control', 'no-store');
      ok(ctx, await channelKey(app, ctx.input.params.id));
    },
  );
  api.route({ method: 'delete', path: '/api/channel/:id', summary: 'Delete a channel.', access: 'admin', params: idParams }, async (ctx) => {
    await deleteChannel(app, ctx.input.params.id);
    ok(ctx, null);
  });
}

/** A batch's per-id outcomes, each with a message in the caller's language (empty when it succeeded). */
function localizeResults<R extends { success: boolean }>(results: R[], lang: Lang): Array<R & { message: string }> {
  return results.map((r) => ({ ...r, message: r.success ? '' : t(lang, 'channel.not_found') }));
}
