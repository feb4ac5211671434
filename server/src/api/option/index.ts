import { resetModelRatios, updateOption, visibleOptions } from '../../services/options';
import { ok, type ConsoleRoutes } from '../route';
import { putBody } from './schema';

/** System options (root). */
export function register(api: ConsoleRoutes): void {
  const { app } = api;
  api.route({ method: 'get', path: '/api/option/', summary: 'All options as `{ key, value }`, secrets left out.', access: 'root' }, (ctx) => {
    ok(ctx, visibleOptions(app.options));
  });
  api.route(
    { method: 'put', path: '/api/option/', summary: 'Store one option; validated and reloaded on every node.', access: 'root', body: putBody },
    async (ctx) => {
      await updateOption(app.options, ctx.input.body.key, ctx.input.body.value);
      ok(ctx, null);
    },
  );
  api.route(
    { method: 'post', path: '/api/option/rest_model_ratio', summary: 'Reset ratios and fixed prices to the shipped defaults.', access: 'root' },
    async (ctx) => {
      await resetModelRatios(app);
      ok(ctx, null, '模型倍率已重置为默认值');
    },
  );
}
