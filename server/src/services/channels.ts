import type { Knex } from 'knex';
import { msg, serverLang, t, type Lang, type MessageParam } from '../i18n';
import type { AppContext } from '../context';
import { BadRequestError, NotFoundError } from '../lib/errors';
import { nowSec } from '../lib/time';
import { CHANNEL_STATUS } from '../repositories/channelStatus';
import { channelView, rebuildAllAbilities, syncAbilities, type ChannelRow } from '../repositories/channels';
import { invalidateChannels } from './invalidate';
import { channelHosts, vetChannelHosts } from './channelTargets';
import { ROLE } from '../repositories/users';
import { adaptorIdOf, channelType, defaultBaseUrl, isKnownChannelType } from '../channels/catalogue';
import { CHANNEL_TYPE } from '../channels/kinds';
import { channelKeys } from '../channels/routeTable';
import { healthBoard } from '../channels/healthBoard';
import { newMultiKeyInfo, parseChannelInfo, remapKeyStatuses, serializeChannelInfo, type MultiKeyMode } from '../repositories/channelInfo';

/** A channel's writable fields (the console's body, validated by api/channel/schema.ts). */
export interface ChannelInput {
  name?: string;
  type?: number;
  key?: string;
  openai_organization?: string;
  test_model?: string;
  base_url?: string;
  other?: string;
  models?: string;
  group?: string;
  groups?: string;
  model_mapping?: string;
  status_code_mapping?: string;
  setting?: string;
  param_override?: string;
  auto_ban?: 1 | 0;
  priority?: number;
  weight?: number;
  tag?: string | null;
  status?: 1 | 2 | 3;
  max_input_tokens?: number;
}

/** A create call: how the key field is read (one channel, one per line, one multi-key channel) and the record. */
export interface ChannelCreate {
  mode?: 'single' | 'batch' | 'multi_to_single';
  multiKeyMode?: MultiKeyMode;
  input: ChannelInput;
}

export interface ChannelUpdate extends ChannelInput {
  id: number;
  /** A multi-key channel's order of keys. */
  multi_key_mode?: MultiKeyMode;
}

/** Edits every channel of a tag (`new_tag` renames it). */
export interface TagEdit {
  tag: string;
  new_tag?: string | null;
  model_mapping?: string;
  groups?: string;
  models?: string;
  priority?: number | null;
  weight?: number | null;
}

export interface BatchTag {
  ids: number[];
  tag: string | null;
}

export { isKnownChannelType };

/** A channel's writable fields as the console sends them, checked (api/channel/schema.ts). */

/** Columns a create/update may set (everything else is server-maintained). */
const WRITABLE = [
  'name',
  'type',
  'key',
  'openai_organization',
  'test_model',
  'base_url',
  'other',
  'models',
  'group',
  'model_mapping',
  'status_code_mapping',
  'setting',
  'param_override',
  'auto_ban',
  'priority',
  'weight',
  'tag',
  'status',
  'max_input_tokens',
] as const;

function pickWritable(input: ChannelInput): Partial<ChannelRow> {
  const out: Record<string, unknown> = {};
  for (const k of WRITABLE) if (input[k] !== undefined) out[k] = input[k];
  if (input.groups !== undefined && input.group === undefined) out.group = input.groups;
  return out as Partial<ChannelRow>;
}

function statusInfo(status: number, lang: Lang): string {
  return JSON.stringify({ status_reason: status === CHANNEL_STATUS.enabled ? '' : t(lang, 'channel.manually_disabled'), status_time: nowSec() });
}

const isJsonObjectText = (s: string) => {
  try {
    const v: unknown = JSON.parse(s);
    return Boolean(v) && typeof v === 'object' && !Array.isArray(v);
  } catch {
    return false;
  }
};

async function insertChannel(trx: Knex.Transaction, row: Partial<ChannelRow>): Promise<ChannelRow> {
  const [inserted] = await trx('channels').insert(row).returning('id');
  const id = typeof inserted === 'object' ? (inserted as { id: number }).id : (inserted as number);
  const saved = (await trx<ChannelRow>('channels').where({ id }).first())!;
  await syncAbilities(trx, saved);
  return saved;
}

export async function loadChannel(knex: Knex | Knex.Transaction, id: number): Promise<ChannelRow> {
  const row = await knex<ChannelRow>('channels').where({ id }).first();
  if (!row) throw new NotFoundError('channel.not_found');
  return row;
}

// ---------------------------------------------------------------------------------------------
// Upstream keys: in full to root only

const MASK = '…';

