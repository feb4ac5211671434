/**
 * Pure logic of the settings page: option diff and save order, validations, and the ratio
 * editor's transforms (options JSON ↔ rows, pricing mode switching, batch set).
 */

export type OptionMap = Record<string, string>;

/** `GET /api/option/` answer (list of {key,value}) → map. */
export function toOptionMap(list: unknown): OptionMap {
  const out: OptionMap = {};
  if (!Array.isArray(list)) return out;
  for (const item of list) {
    if (item && typeof item === 'object' && typeof (item as { key?: unknown }).key === 'string') {
      const v = (item as { value?: unknown }).value;
      out[(item as { key: string }).key] = v == null ? '' : String(v);
    }
  }
  return out;
}

/** Switch keys end in "enabled" (any case): stored as the text true/false. */
export const isSwitchKey = (key: string): boolean => /enabled$/i.test(key);

/** Secret keys (never answered by the server; sent only when the admin typed a value). */
export const isSecretKey = (key: string): boolean => /(Secret|Token|Key|secret)$/.test(key);

export interface OptionChange {
  key: string;
  value: string;
}

/**
 * The keys to save, in order, one call each. The server refuses some switches until their settings are stored (checkOptionDependencies),
 * so switches turning OFF go first, then the changed non-switch keys, then switches turning ON.
 * Secret keys are included only when non-empty. Values are compared as text.
 */
export function changedOptions(initial: OptionMap, current: OptionMap): OptionChange[] {
  const offs: OptionChange[] = [];
  const others: OptionChange[] = [];
  const ons: OptionChange[] = [];
  for (const key of Object.keys(current)) {
    const value = current[key] ?? '';
    if (isSecretKey(key)) {
      if (value !== '') others.push({ key, value });
      continue;
    }
    if ((initial[key] ?? '') === value) continue;
    if (isSwitchKey(key)) (value === 'true' ? ons : offs).push({ key, value });
    else others.push({ key, value });
  }
  return [...offs, ...others, ...ons];
}

export type SaveOutcome = 'nothing' | 'ok' | 'partial' | 'failed';

export interface SaveResult {
  outcome: SaveOutcome;
  /** Keys stored successfully. */
  saved: string[];
  /** Server messages of the refused keys. */
  errors: Array<{ key: string; message: string }>;
}

/**
 * Saves the changes one PUT per key, in order. Every key is attempted; the outcome tells which
 * message to show (保存成功 / 部分保存失败，请重试 / 保存失败，请重试).
 */
export async function saveChanges(changes: OptionChange[], put: (key: string, value: string) => Promise<void>): Promise<SaveResult> {
  if (!changes.length) return { outcome: 'nothing', saved: [], errors: [] };
  const saved: string[] = [];
  const errors: SaveResult['errors'] = [];
  for (const c of changes) {
    try {
      await put(c.key, c.value);
      saved.push(c.key);
    } catch (e) {
      errors.push({ key: c.key, message: e instanceof Error ? e.message : String(e) });
    }
  }
  const outcome: SaveOutcome = !errors.length ? 'ok' : saved.length ? 'partial' : 'failed';
  return { outcome, saved, errors };
}

/** True when the text parses as JSON (empty text is accepted: the server keeps its default shape). */
export function isJsonText(text: string): boolean {
  if (text.trim() === '') return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Every non-empty JSON key among `keys` that does not parse. */
export function invalidJsonKeys(values: OptionMap, keys: readonly string[]): string[] {
  return keys.filter((k) => k in values && !isJsonText(values[k] ?? ''));
}

/** Trailing slashes removed (server address, worker URL, pay address, chat-app server address). */
export const stripTrailingSlash = (s: string): string => s.trim().replace(/\/+$/, '');

const DOMAIN_RE = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))+$/;

