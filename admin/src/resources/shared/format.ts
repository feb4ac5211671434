/**
 * Pure display helpers shared by the resource screens: quota/currency rendering, compact numbers,
 * timestamps, colour thresholds. No React here, so everything is unit-tested in format.test.ts.
 */

export interface DisplaySettings {
  /** status.display_in_currency */
  displayInCurrency: boolean;
  /** status.quota_per_unit (500000 by default) */
  quotaPerUnit: number;
}

export const DEFAULT_QUOTA_PER_UNIT = 500000;

/** Reads the cached status object (localStorage key `status`) the shell stores after GET /api/status. */
export function readDisplaySettings(storage: Pick<Storage, 'getItem'> | undefined = safeStorage()): DisplaySettings {
  let displayInCurrency = true;
  let quotaPerUnit = DEFAULT_QUOTA_PER_UNIT;
  try {
    const raw = storage?.getItem('status');
    if (raw) {
      const status = JSON.parse(raw) as Record<string, unknown>;
      if (typeof status.display_in_currency === 'boolean') displayInCurrency = status.display_in_currency;
      else if (status.display_in_currency === 'true' || status.display_in_currency === 'false') displayInCurrency = status.display_in_currency === 'true';
      const qpu = Number(status.quota_per_unit);
      if (Number.isFinite(qpu) && qpu > 0) quotaPerUnit = qpu;
    }
  } catch {
    /* malformed cache: defaults */
  }
  return { displayInCurrency, quotaPerUnit };
}

function safeStorage(): Storage | undefined {
  try {
    return typeof localStorage === 'undefined' ? undefined : localStorage;
  } catch {
    return undefined;
  }
}

/** Compact number: k above 10 thousand, M above a million, B above a billion. */
export function compactNumber(n: number | null | undefined): string {
  const v = Number(n ?? 0);
  if (!Number.isFinite(v)) return '0';
  const abs = Math.abs(v);
  const trim = (x: number) => {
    const s = x.toFixed(1);
    return s.endsWith('.0') ? s.slice(0, -2) : s;
  };
  if (abs >= 1e9) return `${trim(v / 1e9)}B`;
  if (abs >= 1e6) return `${trim(v / 1e6)}M`;
  if (abs >= 1e4) return `${trim(v / 1e3)}k`;
  return String(Math.round(v * 100) / 100);
}

/**
 * Quota → text. With currency display on: '$' + quota / quota_per_unit with at least `digits`
 * decimals; an amount below one cent gets the decimals it needs to show two significant digits
 * (up to 6), so $0.00013 stays $0.00013 rather than rounding to $0.01; an amount below $0.000001
 * shows as the smallest visible unit. Without currency display: a compact number.
 */
export function formatQuota(quota: number | null | undefined, settings: DisplaySettings = readDisplaySettings(), digits = 2): string {
  const q = Number(quota ?? 0);
  if (!Number.isFinite(q)) return '-';
  if (!settings.displayInCurrency) return compactNumber(q);
  const usd = q / (settings.quotaPerUnit || DEFAULT_QUOTA_PER_UNIT);
  return formatUsd(usd, digits);
}

/** A USD amount as '$x' with the precision rules of formatQuota. */
export function formatUsd(usd: number, digits = 2): string {
  if (!Number.isFinite(usd)) return '-';
  const abs = Math.abs(usd);
  const sign = usd < 0 ? '-' : '';
  if (abs === 0) return `$${(0).toFixed(digits)}`;
  const MAX = 6;
  let decimals = digits;
  if (abs < Math.pow(10, -digits + 1)) decimals = Math.max(digits, Math.min(MAX, Math.ceil(-Math.log10(abs)) + 1));
  let text = abs.toFixed(decimals);
  if (Number(text) === 0) return `${sign}$${Math.pow(10, -Math.max(decimals, digits)).toFixed(Math.max(decimals, digits))}`;
  // Extra decimals beyond `digits` only carry significant digits: drop their trailing zeros.
  if (decimals > digits) text = text.replace(/0+$/, '').replace(/\.(\d*)$/, (_, d: string) => `.${d.padEnd(digits, '0')}`);
  return `${sign}$${text}`;
}

/** A quota preset's label: the units, then what they are worth at the configured quota per unit ('1,000,000 ($2.00)'). */
export function quotaPresetLabel(quota: number, settings: DisplaySettings): string {
  const units = quota.toLocaleString('en-US');
  return settings.displayInCurrency ? `${units} (${formatQuota(quota, settings)})` : units;
}

export interface AmountPreset {
  /** quota units at the configured quota per unit */
  value: number;
  usd: number;
  label: string;
}

/** Dollar amounts as presets in quota units at the configured quota per unit; labelled in the display unit. */
export function usdPresets(amounts: readonly number[], settings: DisplaySettings): AmountPreset[] {
  return amounts.map((usd) => {
    const value = usdToQuota(usd, settings.quotaPerUnit);
    return { value, usd, label: settings.displayInCurrency ? `$${usd}` : compactNumber(value) };
  });
}

