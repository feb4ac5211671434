import { pagingQuery } from '../../lib/validate';
import { filterQuery, purgeQuery } from '../../services/logs';

/** The log filters (self lists ignore `username` and `channel`) and paging. */
export const listQuery = filterQuery.extend(pagingQuery.shape);
export const statQuery = filterQuery;
export { purgeQuery };
