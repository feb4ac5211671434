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

/** The two task tables: drawings (Midjourney, times in ms) and creative tasks (Suno, video; times in s). */
export type TaskTable = 'midjourneys' | 'tasks';

/** Columns the console lists show (the poller's lease and billing bookkeeping stays inside). */
const DRAWING_COLUMNS = [
  'id',
  'code',
  'user_id',
  'action',
  'mj_id',
  'prompt',
  'prompt_en',
  'description',
  'state',
  'submit_time',
  'start_time',
  'finish_time',
  'image_url',
  'status',
  'progress',
  'fail_reason',
  'channel_id',
  'quota',
  'buttons',
  'properties',
  'created_at',
];
const TASK_COLUMNS = [
  'id',
  'created_at',
  'updated_at',
  'task_id',
  'platform',
  'user_id',
  'group',
  'channel_id',
  'quota',
  'action',
  'status',
  'fail_reason',
  'submit_time',
  'start_time',
  'finish_time',
  'progress',
  'properties',
  'data',
];

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
  const q = knex('midjourneys').select(DRAWING_COLUMNS);
  if (userId !== undefined) q.where({ user_id: userId });
  else if (query.channel_id) q.where({ channel_id: query.channel_id });
  if (query.mj_id) q.where({ mj_id: query.mj_id });
  if (query.start_timestamp) q.where('submit_time', '>=', query.start_timestamp);
  if (query.end_timestamp) q.where('submit_time', '<=', query.end_timestamp);
  return page(q, query);
}

/** One page of creative tasks, newest first; `userId` pins the owner (the channel filter is then ignored). */
export function listTasks(knex: Knex, query: TaskListFilter, userId?: number): Promise<Array<Record<string, unknown>>> {
  const q = knex('tasks').select(TASK_COLUMNS);
  if (userId !== undefined) q.where({ user_id: userId });
  else if (query.channel_id) q.where({ channel_id: query.channel_id });
  if (query.task_id) q.where({ task_id: query.task_id });
  if (query.start_timestamp) q.where('submit_time', '>=', query.start_timestamp);
  if (query.end_timestamp) q.where('submit_time', '<=', query.end_timestamp);
  return page(q, query);
}

// ---- the task framework (server/src/tasks/) ----

export type TaskRecord = Record<string, unknown> & { id: number; user_id: number; channel_id: number; quota: number; status: string };

const idOf = (ins: unknown) => Number(typeof ins === 'object' && ins !== null ? (ins as { id: number }).id : ins);

/** Inserts a task row; returns its id. */
export async function insertTaskRow(knex: Knex, table: TaskTable, row: Record<string, unknown>): Promise<number> {
  const [ins] = await knex(table).insert(row).returning('id');
  return idOf(ins);
}

/** The upstream id column of a table. */
export const upstreamIdColumn = (table: TaskTable) => (table === 'midjourneys' ? 'mj_id' : 'task_id');

/** Rows of `userId` (undefined: anyone's) with these upstream ids, optionally of one platform. */
export function findTaskRows(knex: Knex, table: TaskTable, ids: string[], userId: number | undefined, platform?: string): Promise<TaskRecord[]> {
  const q = knex(table).whereIn(upstreamIdColumn(table), ids);
  if (userId !== undefined) q.where({ user_id: userId });
  if (platform) q.where({ platform });
  return q.orderBy('id', 'asc').limit(1000);
}

/** A user's task rows of one platform, newest first (the video list). */
export function userTaskRows(knex: Knex, userId: number, platform: string, limit: number, beforeId?: number): Promise<TaskRecord[]> {
  const q = knex('tasks').where({ user_id: userId, platform });
  if (beforeId) q.where('id', '<', beforeId);
  return q.orderBy('id', 'desc').limit(limit);
}

