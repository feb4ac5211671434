import { z } from 'zod';
import { zmsg } from '../i18n';
import type { AppContext } from '../context';
import { nowSec } from '../lib/time';
import { qIntOpt, qStr, type Paging } from '../lib/validate';
import { deleteLogsBefore, logStats, queryLogs, type LogFilter, type LogRow } from '../repositories/logs';

const nonNeg = (what: string, max = 1e13) => qIntOpt().refine((n) => n === undefined || (n >= 0 && n <= max), zmsg('input.non_negative_int', { field: what }));

export const filterQuery = z.object({
  type: nonNeg('type').refine((n) => n === undefined || n <= 5, 'log.type_range'),
  username: qStr(),
  token_name: qStr(),
  model_name: qStr(),
  start_timestamp: nonNeg('start_timestamp'),
  end_timestamp: nonNeg('end_timestamp'),
  channel: nonNeg('channel', 2 ** 31 - 1),
  group: qStr(),
});

export type LogFilterQuery = z.infer<typeof filterQuery>;

/** The checked `target_timestamp` of a purge: a positive whole number of seconds. */
export const purgeQuery = z.object({
  target_timestamp: z
    .string({ error: 'log.target_timestamp' })
    .regex(/^\d{1,12}$/, 'log.target_timestamp')
    .transform(Number)
    .refine((n) => n > 0, 'log.target_timestamp'),
});

/** The console filters as a repository filter; `self` drops what only admins may filter on and pins the user. */
export function toLogFilter(q: LogFilterQuery, self?: { userId: number }): LogFilter {
  const f: LogFilter = {
    type: q.type || undefined,
    token_name: q.token_name.trim() || undefined,
    model_name: q.model_name.trim() || undefined,
    start_timestamp: q.start_timestamp || undefined,
    end_timestamp: q.end_timestamp || undefined,
    group: q.group.trim() || undefined,
  };
  if (self) f.user_id = self.userId;
  else {
    f.username = q.username.trim() || undefined;
    f.channel = q.channel || undefined;
  }
  return f;
}

/** A log row for the console. Non-admins never see the channel or the admin-only part of `other`. */
export function logView(row: LogRow, admin: boolean): Record<string, unknown> {
  const base: Record<string, unknown> = {
    ...row,
    id: Number(row.id),
    created_at: Number(row.created_at),
    quota: Number(row.quota),
    is_stream: Boolean(row.is_stream),
    channel: Number(row.channel_id),
  };
  if (admin) return base;
  delete base.channel;
  delete base.channel_id;
  delete base.channel_name;
  let other = row.other ?? '';
  if (other) {
    try {
      const parsed: unknown = JSON.parse(other);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        delete (parsed as Record<string, unknown>).admin_info;
        other = JSON.stringify(parsed);
      }
    } catch {
      other = '';
    }
  }
  base.other = other;
  return base;
}

export async function listLogs(app: AppContext, q: LogFilterQuery, paging: Paging, self?: { userId: number }) {
  const { rows, total } = await queryLogs(app.knex, toLogFilter(q, self), paging);
  return { items: rows.map((r) => logView(r, !self)), total, page: paging.p, page_size: paging.page_size };
}

export async function logStat(app: AppContext, q: LogFilterQuery, self?: { userId: number }) {
  return logStats(app.knex, toLogFilter(q, self), nowSec());
}

/** Deletes the logs older than `before` (seconds); returns how many. */
export async function purgeLogs(app: AppContext, before: number): Promise<number> {
  return deleteLogsBefore(app.knex, before);
}
