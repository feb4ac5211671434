/**
 * The whole record of one usage log for the detail view: every field of the row, in a stable
 * order (the known columns first, then whatever else the server sent), with `other` parsed.
 * Pure, unit-tested in logRecord.test.ts.
 */
import { parseJsonObject } from '../shared/format';

const ORDER = [
  'id',
  'created_at',
  'type',
  'user_id',
  'username',
  'token_id',
  'token_name',
  'group',
  'channel',
  'channel_name',
  'model_name',
  'prompt_tokens',
  'completion_tokens',
  'quota',
  'use_time',
  'is_stream',
  'ip',
  'request_id',
  'content',
];

export interface RecordField {
  key: string;
  value: unknown;
}

/** The fields of a log row (without `other`, which `recordExtra` gives parsed). Empty values are kept: the record is whole. */
export function recordFields(row: Record<string, unknown>): RecordField[] {
  const keys = Object.keys(row).filter((k) => k !== 'other');
  const known = ORDER.filter((k) => keys.includes(k));
  const rest = keys.filter((k) => !ORDER.includes(k)).sort();
  return [...known, ...rest].map((key) => ({ key, value: row[key] }));
}

/** `other` as pretty JSON ('' when empty). */
export function recordExtra(row: Record<string, unknown>): string {
  const o = parseJsonObject(row.other);
  return Object.keys(o).length ? JSON.stringify(o, null, 2) : '';
}

/** A field value as text (objects as JSON, null/undefined as '-'). */
export function fieldText(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
