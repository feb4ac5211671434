import { z } from 'zod';
import { pagingQuery, qBool, qIntOpt, qStr } from '../../lib/validate';

export { batchIdsBody, batchTagBody, createBody, tagBody, tagEditBody, updateBody } from '../../services/channels';

export const listQuery = pagingQuery.extend({
  id_sort: qBool(),
  tag_mode: qBool(),
  keyword: qStr(),
  group: qStr(),
  model: qStr(),
  status: qIntOpt(),
  type: qIntOpt(),
});

export const copyQuery = z.object({ suffix: z.string().max(64, 'suffix 过长').optional().default('_复制') });

/** A channel id in the path, parsed by the route (a bad one is answered, not passed on). */
export const rawIdParams = z.object({ id: z.string() });

export const testQuery = z.object({ model: z.string().optional() });

export const fetchModelsBody = z.object({
  base_url: z.string().max(512).optional().default(''),
  type: z.coerce.number().int().min(1).max(1000),
  key: z.string().min(1, '请填写密钥').max(65536),
  other: z.string().max(4096).optional(),
  openai_organization: z.string().max(128).optional(),
});