/** Ids of unfinished tasks that are due and not leased by a live node. */
export async function dueTaskIds(knex: Knex, table: TaskTable, nowMs: number, limit: number): Promise<number[]> {
  const rows: Array<{ id: number }> = await knex(table)
    .select('id')
    .where({ active: 1 })
    .andWhere('next_poll_at', '<=', nowMs)
    .andWhere('lease_until', '<', nowMs)
    .orderBy('next_poll_at', 'asc')
    .limit(limit);
  return rows.map((r) => Number(r.id));
}

/**
 * Takes the lease of one task: a conditional update, so of two nodes racing for it exactly one
 * changes the row (PostgreSQL re-checks the condition on the row the winner wrote), and a node
 * whose list is stale does not poll a task another node has just polled.
 */
export async function claimTask(knex: Knex, table: TaskTable, id: number, owner: string, nowMs: number, untilMs: number): Promise<boolean> {
  // Still due as of this round: a node that polled it meanwhile moved next_poll_at past `nowMs`.
  const n = await knex(table)
    .where({ id, active: 1 })
    .andWhere('lease_until', '<', nowMs)
    .andWhere('next_poll_at', '<=', nowMs)
    .update({ lease_owner: owner, lease_until: untilMs });
  return n === 1;
}

export function taskRowsById(knex: Knex, table: TaskTable, ids: number[]): Promise<TaskRecord[]> {
  return knex(table).whereIn('id', ids);
}

/** Writes a poll's result while this node still holds the lease; false when it lost it. */
export async function updateLeasedTask(knex: Knex, table: TaskTable, id: number, owner: string, patch: Record<string, unknown>): Promise<boolean> {
  const n = await knex(table).where({ id, lease_owner: owner }).update(patch);
  return n === 1;
}

/** Gives back every lease this node holds (app close), so another node or the next start takes them at once. */
export async function releaseTaskLeases(knex: Knex, table: TaskTable, owner: string): Promise<void> {
  await knex(table).where({ lease_owner: owner }).andWhere('lease_until', '>', 0).update({ lease_owner: '', lease_until: 0 });
}

/** Marks a failed task refunded; true only for the one caller whose update changed the row. */
export async function markTaskRefunded(knex: Knex, table: TaskTable, id: number): Promise<boolean> {
  const n = await knex(table).where({ id, refunded: 0 }).update({ refunded: 1 });
  return n === 1;
}

/** A channel row by id, whatever its status (a task is followed on the channel that accepted it). */
export function channelRowById(knex: Knex, id: number): Promise<Record<string, unknown> | undefined> {
  return knex('channels').where({ id }).first();
}

/** Whether a token exists and is limited (its remain_quota was charged with the user's quota). */
export async function tokenIsLimited(knex: Knex, id: number): Promise<boolean> {
  if (!id) return false;
  const row: { unlimited_quota?: unknown } | undefined = await knex('tokens').select('unlimited_quota').where({ id }).first();
  return !!row && !(row.unlimited_quota === true || row.unlimited_quota === 1 || row.unlimited_quota === '1');
}

/** A paid task may be refunded from now on (its `refunded` flag was held at 1 until the money settled). */
export async function markTaskRefundable(knex: Knex, table: TaskTable, id: number): Promise<void> {
  await knex(table).where({ id }).update({ refunded: 0 });
}

/**
 * Takes up a drawing that waits in MODAL again (the client's modal confirmed it and the upstream
 * continues the same task): one conditional update, so of two concurrent modals only one
 * continues it. `quota` is added to what the row already holds (a failure refunds both). The
 * lease is cleared: a poll of the row in flight loses it and does not write back MODAL.
 */
export async function continueTaskRow(knex: Knex, table: TaskTable, id: number, patch: Record<string, unknown> & { quota: number }): Promise<boolean> {
  const { quota, ...rest } = patch;
  const n = await knex(table)
    .where({ id, status: 'MODAL' })
    .update({ ...rest, quota: knex.raw('?? + ?', ['quota', quota]), poll_errors: 0, lease_owner: '', lease_until: 0, fail_reason: '' });
  return n === 1;
}
