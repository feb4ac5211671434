/** The log list's filter form and the list filters it stands for (kept in the URL). */
/** datetime-local text → epoch seconds (or undefined). */
export function toEpoch(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const t = Date.parse(text);
  return Number.isFinite(t) ? Math.floor(t / 1000) : undefined;
}

/** The log filter form. */
export interface FilterForm {
  type: number;
  token_name: string;
  model_name: string;
  start: string;
  end: string;
  group: string;
  channel: string;
  username: string;
}

export const EMPTY_LOG_FILTER: FilterForm = { type: 0, token_name: '', model_name: '', start: '', end: '', group: '', channel: '', username: '' };

/** The form's values as submitted: the inputs give null for an emptied field. */
export type FilterValues = { [K in keyof FilterForm]?: FilterForm[K] | null };

const trimmed = (v: unknown): string | undefined => (v === undefined || v === null ? '' : String(v)).trim() || undefined;

/** Filter form → list filters (the data provider's LOG_FILTERS keys); channel and username only for admins. */
export function toFilter(f: FilterValues, admin: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    type: Number(f.type) || undefined,
    token_name: trimmed(f.token_name),
    model_name: trimmed(f.model_name),
    start_timestamp: toEpoch(f.start ?? undefined),
    end_timestamp: toEpoch(f.end ?? undefined),
    group: trimmed(f.group),
  };
  if (admin) {
    out.channel = trimmed(f.channel);
    out.username = trimmed(f.username);
  }
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

/** Epoch seconds → datetime-local text (local time, minutes), or '' when absent. */
export function fromEpoch(value: unknown): string {
  const n = Number(value);
  if (value === undefined || value === null || value === '' || !Number.isFinite(n)) return '';
  const d = new Date(n * 1000);
  const p = (v: number) => String(v).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** List filters (as read back from the URL) → filter form: the inverse of toFilter. */
export function fromFilter(filter: Record<string, unknown>): FilterForm {
  const text = (v: unknown) => (v === undefined || v === null ? '' : String(v));
  return {
    type: Number(filter.type) || 0,
    token_name: text(filter.token_name),
    model_name: text(filter.model_name),
    start: fromEpoch(filter.start_timestamp),
    end: fromEpoch(filter.end_timestamp),
    group: text(filter.group),
    channel: text(filter.channel),
    username: text(filter.username),
  };
}
