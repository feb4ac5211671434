import type Router from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import type { AppContext } from '../context';
import { currentUser, requireUser } from '../middleware/auth';
import { parse, parsePaging, qStr } from '../lib/validate';
import { createTokens, deleteToken, getToken, listTokens, updateToken } from '../services/tokens';

const numericId = (raw: string | undefined): number | undefined => (raw && /^\d{1,10}$/.test(raw) && Number(raw) > 0 && Number(raw) < 2 ** 31 ? Number(raw) : undefined);

const ok = (ctx: Koa.Context, data: unknown, message = '') => {
  ctx.body = { success: true, message, data };
};

/** The caller's own API tokens (role ≥ 1). Another user's token is never visible: it is "not found". */
export function register(router: Router, app: AppContext): void {
  const user = requireUser(app);

  router.get('/api/token', user, async (ctx) => {
    ok(ctx, await listTokens(app, currentUser(ctx), parsePaging(ctx.query)));
  });
  router.get('/api/token/search', user, async (ctx) => {
    const q = parse(z.object({ keyword: qStr(), token: qStr() }), ctx.query);
    ok(ctx, await listTokens(app, currentUser(ctx), parsePaging(ctx.query), { keyword: q.keyword.trim(), key: q.token.trim() }));
  });
  router.get('/api/token/:id', async (ctx, next) => {
    const id = numericId(ctx.params.id);
    if (id === undefined) return next();
    await user(ctx, async () => ok(ctx, await getToken(app, currentUser(ctx), id)));
  });
  router.post('/api/token', user, async (ctx) => {
    ok(ctx, await createTokens(app, currentUser(ctx), ctx.request.body), '令牌创建成功，请在列表页面点击复制获取令牌！');
  });
  router.put('/api/token', user, async (ctx) => {
    const statusOnly = ctx.query.status_only === 'true' || ctx.query.status_only === '1';
    ok(ctx, await updateToken(app, currentUser(ctx), ctx.request.body, statusOnly), '令牌更新成功！');
  });
  router.delete('/api/token/:id', async (ctx, next) => {
    const id = numericId(ctx.params.id);
    if (id === undefined) return next();
    await user(ctx, async () => {
      await deleteToken(app, currentUser(ctx), id);
      ok(ctx, null);
    });
  });
}
