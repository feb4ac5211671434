/**
 * The console's reads of channels: the list (filters, tag groups, key search), one channel, the
 * model names of every channel and of enabled ones.
 */
import type { Knex } from 'knex';
import type { AppContext } from '../context';
import type { Paging } from '../lib/validate';
import { CHANNEL_STATUS } from '../repositories/channelStatus';
import { channelView, splitList, type ChannelRow } from '../repositories/channels';
import { ROLE } from '../repositories/users';
import { loadChannel, canSeeKeys, viewFor } from './channels';

// ---------------------------------------------------------------------------------------------
// Reads

export interface ChannelListQuery {
  id_sort?: boolean;
  tag_mode?: boolean;
  keyword?: string;
  group?: string;
  model?: string;
  status?: number;
  type?: number;
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

function filtered(knex: Knex, q: ChannelListQuery, keySearch = false): Knex.QueryBuilder {
  const qb = knex('channels');
  if (q.keyword) {
    const kw = q.keyword;
    const like = `%${escapeLike(kw)}%`;
    qb.where((w) => {
      if (/^\d+$/.test(kw) && Number(kw) < 2 ** 31) w.orWhere('id', Number(kw));
      // Case-insensitive on both databases (SQLite LIKE already is, PostgreSQL's is not).
      w.orWhereRaw("lower(name) like lower(?) escape '\\'", [like]);
      // Matching by key would let an admin confirm a guessed key: root only.
      if (keySearch) w.orWhere('key', kw);
      w.orWhereRaw("lower(base_url) like lower(?) escape '\\'", [like]).orWhereRaw("lower(tag) like lower(?) escape '\\'", [like]);
    });
  }
  if (q.group) {
    const g = escapeLike(q.group);
    // The group column is a comma list: match whole items only.
    qb.where((w) => {
      w.where('group', q.group!).orWhereRaw("(',' || ?? || ',') like ? escape '\\'", ['group', `%,${g},%`]);
    });
  }
  if (q.model) qb.whereRaw("(',' || models || ',') like ? escape '\\'", [`%${escapeLike(q.model)}%`]);
  if (q.status) qb.where('status', q.status);
  if (q.type) qb.where('type', q.type);
  return qb;
}

interface TagAggregate {
  key: string;
  id: string;
  tag: string;
  name: string;
  group: string;
  used_quota: number;
  response_time: number;
  priority: number | null;
  weight: number | null;
  status: number;
  /** Provider kind of the first child (the console shows one icon per row). */
  type: number;
  /** Marks an aggregate row (the console's TagRow). */
  isTag: true;
  children: Record<string, unknown>[];
}

function aggregate(tag: string, children: ChannelRow[]): TagAggregate {
  const same = (vals: number[]) => (vals.every((v) => v === vals[0]) ? vals[0]! : null);
  const groups = splitList(children.map((c) => c.group).join(','));
  return {
    key: `tag:${tag}`,
    id: `tag:${tag}`,
    tag,
    name: tag,
    group: groups.join(','),
    used_quota: children.reduce((s, c) => s + Number(c.used_quota ?? 0), 0),
    response_time: children.length ? Math.round(children.reduce((s, c) => s + Number(c.response_time ?? 0), 0) / children.length) : 0,
    priority: same(children.map((c) => Number(c.priority))),
    weight: same(children.map((c) => Number(c.weight))),
    status: children.some((c) => Number(c.status) === CHANNEL_STATUS.enabled) ? CHANNEL_STATUS.enabled : CHANNEL_STATUS.manuallyDisabled,
    type: Number(children[0]?.type ?? 0),
    isTag: true,
    children: children.map((c) => channelView(c, false)),
  };
}

/** Paged channel list / search; in tag mode each tag is one row (an aggregate) and untagged channels are single rows. */
export async function listChannels(app: AppContext, q: ChannelListQuery, paging: Paging, role: number = ROLE.admin) {
  const keySearch = canSeeKeys(role);
  const order = (qb: Knex.QueryBuilder) =>
    q.id_sort
      ? qb.orderBy('id', 'desc')
      : qb.orderBy([
          { column: 'priority', order: 'desc' },
          { column: 'id', order: 'desc' },
        ]);
  const offset = (paging.p - 1) * paging.page_size;
  if (!q.tag_mode) {
    const countRow = await filtered(app.knex, q, keySearch).count({ n: '*' }).first();
    const rows: ChannelRow[] = await order(filtered(app.knex, q, keySearch).select('*'))
      .limit(paging.page_size)
      .offset(offset);
    return { items: rows.map((r) => channelView(r, false)), total: Number(countRow?.n ?? 0), page: paging.p, page_size: paging.page_size };
  }
  // Tag mode: rank units (a tag or an untagged channel) by their best priority/id, page over units.
  const light: Array<{ id: number; tag: string | null; priority: number }> = await filtered(app.knex, q, keySearch).select('id', 'tag', 'priority');
  const units = new Map<string, { tag: string | null; id: number; priority: number; ids: number[] }>();
  for (const c of light) {
    const k = c.tag ? `t:${c.tag}` : `c:${c.id}`;
    const u = units.get(k) ?? { tag: c.tag || null, id: 0, priority: -Infinity, ids: [] };
    u.id = Math.max(u.id, Number(c.id));
    u.priority = Math.max(u.priority, Number(c.priority));
    u.ids.push(Number(c.id));
    units.set(k, u);
  }
  const sorted = [...units.values()].sort((a, b) => (q.id_sort ? b.id - a.id : b.priority - a.priority || b.id - a.id));
  const page = sorted.slice(offset, offset + paging.page_size);
  const ids = page.flatMap((u) => u.ids);
  const rows: ChannelRow[] = [];
  for (let i = 0; i < ids.length; i += 500)
    rows.push(
      ...(await order(
        app
          .knex('channels')
          .whereIn('id', ids.slice(i, i + 500))
          .select('*'),
      )),
    );
  const byId = new Map(rows.map((r) => [Number(r.id), r]));
  const items = page.map((u) => {
    const children = u.ids.map((id) => byId.get(id)).filter((r): r is ChannelRow => Boolean(r));
    children.sort((a, b) => (q.id_sort ? b.id - a.id : Number(b.priority) - Number(a.priority) || b.id - a.id));
    return u.tag ? aggregate(u.tag, children) : channelView(children[0]!, false);
  });
  return { items, total: sorted.length, page: paging.p, page_size: paging.page_size };
}

export async function getChannel(app: AppContext, id: number, role: number) {
  return viewFor(await loadChannel(app.knex, id), role);
}

/** Every model name the product knows: priced models plus models any channel serves. */
export async function allModelNames(app: AppContext): Promise<string[]> {
  const names = new Set<string>([
    ...Object.keys(app.options.json<Record<string, unknown>>('ModelRatio', {})),
    ...Object.keys(app.options.json<Record<string, unknown>>('ModelPrice', {})),
  ]);
  const rows: Array<{ models: string }> = await app.knex('channels').select('models');
  for (const r of rows) for (const m of splitList(r.models)) names.add(m);
  return [...names].sort();
}

export async function enabledModelNames(app: AppContext): Promise<string[]> {
  const rows: Array<{ model: string }> = await app.knex('abilities').distinct('model').where({ enabled: true }).orderBy('model');
  return rows.map((r) => r.model);
}
