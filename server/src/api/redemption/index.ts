import { currentUser } from '../../middleware/auth';
import { parse, parsePaging } from '../../lib/validate';
import { createRedemptions, deleteRedemption, getRedemption, listRedemptions, redeem, setRedemptionStatus, updateRedemption } from '../../services/redemptions';
import { idParams, isStatusOnly, objectBody, ok, statusOnlyQuery, type ConsoleRoutes } from '../route';
import { createBody, listQuery, redeemBody, searchQuery, statusBody, updateBody } from './schema';

/** Redemption codes (admin) and redeeming one (POST /api/user/topup, any logged-in user). */
export function register(api: ConsoleRoutes): void {
  const { app } = api;
  api.route({ method: 'post', path: '/api/user/topup', summary: "Redeem a code onto the caller's balance.", access: 'user', body: redeemBody }, async (ctx) => {
    ok(ctx, await redeem(app, currentUser(ctx), ctx.input.body), 'redemption.redeemed');
  });

  api.route({ method: 'get', path: '/api/redemption', summary: 'List redemption codes (paged).', access: 'admin', query: listQuery }, async (ctx) => {
    ok(ctx, await listRedemptions(app, parsePaging(ctx.query)));
  });
  api.route(
    { method: 'get', path: '/api/redemption/search', summary: 'Search codes by id, name or key.', access: 'admin', query: searchQuery },
    async (ctx) => {
      ok(ctx, await listRedemptions(app, parsePaging(ctx.query), ctx.input.query.keyword.trim()));
    },
  );
  api.route({ method: 'get', path: '/api/redemption/:id', summary: 'One redemption code.', access: 'admin', params: idParams }, async (ctx) => {
    ok(ctx, await getRedemption(app, ctx.input.params.id));
  });
  api.route(
    { method: 'post', path: '/api/redemption', summary: 'Create `count` codes; answers their keys.', access: 'admin', before: [objectBody], body: createBody },
    async (ctx) => {
      ok(ctx, await createRedemptions(app, currentUser(ctx), ctx.input.body), 'common.created');
    },
  );
  api.route(
    {
      method: 'put',
      path: '/api/redemption',
      summary: 'Update a code (`status_only`: only enable/disable it).',
      access: 'admin',
      query: statusOnlyQuery,
      documentedBody: updateBody,
    },
    async (ctx) => {
      // The body's shape depends on the query, so it is parsed here rather than by the route.
      const body = ctx.request.body ?? {};
      const message = 'redemption.updated';
      if (isStatusOnly(ctx.input.query)) ok(ctx, await setRedemptionStatus(app, parse(statusBody, body)), message);
      else ok(ctx, await updateRedemption(app, parse(updateBody, body)), message);
    },
  );
  api.route({ method: 'delete', path: '/api/redemption/:id', summary: 'Delete a code.', access: 'admin', params: idParams }, async (ctx) => {
    await deleteRedemption(app, ctx.input.params.id);
    ok(ctx, null);
  });
}