/** Whitelist domain check: 'format' (not a domain), 'duplicate', or null (ok). */
export function checkWhitelistDomain(list: readonly string[], domain: string): 'format' | 'duplicate' | null {
  const d = domain.trim().toLowerCase();
  if (!DOMAIN_RE.test(d)) return 'format';
  if (list.some((x) => x.toLowerCase() === d)) return 'duplicate';
  return null;
}

export const isHttpUrl = (s: string): boolean => /^https?:\/\//i.test(s.trim());

/** Endpoints of an OIDC discovery document (null when it has none of them). */
export function oidcEndpoints(doc: unknown): { authorization_endpoint: string; token_endpoint: string; user_info_endpoint: string } | null {
  if (!doc || typeof doc !== 'object') return null;
  const d = doc as Record<string, unknown>;
  const s = (v: unknown) => (typeof v === 'string' ? v : '');
  const out = { authorization_endpoint: s(d.authorization_endpoint), token_endpoint: s(d.token_endpoint), user_info_endpoint: s(d.userinfo_endpoint) };
  return out.authorization_endpoint || out.token_endpoint || out.user_info_endpoint ? out : null;
}

/** Number checks of the rate-limit, models and ping forms; answers an error key or null. */
export function numberRule(key: string, raw: string): string | null {
  const v = raw.trim();
  const n = Number(v);
  const num = v !== '' && Number.isFinite(n);
  switch (key) {
    case 'ModelRequestRateLimitDurationMinutes':
    case 'ModelRequestRateLimitCount':
      return num && n >= 0 ? null : 'feat.setting.err.min0';
    case 'ModelRequestRateLimitSuccessCount':
      return num && n >= 1 ? null : 'feat.setting.err.min1';
    case 'gemini.thinking_adapter_budget_tokens_percentage':
    case 'claude.thinking_adapter_budget_tokens_percentage':
      return num && n >= 0.1 && n <= 1 ? null : 'feat.setting.err.budget';
    case 'general_setting.ping_interval_seconds':
      return num && n >= 1 ? null : 'feat.setting.err.min1';
    default:
      return null;
  }
}

/* ───────────────────────── ratio editor ───────────────────────── */

export const RATIO_OPTION_KEYS = ['ModelPrice', 'ModelRatio', 'CompletionRatio', 'CacheRatio'] as const;

/** A model's pricing row. Empty string = not set. */
export interface PriceRow {
  name: string;
  /** Fixed USD per request (ModelPrice). */
  price: string;
  /** Input ratio (ModelRatio); 1 ≙ $2 / 1M tokens. */
  ratio: string;
  completionRatio: string;
  cacheRatio: string;
}

export type PricingMode = 'per-token' | 'per-request';

export const rowMode = (r: PriceRow): PricingMode => (r.price !== '' ? 'per-request' : 'per-token');

function parseMap(text: string | undefined): Record<string, number> {
  if (!text || !text.trim()) return {};
  try {
    const v = JSON.parse(text) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
    const out: Record<string, number> = {};
    for (const [k, n] of Object.entries(v as Record<string, unknown>)) if (typeof n === 'number' && Number.isFinite(n)) out[k] = n;
    return out;
  } catch {
    return {};
  }
}

/** The four pricing options → rows, sorted by name. */
export function rowsFromOptions(o: OptionMap): PriceRow[] {
  const price = parseMap(o.ModelPrice);
  const ratio = parseMap(o.ModelRatio);
  const comp = parseMap(o.CompletionRatio);
  const cache = parseMap(o.CacheRatio);
  const names = new Set([...Object.keys(price), ...Object.keys(ratio), ...Object.keys(comp), ...Object.keys(cache)]);
  const s = (m: Record<string, number>, k: string) => (k in m ? String(m[k]) : '');
  return [...names].sort().map((name) => ({ name, price: s(price, name), ratio: s(ratio, name), completionRatio: s(comp, name), cacheRatio: s(cache, name) }));
}

const isNum = (s: string) => s.trim() !== '' && Number.isFinite(Number(s));

