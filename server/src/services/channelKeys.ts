import type { AppContext } from '../context';
import { serverLang, t } from '../i18n';
import { BadRequestError, NotFoundError } from '../lib/errors';
import { nowSec } from '../lib/time';
import { changeChannelKeys, findChannel, type ChannelRow } from '../repositories/channels';
import { channelKeys } from '../channels/routeTable';
import { setChannelKeyStatus } from '../channels/health';
import { BREAKER, healthBoard, type TargetHealth } from '../channels/healthBoard';
import { keyStatus, parseChannelInfo, remapKeyStatuses, setKeyStatus } from '../repositories/channelInfo';
import { invalidateChannels } from './invalidate';
import { maskKey } from './channels';
import { CHANNEL_STATUS, KEY_STATUS } from '../repositories/channelStatus';

/** A single-key action on a multi-key channel (new-api's `/api/channel/multi_key/manage`). */
export interface ManageKeys {
  channel_id: number;
  action: 'get_key_status' | 'enable_key' | 'disable_key' | 'delete_key' | 'enable_all_keys' | 'disable_all_keys' | 'delete_disabled_keys';
  key_index?: number;
}

/** Multi-key channels: single-key actions, and the health of channels and keys for the console. */

const STATE = ['closed', 'open', 'half_open'] as const;

/** A breaker and health figures as the console shows them (this node's figures; breaker states are shared). */
function healthView(h: TargetHealth | undefined) {
  if (!h) return { breaker: 'closed', open_until: 0, error_rate: 0, ttfb_ms: 0, samples: 0, last_failure: '', last_failure_at: 0, last_used: 0 };
  return {
    breaker: STATE[h.state],
    open_until: h.state === BREAKER.closed ? 0 : Math.ceil(h.openUntil / 1000),
    error_rate: Math.round(h.err * 1000) / 1000,
    ttfb_ms: Math.round(h.ttfb),
    samples: h.samples,
    last_failure: h.lastFailure,
    last_failure_at: Math.floor(h.lastFailureAt / 1000),
    last_used: Math.floor(h.lastUsed / 1000),
  };
}

async function multiKeyRow(app: AppContext, id: number): Promise<{ row: ChannelRow; keys: string[] }> {
  const row = await findChannel(app.knex, id);
  if (!row) throw new NotFoundError('channel.not_found');
  const keys = channelKeys(Number(row.type), String(row.key ?? ''));
  if (keys.length < 2 && !parseChannelInfo(row.channel_info).is_multi_key) throw new BadRequestError('channel.not_multi_key');
  return { row, keys };
}

function keyStatusList(app: AppContext, row: ChannelRow, keys: string[]) {
  const info = parseChannelInfo(row.channel_info);
  const board = healthBoard(app);
  const id = Number(row.id);
  const items = keys.map((k, i) => ({
    index: i,
    // Masked for everyone: the list is for telling keys apart, the full keys are in the channel's key field (root).
    key: maskKey(k),
    status: keyStatus(info, i),
    disabled_reason: info.multi_key_disabled_reason[String(i)] ?? '',
    disabled_time: info.multi_key_disabled_time[String(i)] ?? 0,
    ...healthView(board.targets.get(`c${id}:${i}`)),
  }));
  return {
    channel_id: id,
    multi_key_mode: info.multi_key_mode,
    total: keys.length,
    enabled: items.filter((x) => x.status === KEY_STATUS.enabled).length,
    items,
  };
}

