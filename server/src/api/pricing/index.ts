import { resolveUser } from '../../middleware/auth';
import { pricing } from '../../services/pricing';
import type { ConsoleRoutes } from '../route';
import { requestLang } from '../../i18n';

/** Public prices; a valid login narrows the usable groups to the caller's and applies their accept-unset setting. */
export function register(api: ConsoleRoutes): void {
  const { app } = api;
  api.route(
    { method: 'get', path: '/api/pricing', summary: 'Model prices (also answers `group_ratio` and `usable_group` beside `data`).', access: 'public' },
    async (ctx) => {
      // Optional auth: a broken or stale credential just means "anonymous" here.
      const user = await resolveUser(app, ctx).catch(() => undefined);
      const { data, group_ratio, usable_group } = await pricing(app, user, requestLang(ctx));
      ctx.body = { success: true, message: '', data, group_ratio, usable_group };
    },
  );
}
