import { currentUser } from '../../middleware/auth';
import { ROLE } from '../../repositories/users';
import { normaliseOption, resetModelRatios, updateOption, visibleOptions } from '../../services/options';
import { assertCanRequireAdminTwoFactor } from '../../services/twoFactor';
import { optionRole } from '../../../../seeds/optionAccess';
import { ForbiddenError } from '../../lib/errors';
import { ok, type ConsoleRoutes } from '../route';
import { putBody } from './schema';

/**
 * Options. Admins read and change the operation options (ratios, prices, rate limits, model and
 * relay settings …); the system options (login, mail, payment, bot check, fetch protection, site
 * content) are root's (seeds/optionAccess.ts).
 */
export function register(api: ConsoleRoutes): void {
  const { app } = api;
  api.route(
    { method: 'get', path: '/api/option/', summary: 'Options as `{ key, value }` (secrets left out; admins get the operation options).', access: 'admin' },
    (ctx) => {
      const root = currentUser(ctx).role >= ROLE.root;
      ok(
        ctx,
        visibleOptions(app.options).filter((o) => root || optionRole(o.key) === 'admin'),
      );
    },
  );
  api.route(
    { method: 'put', path: '/api/option/', summary: 'Store one option; validated and reloaded on every node.', access: 'admin', body: putBody },
    async (ctx) => {
      const { key, value } = ctx.input.body;
      if (optionRole(key) === 'root' && currentUser(ctx).role < ROLE.root) throw new ForbiddenError('option.root_only');
      await assertCanRequireAdminTwoFactor(app, currentUser(ctx), key, normaliseOption(key, value));
      await updateOption(app.options, key, value);
      ok(ctx, null);
    },
  );
  api.route(
    { method: 'post', path: '/api/option/rest_model_ratio', summary: 'Reset ratios and fixed prices to the shipped defaults.', access: 'admin' },
    async (ctx) => {
      await resetModelRatios(app);
      ok(ctx, null, 'option.ratios_reset');
    },
  );
}
