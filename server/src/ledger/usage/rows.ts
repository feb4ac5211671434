import type { LogRow } from '../../repositories/logs';

/** The columns of a log row, in the order both writers bind them. */
export const LOG_COLUMNS = [
  'user_id',
  'created_at',
  'type',
  'content',
  'username',
  'token_name',
  'token_id',
  'model_name',
  'quota',
  'prompt_tokens',
  'completion_tokens',
  'use_time',
  'is_stream',
  'channel_id',
  'channel_name',
  'group',
  'ip',
  'other',
] as const;

/**
 * A row waiting in the usage batch. Its `other` JSON may end in a part written only when the row
 * is: rows wait up to a second, through young-generation collections that copy and then promote
 * what they hold, and a call's part of the JSON as text (≈ 150–250 bytes, a tree of concatenated
 * pieces until written) was the larger share of a queued row; as the values it is made of, it is
 * a fraction of that.
 */
export interface QueuedLog extends LogRow {
  /** Written after `other` when the row is. */
  otherTail?: { json(): string };
}

/** The row's `other` column as written. */
const otherText = (l: QueuedLog): string => (l.otherTail === undefined ? l.other : l.other + l.otherTail.json());

/**
 * Appends the statement parameters of one row to `out`, in LOG_COLUMNS order, `is_stream` as given
 * (plain property reads: `l[c]` over 18 keys is a megamorphic lookup per column).
 */
export function pushLogParams(out: unknown[], l: QueuedLog, isStream: unknown): void {
  out.push(
    l.user_id,
    l.created_at,
    l.type,
    l.content,
    l.username,
    l.token_name,
    l.token_id,
    l.model_name,
    l.quota,
    l.prompt_tokens,
    l.completion_tokens,
    l.use_time,
    isStream,
    l.channel_id,
    l.channel_name,
    l.group,
    l.ip,
    otherText(l),
  );
}

export interface Counter {
  quota: number;
  count: number;
}

/** What one flush writes, in one transaction. */
export interface UsageBatch {
  logs: QueuedLog[];
  /** used_quota / request_count to add, per id. */
  users: Map<number, Counter>;
  tokens: Map<number, Counter>;
  channels: Map<number, Counter>;
  /** The tokens' accessed_time (epoch s). */
  now: number;
  /** Settled reservations whose log rows and counters are in this batch: deleted with them. */
  resIds: number[];
}

/** Writes usage batches: one implementation per database (sqlite.ts, postgres.ts). */
export interface UsageWriter {
  /** Writes the whole batch in one transaction, or nothing (then rejects). */
  write(batch: UsageBatch): Promise<void>;
}
