/**
 * Helpers for writing JSON text by hand on the relay's hot paths. Node 20's `JSON.stringify`
 * escapes every key of every object and looks up `toJSON` on each nested object: for answers whose
 * shape is fixed (a converted Responses object, the consume log's `other`), a template with the
 * keys written once costs a fraction. Each template is tested equal to `JSON.stringify` of the
 * object it stands for.
 */
import { memoByString } from './memo';

const quotedName = memoByString((s: string) => JSON.stringify(s), 1024);

/** The JSON literal of a string that recurs (names, models, groups, statuses): escaped once per value (short ones). */
export function jsonName(s: string): string {
  return s.length <= 128 ? quotedName(s) : JSON.stringify(s);
}

/** A number as `JSON.stringify` writes it (`null` when not finite). */
export function jsonNumber(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

/** A value that may be null or undefined (written as null), else as `JSON.stringify` writes it. */
export function jsonOrNull(v: unknown): string {
  if (v == null) return 'null';
  if (typeof v === 'number') return jsonNumber(v);
  return JSON.stringify(v) ?? 'null';
}

/**
 * Whether `o`'s own enumerable keys are exactly `keys`, in that order (no allocation): a template
 * writes an object it was not made for only after this says its shape is the expected one.
 */
export function hasExactly(o: object, keys: readonly string[]): boolean {
  let n = 0;
  for (const k in o) if (k !== keys[n++]) return false;
  return n === keys.length;
}
