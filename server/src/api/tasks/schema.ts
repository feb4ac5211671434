import { z } from 'zod';
import { qIntOpt } from '../../lib/validate';

export const listQuery = z.object({
  p: qIntOpt().pipe(z.number().int().min(1).max(1_000_000).optional()),
  page_size: qIntOpt().pipe(z.number().int().min(1).max(100).optional()),
  channel_id: qIntOpt(),
  mj_id: z.string().max(191).optional(),
  task_id: z.string().max(191).optional(),
  start_timestamp: qIntOpt(),
  end_timestamp: qIntOpt(),
});
