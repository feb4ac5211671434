import type Router from '@koa/router';
import { z } from 'zod';
import { DEFAULT_OPTIONS } from '../../../seeds/defaultOptions';
import type { AppContext } from '../context';
import { parse } from '../lib/validate';
import { requireRoot } from '../middleware/auth';
import { checkOptionDependencies, isSecretOption, normaliseOption } from '../services/options';

const RATIO_KEYS = ['ModelRatio', 'CompletionRatio', 'CacheRatio', 'ModelPrice'] as const;

const putBody = z.object({
  key: z.string({ message: '无效的配置项' }).min(1, '无效的配置项').max(128),
  value: z.union([z.string(), z.number(), z.boolean()], { message: '配置值必须是字符串' }),
});

export function register(router: Router, app: AppContext): void {
  const root = requireRoot(app);

  /** All options as {key, value}, secrets (tokens, secrets, keys) left out. */
  router.get('/api/option/', root, async (ctx) => {
    const all = app.options.all();
    const data = Object.keys(all)
      .filter((k) => !isSecretOption(k))
      .sort()
      .map((key) => ({ key, value: all[key] }));
    ctx.body = { success: true, message: '', data };
  });

  /** One option per call; validated, stored, reloaded on every node. */
  router.put('/api/option/', root, async (ctx) => {
    const input = parse(putBody, ctx.request.body ?? {});
    const value = normaliseOption(input.key, input.value);
    checkOptionDependencies(input.key, value, (k) => app.options.get(k));
    await app.options.set(input.key, value);
    ctx.body = { success: true, message: '', data: null };
  });

  /** Resets model/completion/cache ratios and fixed prices to the shipped defaults. */
  router.post('/api/option/rest_model_ratio', root, async (ctx) => {
    await app.knex.transaction(async (trx) => {
      for (const key of RATIO_KEYS) {
        await trx('options').insert({ key, value: DEFAULT_OPTIONS[key] }).onConflict('key').merge();
      }
    });
    await app.options.afterWrite();
    ctx.body = { success: true, message: '模型倍率已重置为默认值', data: null };
  });
}