/** Dollars → quota units (rounded). */
export function usdToQuota(usd: number, quotaPerUnit = DEFAULT_QUOTA_PER_UNIT): number {
  return Math.round(usd * quotaPerUnit);
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Epoch seconds → 'YYYY-MM-DD HH:mm:ss' in local time; 0/empty → '-'. */
export function formatTimestamp(ts: number | null | undefined): string {
  const v = Number(ts ?? 0);
  if (!v || !Number.isFinite(v)) return '-';
  const d = new Date(v * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Epoch seconds → value for an <input type="datetime-local"> ('YYYY-MM-DDTHH:mm'). */
export function toDateTimeLocal(ts: number): string {
  const d = new Date(ts * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** Parses a date text (datetime-local or 'YYYY-MM-DD HH:mm[:ss]') into epoch seconds, or null when invalid. */
export function parseDateText(text: string): number | null {
  const t = text.trim();
  if (!t) return null;
  const m = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/.exec(t);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4] ?? '0', m[5] ?? '0', m[6] ?? '0'].map(Number);
  const date = new Date(y, mo - 1, d, h, mi, s);
  if (date.getFullYear() !== y || date.getMonth() !== mo - 1 || date.getDate() !== d || h > 23 || mi > 59 || s > 59) return null;
  return Math.floor(date.getTime() / 1000);
}

export type TagColor =
  | 'grey'
  | 'green'
  | 'lime'
  | 'yellow'
  | 'orange'
  | 'red'
  | 'blue'
  | 'purple'
  | 'cyan'
  | 'teal'
  | 'pink'
  | 'indigo'
  | 'amber'
  | 'violet'
  | 'light-blue'
  | 'white';

/** Channel response time (milliseconds): 0 untested grey, ≤1 s green, ≤3 s lime, ≤5 s yellow, else red. */
export function responseTimeColor(ms: number | null | undefined): TagColor {
  const v = Number(ms ?? 0);
  if (!v) return 'grey';
  if (v <= 1000) return 'green';
  if (v <= 3000) return 'lime';
  if (v <= 5000) return 'yellow';
  return 'red';
}

/** Log use time (the `use_time` column, seconds): below 101 green, below 300 orange, else red. */
export function elapsedColor(seconds: number): TagColor {
  if (seconds < 101) return 'green';
  if (seconds < 300) return 'orange';
  return 'red';
}

/** First-token time (seconds): below 3 green, below 10 orange, else red. */
export function firstTokenColor(seconds: number): TagColor {
  if (seconds < 3) return 'green';
  if (seconds < 10) return 'orange';
  return 'red';
}

/** Group ratio: above 5 red, above 3 orange, above 1 blue, else green. */
export function groupRatioColor(ratio: number): TagColor {
  if (ratio > 5) return 'red';
  if (ratio > 3) return 'orange';
  if (ratio > 1) return 'blue';
  return 'green';
}

/** Stable colour for a free-text label (groups, model names), so the same label always looks the same. */
export function stringColor(label: string): TagColor {
  const palette: TagColor[] = ['amber', 'blue', 'cyan', 'green', 'indigo', 'light-blue', 'lime', 'orange', 'pink', 'purple', 'red', 'teal', 'violet', 'yellow'];
  let sum = 0;
  for (let i = 0; i < label.length; i++) sum = (sum * 31 + label.charCodeAt(i)) >>> 0;
  return palette[sum % palette.length];
}

/** Distinct tones for series (charts and their table): the most separable first. */
export const SERIES_TONES: TagColor[] = [
  'blue',
  'orange',
  'green',
  'purple',
  'cyan',
  'red',
  'amber',
  'pink',
  'teal',
  'indigo',
  'lime',
  'violet',
  'light-blue',
  'yellow',
];

/**
 * One tone per model for a whole screen, so a model keeps its colour across the chart tabs and the
 * table: models in the given order (e.g. by total spend) get the series tones in turn; beyond
 * them the tones repeat.
 */
export function modelTones(models: readonly string[]): Map<string, TagColor> {
  const out = new Map<string, TagColor>();
  for (const m of models) if (!out.has(m)) out.set(m, SERIES_TONES[out.size % SERIES_TONES.length]);
  return out;
}

/** Comma string ↔ list, trimming blanks and dropping empties / duplicates. */
export function splitComma(value: string | null | undefined): string[] {
  if (!value) return [];
  const out: string[] = [];
  for (const part of value.split(',')) {
    const t = part.trim();
    if (t && !out.includes(t)) out.push(t);
  }
  return out;
}

export function joinComma(list: readonly string[] | null | undefined): string {
  return splitComma((list ?? []).join(',')).join(',');
}

/** Safe JSON parse of a log's `other` / a channel's `other_info` (string or object). */
export function parseJsonObject(value: unknown): Record<string, unknown> {
  if (!value) return {};
  if (typeof value === 'object') return value as Record<string, unknown>;
  if (typeof value !== 'string') return {};
  try {
    const parsed = JSON.parse(value);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

/** Random alphanumeric string of `len` characters. */
export function randomSuffix(len = 6, rnd: () => number = Math.random): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < len; i++) s += chars[Math.floor(rnd() * chars.length)];
  return s;
}
