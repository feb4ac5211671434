import type { AppContext } from '../context';
import { channelCache } from '../services/invalidate';
import { routingRows, type ChannelRow } from '../repositories/channels';
import type { ChannelInfo } from '../relay/types';
import { channelType } from './catalogue';
import { keyStatus, parseChannelInfo, type MultiKeyMode } from '../repositories/channelInfo';
import { KEY_STATUS } from '../repositories/channelStatus';
import { healthBoard, type HealthBoard, type TargetHealth } from './healthBoard';

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
  /** More than one key: each call uses one of `keyIdx`. */
  multiKey: boolean;
  keyMode: MultiKeyMode;
  /** Indexes (into `keys`) of the enabled keys; a disabled key is never here, so never used. */
  keyIdx: number[];
  /** Breaker and health of the channel, and of each key (by key index), from the app's board. */
  health?: TargetHealth;
  keyHealth?: TargetHealth[];
  /** Round-robin position (polling mode). */
  rr: number;
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

export function channelEntry(row: ChannelRow, board?: HealthBoard): ChannelEntry {
  const keys = channelKeys(Number(row.type), String(row.key ?? ''));
  const ki = parseChannelInfo(row.channel_info);
  const keyIdx: number[] = [];
  for (let i = 0; i < keys.length; i++) if (keyStatus(ki, i) === KEY_STATUS.enabled) keyIdx.push(i);
  const id = Number(row.id);
  return {
    info: {
      id: Number(row.id),
      type: Number(row.type),
      name: String(row.name ?? ''),
      key: keys[keyIdx[0] ?? 0] ?? '',
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
    multiKey: keys.length > 1,
    keyMode: ki.multi_key_mode,
    keyIdx,
    health: board?.target(id),
    keyHealth: board && keys.length > 1 ? keys.map((_, i) => board.target(id, i)) : undefined,
    rr: 0,
  };
}

async function loadTable(app: AppContext): Promise<RouteTable> {
  const { abilities, channels } = await routingRows(app.knex);
  const byId = new Map<number, ChannelEntry>();
  const board = healthBoard(app);
  for (const c of channels) {
    const e = channelEntry(c, board);
    // Every key disabled: nothing to send with (the channel itself is auto-disabled too).
    if (e.keyIdx.length) byId.set(Number(c.id), e);
  }
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

/** Per-call routing state: what was tried, and the clock read once per pick. */
export interface PickState {
  /** Channels not to pick again (attempted, or failed for a reason of the whole channel). */
  tried: ReadonlySet<number>;
  /** `${channel}:${key}` already attempted in this call. */
  triedKeys?: ReadonlySet<string>;
  board?: HealthBoard;
  now?: number;
}

/**
 * Picks the channel for attempt `attempt` (0 = first try): tier `attempt` (clamped to the last),
 * weighted random among its channels not yet tried (weight × health score when health-aware
 * routing is on; channels whose breaker is open, or with no usable key, are skipped); when a
 * tier is used up, the next lower one, then higher ones. Undefined when none is left.
 */
export function pickChannel(
  tiers: Tier[],
  attempt: number,
  tried: ReadonlySet<number>,
  accept?: (c: ChannelEntry) => boolean,
  state?: Omit<PickState, 'tried'>,
): ChannelEntry | undefined {
  if (!tiers.length) return undefined;
  const st: PickState = { tried, ...state };
  const start = Math.min(attempt, tiers.length - 1);
  for (let i = start; i < tiers.length; i++) {
    const c = drawFromTier(tiers[i]!, st, accept);
    if (c) return c;
  }
  for (let i = start - 1; i >= 0; i--) {
    const c = drawFromTier(tiers[i]!, st, accept);
    if (c) return c;
  }
  return undefined;
}

/** Can this channel take a call now: breaker, and at least one enabled key not tried whose breaker lets it through. */
export function usable(c: ChannelEntry, st: PickState): boolean {
  const b = st.board;
  if (!b) return true;
  const now = st.now ?? Date.now();
  if (c.health && !b.available(c.health, now)) return false;
  if (!c.keyHealth) return true;
  for (const i of c.keyIdx) {
    if (st.triedKeys?.has(`${c.info.id}:${i}`)) continue;
    if (b.available(c.keyHealth[i]!, now)) return true;
  }
  return false;
}

function drawFromTier(tier: Tier, st: PickState, accept?: (c: ChannelEntry) => boolean): ChannelEntry | undefined {
  const { tried, board } = st;
  const chans = tier.channels;
  // One pass decides which channels may take the call (each checked once: `accept` and the
  // breaker checks are the costly part of a draw) and the best latency among them.
  const cands: ChannelEntry[] = [];
  const weights: number[] = [];
  let best = Infinity;
  for (let i = 0; i < chans.length; i++) {
    const c = chans[i]!;
    if (tried.has(c.info.id) || !usable(c, st) || (accept && !accept(c))) continue;
    cands.push(c);
    weights.push(tier.weights[i]!);
    const h = c.health;
    if (h && h.samples && h.ttfb > 0 && h.ttfb < best) best = h.ttfb;
  }
  if (cands.length <= 1) return cands[0];
  // Health-aware: weight × score, latency scored against the best candidate of this draw.
  if (board && board.settings.healthAware) {
    if (best === Infinity) best = 0;
    for (let j = 0; j < cands.length; j++) {
      const h = cands[j]!.health;
      if (h) weights[j] = weights[j]! * board.score(h, best);
    }
  }
  let total = 0;
  for (const w of weights) total += w;
  // Only zero-weight channels left in a weighted tier: equal chance among them.
  if (total <= 0) return cands[Math.floor(Math.random() * cands.length)];
  let r = Math.random() * total;
  let last: ChannelEntry | undefined;
  for (let j = 0; j < cands.length; j++) {
    const w = weights[j]!;
    if (w <= 0) continue;
    last = cands[j];
    if (r < w) return last;
    r -= w;
  }
  return last;
}

/**
 * Which key this call uses (index into `keys`): among the enabled keys whose breaker lets a call
 * through and that this call has not tried, at random or in turn (polling). -1 when none is left.
 */
export function pickKeyIndex(c: ChannelEntry, st?: Omit<PickState, 'tried'>): number {
  if (!c.multiKey) return c.keyIdx.length ? c.keyIdx[0]! : -1;
  const b = st?.board;
  const now = st?.now ?? Date.now();
  const free = (i: number) => !st?.triedKeys?.has(`${c.info.id}:${i}`) && (!b || !c.keyHealth || b.available(c.keyHealth[i]!, now));
  const n = c.keyIdx.length;
  if (c.keyMode === 'polling') {
    for (let j = 0; j < n; j++) {
      const i = c.keyIdx[(c.rr + j) % n]!;
      if (free(i)) {
        c.rr = (c.rr + j + 1) % n;
        return i;
      }
    }
    return -1;
  }
  let count = 0;
  for (const i of c.keyIdx) if (free(i)) count++;
  if (!count) return -1;
  let r = Math.floor(Math.random() * count);
  for (const i of c.keyIdx) {
    if (!free(i)) continue;
    if (r-- === 0) return i;
  }
  return -1;
}

/** Which upstream key this call uses (count_tokens and other side calls: any enabled key). */
export function pickKey(c: ChannelEntry): string {
  const i = pickKeyIndex(c);
  return c.keys[i < 0 ? 0 : i] ?? '';
}
