/**
 * Records of the drawing log (/midjourney) and task log (/task): label and colour mappings,
 * time-taken rules, default ranges, the list filters and the pager's count.
 */
import { parseDateText, toDateTimeLocal, type TagColor } from '../../resources/shared/format';

/**
 * A drawing or task record as the server lists it: the ids shown as text and the timestamps are
 * typed, every other column is read defensively by the mappings below.
 */
export interface Row {
  id: number;
  mj_id?: string;
  task_id?: string;
  submit_time?: number;
  finish_time?: number;
  [column: string]: unknown;
}

/** Drawing submit result code → translation suffix. */
export function codeKey(code: unknown): 'submitted' | 'waiting' | 'duplicate' | 'not_submitted' | 'unknown' {
  switch (Number(code)) {
    case 1:
      return 'submitted';
    case 21:
      return 'waiting';
    case 22:
      return 'duplicate';
    case 0:
      return code === '' || code === null || code === undefined ? 'unknown' : 'not_submitted';
    default:
      return 'unknown';
  }
}

export function codeColor(code: unknown): TagColor {
  switch (codeKey(code)) {
    case 'submitted':
      return 'green';
    case 'waiting':
      return 'lime';
    case 'duplicate':
      return 'orange';
    case 'not_submitted':
      return 'yellow';
    default:
      return 'grey';
  }
}

export const DRAW_STATUSES = ['SUCCESS', 'NOT_START', 'SUBMITTED', 'IN_PROGRESS', 'FAILURE', 'MODAL'] as const;
export const TASK_STATUSES = [...DRAW_STATUSES, 'QUEUED', 'UNKNOWN'] as const;

/**
 * Status → translation suffix. Drawing statuses are the six of DRAW_STATUSES; the task log adds QUEUED,
 * UNKNOWN and an empty value meaning "submitting". Anything else is unknown.
 */
export function statusKey(status: unknown, task = false): string {
  const s = String(status ?? '')
    .trim()
    .toUpperCase();
  if (task && s === '') return 'submitting';
  if ((DRAW_STATUSES as readonly string[]).includes(s)) return s.toLowerCase();
  if (task && (TASK_STATUSES as readonly string[]).includes(s)) return s.toLowerCase();
  return 'unknown';
}

export function statusColor(status: unknown, task = false): TagColor {
  switch (statusKey(status, task)) {
    case 'success':
      return 'green';
    case 'not_start':
      return 'grey';
    case 'submitted':
      return 'yellow';
    case 'in_progress':
      return 'blue';
    case 'failure':
      return 'red';
    case 'modal':
      return 'amber';
    case 'queued':
      return 'orange';
    case 'submitting':
      return 'cyan';
    default:
      return 'grey';
  }
}

/** Drawing actions with a translated label; others are shown as sent. */
export const DRAW_ACTIONS = [
  'IMAGINE',
  'UPSCALE',
  'VARIATION',
  'HIGH_VARIATION',
  'LOW_VARIATION',
  'PAN',
  'DESCRIBE',
  'BLEND',
  'UPLOAD',
  'SHORTEN',
  'REROLL',
  'INPAINT',
  'ZOOM',
  'CUSTOM_ZOOM',
  'SWAP_FACE',
  'MODAL',
] as const;

/** Task types (MUSIC, LYRICS); others are shown as sent. */
export const TASK_ACTIONS = ['MUSIC', 'LYRICS', 'VIDEO'] as const;

export function actionKey(action: unknown, task = false): string | null {
  const a = String(action ?? '').toUpperCase();
  const list: readonly string[] = task ? TASK_ACTIONS : DRAW_ACTIONS;
  return list.includes(a) ? a.toLowerCase() : null;
}

export function actionColor(action: unknown): TagColor {
  const palette: Record<string, TagColor> = {
    IMAGINE: 'blue',
    UPSCALE: 'orange',
    VARIATION: 'purple',
    HIGH_VARIATION: 'purple',
    LOW_VARIATION: 'purple',
    PAN: 'cyan',
    DESCRIBE: 'yellow',
    BLEND: 'lime',
    UPLOAD: 'blue',
    SHORTEN: 'pink',
    REROLL: 'indigo',
    INPAINT: 'violet',
    ZOOM: 'teal',
    CUSTOM_ZOOM: 'teal',
    SWAP_FACE: 'light-blue',
    MODAL: 'amber',
    MUSIC: 'blue',
    LYRICS: 'pink',
    VIDEO: 'violet',
  };
  return palette[String(action ?? '').toUpperCase()] ?? 'grey';
}

/**
 * Time taken in seconds between submit and finish. Drawing times are milliseconds, task times
 * seconds. Unfinished or unsubmitted records → null.
 */
export function timeTakenSeconds(submit: unknown, finish: unknown, unit: 'ms' | 's'): number | null {
  const a = Number(submit);
  const b = Number(finish);
  if (!Number.isFinite(a) || !Number.isFinite(b) || a <= 0 || b <= 0 || b < a) return null;
  const s = unit === 'ms' ? (b - a) / 1000 : b - a;
  return Math.round(s * 10) / 10;
}

/** Red above 60 s, otherwise green. */
export function timeTakenColor(seconds: number): TagColor {
  return seconds > 60 ? 'red' : 'green';
}