/** One key line masked: enough to recognise it, never enough to use it. */
function maskLine(k: string): string {
  if (k.length >= 20) return `${k.slice(0, 4)}${MASK}${k.slice(-4)}`;
  if (k.length >= 10) return `${MASK}${k.slice(-2)}`;
  return MASK;
}

/** A channel key as an admin sees it (each line of a multi-key channel masked on its own). */
export function maskKey(key: string): string {
  if (!key) return '';
  // A JSON key (service account) shows no part of its secret, only that it is one.
  if (key.trim().startsWith('{')) return `{${MASK}}`;
  return key
    .split('\n')
    .map((l) => maskLine(l.trim()))
    .join('\n');
}

export const canSeeKeys = (role: number) => role >= ROLE.root;

/**
 * The channel as answers carry it: the key masked for everybody. Root reads the full key only
 * through `channelKey` (POST /api/channel/:id/key), after a fresh re-verification.
 */
export function viewFor(row: ChannelRow, _role: number): Record<string, unknown> {
  const out = channelView(row, true);
  out.key = maskKey(String(row.key ?? ''));
  out.key_masked = true;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Where a key goes: re-pointing a channel needs the key typed again (or root)

/** One place a channel sends its key to, and the form field that decides it. */
export interface KeyDestination {
  what: MessageParam;
  /** Compared as is: the origin (scheme://host:port) of a URL, else a description of the default. */
  where: string;
}

const originOf = (raw: string): string => {
  try {
    const u = new URL(raw);
    return u.host ? `${u.protocol}//${u.host}` : raw;
  } catch {
    return raw;
  }
};

function settingProxy(setting: string | null | undefined): string {
  if (!setting || !setting.trim().startsWith('{')) return '';
  try {
    const v = (JSON.parse(setting) as Record<string, unknown> | null)?.proxy;
    return typeof v === 'string' ? v.trim() : '';
  } catch {
    return '';
  }
}

/**
 * Where a channel's key goes: the base URL's origin, or without one the kind's own host (for AWS
 * Bedrock and Vertex AI it depends on the region in `other`), and the proxy (it reads the key of a
 * plain-http upstream). The key itself (a Bedrock region, a Vertex `token_uri`) is left out: an
 * edit that changes it typed the key.
 */
export function keyDestinations(c: { type: number; base_url?: string | null; setting?: string | null; other?: string | null }): KeyDestination[] {
  const out: KeyDestination[] = [];
  const proxy = settingProxy(c.setting);
  if (proxy) out.push({ what: msg('channel.field_proxy'), where: `proxy ${originOf(proxy)}` });
  const base = String(c.base_url ?? '').trim();
  const type = Number(c.type);
  const entry = channelType(type);
  const adaptor = entry ? adaptorIdOf(entry) : undefined;
  if (base) out.push({ what: 'Base URL', where: originOf(base) });
  else if (adaptor === 'bedrock' || adaptor === 'vertex') out.push({ what: msg('channel.field_region'), where: `${adaptor} ${String(c.other ?? '').trim()}` });
  else out.push({ what: msg('channel.field_type'), where: defaultBaseUrl(type) ? originOf(defaultBaseUrl(type)) : `type ${type}` });
  return out;
}

/**
 * An admin may send a channel's key to a new place only with the key typed in the same request
 * (they know it, so nothing is taken); root may always. Without the key, an edit of the base URL,
 * the proxy, the kind or a region that adds a destination is refused before anything is written.
 */
function refuseRepoint(current: ChannelRow, next: { type: number; base_url?: string | null; setting?: string | null; other?: string | null }): void {
  const known = new Set(keyDestinations(current).map((d) => d.where));
  const added = keyDestinations(next).filter((d) => !known.has(d.where));
  if (!added.length) return;
  const what = Number(next.type) !== Number(current.type) ? msg('channel.field_type') : added[0]!.what;
  throw new BadRequestError(msg('channel.repoint_needs_key', { what }));
}

/** The full key of one channel (root, re-verified: checked by the route). */
export async function channelKey(app: AppContext, id: number): Promise<{ key: string }> {
  return { key: String((await loadChannel(app.knex, id)).key ?? '') };
}

// ---------------------------------------------------------------------------------------------
// Writes. Every write rewrites the abilities in the same transaction, then drops the relay caches.

/** A kind its provider shut down (PaLM2) takes no new channels; stored ones stay editable. */
function refuseRetired(type: number): void {
  const retired = channelType(type)?.retired;
  if (retired) throw new BadRequestError(msg('channel.type_retired', { reason: msg(retired) }));
}

export async function createChannels(
  app: AppContext,
  { mode, multiKeyMode, input }: ChannelCreate,
  role: number,
): Promise<{ batch: boolean; channels: Record<string, unknown>[] }> {
  if (!input.name || !input.key || !input.key.trim()) throw new BadRequestError('channel.name_key_required');
  if (!input.models) throw new BadRequestError('channel.models_required');
  const base: Partial<ChannelRow> = {
    type: CHANNEL_TYPE.OpenAI,
    group: 'default',
    auto_ban: 1,
    priority: 0,
    weight: 0,
    status: CHANNEL_STATUS.enabled,
    ...pickWritable(input),
    created_time: nowSec(),
  };
  if (!base.group) base.group = 'default';
  refuseRetired(base.type!);
  const version = channelType(base.type!)?.version;
  if (version?.pinOnCreate && !base.other) base.other = version.value;
  if (base.status !== CHANNEL_STATUS.enabled) base.other_info = statusInfo(base.status!, serverLang(app));
  const key = input.key.trim();
  if (mode === 'multi_to_single') {
    // One channel holding every key (one per line; a JSON list for JSON-credential kinds).
    const keys = Array.from(new Set(channelKeys(Number(base.type), key)));
    if (keys.length > 10_000) throw new BadRequestError('channel.too_many_keys');
    const row = { ...base, key: keys.join('\n'), channel_info: serializeChannelInfo(newMultiKeyInfo(keys.length, multiKeyMode ?? 'random')) };
    await vetChannelHosts(app, [...channelHosts(base), ...keys.flatMap((k) => channelHosts({ key: k }))], role);
    const saved = await app.knex.transaction((trx) => insertChannel(trx, row));
    await invalidateChannels(app);
    return { batch: false, channels: [viewFor(saved, role)] };
  }
  const lines = key
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const batch = mode === 'batch' || (mode === undefined && lines.length > 1 && !isJsonObjectText(key));
  const keys = batch ? Array.from(new Set(lines)) : [key];
  if (keys.length > 1000) throw new BadRequestError('channel.too_many_channels');
  await vetChannelHosts(app, [...channelHosts(base), ...keys.flatMap((k) => channelHosts({ key: k }))], role);
  const saved = await app.knex.transaction(async (trx) => {
    const out: ChannelRow[] = [];
    for (const k of keys) out.push(await insertChannel(trx, { ...base, key: k }));
    return out;
  });
  await invalidateChannels(app);
  return { batch, channels: saved.map((c) => viewFor(c, role)) };
}

export async function updateChannel(app: AppContext, input: ChannelUpdate, role: number): Promise<Record<string, unknown>> {
  if (input.name !== undefined && !input.name) throw new BadRequestError('channel.name_empty');
  if (input.models !== undefined && !input.models) throw new BadRequestError('channel.models_required');
  const patch = pickWritable(input);
  // The edit form sends an empty key when the key is left unchanged.
  if (patch.key !== undefined) {
    if (!patch.key.trim()) delete patch.key;
    else patch.key = patch.key.trim();
  }
  if (patch.group !== undefined && !patch.group) patch.group = 'default';
  const current = await loadChannel(app.knex, input.id);
  if (patch.type !== undefined && patch.type !== Number(current.type)) refuseRetired(patch.type);
  // The masked key sent back unchanged (an admin's form) keeps the stored key.
  if (patch.key !== undefined && patch.key === maskKey(String(current.key ?? ''))) delete patch.key;
  if (!canSeeKeys(role) && patch.key === undefined)
    refuseRepoint(current, {
      type: patch.type ?? current.type,
      base_url: patch.base_url ?? current.base_url,
      setting: patch.setting ?? current.setting,
      other: patch.other ?? current.other,
    });
  // Only destinations that change are vetted: an admin may edit a channel root pointed at a local host.
  const known = new Set(safeHosts(current).map((h) => `${h.what}|${h.origin}`));
  const next = everyHost({
    type: patch.type ?? current.type,
    base_url: patch.base_url ?? current.base_url,
    setting: patch.setting ?? current.setting,
    key: patch.key ?? current.key,
  });
  await vetChannelHosts(
    app,
    next.filter((h) => !known.has(`${h.what}|${h.origin}`)),
    role,
  );
  const saved = await app.knex.transaction(async (trx) => {
    const old = await loadChannel(trx, input.id);
    if (patch.status !== undefined && patch.status !== Number(old.status)) patch.other_info = mergeStatusInfo(old.other_info, patch.status, serverLang(app));
    const info = parseChannelInfo(old.channel_info);
    if (info.is_multi_key && (patch.key !== undefined || input.multi_key_mode)) {
      // Statuses follow their keys when the key list changes (by key text, not position).
      const type = Number(patch.type ?? old.type);
      const next = patch.key !== undefined ? remapKeyStatuses(info, channelKeys(type, String(old.key)), channelKeys(type, patch.key)) : info;
      if (patch.key !== undefined) patch.key = channelKeys(type, patch.key).join('\n');
      if (input.multi_key_mode) next.multi_key_mode = input.multi_key_mode;
      patch.channel_info = serializeChannelInfo(next);
    }
    if (Object.keys(patch).length) await trx('channels').where({ id: input.id }).update(patch);
    const row = await loadChannel(trx, input.id);
    await syncAbilities(trx, row);
    return row;
  });
  if (patch.key !== undefined) healthBoard(app).forgetKeys(input.id);
  await invalidateChannels(app);
  return viewFor(saved, role);
}

/**
 * Copies a channel on the server (the console's "copy" action), so an admin who only sees the
 * masked key can still copy it: same settings and key, name + suffix, fresh counters.
 */
export async function copyChannel(app: AppContext, id: number, role: number, suffix: string): Promise<Record<string, unknown>> {
  const src = await loadChannel(app.knex, id);
  refuseRetired(Number(src.type));
  await vetChannelHosts(app, everyHost(src), role);
  const row: Partial<ChannelRow> = { created_time: nowSec() };
  for (const k of WRITABLE) (row as Record<string, unknown>)[k] = src[k as keyof ChannelRow];
  row.name = `${src.name}${suffix}`.slice(0, 128);
  row.channel_info = src.channel_info ?? '';
  const saved = await app.knex.transaction((trx) => insertChannel(trx, row));
  await invalidateChannels(app);
  return viewFor(saved, role);
}

/** Destinations of a channel, each key of a multi-key channel on its own (a JSON list of Vertex keys has a token_uri each). */
function everyHost(c: { type: number; base_url?: string | null; setting?: string | null; key?: string | null }) {
  const keys = channelKeys(Number(c.type), String(c.key ?? ''));
  return [...channelHosts({ base_url: c.base_url, setting: c.setting }), ...(keys.length > 1 ? keys : [c.key ?? '']).flatMap((k) => channelHosts({ key: k }))];
}

/** Destinations of a stored row; a value stored before the URL rules existed counts as none. */
function safeHosts(row: ChannelRow) {
  try {
    return everyHost(row);
  } catch {
    return [];
  }
}

function mergeStatusInfo(old: string, status: number, lang: Lang): string {
  let base: Record<string, unknown> = {};
  try {
    const v: unknown = JSON.parse(old || '{}');
    if (v && typeof v === 'object' && !Array.isArray(v)) base = v as Record<string, unknown>;
  } catch {
    base = {};
  }
  return JSON.stringify({ ...base, ...(JSON.parse(statusInfo(status, lang)) as object) });
}

export async function deleteChannel(app: AppContext, id: number): Promise<void> {
  await app.knex.transaction(async (trx) => {
    const n = await trx('channels').where({ id }).delete();
    if (!n) throw new NotFoundError('channel.not_found');
    await trx('abilities').where({ channel_id: id }).delete();
  });
  await invalidateChannels(app);
}

/**
 * Runs `fn` in one transaction on the ids of `ids` that are channels, 500 at a time (bound
 * parameters stay few); answers the ids found.
 */
async function forExistingChannels(app: AppContext, ids: number[], fn: (trx: Knex.Transaction, existing: number[]) => Promise<void>): Promise<Set<number>> {
  return app.knex.transaction(async (trx) => {
    const found = new Set<number>();
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const existing = (await trx('channels').whereIn('id', chunk).select('id')).map((r: { id: number }) => Number(r.id));
      if (!existing.length) continue;
      await fn(trx, existing);
      for (const id of existing) found.add(id);
    }
    return found;
  });
}

