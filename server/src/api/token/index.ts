import { currentUser } from '../../middleware/auth';
import { parsePaging } from '../../lib/validate';
import { createTokens, deleteToken, getToken, listTokens, revealTokenKey, updateToken } from '../../services/tokens';
import { idParams, isStatusOnly, objectBody, ok, statusOnlyQuery, type ConsoleRoutes } from '../route';
import { createBody, listQuery, searchQuery, updateBody } from './schema';

/** The caller's own API tokens (role ≥ 1). Another user's token is never visible: it is "not found". */
export function register(api: ConsoleRoutes): void {
  const { app } = api;
  api.route(
    {
      method: 'get',
      path: '/api/token',
      summary: 'List own tokens (paged; `size` is an alias of `page_size`); keys masked.',
      access: 'user',
      query: listQuery,
    },
    async (ctx) => {
      ok(ctx, await listTokens(app, currentUser(ctx), parsePaging(ctx.query)));
    },
  );
  api.route(
    {
      method: 'get',
      path: '/api/token/search',
      summary: 'Search own tokens by name (substring) or whole key; keys masked.',
      access: 'user',
      query: searchQuery,
    },
    async (ctx) => {
      const q = ctx.input.query;
      ok(ctx, await listTokens(app, currentUser(ctx), parsePaging(ctx.query), { keyword: q.keyword.trim(), key: q.token.trim() }));
    },
  );
  api.route({ method: 'get', path: '/api/token/:id', summary: 'One own token (key masked).', access: 'user', params: idParams }, async (ctx) => {
    ok(ctx, await getToken(app, currentUser(ctx), ctx.input.params.id));
  });
  // Lists, searches and reads mask the key; the full key is one explicit call per key (rate-limited, logged).
  api.route(
    {
      method: 'post',
      path: '/api/token/:id/key',
      summary: "An own token's full key (`{key}`, without `sk-`); limited per user and written to the user's logs.",
      access: 'user',
      params: idParams,
    },
    async (ctx) => {
      const key = await revealTokenKey(app, currentUser(ctx), ctx.input.params.id, ctx.ip);
      ctx.set('Cache-Control', 'no-store');
      ok(ctx, key);
    },
  );
  api.route(
    {
      method: 'post',
      path: '/api/token',
      summary: 'Create a token, or `count` tokens (the answer carries the new full keys).',
      access: 'user',
      before: [objectBody],
      body: createBody,
    },
    async (ctx) => {
      ok(ctx, await createTokens(app, currentUser(ctx), ctx.input.body), 'token.created');
    },
  );
  api.route(
    {
      method: 'put',
      path: '/api/token',
      summary: 'Update an own token (`status_only` changes only the status).',
      access: 'user',
      before: [objectBody],
      body: updateBody,
      query: statusOnlyQuery,
    },
    async (ctx) => {
      ok(ctx, await updateToken(app, currentUser(ctx), ctx.input.body, isStatusOnly(ctx.input.query)), 'token.updated');
    },
  );
  api.route({ method: 'delete', path: '/api/token/:id', summary: 'Delete an own token.', access: 'user', params: idParams }, async (ctx) => {
    await deleteToken(app, currentUser(ctx), ctx.input.params.id);
    ok(ctx, null);
  });
}
