import type { DataProvider, GetListParams, Identifier, RaRecord } from 'react-admin';
import { api as browserApi, qs, type Api } from '../lib/http';
import { isAdmin as storedIsAdmin } from '../lib/storage';
import { bulkItemsFromAnswer, failIfAny, runEach, type BulkItem } from '../lib/bulk';

/**
 * react-admin resource names are the console paths (`/channel`, `/token`, …),
 * each mapped to its API prefix. The plural spellings are accepted as aliases.
 */
export const RESOURCES = {
  channel: '/api/channel',
  token: '/api/token',
  redemption: '/api/redemption',
  user: '/api/user',
  log: '/api/log',
  /** Admin list of online top-up orders (read-only). */
  topup_order: '/api/user/topup',
  /** Drawing log (read-only; /api/mj/ for admins, /api/mj/self/ for users). */
  midjourney: '/api/mj',
  /** Creative task log (read-only; /api/task/ for admins, /api/task/self for users). */
  task: '/api/task',
} as const;

export type ResourceName = keyof typeof RESOURCES;

const ALIASES: Record<string, ResourceName> = {
  channels: 'channel',
  tokens: 'token',
  redemptions: 'redemption',
  users: 'user',
  logs: 'log',
  topup_orders: 'topup_order',
};

export function resourceName(resource: string): ResourceName {
  if (resource in RESOURCES) return resource as ResourceName;
  const alias = ALIASES[resource];
  if (alias) return alias;
  throw new Error(`Unknown resource: ${resource}`);
}

/** Filters that switch a list to its `/search` endpoint, and the extra query keys each list passes. */
const SEARCH_KEYS: Record<Exclude<ResourceName, 'log' | 'topup_order' | TaskLogResource>, string[]> = {
  channel: ['keyword', 'group', 'model'],
  user: ['keyword', 'group'],
  token: ['keyword', 'token'],
  redemption: ['keyword'],
};
/** A search value as the server takes it: text trimmed, and a pasted token key without its `sk-` prefix. */
function searchValue(res: ResourceName, key: string, v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const text = v.trim();
  return res === 'token' && key === 'token' ? text.replace(/^sk-/, '') : text;
}
const PASS_KEYS: Partial<Record<ResourceName, string[]>> = {
  channel: ['id_sort', 'tag_mode'],
};
export const LOG_FILTERS = ['type', 'username', 'token_name', 'model_name', 'start_timestamp', 'end_timestamp', 'channel', 'group'] as const;
export const TOPUP_ORDER_FILTERS = ['username', 'status', 'start_timestamp', 'end_timestamp'] as const;

/**
 * The drawing and task logs: their list filters are the server's query keys (drawing times in
 * milliseconds, task times in seconds); the channel is an admin filter. The server answers a plain
 * array without a total, so these lists page by "is there a next page": a full page says maybe.
 */
export type TaskLogResource = 'midjourney' | 'task';
export const TASK_LOG_FILTERS: Record<TaskLogResource, readonly string[]> = {
  midjourney: ['channel_id', 'mj_id', 'start_timestamp', 'end_timestamp'],
  task: ['channel_id', 'task_id', 'start_timestamp', 'end_timestamp'],
};
const isTaskLog = (res: ResourceName): res is TaskLogResource => res in TASK_LOG_FILTERS;

export interface ListPage {
  items?: unknown[];
  total?: number;
  page?: number;
  page_size?: number;
}

export type ManageAction = 'promote' | 'demote' | 'disable' | 'enable' | 'delete';

export interface ChannelTagEdit {
  tag: string;
  new_tag?: string;
  model_mapping?: string;
  groups?: string;
  models?: string;
  priority?: number;
  weight?: number;
}