/** What batch delete did with one requested id. */
export interface ChannelDeleteResult {
  id: number;
  success: boolean;
  /** 'deleted', or why not ('not_found': no such channel, e.g. already deleted). */
  status: 'deleted' | 'not_found';
}

/**
 * Deletes the listed channels (and their abilities) in one transaction and answers per id what
 * happened, in the order asked (a repeated id is answered once). An id with no channel is reported,
 * not an error: the others are still deleted. No rule refuses deleting an existing channel (tasks
 * of a deleted channel fail and are refunded by the poller), so every failure is 'not_found'.
 */
export async function deleteChannels(app: AppContext, ids: number[]): Promise<{ count: number; results: ChannelDeleteResult[] }> {
  const wanted = [...new Set(ids)];
  const deleted = await forExistingChannels(app, wanted, async (trx, existing) => {
    await trx('channels').whereIn('id', existing).delete();
    await trx('abilities').whereIn('channel_id', existing).delete();
  });
  if (deleted.size) await invalidateChannels(app);
  const results = wanted.map((id): ChannelDeleteResult =>
    deleted.has(id) ? { id, success: true, status: 'deleted' } : { id, success: false, status: 'not_found' },
  );
  return { count: deleted.size, results };
}

export async function deleteDisabledChannels(app: AppContext): Promise<number> {
  const n = await app.knex.transaction(async (trx) => {
    const ids = (await trx('channels').whereIn('status', [CHANNEL_STATUS.manuallyDisabled, CHANNEL_STATUS.autoDisabled]).select('id')).map(
      (r: { id: number }) => r.id,
    );
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      await trx('channels').whereIn('id', chunk).delete();
      await trx('abilities').whereIn('channel_id', chunk).delete();
    }
    return ids.length;
  });
  await invalidateChannels(app);
  return n;
}

