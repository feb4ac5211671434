import { z } from 'zod';
import { qIntOpt } from '../../lib/validate';

export const dataQuery = z.object({
  start_timestamp: qIntOpt(),
  end_timestamp: qIntOpt(),
  default_time: z.enum(['hour', 'day', 'week']).optional(),
  username: z.string().max(64).optional(),
});
