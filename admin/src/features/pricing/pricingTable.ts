/**
 * The pricing table: model prices per group, sorting and search. Pure functions, unit-tested in
 * pricingTable.test.ts.
 * Prices are in USD per 1M tokens (ratio × 2), or USD per call; display goes through the shared
 * quota formatter so the status's display_in_currency / quota_per_unit apply.
 */
import { compactNumber, type DisplaySettings } from '../../resources/shared/format';

export interface PricingEntry {
  model_name: string;
  /** 0 pay per usage (ratios), 1 pay per call (model_price). */
  quota_type: number;
  model_ratio: number;
  completion_ratio: number;
  model_price: number;
  enable_groups: string[];
  /** A price or ratio is configured (older servers omit it: then a non-zero ratio or price counts). */
  priced: boolean;
  /**
   * The viewer's calls are accepted: priced, or unpriced and the viewer accepts unset models (their
   * personal setting or self-use mode); such a model's model_ratio is the default ratio the relay
   * bills it at. Older servers omit it: then it follows `priced`.
   */
  callable: boolean;
}

export interface PricingAnswer {
  data: PricingEntry[];
  group_ratio: Record<string, number>;
  usable_group: Record<string, string>;
}

/** Normalises GET /api/pricing (missing or odd fields → safe defaults). */
export function normalisePricing(raw: unknown): PricingAnswer {
  const r = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const list = Array.isArray(r.data) ? r.data : [];
  const data: PricingEntry[] = [];
  for (const e of list) {
    if (!e || typeof e !== 'object') continue;
    const o = e as Record<string, unknown>;
    if (typeof o.model_name !== 'string' || !o.model_name) continue;
    const quotaType = Number(o.quota_type) === 1 ? 1 : 0;
    const priced = typeof o.priced === 'boolean' ? o.priced : quotaType === 1 ? num(o.model_price, 0) > 0 : num(o.model_ratio, 0) > 0;
    data.push({
      priced,
      callable: typeof o.callable === 'boolean' ? o.callable : priced,
      model_name: o.model_name,
      quota_type: Number(o.quota_type) === 1 ? 1 : 0,
      model_ratio: num(o.model_ratio, 0),
      completion_ratio: num(o.completion_ratio, 1),
      model_price: num(o.model_price, 0),
      enable_groups: Array.isArray(o.enable_groups) ? o.enable_groups.filter((g): g is string => typeof g === 'string') : [],
    });
  }
  const group_ratio: Record<string, number> = {};
  if (r.group_ratio && typeof r.group_ratio === 'object')
    for (const [g, v] of Object.entries(r.group_ratio as Record<string, unknown>)) if (Number.isFinite(Number(v))) group_ratio[g] = Number(v);
  const usable_group: Record<string, string> = {};
  if (r.usable_group && typeof r.usable_group === 'object')
    for (const [g, v] of Object.entries(r.usable_group as Record<string, unknown>)) usable_group[g] = String(v ?? '');
  return { data, group_ratio, usable_group };
}

function num(v: unknown, fallback: number): number {
  const n = Number(v);
  return v === null || v === undefined || v === '' || !Number.isFinite(n) ? fallback : n;
}

/** Ratio of a group (1 when the map lacks it). */
export function groupRatioOf(groupRatio: Record<string, number>, group: string): number {
  const v = groupRatio[group];
  return typeof v === 'number' && Number.isFinite(v) ? v : 1;
}

/** Prompt price per 1M tokens in USD: model ratio × 2 × group ratio. */
export function promptPrice(modelRatio: number, groupRatio: number): number {
  return modelRatio * 2 * groupRatio;
}

/** Completion price per 1M tokens in USD: prompt price × completion ratio. */
export function completionPrice(modelRatio: number, completionRatio: number, groupRatio: number): number {
  return promptPrice(modelRatio, groupRatio) * completionRatio;
}

/** Pay-per-call price in USD: model price × group ratio. */
export function perCallPrice(modelPrice: number, groupRatio: number): number {
  return modelPrice * groupRatio;
}

/** Pay-as-you-go cost in USD. */
export function usageCost(groupRatio: number, modelRatio: number, promptTokens: number, completionTokens: number, completionRatio: number): number {
  return (groupRatio * modelRatio * (promptTokens + completionTokens * completionRatio)) / 500000;
}

export interface PriceView {
  kind: 'usage' | 'call';
  /** USD per 1M prompt tokens (usage) */
  prompt?: number;
  /** USD per 1M completion tokens (usage) */
  completion?: number;
  /** USD per call (call) */
  call?: number;
}

