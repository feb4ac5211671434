import type Koa from 'koa';
import { currentUser } from '../../middleware/auth';
import { parsePaging } from '../../lib/validate';
import { listTopUpOrders, paymentNotified, quotePrice, startPayment, topUpHistory } from '../../services/topup';
import { ok, type ConsoleRoutes } from '../route';
import { notifyFields, payBody, topUpListQuery } from './schema';

/** Online top-up through an epay provider. */
export function register(api: ConsoleRoutes): void {
  const { app } = api;
  api.route({ method: 'post', path: '/api/user/amount', summary: 'The price of an amount for the caller.', access: 'user', body: payBody }, (ctx) => {
    ok(ctx, quotePrice(app, currentUser(ctx), ctx.input.body.amount), 'common.success');
  });

  api.route(
    { method: 'post', path: '/api/user/pay', summary: "Start a payment; answers the provider's form fields and `url`.", access: 'user', body: payBody },
    async (ctx) => {
      const { params, url } = await startPayment(app, currentUser(ctx), ctx.input.body);
      ok(ctx, params, 'common.success', { url });
    },
  );

  // The payment provider's asynchronous notification (GET or POST form). Answers plain text.
  const notify = async (ctx: Pick<Koa.Context, 'query' | 'request' | 'type' | 'body'>) => {
    const params = { ...(ctx.query as Record<string, string>), ...((ctx.request.body as Record<string, string>) ?? {}) };
    const stringParams = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)]));
    ctx.type = 'text/plain';
    ctx.body = await paymentNotified(app, stringParams);
  };
  const summary = "The payment provider's notification; answers plain text `success` or `fail`.";
  api.route({ method: 'get', path: '/api/user/epay/notify', summary, access: 'public' }, notify);
  api.route({ method: 'post', path: '/api/user/epay/notify', summary, access: 'public', documentedBody: notifyFields }, notify);

  api.route(
    {
      method: 'get',
      path: '/api/user/topup',
      summary: "All users' orders (paged), optionally of one `username`, one `status` (pending, success) and a `start_timestamp`..`end_timestamp` range.",
      access: 'admin',
      query: topUpListQuery,
    },
    async (ctx) => {
      const q = ctx.input.query;
      const filter = { username: q.username.trim() || undefined, status: q.status, from: q.start_timestamp, to: q.end_timestamp };
      ok(ctx, await listTopUpOrders(app, filter, parsePaging(q)));
    },
  );
  api.route({ method: 'get', path: '/api/user/topup/self', summary: "The caller's latest orders and redeemed codes.", access: 'user' }, async (ctx) => {
    ok(ctx, await topUpHistory(app, currentUser(ctx).id));
  });
}
