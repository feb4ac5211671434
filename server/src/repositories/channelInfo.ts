/**
 * A channel's `channel_info` column (new-api's shape): whether it is a multi-key channel, how its
 * keys are chosen, and each key's status. A key index missing from `multi_key_status_list` is
 * enabled. Statuses are the channel ones: 1 enabled, 2 disabled by an admin, 3 disabled
 * automatically (an invalid key, an exhausted quota, a keyword match).
 */
import { KEY_STATUS } from './channelStatus';

export type MultiKeyMode = 'random' | 'polling';

export interface ChannelKeyInfo {
  is_multi_key: boolean;
  multi_key_size: number;
  multi_key_mode: MultiKeyMode;
  multi_key_status_list: Record<string, number>;
  multi_key_disabled_reason: Record<string, string>;
  multi_key_disabled_time: Record<string, number>;
}

const asRecord = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** Parses the column; anything unreadable is a single-key channel's empty info. */
export function parseChannelInfo(raw: unknown): ChannelKeyInfo {
  let j: Record<string, unknown> = {};
  if (typeof raw === 'string' && raw.trim()) {
    try {
      j = asRecord(JSON.parse(raw));
    } catch {
      j = {};
    }
  } else if (raw && typeof raw === 'object') j = asRecord(raw);
  const statuses: Record<string, number> = {};
  for (const [k, v] of Object.entries(asRecord(j.multi_key_status_list))) {
    const n = Number(v);
    if (/^\d+$/.test(k) && (n === KEY_STATUS.manuallyDisabled || n === KEY_STATUS.autoDisabled)) statuses[k] = n;
  }
  const reasons: Record<string, string> = {};
  for (const [k, v] of Object.entries(asRecord(j.multi_key_disabled_reason))) if (typeof v === 'string') reasons[k] = v;
  const times: Record<string, number> = {};
  for (const [k, v] of Object.entries(asRecord(j.multi_key_disabled_time))) if (Number.isFinite(Number(v))) times[k] = Number(v);
  return {
    is_multi_key: j.is_multi_key === true,
    multi_key_size: Math.max(0, Number(j.multi_key_size) || 0),
    multi_key_mode: j.multi_key_mode === 'polling' ? 'polling' : 'random',
    multi_key_status_list: statuses,
    multi_key_disabled_reason: reasons,
    multi_key_disabled_time: times,
  };
}

export function keyStatus(info: ChannelKeyInfo, index: number): number {
  return info.multi_key_status_list[String(index)] ?? KEY_STATUS.enabled;
}

/** Sets one key's status (enabled drops its entry, reason and time). */
export function setKeyStatus(info: ChannelKeyInfo, index: number, status: number, reason: string, now: number): void {
  const k = String(index);
  if (status === KEY_STATUS.enabled) {
    delete info.multi_key_status_list[k];
    delete info.multi_key_disabled_reason[k];
    delete info.multi_key_disabled_time[k];
    return;
  }
  info.multi_key_status_list[k] = status;
  info.multi_key_disabled_reason[k] = reason.slice(0, 500);
  info.multi_key_disabled_time[k] = now;
}

/**
 * Carries per-key statuses over a change of the key list: a key keeps its status when the same key
 * text is still there (at whatever index); new keys are enabled.
 */
export function remapKeyStatuses(info: ChannelKeyInfo, oldKeys: string[], newKeys: string[]): ChannelKeyInfo {
  const byKey = new Map<string, { s: number; r: string; t: number }>();
  oldKeys.forEach((key, i) => {
    const s = info.multi_key_status_list[String(i)];
    if (s) byKey.set(key, { s, r: info.multi_key_disabled_reason[String(i)] ?? '', t: info.multi_key_disabled_time[String(i)] ?? 0 });
  });
  const next: ChannelKeyInfo = {
    ...info,
    multi_key_size: newKeys.length,
    multi_key_status_list: {},
    multi_key_disabled_reason: {},
    multi_key_disabled_time: {},
  };
  newKeys.forEach((key, i) => {
    const old = byKey.get(key);
    if (old) setKeyStatus(next, i, old.s, old.r, old.t);
  });
  return next;
}

export function newMultiKeyInfo(size: number, mode: MultiKeyMode): ChannelKeyInfo {
  return {
    is_multi_key: true,
    multi_key_size: size,
    multi_key_mode: mode,
    multi_key_status_list: {},
    multi_key_disabled_reason: {},
    multi_key_disabled_time: {},
  };
}

export const serializeChannelInfo = (info: ChannelKeyInfo): string => (info.is_multi_key ? JSON.stringify(info) : '');