/**
 * Rows → the four pricing options (pretty JSON). A row with a fixed price is written to ModelPrice
 * only (it takes precedence); other rows write their set ratios.
 */
export function optionsFromRows(rows: readonly PriceRow[]): Record<(typeof RATIO_OPTION_KEYS)[number], string> {
  const price: Record<string, number> = {};
  const ratio: Record<string, number> = {};
  const comp: Record<string, number> = {};
  const cache: Record<string, number> = {};
  for (const r of rows) {
    if (!r.name.trim()) continue;
    if (isNum(r.price)) {
      price[r.name] = Number(r.price);
      continue;
    }
    if (isNum(r.ratio)) ratio[r.name] = Number(r.ratio);
    if (isNum(r.completionRatio)) comp[r.name] = Number(r.completionRatio);
    if (isNum(r.cacheRatio)) cache[r.name] = Number(r.cacheRatio);
  }
  const j = (m: Record<string, number>) => JSON.stringify(m, null, 2);
  return { ModelPrice: j(price), ModelRatio: j(ratio), CompletionRatio: j(comp), CacheRatio: j(cache) };
}

/** Switching to per-request clears the ratios; switching to per-token clears the fixed price. */
export function setRowMode(r: PriceRow, mode: PricingMode): PriceRow {
  if (mode === 'per-request') return { ...r, ratio: '', completionRatio: '', cacheRatio: '', price: r.price !== '' ? r.price : '0' };
  return { ...r, price: '' };
}

const round = (n: number) => Number(n.toFixed(6));

/** USD per 1M input tokens = ratio × 2 ('' when no ratio). */
export function tokenPrice(r: PriceRow): string {
  return isNum(r.ratio) ? String(round(Number(r.ratio) * 2)) : '';
}
/** USD per 1M output tokens = input price × completion ratio (completion ratio 1 when unset). */
export function completionTokenPrice(r: PriceRow): string {
  if (!isNum(r.ratio)) return '';
  const c = isNum(r.completionRatio) ? Number(r.completionRatio) : 1;
  return String(round(Number(r.ratio) * 2 * c));
}
/** Per-token by price: input and output price per 1M → ratio and completion ratio. */
export function ratiosFromPrices(inputPrice: string, outputPrice: string): { ratio: string; completionRatio: string } | 'nan' {
  if (!isNum(inputPrice) || (outputPrice.trim() !== '' && !isNum(outputPrice))) return 'nan';
  const input = Number(inputPrice);
  const ratio = round(input / 2);
  if (outputPrice.trim() === '') return { ratio: String(ratio), completionRatio: '' };
  const completion = input === 0 ? 0 : round(Number(outputPrice) / input);
  return { ratio: String(ratio), completionRatio: String(completion) };
}

/** Field value check of the pricing editor: '' or a number ≥ 0, else 请输入数字. */
export const numericError = (v: string): string | null => (v.trim() === '' || (isNum(v) && Number(v) >= 0) ? null : 'feat.setting.ratio.err.number');

/** Adds a model (empty ratios, per-token). Duplicate → 模型名称已存在. */
export function addModel(rows: readonly PriceRow[], name: string): PriceRow[] | { error: string } {
  const n = name.trim();
  if (!n) return { error: 'feat.setting.ratio.err.name_required' };
  if (rows.some((r) => r.name === n)) return { error: 'feat.setting.ratio.err.duplicate' };
  return [{ name: n, price: '', ratio: '', completionRatio: '', cacheRatio: '' }, ...rows];
}

export type BatchField = 'price' | 'ratio' | 'completionRatio' | 'cacheRatio' | 'both';

/**
 * Batch set on the selected rows. `price` switches the rows to per-request, the ratio fields to
 * per-token; `both` (the combined mode) needs model ratio and completion ratio.
 */
