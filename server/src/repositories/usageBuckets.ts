import type { Knex } from 'knex';
import { LOG_TYPE } from './logs';

export interface UsageBucket {
  /** Bucket start, epoch seconds. */
  created_at: number;
  model_name: string;
  count: number;
  quota: number;
  token_used: number;
}

/**
 * Consumption logs summed per time bucket (`bucketSeconds`, from a fixed set) and model, oldest
 * first; `userId` pins one user, otherwise `username` may.
 */
export async function usageBuckets(
  knex: Knex,
  range: { start: number; end: number; bucketSeconds: number },
  who: { userId?: number; username?: string },
): Promise<UsageBucket[]> {
  const bucket = range.bucketSeconds;
  const q = knex('logs')
    .where('type', LOG_TYPE.consume)
    .whereBetween('created_at', [range.start, range.end])
    // Inlined (a number from a fixed set): a bound parameter would make SQLite divide as REAL.
    .select(knex.raw(`(created_at / ${bucket}) * ${bucket} as bucket`), 'model_name')
    .count({ count: '*' })
    .sum({ quota: 'quota' })
    .sum({ token_used: knex.raw('prompt_tokens + completion_tokens') })
    .groupBy('bucket', 'model_name')
    .orderBy('bucket', 'asc');
  if (who.userId !== undefined) q.where('user_id', who.userId);
  else if (who.username) q.where('username', who.username);
  const rows = (await q) as Array<{
    bucket: number | string;
    model_name: string;
    count: number | string;
    quota: number | string | null;
    token_used: number | string | null;
  }>;
  return rows.map((r) => ({
    created_at: Number(r.bucket),
    model_name: r.model_name,
    count: Number(r.count),
    quota: Number(r.quota ?? 0),
    token_used: Number(r.token_used ?? 0),
  }));
}
