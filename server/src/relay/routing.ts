import type { AppContext } from '../context';
import { channelCache } from '../services/invalidate';
import { routingRows, type ChannelRow } from '../repositories/channels';
import type { ChannelInfo } from './types';
import { channelType } from '../channels/catalogue';

/** A routable channel with its JSON columns parsed once per table load. */
export interface ChannelEntry {
  info: ChannelInfo;
  priority: number;
  weight: number;
  autoBan: boolean;
  keys: string[];
  modelMapping: Record<string, string> | null;
  statusCodeMapping: Record<string, string> | null;
  paramOverride: Record<string, unknown> | null;
  /** Prompts above this many tokens skip the channel (0 = no limit). */
  maxInputTokens: number;
}

export interface Tier {
  priority: number;
  channels: ChannelEntry[];
  /** Weights as used for the draw (all 1 when every weight in the tier is 0). */
  weights: number[];
  total: number;
}

export interface RouteTable {
  /** `${group}\n${model}` → tiers, highest priority first (enabled abilities of enabled channels). */
  routes: Map<string, Tier[]>;
  /** Every model named by any ability, enabled or not (unknown model → 404). */
  knownModels: Set<string>;
  /** group → models with at least one enabled channel. */
  modelsByGroup: Map<string, Set<string>>;
  channels: Map<number, ChannelEntry>;
}

function parseObj<T>(raw: unknown): T | null {
  if (typeof raw !== 'string' || !raw.trim()) return null;
  try {
    const v = JSON.parse(raw) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length ? (v as T) : null;
  } catch {
    return null;
  }
}

/**
 * A channel's keys: one per line; for a kind whose key is JSON (Vertex AI), a whole JSON object
 * (a service account as Google downloads it, multi-line) is one key, a JSON array of them several.
 */
export function channelKeys(type: number, raw: string): string[] {
  const t = raw.trim();
  if (channelType(type)?.keyFormat === 'json' && (t.startsWith('{') || t.startsWith('['))) {
    try {
      const j: unknown = JSON.parse(t);
      if (Array.isArray(j)) return j.filter((x) => x && typeof x === 'object').map((x) => JSON.stringify(x));
      if (j && typeof j === 'object') return [JSON.stringify(j)];
    } catch {
      /* not one JSON document: one key per line */
    }
  }
  return t
    .split('\n')
    .map((k) => k.trim())
    .filter(Boolean);
}

export function channelEntry(row: ChannelRow): ChannelEntry {
  const keys = channelKeys(Number(row.type), String(row.key ?? ''));
  return {
    info: {
      id: Number(row.id),
      type: Number(row.type),
      name: String(row.name ?? ''),
      key: keys[0] ?? '',
      baseUrl: String(row.base_url ?? '')
        .trim()
        .replace(/\/+$/, ''),
      organization: String(row.openai_organization ?? ''),
      other: String(row.other ?? ''),
      setting: parseObj<Record<string, unknown>>(row.setting) ?? {},
    },
    priority: Number(row.priority ?? 0),
    weight: Math.max(0, Number(row.weight ?? 0)),
    autoBan: Number(row.auto_ban) === 1,
    keys,
    modelMapping: parseObj<Record<string, string>>(row.model_mapping),
    statusCodeMapping: parseObj<Record<string, string>>(row.status_code_mapping),
    paramOverride: parseObj<Record<string, unknown>>(row.param_override),
    maxInputTokens: Math.max(0, Number(row.max_input_tokens ?? 0) || 0),
  };
}