export function batchSet(
  rows: readonly PriceRow[],
  selected: readonly string[],
  field: BatchField,
  value: string,
  value2 = '',
): PriceRow[] | { error: string } {
  if (!selected.length) return { error: 'feat.setting.ratio.err.no_selection' };
  if (field === 'both') {
    if (value.trim() === '' || value2.trim() === '') return { error: 'feat.setting.ratio.err.both' };
    if (!isNum(value) || !isNum(value2)) return { error: 'feat.setting.ratio.err.invalid' };
  } else {
    if (value.trim() === '') return { error: 'feat.setting.ratio.err.fill' };
    if (!isNum(value)) return { error: 'feat.setting.ratio.err.invalid' };
  }
  const sel = new Set(selected);
  return rows.map((r) => {
    if (!sel.has(r.name)) return r;
    const v = String(Number(value));
    if (field === 'price') return { ...setRowMode(r, 'per-request'), price: v };
    const base = setRowMode(r, 'per-token');
    if (field === 'both') return { ...base, ratio: v, completionRatio: String(Number(value2)) };
    return { ...base, [field]: v };
  });
}

/** Rows whose name contains the search text (case-insensitive). */
export function filterRows(rows: readonly PriceRow[], q: string): PriceRow[] {
  const s = q.trim().toLowerCase();
  return s ? rows.filter((r) => r.name.toLowerCase().includes(s)) : [...rows];
}

/** Enabled models with neither a ratio nor a fixed price (the unset-ratio list). */
export function unsetModels(enabled: readonly string[], o: OptionMap): string[] {
  const price = parseMap(o.ModelPrice);
  const ratio = parseMap(o.ModelRatio);
  return [...new Set(enabled)].filter((m) => !(m in price) && !(m in ratio)).sort();
}

/** Ten per page: the slice of a list for a 1-based page. */
export function pageOf<T>(list: readonly T[], page: number, size: number): T[] {
  const p = Math.max(1, page);
  return list.slice((p - 1) * size, p * size);
}

/** Epoch seconds of the default clear-logs time (one month before now). */
export function oneMonthAgo(now: Date = new Date()): Date {
  const d = new Date(now.getTime());
  d.setMonth(d.getMonth() - 1);
  return d;
}

/** Is `latest` (a release tag like v1.2.3) newer than `current`? Unparseable → different text = newer. */
export function isNewerVersion(current: string, latest: string): boolean {
  const nums = (v: string) => (v.replace(/^v/i, '').match(/\d+/g) ?? []).map(Number);
  const a = nums(current);
  const b = nums(latest);
  if (!a.length || !b.length) return !!latest && latest !== current;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (y !== x) return y > x;
  }
  return false;
}

/** Canonical JSON text (object keys sorted) for comparing option values semantically. */
export function canonicalJson(text: string | undefined): string {
  const sortDeep = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortDeep);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v as object).sort()) out[k] = sortDeep((v as Record<string, unknown>)[k]);
      return out;
    }
    return v;
  };
  try {
    return JSON.stringify(sortDeep(JSON.parse(text ?? '')));
  } catch {
    return text ?? '';
  }
}

/** The pricing options whose content the visual editor changed (only those are saved). */
export function changedRatioOptions(stored: OptionMap, rows: readonly PriceRow[]): OptionChange[] {
  const next = optionsFromRows(rows);
  return RATIO_OPTION_KEYS.filter((k) => canonicalJson(stored[k] || '{}') !== canonicalJson(next[k])).map((k) => ({ key: k, value: next[k] }));
}

export type SettingTab = 'operation' | 'ratelimit' | 'models' | 'system' | 'other';

/** Tabs of /setting: admins see operation, ratelimit, models, other; system is root's; non-admins none. */
export function visibleTabs(admin: boolean, root: boolean): SettingTab[] {
  if (!admin) return [];
  // Admins change the operation options; the system and site-content tabs are root's (the server
  // enforces the same split: seeds/optionAccess.ts).
  return root ? ['operation', 'ratelimit', 'models', 'system', 'other'] : ['operation', 'ratelimit', 'models'];
}