export async function fixAbilities(app: AppContext): Promise<number> {
  const n = await app.knex.transaction((trx) => rebuildAllAbilities(trx));
  await invalidateChannels(app);
  return n;
}

/** Applies `patch` to every channel carrying `tag` and rewrites their abilities; returns how many. */
async function patchTag(app: AppContext, tag: string, patch: (row: ChannelRow) => Partial<ChannelRow>): Promise<number> {
  const n = await app.knex.transaction(async (trx) => {
    const rows: ChannelRow[] = await trx('channels').where({ tag }).select('*');
    if (!rows.length) throw new NotFoundError('channel.tag_not_found');
    for (const row of rows) {
      const p = patch(row);
      if (Object.keys(p).length) await trx('channels').where({ id: row.id }).update(p);
      await syncAbilities(trx, { ...row, ...p, status: Number(p.status ?? row.status) });
    }
    return rows.length;
  });
  await invalidateChannels(app);
  return n;
}

export async function editTag(app: AppContext, input: TagEdit): Promise<number> {
  const patch: Partial<ChannelRow> = {};
  if (input.new_tag !== undefined) {
    const nt = (input.new_tag ?? '').trim();
    if (nt !== input.tag) patch.tag = nt || null;
  }
  if (input.model_mapping !== undefined) patch.model_mapping = input.model_mapping;
  if (input.groups !== undefined) {
    if (!input.groups) throw new BadRequestError('channel.groups_empty');
    patch.group = input.groups;
  }
  if (input.models !== undefined) {
    if (!input.models) throw new BadRequestError('channel.models_required');
    patch.models = input.models;
  }
  if (input.priority !== undefined && input.priority !== null) patch.priority = input.priority;
  if (input.weight !== undefined && input.weight !== null) patch.weight = input.weight;
  if (!Object.keys(patch).length) throw new BadRequestError('channel.nothing_changed');
  return patchTag(app, input.tag, () => patch);
}

