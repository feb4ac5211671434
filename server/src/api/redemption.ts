import type Router from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import type { AppContext } from '../context';
import { currentUser, requireAdmin, requireUser } from '../middleware/auth';
import { parse, parsePaging, qStr } from '../lib/validate';
import {
  createRedemptions, deleteRedemption, getRedemption, listRedemptions, redeem, setRedemptionStatus, updateRedemption,
} from '../services/redemptions';

const numericId = (raw: string | undefined): number | undefined => (raw && /^\d{1,10}$/.test(raw) && Number(raw) > 0 && Number(raw) < 2 ** 31 ? Number(raw) : undefined);

const ok = (ctx: Koa.Context, data: unknown, message = '') => {
  ctx.body = { success: true, message, data };
};

/** Redemption codes (admin) and redeeming one (POST /api/user/topup, any logged-in user). */
export function register(router: Router, app: AppContext): void {
  const admin = requireAdmin(app);

  router.post('/api/user/topup', requireUser(app), async (ctx) => {
    ok(ctx, await redeem(app, currentUser(ctx), ctx.request.body), '兑换成功！');
  });

  router.get('/api/redemption', admin, async (ctx) => {
    ok(ctx, await listRedemptions(app, parsePaging(ctx.query)));
  });
  router.get('/api/redemption/search', admin, async (ctx) => {
    const { keyword } = parse(z.object({ keyword: qStr() }), ctx.query);
    ok(ctx, await listRedemptions(app, parsePaging(ctx.query), keyword.trim()));
  });
  router.get('/api/redemption/:id', async (ctx, next) => {
    const id = numericId(ctx.params.id);
    if (id === undefined) return next();
    await admin(ctx, async () => ok(ctx, await getRedemption(app, id)));
  });
  router.post('/api/redemption', admin, async (ctx) => {
    ok(ctx, await createRedemptions(app, currentUser(ctx), ctx.request.body), '创建成功');
  });
  router.put('/api/redemption', admin, async (ctx) => {
    const statusOnly = ctx.query.status_only === 'true' || ctx.query.status_only === '1';
    const body = ctx.request.body;
    ok(ctx, statusOnly ? await setRedemptionStatus(app, body) : await updateRedemption(app, body), '兑换码更新成功！');
  });
  router.delete('/api/redemption/:id', async (ctx, next) => {
    const id = numericId(ctx.params.id);
    if (id === undefined) return next();
    await admin(ctx, async () => {
      await deleteRedemption(app, id);
      ok(ctx, null);
    });
  });
}
