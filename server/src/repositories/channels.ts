import type { Knex } from 'knex';
import { LANGS, t } from '../i18n';
import { parseChannelInfo, serializeChannelInfo, type ChannelKeyInfo } from './channelInfo';
import { CHANNEL_STATUS } from './channelStatus';

export interface ChannelRow {
  id: number;
  type: number;
  key: string;
  openai_organization: string;
  test_model: string;
  status: number;
  name: string;
  weight: number;
  created_time: number;
  test_time: number;
  response_time: number;
  base_url: string;
  other: string;
  balance: number;
  balance_updated_time: number;
  models: string;
  group: string;
  used_quota: number;
  request_count: number;
  model_mapping: string;
  status_code_mapping: string;
  priority: number;
  auto_ban: number;
  other_info: string;
  tag: string | null;
  setting: string;
  param_override: string;
  max_input_tokens: number;
  /** JSON text (repositories/channelInfo.ts): multi-key facts and per-key status; '' for single-key channels. */
  channel_info: string;
}

export const splitList = (s: string | null | undefined): string[] =>
  Array.from(
    new Set(
      (s ?? '')
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    ),
  );

/**
 * Rewrites the abilities of one channel (group × model rows) from its current columns. Call it in
 * the same transaction as the channel write so routing never sees a half-updated channel.
 */
export async function syncAbilities(
  trx: Knex | Knex.Transaction,
  channel: Pick<ChannelRow, 'id' | 'models' | 'group' | 'status' | 'priority' | 'weight' | 'tag'>,
): Promise<void> {
  await trx('abilities').where({ channel_id: channel.id }).delete();
  const rows = [];
  for (const group of splitList(channel.group)) {
    for (const model of splitList(channel.models)) {
      rows.push({
        group,
        model,
        channel_id: channel.id,
        enabled: channel.status === CHANNEL_STATUS.enabled,
        priority: channel.priority ?? 0,
        weight: channel.weight ?? 0,
        tag: channel.tag ?? null,
      });
    }
  }
  // Chunked: SQLite caps bound parameters per statement.
  for (let i = 0; i < rows.length; i += 100) await trx('abilities').insert(rows.slice(i, i + 100));
}

/** One abilities row as routing reads it. */
export interface AbilityRoute {
  group: string;
  model: string;
  channel_id: number;
  enabled: unknown;
  priority: number;
  weight: number;
}

/** What the relay's route table is built from: every abilities row and the enabled channels. */
export async function routingRows(knex: Knex): Promise<{ abilities: AbilityRoute[]; channels: ChannelRow[] }> {
  const [abilities, channels] = await Promise.all([
    knex<AbilityRoute>('abilities').select('group', 'model', 'channel_id', 'enabled', 'priority', 'weight'),
    knex<ChannelRow>('channels').where({ status: CHANNEL_STATUS.enabled }),
  ]);
  return { abilities: abilities as AbilityRoute[], channels: channels as ChannelRow[] };
}

function mergeOtherInfo(raw: string, patch: Record<string, unknown>): string {
  let base: Record<string, unknown> = {};
  try {
    const v = JSON.parse(raw || '{}') as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) base = v as Record<string, unknown>;
  } catch {
    /* replace */
  }
  return JSON.stringify({ ...base, ...patch });
}

/**
 * Moves a channel to status `to` if it is in one of `from`, with its abilities, in one
 * transaction; `reason` (when given) goes to other_info.status_reason/status_time. Returns the
 * channel's name when it changed, false otherwise.
 */
export async function changeChannelStatus(knex: Knex, id: number, from: number[], to: number, now: number, reason?: string): Promise<string | false> {
  return knex.transaction(async (trx) => {
    const row = await trx<ChannelRow>('channels').where({ id }).first();
    if (!row || !from.includes(Number(row.status))) return false;
    const patch: Partial<ChannelRow> = { status: to };
    if (reason !== undefined) patch.other_info = mergeOtherInfo(row.other_info, { status_reason: reason, status_time: now });
    const n = await trx('channels').where({ id, status: row.status }).update(patch);
    if (!n) return false;
    await syncAbilities(trx, { ...row, status: to });
    return String(row.name ?? '');
  });
}