export interface GatewayDataProvider extends DataProvider {
  testChannel(id: Identifier, model?: string): Promise<{ message: string; time?: number }>;
  testAllChannels(): Promise<{ message: string; data?: unknown }>;
  updateChannelBalance(id: Identifier): Promise<{ balance: number }>;
  /** Updates every enabled channel's balance; `data` is the per-channel summary (resources/channels/balanceSummary.ts). */
  updateAllBalances(): Promise<{ message: string; data: unknown }>;
  deleteDisabledChannels(): Promise<{ count: number }>;
  /**
   * Deletes the listed channels in one call: `count` deleted, and per id what happened (`items`:
   * label '#id', `code` the server's status such as 'deleted' or 'not_found').
   */
  deleteChannels(ids: readonly Identifier[]): Promise<{ count: number; items: BulkItem[] }>;
  fixAbilities(): Promise<{ data: unknown; message?: string }>;
  /** Models of a saved channel (`id`) or of an unsaved one (`{ base_url, type, key }`). */
  fetchModels(source: Identifier | { base_url?: string; type: number; key: string }): Promise<{ data: string[] }>;
  channelModels(): Promise<{ data: Array<{ id: string; [k: string]: unknown }> }>;
  enabledModels(): Promise<{ data: string[] }>;
  copyChannel(id: Identifier, opts?: { suffix?: string; reset_balance?: boolean }): Promise<{ data: unknown }>;
  editTag(payload: ChannelTagEdit): Promise<{ message: string }>;
  enableTag(tag: string): Promise<{ message: string }>;
  disableTag(tag: string): Promise<{ message: string }>;
  /** Tags the listed channels: `count` tagged, and per id what happened (`items`, as deleteChannels). */
  batchSetTag(ids: Identifier[], tag: string): Promise<{ count: number; items: BulkItem[] }>;
  getGroups(): Promise<{ data: string[] }>;
  manageUser(id: Identifier, action: ManageAction): Promise<{ data: { status?: number; role?: number } }>;
  redeem(key: string): Promise<{ quota: number; message: string }>;
  logStat(filters: Record<string, unknown>, admin?: boolean): Promise<{ quota: number; rpm: number; tpm: number }>;
  clearLogs(targetTimestamp: number): Promise<{ count: number }>;
  getSelf(): Promise<{ data: RaRecord }>;
  userModels(): Promise<{ data: string[] }>;
  selfGroups(): Promise<{ data: Record<string, { desc: string; ratio: number }> }>;
}

export interface DataProviderOptions {
  /** Decides between `/api/log/` (admin) and `/api/log/self/` (user); default: the stored user's role. */
  isAdmin?: () => boolean;
}

function joinList(v: unknown): unknown {
  return Array.isArray(v)
    ? v
        .map((x) => String(x).trim())
        .filter(Boolean)
        .join(',')
    : v;
}

/** Shapes a record for the wire: list fields become comma strings (the server's create/update bodies). */
export function toWire(resource: ResourceName, data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...data };
  if (resource === 'channel') {
    if ('groups' in out) {
      if (out.groups !== undefined) out.group = joinList(out.groups);
      delete out.groups;
    }
    if ('models' in out) out.models = joinList(out.models);
    if ('group' in out) out.group = joinList(out.group);
  }
  if (resource === 'token' && 'model_limits' in out) out.model_limits = joinList(out.model_limits);
  return out;
}

function pageQuery(resource: ResourceName, params: Partial<GetListParams>): Record<string, unknown> {
  const page = params.pagination?.page ?? 1;
  const perPage = params.pagination?.perPage ?? 10;
  return resource === 'token' ? { p: page, size: perPage } : { p: page, page_size: perPage };
}

function listResult(data: unknown): { data: RaRecord[]; total: number } {
  if (Array.isArray(data)) return { data: data as RaRecord[], total: data.length };
  const page = (data ?? {}) as ListPage;
  const items = (Array.isArray(page.items) ? page.items : []) as RaRecord[];
  return { data: items, total: typeof page.total === 'number' ? page.total : items.length };
}