export function priceOf(entry: PricingEntry, groupRatio: number): PriceView {
  if (entry.quota_type === 1) return { kind: 'call', call: perCallPrice(entry.model_price, groupRatio) };
  return {
    kind: 'usage',
    prompt: promptPrice(entry.model_ratio, groupRatio),
    completion: completionPrice(entry.model_ratio, entry.completion_ratio, groupRatio),
  };
}

/** Rounds away float noise (0.1 × 3 → 0.3) without losing small prices. */
function clean(n: number): number {
  return Number(n.toPrecision(12));
}

/**
 * A USD amount as displayed: with currency display '$' and up to 4 decimals (at least 2); without it
 * the amount in quota units (USD × quota_per_unit) as a compact number, like the shared formatter.
 */
export function formatPrice(usd: number, settings: DisplaySettings): string {
  const v = clean(usd);
  if (!settings.displayInCurrency) return compactNumber(clean(v * settings.quotaPerUnit));
  let s = v.toFixed(4).replace(/0{1,2}$/, '');
  if (Number(s) === 0 && v > 0) s = v.toPrecision(2);
  return `$${s}`;
}

/** Models whose names start with gpt first, then by name. */
export function sortModels(list: readonly PricingEntry[]): PricingEntry[] {
  return [...list].sort((a, b) => {
    const ga = a.model_name.toLowerCase().startsWith('gpt') ? 0 : 1;
    const gb = b.model_name.toLowerCase().startsWith('gpt') ? 0 : 1;
    if (ga !== gb) return ga - gb;
    return a.model_name.localeCompare(b.model_name);
  });
}

const squash = (s: string) => s.toLowerCase().replace(/[\s\-_.:/]+/g, '');

/**
 * Fuzzy match on the model name: case-insensitive, separators ignored, the query's characters in
 * order (so 'gpt4o' finds 'gpt-4o-mini', '4omini' too). An empty query matches everything.
 */
export function fuzzyMatch(name: string, query: string): boolean {
  const q = squash(query);
  if (!q) return true;
  const n = squash(name);
  if (n.includes(q)) return true;
  let i = 0;
  for (const ch of n) if (ch === q[i] && ++i === q.length) return true;
  return false;
}

export function filterModels(list: readonly PricingEntry[], query: string): PricingEntry[] {
  return list.filter((e) => fuzzyMatch(e.model_name, query));
}

/** Can the viewer call the model from the viewed group? */
export function isAvailable(entry: PricingEntry, group: string): boolean {
  const state = availability(entry, group);
  return state === 'ok' || state === 'default';
}

/**
 * Why a model can or cannot be called from the viewed group: 'unpriced' when no price or ratio is
 * configured and the viewer does not accept unset models (the relay refuses it), 'group' when no
 * channel serves it to that group, 'default' when it is callable without a price of its own (billed
 * at the default ratio the answer carries), else 'ok'.
 */
export function availability(entry: PricingEntry, group: string): 'ok' | 'default' | 'unpriced' | 'group' {
  if (!entry.callable) return 'unpriced';
  if (!entry.enable_groups.includes(group)) return 'group';
  return entry.priced ? 'ok' : 'default';
}

/** Models of a list that have no entry in the pricing answer's priced set (for the fetch-models warning). */
export function unpricedModels(models: readonly string[], pricing: readonly PricingEntry[], ratios?: { price: object; ratio: object }): string[] {
  const priced = new Set(pricing.filter((e) => e.priced).map((e) => e.model_name));
  const has = (o: object | undefined, k: string) => !!o && Object.prototype.hasOwnProperty.call(o, k);
  return models.filter((m) => !priced.has(m) && !(ratios && (has(ratios.price, m) || has(ratios.ratio, m))));
}

/**
 * The groups shown for a model: those serving it that the viewer may use (usable_group), or all of
 * them when the answer has no usable map.
 */
export function usableGroupsOf(entry: PricingEntry, usable: Record<string, string>): string[] {
  const keys = Object.keys(usable);
  if (!keys.length) return entry.enable_groups;
  return entry.enable_groups.filter((g) => keys.includes(g));
}

/** The group viewed at first: the user's own group, else 'default'. */
export function initialGroup(userGroup: string | undefined | null): string {
  return userGroup && userGroup.trim() ? userGroup : 'default';
}

/** Text of the copied selection: the model names, comma separated. */
export function selectionText(names: readonly string[]): string {
  return names.join(',');
}