/** A channel as the console API shows it: booleans/numbers normalised, `key` only when asked for. */
export function channelView(row: ChannelRow, withKey: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    ...row,
    id: Number(row.id),
    type: Number(row.type),
    status: Number(row.status),
    priority: Number(row.priority ?? 0),
    weight: Number(row.weight ?? 0),
    auto_ban: Number(row.auto_ban ?? 0),
    balance: Number(row.balance ?? 0),
    used_quota: Number(row.used_quota ?? 0),
    tag: row.tag ?? '',
    channel_info: parseChannelInfo(row.channel_info),
  };
  if (!withKey) delete out.key;
  return out;
}

/** Rebuilds the abilities of every channel (POST /api/channel/fix); returns how many channels. */
export async function rebuildAllAbilities(trx: Knex | Knex.Transaction): Promise<number> {
  await trx('abilities').delete();
  const channels: Array<Pick<ChannelRow, 'id' | 'models' | 'group' | 'status' | 'priority' | 'weight' | 'tag'>> = await trx('channels').select(
    'id',
    'models',
    'group',
    'status',
    'priority',
    'weight',
    'tag',
  );
  for (const c of channels) await syncAbilities(trx, { ...c, status: Number(c.status), priority: Number(c.priority), weight: Number(c.weight) });
  return channels.length;
}

export async function findChannel(knex: Knex, id: number): Promise<ChannelRow | undefined> {
  return knex('channels').where({ id }).first();
}

/** Models a group can use through enabled channels, sorted. */
/** After a channel test: how long it took (ms) and when. */
export async function recordChannelTest(knex: Knex, id: number, responseMs: number, at: number): Promise<void> {
  await knex('channels').where({ id }).update({ response_time: responseMs, test_time: at });
}

/** After a balance lookup: the channel's balance (USD) and when it was read. */
export async function recordChannelBalance(knex: Knex, id: number, balance: number, at: number): Promise<void> {
  await knex('channels').where({ id }).update({ balance, balance_updated_time: at });
}

/** Ids of the channels in one of these states (the periodic test and balance sweeps). */
export async function channelIdsByStatus(knex: Knex, statuses: number[]): Promise<number[]> {
  const rows = await knex('channels').whereIn('status', statuses).select('id');
  return rows.map((r: { id: number | string }) => Number(r.id));
}

export async function groupModels(knex: Knex, group: string): Promise<string[]> {
  const rows: Array<{ model: string }> = await knex('abilities').distinct('model').where({ group, enabled: true }).orderBy('model');
  return rows.map((r) => r.model);
}

/**
 * Changes the keys or key statuses of one channel in a transaction: `mutate` gets the current row
 * and its parsed channel_info and answers the new `key` text and info (or false: nothing to do).
 * When no key is left enabled, an enabled channel becomes auto-disabled (with its abilities).
 * Returns the row after the change, or false.
 */
export async function changeChannelKeys(
  knex: Knex,
  id: number,
  mutate: (row: ChannelRow, info: ChannelKeyInfo) => { key: string; info: ChannelKeyInfo; keys: number; enabled: number } | false,
  now: number,
  /** The status reason of a channel left without an enabled key (in the server's language). */
  disabledReason: string,
): Promise<ChannelRow | false> {
  return knex.transaction(async (trx) => {
    const row = await trx<ChannelRow>('channels').where({ id }).first();
    if (!row) return false;
    const next = mutate(row, parseChannelInfo(row.channel_info));
    if (!next) return false;
    const patch: Partial<ChannelRow> = { key: next.key, channel_info: serializeChannelInfo(next.info) };
    if (!next.enabled && Number(row.status) === CHANNEL_STATUS.enabled) {
      patch.status = CHANNEL_STATUS.autoDisabled;
      patch.other_info = mergeOtherInfo(row.other_info, { status_reason: disabledReason, status_time: now });
    } else if (next.enabled && Number(row.status) === CHANNEL_STATUS.autoDisabled && parseChannelInfo(row.channel_info).is_multi_key) {
      // A key enabled again on a channel that was disabled only for having none.
      const reason = (() => {
        try {
          return String((JSON.parse(row.other_info || '{}') as Record<string, unknown>).status_reason ?? '');
        } catch {
          return '';
        }
      })();
      if (reason === disabledReason || LANGS.some((l) => reason === t(l, 'channel.all_keys_disabled'))) patch.status = CHANNEL_STATUS.enabled;
    }
    await trx('channels').where({ id }).update(patch);
    const saved = { ...row, ...patch } as ChannelRow;
    if (patch.status !== undefined) await syncAbilities(trx, { ...saved, status: Number(patch.status) });
    return saved;
  });
}