/** The react-admin DataProvider over the console API, with the gateway's extra calls. */
export function createDataProvider(http: Api, opts: DataProviderOptions = {}): GatewayDataProvider {
  const admin = opts.isAdmin ?? (() => storedIsAdmin());

  // One batch call; a server without the per-id `results` answers only the count (no items then).
  async function deleteChannels(ids: readonly Identifier[]): Promise<{ count: number; items: BulkItem[] }> {
    const a = await http.post<number>(`${RESOURCES.channel}/batch`, { ids });
    return { count: Number(a.data ?? 0), items: bulkItemsFromAnswer(a.results) };
  }

  function listUrl(res: ResourceName, params: Partial<GetListParams>): string {
    const filter = { ...(params.filter ?? {}) } as Record<string, unknown>;
    if (filter.q !== undefined && filter.keyword === undefined) filter.keyword = filter.q;
    const paging = pageQuery(res, params);
    if (res === 'log') {
      const q: Record<string, unknown> = { ...paging };
      for (const k of LOG_FILTERS) if (filter[k] !== undefined) q[k] = filter[k];
      return `${RESOURCES.log}/${admin() ? '' : 'self/'}${qs(q)}`;
    }
    if (isTaskLog(res)) {
      const q: Record<string, unknown> = { ...paging };
      for (const k of TASK_LOG_FILTERS[res]) if (k !== 'channel_id' || admin()) q[k] = filter[k];
      const self = res === 'midjourney' ? 'self/' : 'self';
      return `${RESOURCES[res]}/${admin() ? '' : self}${qs(q)}`;
    }
    if (res === 'topup_order') {
      const q: Record<string, unknown> = { ...paging };
      for (const k of TOPUP_ORDER_FILTERS) {
        const v = typeof filter[k] === 'string' ? (filter[k] as string).trim() : filter[k];
        if (v !== undefined && v !== null && v !== '') q[k] = v;
      }
      return `${RESOURCES.topup_order}${qs(q)}`;
    }
    const searchKeys = SEARCH_KEYS[res];
    for (const k of searchKeys) filter[k] = searchValue(res, k, filter[k]);
    const searching = searchKeys.some((k) => filter[k] !== undefined && filter[k] !== null && filter[k] !== '');
    const q: Record<string, unknown> = {};
    if (searching) for (const k of searchKeys) q[k] = filter[k];
    for (const k of PASS_KEYS[res] ?? []) if (filter[k] !== undefined) q[k] = filter[k];
    Object.assign(q, paging);
    return `${RESOURCES[res]}/${searching ? 'search' : ''}${qs(q)}`;
  }

  async function setStatus(res: ResourceName, id: Identifier, status: number): Promise<void> {
    if (res === 'channel') await http.put(`${RESOURCES.channel}/`, { id, status });
    else if (res === 'user') await http.post(`${RESOURCES.user}/manage`, { id, action: Number(status) === 1 ? 'enable' : 'disable' });
    else await http.put(`${RESOURCES[res]}/?status_only=true`, { id, status });
  }

  async function remove(res: ResourceName, id: Identifier): Promise<void> {
    // Users are deregistered through the manage call (the row is then marked deregistered).
    if (res === 'user') await http.post(`${RESOURCES.user}/manage`, { id, action: 'delete' });
    else await http.del(`${RESOURCES[res]}/${id}/`);
  }

  /** POST /api/<res>/; a list answer (a batch) gives its first record with the whole list in `batch`. */
  async function createOne(res: ResourceName, data: Record<string, unknown>): Promise<Record<string, unknown>> {
    const answer = await http.post(`${RESOURCES[res]}/`, toWire(res, data));
    const created = answer.data;
    if (Array.isArray(created)) {
      const first = (created[0] ?? {}) as Record<string, unknown>;
      const id = typeof first === 'object' && first.id !== undefined ? first.id : 0;
      return { ...(typeof first === 'object' ? first : {}), id, batch: created };
    }
    if (created && typeof created === 'object') return created as Record<string, unknown>;
    return { ...data, id: 0 };
  }

  const provider: GatewayDataProvider = {
    async getList(resource, params) {
      const res = resourceName(resource);
      const answer = await http.get(listUrl(res, params));
      if (isTaskLog(res)) {
        const rows = (Array.isArray(answer.data) ? answer.data : []) as RaRecord[];
        const page = params.pagination?.page ?? 1;
        const perPage = params.pagination?.perPage ?? 10;
        return { data: rows as never[], pageInfo: { hasPreviousPage: page > 1, hasNextPage: rows.length >= perPage } };
      }
      return listResult(answer.data) as never;
    },

    async getOne(resource, params) {
      const res = resourceName(resource);
      const answer = await http.get<RaRecord>(`${RESOURCES[res]}/${params.id}`);
      return { data: { ...(answer.data as RaRecord), id: (answer.data as RaRecord)?.id ?? params.id } as never };
    },

    async getMany(resource, params) {
      const res = resourceName(resource);
      const rows = await Promise.all(params.ids.map((id) => http.get<RaRecord>(`${RESOURCES[res]}/${id}`).then((a) => a.data)));
      return { data: rows.filter(Boolean) as never[] };
    },

    async getManyReference(resource, params) {
      const res = resourceName(resource);
      const answer = await http.get(listUrl(res, { ...params, filter: { ...params.filter, [params.target]: params.id } }));
      return listResult(answer.data) as never;
    },

    async create(resource, params) {
      const res = resourceName(resource);
      // meta.names: one record per name, one call each in turn (a token batch); the first answers, with every record in `batch`.
      const names = (params.meta as { names?: unknown } | undefined)?.names;
      if (Array.isArray(names) && names.length > 0) {
        const made: Record<string, unknown>[] = [];
        for (const name of names) made.push(await createOne(res, { ...(params.data as Record<string, unknown>), name }));
        return { data: { ...made[0], batch: made } as never };
      }
      return { data: (await createOne(res, params.data as Record<string, unknown>)) as never };
    },

    async update(resource, params) {
      const res = resourceName(resource);
      const body = toWire(res, { ...(params.data as Record<string, unknown>), id: params.id });
      const answer = await http.put(`${RESOURCES[res]}/`, body);
      const saved = answer.data && typeof answer.data === 'object' && !Array.isArray(answer.data) ? (answer.data as RaRecord) : undefined;
      return { data: { ...(params.data as object), ...(saved ?? {}), id: params.id } as never };
    },

    async updateMany(resource, params) {
      const res = resourceName(resource);
      const data = params.data as Record<string, unknown>;
      const statusOnly = Object.keys(data).length === 1 && 'status' in data;
      const items = await runEach(params.ids, (id) =>
        statusOnly ? setStatus(res, id, Number(data.status)) : http.put(`${RESOURCES[res]}/`, toWire(res, { ...data, id })),
      );
      failIfAny(items);
      return { data: params.ids };
    },

    async delete(resource, params) {
      const res = resourceName(resource);
      await remove(res, params.id);
      return { data: (params.previousData ?? { id: params.id }) as never };
    },

    async deleteMany(resource, params) {
      const res = resourceName(resource);
      if (res === 'channel') {
        failIfAny((await deleteChannels(params.ids)).items);
      } else {
        failIfAny(await runEach(params.ids, (id) => remove(res, id)));
      }
      return { data: params.ids };
    },

    async testChannel(id, model) {
      const a = await http.get(`${RESOURCES.channel}/test/${id}${qs({ model })}`);
      return { message: a.message, time: typeof a.time === 'number' ? a.time : undefined };
    },
    async testAllChannels() {
      const a = await http.get(`${RESOURCES.channel}/test`);
      return { message: a.message, data: a.data };
    },
    async updateChannelBalance(id) {
      const a = await http.get<number>(`${RESOURCES.channel}/update_balance/${id}/`);
      const balance = typeof a.balance === 'number' ? a.balance : Number(a.data ?? 0);
      return { balance };
    },
    async updateAllBalances() {
      const a = await http.get(`${RESOURCES.channel}/update_balance`);
      return { message: a.message, data: a.data };
    },
    deleteChannels,
    async deleteDisabledChannels() {
      const a = await http.del<number>(`${RESOURCES.channel}/disabled`);
      return { count: Number(a.data ?? 0) };
    },
    async fixAbilities() {
      const a = await http.post(`${RESOURCES.channel}/fix`, {});
      return { data: a.data, message: a.message };
    },
    async fetchModels(source) {
      const a =
        typeof source === 'object'
          ? await http.post<string[]>(`${RESOURCES.channel}/fetch_models`, source)
          : await http.get<string[]>(`${RESOURCES.channel}/fetch_models/${source}`);
      return { data: Array.isArray(a.data) ? a.data : [] };
    },
    async channelModels() {
      const a = await http.get<Array<{ id: string }>>(`${RESOURCES.channel}/models`);
      return { data: Array.isArray(a.data) ? a.data : [] };
    },
    async enabledModels() {
      const a = await http.get<string[]>(`${RESOURCES.channel}/models_enabled`);
      return { data: Array.isArray(a.data) ? a.data : [] };
    },
    async copyChannel(id, o = {}) {
      const a = await http.post(`${RESOURCES.channel}/copy/${id}${qs({ suffix: o.suffix, reset_balance: o.reset_balance })}`, {});
      return { data: a.data };
    },
    async editTag(payload) {
      const a = await http.put(`${RESOURCES.channel}/tag`, payload);
      return { message: a.message };
    },
    async enableTag(tag) {
      const a = await http.post(`${RESOURCES.channel}/tag/enabled`, { tag });
      return { message: a.message };
    },
    async disableTag(tag) {
      const a = await http.post(`${RESOURCES.channel}/tag/disabled`, { tag });
      return { message: a.message };
    },
    async batchSetTag(ids, tag) {
      const a = await http.post<number>(`${RESOURCES.channel}/batch/tag`, { ids, tag });
      return { count: Number(a.data ?? 0), items: bulkItemsFromAnswer(a.results) };
    },
    async getGroups() {
      const a = await http.get<string[]>('/api/group/');
      return { data: Array.isArray(a.data) ? a.data : [] };
    },
    async manageUser(id, action) {
      const a = await http.post<{ status?: number; role?: number }>(`${RESOURCES.user}/manage`, { id, action });
      return { data: a.data ?? {} };
    },
    async redeem(key) {
      const a = await http.post<number>(`${RESOURCES.user}/topup`, { key });
      return { quota: Number(a.data ?? 0), message: a.message };
    },
    async logStat(filters, asAdmin) {
      const useAdmin = asAdmin ?? admin();
      const q: Record<string, unknown> = {};
      for (const k of LOG_FILTERS) if (filters[k] !== undefined) q[k] = filters[k];
      const a = await http.get<{ quota?: number; rpm?: number; tpm?: number }>(`${RESOURCES.log}/${useAdmin ? 'stat' : 'self/stat'}${qs(q)}`);
      return { quota: Number(a.data?.quota ?? 0), rpm: Number(a.data?.rpm ?? 0), tpm: Number(a.data?.tpm ?? 0) };
    },
    async clearLogs(targetTimestamp) {
      const a = await http.del<number>(`${RESOURCES.log}/${qs({ target_timestamp: targetTimestamp })}`);
      return { count: Number(a.data ?? 0) };
    },
    async getSelf() {
      const a = await http.get<RaRecord>(`${RESOURCES.user}/self`);
      return { data: a.data };
    },
    async userModels() {
      const a = await http.get<string[]>(`${RESOURCES.user}/models`);
      return { data: Array.isArray(a.data) ? a.data : [] };
    },
    async selfGroups() {
      const a = await http.get<Record<string, { desc: string; ratio: number }>>(`${RESOURCES.user}/self/groups`);
      return { data: a.data ?? {} };
    },
  };
  return provider;
}

let browserProvider: GatewayDataProvider | undefined;

/** The browser's data provider (over window.fetch). */
export function dataProvider(): GatewayDataProvider {
  if (!browserProvider) browserProvider = createDataProvider(browserApi());
  return browserProvider;
}