async function loadTable(app: AppContext): Promise<RouteTable> {
  const { abilities, channels } = await routingRows(app.knex);
  const byId = new Map<number, ChannelEntry>();
  for (const c of channels) byId.set(Number(c.id), channelEntry(c));
  const knownModels = new Set<string>();
  const grouped = new Map<string, Map<number, ChannelEntry[]>>();
  const modelsByGroup = new Map<string, Set<string>>();
  for (const a of abilities) {
    knownModels.add(a.model);
    const enabled = a.enabled === true || a.enabled === 1 || a.enabled === '1';
    const ch = byId.get(Number(a.channel_id));
    if (!enabled || !ch) continue;
    const key = `${a.group}\n${a.model}`;
    let tiers = grouped.get(key);
    if (!tiers) grouped.set(key, (tiers = new Map()));
    const prio = Number(a.priority ?? ch.priority);
    const list = tiers.get(prio);
    if (list) list.push(ch);
    else tiers.set(prio, [ch]);
    let ms = modelsByGroup.get(a.group);
    if (!ms) modelsByGroup.set(a.group, (ms = new Set()));
    ms.add(a.model);
  }
  const routes = new Map<string, Tier[]>();
  for (const [key, tiers] of grouped) {
    const list: Tier[] = [];
    for (const [priority, chans] of tiers) {
      chans.sort((x, y) => x.info.id - y.info.id);
      const allZero = chans.every((c) => c.weight === 0);
      const weights = chans.map((c) => (allZero ? 1 : c.weight));
      list.push({ priority, channels: chans, weights, total: weights.reduce((s, w) => s + w, 0) });
    }
    list.sort((a, b) => b.priority - a.priority);
    routes.set(key, list);
  }
  return { routes, knownModels, modelsByGroup, channels: byId };
}

interface TableHolder {
  p: Promise<RouteTable>;
  /** Set once `p` resolved: the hot path then reads it without awaiting. */
  table?: RouteTable;
}

/** The route table when it is loaded and fresh (no await on the hot path), else undefined. */
export function loadedRouteTable(app: AppContext): RouteTable | undefined {
  return (channelCache(app).peek('table') as TableHolder | undefined)?.table;
}

/** The routing table (cached per process; H2's channel writes call invalidateChannels). */
export async function routeTable(app: AppContext): Promise<RouteTable> {
  const cache = channelCache(app);
  const loaded = loadedRouteTable(app);
  if (loaded) return loaded;
  // The cached value is the load promise itself, so concurrent cold callers share one load.
  const holder = (await cache.get('table', async (): Promise<TableHolder> => {
    const h: TableHolder = { p: loadTable(app) };
    h.p.then(
      (t) => (h.table = t),
      () => undefined,
    );
    return h;
  })) as TableHolder;
  try {
    return await holder.p;
  } catch (err) {
    await cache.invalidate('table');
    throw err;
  }
}

export function tiersFor(table: RouteTable, group: string, model: string): Tier[] | undefined {
  return table.routes.get(`${group}\n${model}`);
}

/**
 * Picks the channel for attempt `attempt` (0 = first try): tier `attempt` (clamped to the last),
 * weighted random among its channels not yet tried; when a tier is used up, the next lower one,
 * then higher ones. Returns undefined when every channel was tried.
 */
export function pickChannel(tiers: Tier[], attempt: number, tried: ReadonlySet<number>, accept?: (c: ChannelEntry) => boolean): ChannelEntry | undefined {
  if (!tiers.length) return undefined;
  const start = Math.min(attempt, tiers.length - 1);
  const order = [...tiers.slice(start), ...tiers.slice(0, start).reverse()];
  for (const tier of order) {
    const c = drawFromTier(tier, tried, accept);
    if (c) return c;
  }
  return undefined;
}

function drawFromTier(tier: Tier, tried: ReadonlySet<number>, accept?: (c: ChannelEntry) => boolean): ChannelEntry | undefined {
  let total = 0;
  let candidates = 0;
  for (let i = 0; i < tier.channels.length; i++) {
    const c = tier.channels[i]!;
    if (tried.has(c.info.id) || (accept && !accept(c))) continue;
    candidates++;
    total += tier.weights[i]!;
  }
  if (!candidates) return undefined;
  if (total <= 0) {
    // Only zero-weight channels left in a weighted tier: equal chance among them.
    const left = tier.channels.filter((c) => !tried.has(c.info.id) && (!accept || accept(c)));
    return left[Math.floor(Math.random() * left.length)];
  }
  let r = Math.random() * total;
  let last: ChannelEntry | undefined;
  for (let i = 0; i < tier.channels.length; i++) {
    const c = tier.channels[i]!;
    const w = tier.weights[i]!;
    if (tried.has(c.info.id) || (accept && !accept(c)) || w <= 0) continue;
    last = c;
    if (r < w) return c;
    r -= w;
  }
  return last;
}

/** Which upstream key this call uses (multi-key channels: one per line, random). */
export function pickKey(c: ChannelEntry): string {
  if (c.keys.length <= 1) return c.keys[0] ?? '';
  return c.keys[Math.floor(Math.random() * c.keys.length)]!;
}
