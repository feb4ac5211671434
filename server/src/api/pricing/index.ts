import { resolveUser } from '../../services/consoleUser';
import { pricing } from '../../services/pricing';
import { ok, type ConsoleRoutes } from '../route';
import { requestLang } from '../../i18n';

/** Public prices; a valid login narrows the usable groups to the caller's and applies their accept-unset setting. */
// No schema.ts: the route takes no query and no body, only the caller's optional login.
export function register(api: ConsoleRoutes): void {
  const { app } = api;
  api.route(
    { method: 'get', path: '/api/pricing', summary: 'Model prices (also answers `group_ratio` and `usable_group` beside `data`).', access: 'public' },
    async (ctx) => {
      // Optional auth: a broken or stale credential just means "anonymous" here.
      const user = await resolveUser(app, ctx).catch(() => undefined);
      const { data, group_ratio, usable_group } = await pricing(app, user, requestLang(ctx));
      ok(ctx, data, undefined, { group_ratio, usable_group });
    },
  );
}
