/**
 * Usage series of the dashboard (/detail): granularity and default range,
 * totals and average RPM/TPM, and the time-bucket × model series the SVG charts draw.
 * Rows come from GET /api/data/ (admin) or /api/data/self: one row per bucket start (epoch s) and model.
 */
import { toDateTimeLocal } from '../../resources/shared/format';

export interface DataRow {
  created_at: number;
  model_name: string;
  count: number;
  quota: number;
  token_used: number;
}

export type Granularity = 'hour' | 'day' | 'week';
export const GRANULARITIES: readonly Granularity[] = ['hour', 'day', 'week'];
export const BUCKET_SECONDS: Record<Granularity, number> = { hour: 3600, day: 86400, week: 604800 };

/** The site's DataExportDefaultTime (status data_export_default_time); hour when unset or unknown. */
export function defaultGranularity(value: unknown): Granularity {
  const v = String(value ?? '').trim();
  return (GRANULARITIES as readonly string[]).includes(v) ? (v as Granularity) : 'hour';
}

export interface DashboardForm {
  start: string;
  end: string;
  granularity: Granularity;
  username: string;
}

/**
 * Default range by granularity (as new-api): hour → the last day, day → the last 7 days,
 * week → the last 30 days; the end is one hour ahead.
 */
export function defaultForm(granularity: Granularity, now: Date = new Date()): DashboardForm {
  const sec = Math.floor(now.getTime() / 1000);
  const back = granularity === 'hour' ? 86400 : granularity === 'day' ? 7 * 86400 : 30 * 86400;
  return { start: toDateTimeLocal(sec - back), end: toDateTimeLocal(sec + 3600), granularity, username: '' };
}

export type Metric = 'quota' | 'count' | 'token_used';
export const METRICS: readonly Metric[] = ['quota', 'count', 'token_used'];

export interface Totals {
  quota: number;
  count: number;
  tokens: number;
  /** average requests per minute over the range */
  rpm: number;
  /** average tokens per minute over the range */
  tpm: number;
}

/**
 * Sums of the rows, and averages per minute over [start, min(end, now)] (a range ending in the
 * future is counted up to now). A range shorter than a minute counts as one minute.
 */
export function totals(rows: DataRow[], start: number, end: number, now: number = Math.floor(Date.now() / 1000)): Totals {
  let quota = 0;
  let count = 0;
  let tokens = 0;
  for (const r of rows) {
    quota += Number(r.quota) || 0;
    count += Number(r.count) || 0;
    tokens += Number(r.token_used) || 0;
  }
  const minutes = Math.max(1, (Math.min(end, now) - start) / 60);
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return { quota, count, tokens, rpm: round(count / minutes), tpm: round(tokens / minutes) };
}

/** Bucket start of an epoch second, aligned like the server (`floor(ts / size) * size`). */
export function bucketOf(ts: number, g: Granularity): number {
  const size = BUCKET_SECONDS[g];
  return Math.floor(ts / size) * size;
}

/** At most this many buckets are filled in; longer ranges show only the buckets with data. */
export const MAX_FILLED_BUCKETS = 400;

/**
 * The x axis: every bucket from the range's start to its end (capped at now), so empty periods
 * show as gaps; when that would be too many, only the buckets that have data.
 */
export function bucketAxis(rows: DataRow[], g: Granularity, start: number, end: number, now: number = Math.floor(Date.now() / 1000)): number[] {
  const present = [...new Set(rows.map((r) => Number(r.created_at)))].sort((a, b) => a - b);
  const size = BUCKET_SECONDS[g];
  const from = bucketOf(start, g);
  const to = bucketOf(Math.max(start, Math.min(end, now)), g);
  const n = Math.floor((to - from) / size) + 1;
  if (!Number.isFinite(n) || n <= 0 || n > MAX_FILLED_BUCKETS) return present;
  const axis: number[] = [];
  for (let t = from; t <= to; t += size) axis.push(t);
  // Data outside the computed axis (clock skew) is kept too.
  for (const p of present) if (!axis.includes(p)) axis.push(p);
  return axis.sort((a, b) => a - b);
}

export interface ModelTotal {
  model: string;
  count: number;
  quota: number;
  token_used: number;
}

/** Per-model sums, largest quota first (then count, then name). */
export function modelTotals(rows: DataRow[]): ModelTotal[] {
  const m = new Map<string, ModelTotal>();
  for (const r of rows) {
    const name = r.model_name || '-';
    const t = m.get(name) ?? { model: name, count: 0, quota: 0, token_used: 0 };
    t.count += Number(r.count) || 0;
    t.quota += Number(r.quota) || 0;
    t.token_used += Number(r.token_used) || 0;
    m.set(name, t);
  }
  return [...m.values()].sort((a, b) => b.quota - a.quota || b.count - a.count || a.model.localeCompare(b.model));
}

