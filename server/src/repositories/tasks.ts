import type { Knex } from 'knex';

/** Filters of the drawing (Midjourney) and creative-task lists. */
export interface TaskListFilter {
  p?: number;
  page_size?: number;
  channel_id?: number;
  mj_id?: string;
  task_id?: string;
  start_timestamp?: number;
  end_timestamp?: number;
}

function page<T extends object>(q: Knex.QueryBuilder<T>, query: TaskListFilter) {
  const size = query.page_size ?? 10;
  const p = query.p ?? 1;
  return q
    .orderBy('id', 'desc')
    .limit(size)
    .offset((p - 1) * size);
}

/** One page of drawings, newest first; `userId` pins the owner (the channel filter is then ignored). */
export function listDrawings(knex: Knex, query: TaskListFilter, userId?: number): Promise<Array<Record<string, unknown>>> {
  const q = knex('midjourneys');
  if (userId !== undefined) q.where({ user_id: userId });
  else if (query.channel_id) q.where({ channel_id: query.channel_id });
  if (query.mj_id) q.where({ mj_id: query.mj_id });
  if (query.start_timestamp) q.where('submit_time', '>=', query.start_timestamp);
  if (query.end_timestamp) q.where('submit_time', '<=', query.end_timestamp);
  return page(q, query);
}

/** One page of creative tasks, newest first; `userId` pins the owner (the channel filter is then ignored). */
export function listTasks(knex: Knex, query: TaskListFilter, userId?: number): Promise<Array<Record<string, unknown>>> {
  const q = knex('tasks');
  if (userId !== undefined) q.where({ user_id: userId });
  else if (query.channel_id) q.where({ channel_id: query.channel_id });
  if (query.task_id) q.where({ task_id: query.task_id });
  if (query.start_timestamp) q.where('submit_time', '>=', query.start_timestamp);
  if (query.end_timestamp) q.where('submit_time', '<=', query.end_timestamp);
  return page(q, query);
}