export async function manageKeys(app: AppContext, input: ManageKeys) {
  const id = input.channel_id;
  const { row, keys } = await multiKeyRow(app, id);
  const needIndex = () => {
    const i = input.key_index;
    if (i === undefined || i >= keys.length) throw new BadRequestError('channel.key_index_range');
    return i;
  };
  const board = healthBoard(app);
  switch (input.action) {
    case 'get_key_status':
      await board.resync().catch(() => undefined);
      return keyStatusList(app, row, keys);
    case 'enable_key':
    case 'disable_key': {
      const i = needIndex();
      const status = input.action === 'enable_key' ? KEY_STATUS.enabled : KEY_STATUS.manuallyDisabled;
      await setChannelKeyStatus(app, id, i, status, status === KEY_STATUS.enabled ? '' : t(serverLang(app), 'channel.manually_disabled'), false);
      if (status === KEY_STATUS.enabled) board.reset(board.target(id, i));
      break;
    }
    case 'enable_all_keys':
    case 'disable_all_keys': {
      const status = input.action === 'enable_all_keys' ? KEY_STATUS.enabled : KEY_STATUS.manuallyDisabled;
      await changeChannelKeys(
        app.knex,
        id,
        (r, info) => {
          const ks = channelKeys(Number(r.type), String(r.key ?? ''));
          info.is_multi_key = true;
          info.multi_key_size = ks.length;
          ks.forEach((_, i) => setKeyStatus(info, i, status, status === KEY_STATUS.enabled ? '' : t(serverLang(app), 'channel.manually_disabled'), nowSec()));
          return { key: String(r.key), info, keys: ks.length, enabled: status === KEY_STATUS.enabled ? ks.length : 0 };
        },
        nowSec(),
        t(serverLang(app), 'channel.all_keys_disabled'),
      );
      if (status === KEY_STATUS.enabled) board.forgetKeys(id);
      await invalidateChannels(app);
      break;
    }
    case 'delete_key':
    case 'delete_disabled_keys': {
      const drop = new Set<number>();
      if (input.action === 'delete_key') drop.add(needIndex());
      else {
        const info = parseChannelInfo(row.channel_info);
        keys.forEach((_, i) => keyStatus(info, i) !== KEY_STATUS.enabled && drop.add(i));
        if (!drop.size) throw new BadRequestError('channel.no_disabled_keys');
      }
      if (drop.size >= keys.length) throw new BadRequestError('channel.cannot_delete_all_keys');
      const saved = await changeChannelKeys(
        app.knex,
        id,
        (r, info) => {
          const ks = channelKeys(Number(r.type), String(r.key ?? ''));
          // The row must not have changed since it was read (indexes would point elsewhere).
          if (ks.join('\n') !== keys.join('\n')) return false;
          const left = ks.filter((_, i) => !drop.has(i));
          const next = remapKeyStatuses({ ...info, is_multi_key: true }, ks, left);
          const enabled = left.filter((_, i) => keyStatus(next, i) === KEY_STATUS.enabled).length;
          return { key: left.join('\n'), info: next, keys: left.length, enabled };
        },
        nowSec(),
        t(serverLang(app), 'channel.all_keys_disabled'),
      );
      if (!saved) throw new BadRequestError('channel.keys_changed');
      board.forgetKeys(id);
      await invalidateChannels(app);
      break;
    }
  }
  const after = await multiKeyRow(app, id);
  return keyStatusList(app, after.row, after.keys);
}

/** Per channel: breaker state, error rate, latency, last failure; the channels open or disabled right now. */
export async function channelHealth(app: AppContext) {
  const board = healthBoard(app);
  await board.resync().catch(() => undefined);
  const rows: Array<Pick<ChannelRow, 'id' | 'name' | 'status' | 'other_info' | 'channel_info' | 'key' | 'type'>> = await app
    .knex('channels')
    .select('id', 'name', 'status', 'other_info', 'channel_info', 'key', 'type');
  const channels: Record<string, ReturnType<typeof healthView> & { keys_open: number; keys_disabled: number; keys: number }> = {};
  const open: Array<{ id: number; name: string; key_index: number | null; breaker: string; open_until: number; last_failure: string }> = [];
  const disabled: Array<{ id: number; name: string; status: number; reason: string; time: number }> = [];
  const byId = new Map(rows.map((r) => [Number(r.id), r]));
  for (const r of rows) {
    const id = Number(r.id);
    const info = parseChannelInfo(r.channel_info);
    const nKeys = info.is_multi_key ? channelKeys(Number(r.type), String(r.key ?? '')).length : 1;
    let keysOpen = 0;
    for (let i = 0; info.is_multi_key && i < nKeys; i++) {
      const kh = board.targets.get(`c${id}:${i}`);
      if (kh && kh.state !== BREAKER.closed) keysOpen++;
    }
    channels[id] = {
      ...healthView(board.targets.get(`c${id}`)),
      keys: nKeys,
      keys_open: keysOpen,
      keys_disabled: Object.keys(info.multi_key_status_list).length,
    };
    const status = Number(r.status);
    if (status !== CHANNEL_STATUS.enabled) {
      let other: Record<string, unknown>;
      try {
        other = JSON.parse(r.other_info || '{}') as Record<string, unknown>;
      } catch {
        other = {};
      }
      disabled.push({ id, name: String(r.name ?? ''), status, reason: String(other.status_reason ?? ''), time: Number(other.status_time ?? 0) });
    }
  }
  for (const h of board.targets.values()) {
    if (h.state === BREAKER.closed) continue;
    const r = byId.get(h.channelId);
    if (!r) continue;
    open.push({
      id: h.channelId,
      name: String(r.name ?? ''),
      key_index: h.keyIndex < 0 ? null : h.keyIndex,
      breaker: STATE[h.state],
      open_until: Math.ceil(h.openUntil / 1000),
      last_failure: h.lastFailure,
    });
  }
  open.sort((a, b) => a.id - b.id || (a.key_index ?? -1) - (b.key_index ?? -1));
  return { channels, open, disabled };
}