export const OTHER = '__other__';

export interface Series {
  /** model name, or OTHER for the models beyond `maxSeries` */
  name: string;
  /** one value per axis bucket */
  values: number[];
  total: number;
}

/**
 * Stacked series of one metric: one per model (ranked by the metric's total), the models beyond
 * `maxSeries - 1` merged into OTHER. Values align with `axis`.
 */
export function buildSeries(rows: DataRow[], axis: number[], metric: Metric, maxSeries = 8): Series[] {
  const index = new Map(axis.map((t, i) => [t, i]));
  const byModel = new Map<string, number[]>();
  for (const r of rows) {
    const i = index.get(Number(r.created_at));
    if (i === undefined) continue;
    const name = r.model_name || '-';
    const vals = byModel.get(name) ?? new Array<number>(axis.length).fill(0);
    vals[i] += Number(r[metric]) || 0;
    byModel.set(name, vals);
  }
  const ranked = [...byModel.entries()]
    .map(([name, values]) => ({ name, values, total: values.reduce((s, v) => s + v, 0) }))
    .filter((s) => s.total > 0)
    .sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));
  if (ranked.length <= maxSeries) return ranked;
  const keep = ranked.slice(0, maxSeries - 1);
  const rest = ranked.slice(maxSeries - 1);
  const values = new Array<number>(axis.length).fill(0);
  for (const s of rest) s.values.forEach((v, i) => (values[i] += v));
  return [...keep, { name: OTHER, values, total: rest.reduce((s, r) => s + r.total, 0) }];
}

/** The stacked height of each bucket. */
export function stackTotals(series: Series[], length: number): number[] {
  const out = new Array<number>(length).fill(0);
  for (const s of series) s.values.forEach((v, i) => (out[i] += v));
  return out;
}

/** A "nice" axis maximum (steps of 1, 1.25, 1.5, 2, 2.5, 3, 4, 5 or 7.5 × 10^n) at or above `max`, and its tick step. */
export function niceScale(max: number, ticks = 4, integer = false): { max: number; step: number } {
  if (integer && Number.isFinite(max) && max <= ticks) return { max: Math.max(1, Math.ceil(max)), step: 1 };
  if (!Number.isFinite(max) || max <= 0) return { max: 1, step: 1 / ticks };
  const raw = max / ticks;
  const pow = Math.pow(10, Math.floor(Math.log10(raw)));
  const step =
    [1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 7.5, 10]
      .map((m) => m * pow)
      .filter((s) => !integer || Number.isInteger(s))
      .find((s) => s * ticks >= max) ?? 10 * pow;
  return { max: step * ticks, step };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Axis label of a bucket (local time): hour → 'MM-DD HH:00', day/week → 'MM-DD'. */
export function bucketLabel(ts: number, g: Granularity): string {
  const d = new Date(ts * 1000);
  const day = `${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  return g === 'hour' ? `${day} ${pad(d.getHours())}:00` : day;
}

/** Show every k-th x label so that about `maxLabels` fit. */
export function labelStride(count: number, maxLabels: number): number {
  if (count <= 0 || maxLabels <= 0) return 1;
  return Math.max(1, Math.ceil(count / maxLabels));
}

/** The data URL of the dashboard: the admin endpoint (with username) or the user's own. */
export function dataUrl(admin: boolean, start: number | null, end: number | null, g: Granularity, username: string): string {
  const params: Array<[string, string | number | null]> = [
    ['start_timestamp', start],
    ['end_timestamp', end],
    ['default_time', g],
    ['username', admin && username.trim() ? username.trim() : null],
  ];
  const q = params
    .filter(([, v]) => v !== null && v !== '')
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&');
  return `${admin ? '/api/data/' : '/api/data/self'}?${q}`;
}

/**
 * Axis tick text for quota: with currency display, dollars with enough significant digits that
 * small ticks stay distinct; otherwise the shared compact number.
 */
export function quotaTick(v: number, displayInCurrency: boolean, quotaPerUnit: number, compact: (n: number) => string): string {
  if (!displayInCurrency) return compact(v);
  const usd = v / (quotaPerUnit || 500000);
  if (usd === 0) return '$0';
  if (Math.abs(usd) >= 1000) return `$${compact(usd)}`;
  return `$${Number(usd.toPrecision(3))}`;
}

/** A per-minute rate: three significant digits below 10 (0.00208), else the compact number. */
export function formatRate(v: number, compact: (n: number) => string): string {
  if (!Number.isFinite(v) || v === 0) return '0';
  if (Math.abs(v) < 10) return String(Number(v.toPrecision(3)));
  return compact(v);
}
