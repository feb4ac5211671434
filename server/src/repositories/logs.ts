import type { Knex } from 'knex';
import { nowSec } from '../lib/time';

export const LOG_TYPE = { unknown: 0, topup: 1, consume: 2, manage: 3, system: 4 } as const;

export interface LogRow {
  id?: number;
  user_id: number;
  created_at: number;
  type: number;
  content: string;
  username: string;
  token_name: string;
  token_id: number;
  model_name: string;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  use_time: number;
  is_stream: boolean;
  channel_id: number;
  channel_name: string;
  group: string;
  ip: string;
  other: string;
}

export type NewLog = Partial<LogRow> & Pick<LogRow, 'user_id' | 'type'>;

export function logRow(log: NewLog): LogRow {
  return {
    created_at: nowSec(),
    content: '',
    username: '',
    token_name: '',
    token_id: 0,
    model_name: '',
    quota: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    use_time: 0,
    is_stream: false,
    channel_id: 0,
    channel_name: '',
    group: '',
    ip: '',
    other: '',
    ...log,
  };
}

/** Writes one log row now (top-up, admin and system logs; consume logs go through the batcher). */
export async function insertLog(knex: Knex, log: NewLog): Promise<void> {
  await knex('logs').insert(logRow(log));
}

/** Console log filters (all optional; exact matches except the time range, which is inclusive). */
export interface LogFilter {
  type?: number;
  user_id?: number;
  username?: string;
  token_name?: string;
  model_name?: string;
  start_timestamp?: number;
  end_timestamp?: number;
  channel?: number;
  group?: string;
}

function applyLogFilter(qb: Knex.QueryBuilder, f: LogFilter, opts: { time?: boolean; type?: boolean } = {}): Knex.QueryBuilder {
  if (f.user_id !== undefined) qb.where('user_id', f.user_id);
  if (opts.type !== false && f.type) qb.where('type', f.type);
  if (f.username) qb.where('username', f.username);
  if (f.token_name) qb.where('token_name', f.token_name);
  if (f.model_name) qb.where('model_name', f.model_name);
  if (f.channel) qb.where('channel_id', f.channel);
  if (f.group) qb.where('group', f.group);
  if (opts.time !== false) {
    if (f.start_timestamp) qb.where('created_at', '>=', f.start_timestamp);
    if (f.end_timestamp) qb.where('created_at', '<=', f.end_timestamp);
  }
  return qb;
}

/** A page of logs, newest first, plus the total count under the same filter. */
export async function queryLogs(knex: Knex, f: LogFilter, page: { p: number; page_size: number }): Promise<{ rows: LogRow[]; total: number }> {
  const countRow = await applyLogFilter(knex('logs'), f).count({ n: '*' }).first();
  const rows: LogRow[] = await applyLogFilter(knex('logs'), f)
    .select('*')
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(page.page_size)
    .offset((page.p - 1) * page.page_size);
  return { rows, total: Number(countRow?.n ?? 0) };
}

/**
 * Usage figures under a filter: quota = sum over consumption logs (type 2) in the time range;
 * rpm / tpm = consumption requests / tokens in the last 60 seconds (time range ignored).
 */
export async function logStats(knex: Knex, f: LogFilter, now: number): Promise<{ quota: number; rpm: number; tpm: number }> {
  const quotaRow = await applyLogFilter(knex('logs'), f, { type: false }).where('type', LOG_TYPE.consume).sum({ q: 'quota' }).first();
  const recent = await applyLogFilter(knex('logs'), f, { type: false, time: false })
    .where('type', LOG_TYPE.consume)
    .where('created_at', '>=', now - 60)
    .first(knex.raw('count(*) as n'), knex.raw('coalesce(sum(prompt_tokens + completion_tokens), 0) as t'));
  const r = (recent ?? {}) as { n?: number | string; t?: number | string };
  return { quota: Number(quotaRow?.q ?? 0), rpm: Number(r.n ?? 0), tpm: Number(r.t ?? 0) };
}

/** Deletes logs created before `target` (epoch s); returns how many. */
export async function deleteLogsBefore(knex: Knex, target: number): Promise<number> {
  return knex('logs').where('created_at', '<', target).delete();
}
