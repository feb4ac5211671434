/**
 * Per-item results of bulk actions: the console runs one call per item where the server has no
 * batch endpoint, and reads a server's per-item answer where it gives one. Pure, unit-tested in
 * bulk.test.ts.
 */

export interface BulkItem {
  /** What the item is called in the report (a name, or '#id'). */
  label: string;
  ok: boolean;
  /** The server's message for this item (the failure reason, or a detail such as a balance). */
  message?: string;
  /** The server's word for the outcome when it gives one (e.g. 'deleted', 'not_found'), for translated texts. */
  code?: string;
}

/** Runs `call` for every id, one after another, and never stops at a failure. */
export async function runEach<T>(ids: readonly T[], call: (id: T) => Promise<unknown>): Promise<BulkItem[]> {
  const out: BulkItem[] = [];
  for (const id of ids) {
    try {
      await call(id);
      out.push({ label: `#${String(id)}`, ok: true });
    } catch (e) {
      out.push({ label: `#${String(id)}`, ok: false, message: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}

type T = (key: string, options?: Record<string, unknown>) => string;

let translator: T = (_key, o) => `${String(o?.ok)} succeeded, ${String(o?.failed)} failed`;

/** The i18n set-up hands its translate function here (the data provider has no React context). */
export function setBulkTranslator(t: T): void {
  translator = t;
}

/** Throws a BulkError (message: the summary in the console's language) when any item failed. */
export function failIfAny(items: readonly BulkItem[]): void {
  if (items.some((i) => !i.ok)) throw new BulkError(bulkSummary(items, translator), [...items]);
}

/** One line: 'n succeeded, m failed: #4 reason; #7 reason'. */
export function bulkSummary(items: readonly BulkItem[], t: T): string {
  const ok = items.filter((i) => i.ok).length;
  const failed = items.filter((i) => !i.ok);
  const head = t('app.bulk.summary', { ok, failed: failed.length });
  if (!failed.length) return head;
  return `${head}: ${failed.map((f) => (f.message ? `${f.label} ${f.message}` : f.label)).join('; ')}`;
}

/** Thrown by a bulk call where some items failed; the message is the summary. */
export class BulkError extends Error {
  constructor(
    message: string,
    readonly items: BulkItem[],
  ) {
    super(message);
    this.name = 'BulkError';
  }
}

const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

function itemOf(v: unknown, okDefault?: boolean): BulkItem | null {
  if (!v || typeof v !== 'object') return typeof v === 'string' || typeof v === 'number' ? { label: String(v), ok: okDefault ?? true } : null;
  const o = v as Record<string, unknown>;
  const label = str(o.name) || str(o.username) || (o.id !== undefined ? `#${str(o.id)}` : '') || str(o.label);
  if (!label) return null;
  const flag = [o.success, o.ok].find((x) => typeof x === 'boolean') as boolean | undefined;
  const failedByError = typeof o.error === 'string' && o.error !== '';
  const ok = flag ?? (failedByError ? false : (okDefault ?? true));
  const message =
    str(o.message) || str(o.error) || (typeof o.balance === 'number' ? String(o.balance) : '') || (typeof o.time === 'number' ? `${o.time}s` : '');
  const code = typeof o.status === 'string' && o.status ? o.status : '';
  return { label, ok, ...(message ? { message } : {}), ...(code ? { code } : {}) };
}

/**
 * Reads a server's per-item answer, whatever its shape among the common ones: a list of
 * `{id|name, success|ok, message|error}`, `{ results|items: [...] }`, or `{ succeeded: [...], failed: [...] }`.
 * Anything else (null, a count) gives no items: the console then shows the server's message only.
 */
export function bulkItemsFromAnswer(data: unknown): BulkItem[] {
  if (Array.isArray(data)) return data.map((v) => itemOf(v)).filter((i): i is BulkItem => !!i);
  if (!data || typeof data !== 'object') return [];
  const o = data as Record<string, unknown>;
  for (const key of ['results', 'items', 'channels']) if (Array.isArray(o[key])) return bulkItemsFromAnswer(o[key]);
  const good = Array.isArray(o.succeeded) ? o.succeeded : Array.isArray(o.success) ? o.success : null;
  const bad = Array.isArray(o.failed) ? o.failed : null;
  if (good || bad)
    return [
      ...(good ?? []).map((v) => itemOf(v, true)).filter((i): i is BulkItem => !!i),
      ...(bad ?? [])
        .map((v) => itemOf(v, false))
        .filter((i): i is BulkItem => !!i)
        .map((i) => ({ ...i, ok: false })),
    ];
  return [];
}
