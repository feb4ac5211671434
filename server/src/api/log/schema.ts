import { z } from 'zod';
import { pagingQuery } from '../../lib/validate';
import { filterQuery } from '../../services/logs';

/** The log filters; the service reads them (self lists ignore `username` and `channel`). */
export const listQuery = filterQuery.extend(pagingQuery.shape);
export const statQuery = filterQuery;
export const purgeQuery = z.object({ target_timestamp: z.string().optional() });
