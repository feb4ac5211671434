import type Router from '@koa/router';
import type { AppContext } from '../context';
import { resolveUser } from '../middleware/auth';
import { pricing } from '../services/pricing';

/** GET /api/pricing: public; a valid session narrows usable groups to the caller's. */
export function register(router: Router, app: AppContext): void {
  router.get('/api/pricing', async (ctx) => {
    // Optional auth: a broken or stale credential just means "anonymous" here.
    const user = await resolveUser(app, ctx).catch(() => undefined);
    const { data, group_ratio, usable_group } = await pricing(app, user?.group);
    ctx.body = { success: true, message: '', data, group_ratio, usable_group };
  });
}