export async function setTagStatus(app: AppContext, tag: string, status: number): Promise<number> {
  return patchTag(app, tag, (row) => (Number(row.status) === status ? {} : { status, other_info: mergeStatusInfo(row.other_info, status, serverLang(app)) }));
}

/** What batch tag did with one requested id. */
export type ChannelTagResult = Omit<ChannelDeleteResult, 'status'> & { status: 'tagged' | 'not_found' };

/**
 * Sets (or clears, `null`) the tag of the listed channels in one transaction; answers the count and
 * per id (each once, in the order asked) whether it was tagged or not found.
 */
export async function batchSetTag(app: AppContext, input: BatchTag): Promise<{ count: number; results: ChannelTagResult[] }> {
  const tag = input.tag === null ? null : input.tag.trim();
  if (tag === '') throw new BadRequestError('channel.tag_empty');
  const wanted = [...new Set(input.ids)];
  const tagged = await forExistingChannels(app, wanted, async (trx, existing) => {
    await trx('channels').whereIn('id', existing).update({ tag });
    await trx('abilities').whereIn('channel_id', existing).update({ tag });
  });
  await invalidateChannels(app);
  const results = wanted.map((id): ChannelTagResult =>
    tagged.has(id) ? { id, success: true, status: 'tagged' } : { id, success: false, status: 'not_found' },
  );
  return { count: tagged.size, results };
}