/** '80%' / '80' / 80 → 80 (0–100); anything else 0. */
export function progressPercent(progress: unknown): number {
  const n = parseFloat(String(progress ?? '').replace('%', ''));
  if (!Number.isFinite(n)) return 0;
  return Math.max(0, Math.min(100, n));
}

/** Epoch milliseconds → 'YYYY-MM-DD HH:mm:ss' (0 → '-'). */
export function formatMs(ms: unknown): string {
  const v = Number(ms);
  if (!v || !Number.isFinite(v)) return '-';
  const d = new Date(v);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * The filter form (datetime-local texts and raw ids). The id field is `task_id` for both logs (the
 * drawing log filters its drawings' mj_id with it).
 */
export interface LogFilterForm {
  channel: string;
  task_id: string;
  start: string;
  end: string;
}

/** The drawing log defaults to 30 days ago → 1 hour ahead. */
export function drawingDefaultForm(now: Date = new Date()): LogFilterForm {
  const sec = Math.floor(now.getTime() / 1000);
  return { channel: '', task_id: '', start: toDateTimeLocal(sec - 30 * 86400), end: toDateTimeLocal(sec + 3600) };
}

/** Local midnight of the given day, epoch seconds. */
export function startOfDay(now: Date = new Date()): number {
  return Math.floor(new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime() / 1000);
}

/** The task log starts at the start of today (the end defaults to 1 hour ahead). */
export function taskDefaultForm(now: Date = new Date()): LogFilterForm {
  const sec = Math.floor(now.getTime() / 1000);
  return { channel: '', task_id: '', start: toDateTimeLocal(startOfDay(now)), end: toDateTimeLocal(sec + 3600) };
}

export type LogKind = 'mj' | 'task';

/** The react-admin resource of a log (the data provider's `midjourney` and `task`). */
export const LOG_RESOURCE = { mj: 'midjourney', task: 'task' } as const satisfies Record<LogKind, string>;

/** The server's name of the id filter, and its time unit (drawing times are ms, task times s). */
const idKey = (kind: LogKind) => (kind === 'mj' ? 'mj_id' : 'task_id');
const timeScale = (kind: LogKind) => (kind === 'mj' ? 1000 : 1);

/** The form's values as submitted: react-admin's inputs give null for an emptied field. */
export type LogFilterValues = { [K in keyof LogFilterForm]?: LogFilterForm[K] | null };

/**
 * Filter form → list filters, which are the server's query keys (kept in the URL): `channel_id`
 * (admins; digits only), `mj_id` or `task_id`, and `start_timestamp`/`end_timestamp` in the log's
 * unit. Empty and invalid fields are left out.
 */
export function toLogFilter(kind: LogKind, form: LogFilterValues, admin: boolean): Record<string, unknown> {
  const text = (v: string | null | undefined) => (v ?? '').trim();
  const channel = text(form.channel);
  const start = parseDateText(text(form.start));
  const end = parseDateText(text(form.end));
  const out: Record<string, unknown> = {
    channel_id: admin && /^\d+$/.test(channel) ? Number(channel) : undefined,
    [idKey(kind)]: text(form.task_id) || undefined,
    start_timestamp: start !== null ? start * timeScale(kind) : undefined,
    end_timestamp: end !== null ? end * timeScale(kind) : undefined,
  };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

/** List filters (as read back from the URL) → filter form: the inverse of toLogFilter. */
export function fromLogFilter(kind: LogKind, filter: Record<string, unknown>): LogFilterForm {
  const text = (v: unknown) => (v === undefined || v === null ? '' : String(v));
  const time = (v: unknown) => {
    const n = Number(v);
    return v === undefined || v === null || v === '' || !Number.isFinite(n) ? '' : toDateTimeLocal(Math.floor(n / timeScale(kind)));
  };
  return { channel: text(filter.channel_id), task_id: text(filter[idKey(kind)]), start: time(filter.start_timestamp), end: time(filter.end_timestamp) };
}

/**
 * The row count the pager shows on page `page` (1-based) without a total: the rows up to this page,
 * plus one while the server may have more, so "next" stays enabled and moving on asks for the next
 * server page.
 */
export function pagerCount(page: number, perPage: number, shown: number, hasNextPage: boolean): number {
  return (page - 1) * perPage + shown + (hasNextPage ? 1 : 0);
}

/** A task record for the JSON dialog: the stored JSON text fields (data, properties) are expanded. */
export function taskDetail(row: Row): Record<string, unknown> {
  const out: Record<string, unknown> = { ...row };
  for (const k of ['data', 'properties']) {
    const v = row[k];
    if (typeof v === 'string' && v.trim()) {
      try {
        out[k] = JSON.parse(v);
      } catch {
        /* keep the text */
      }
    }
  }
  return out;
}

/** Long failure reasons open a dialog instead of showing inline. */
export const LONG_TEXT = 20;
export function isLong(text: unknown, max = LONG_TEXT): boolean {
  return String(text ?? '').length > max;
}

/** Callback banner: shown to admins unless the local flag mj_notify_enabled is true. */
export function showCallbackBanner(admin: boolean, flag: unknown): boolean {
  return admin && !(flag === true || flag === 'true');
}
