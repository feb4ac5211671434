import { useNotify, useRefresh, type RaRecord } from 'react-admin';
import { useQuery } from '@tanstack/react-query';
import { useApi, useGateway } from '../shared/api';
import { useNotifyError } from '../shared/hooks';
import { readLocal, writeLocal } from '../shared/storage';
import { parsePriority, parseWeight } from './channelForm';
import { isTagRow, validateTagPriority, validateTagWeight } from './channelTags';

export type ChannelRow = RaRecord;

/**
 * The channel list's calls on one row or on all channels: each refreshes the list and notifies
 * the result (or the server's error).
 */
export function useChannelOps() {
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const dp = useGateway();

  const run = async (fn: () => Promise<unknown>, okKey?: string, params?: Record<string, unknown>) => {
    try {
      await fn();
      if (okKey) notify(okKey, { type: 'success', messageArgs: params });
      refresh();
    } catch (e) {
      notifyError(e);
    }
  };

  const testChannel = async (row: ChannelRow, model?: string) => {
    try {
      const r = await dp.testChannel(row.id, model);
      notify('res.channel.msg.test_ok', { type: 'success', messageArgs: { name: row.name, time: (r.time ?? 0).toFixed(2) } });
      refresh();
    } catch (e) {
      notifyError(e);
      refresh();
    }
  };

  const setStatus = (row: ChannelRow, status: number) =>
    run(() => dp.update('channel', { id: row.id, data: { status }, previousData: row }), 'res.common.op_success');

  /** Saves an inline priority or weight: a tag row sets it on every channel of the tag. */
  const saveNumber = async (row: ChannelRow, field: 'priority' | 'weight', text: string) => {
    if (isTagRow(row)) {
      const err = field === 'priority' ? validateTagPriority(text) : validateTagWeight(text);
      if (err) return notify(err, { type: 'warning' });
      const value = parseInt(text, 10);
      if (value === row[field]) return;
      return run(() => dp.editTag({ tag: row.tag, [field]: value }), 'res.common.op_success');
    }
    const value = field === 'priority' ? parsePriority(text) : parseWeight(text);
    if (value === Number(row[field] ?? 0)) return;
    return run(() => dp.update('channel', { id: row.id, data: { [field]: value }, previousData: row }), 'res.common.op_success');
  };

  const updateBalance = (row: ChannelRow) =>
    run(async () => {
      const r = await dp.updateChannelBalance(row.id);
      notify('res.channel.msg.balance_updated', { type: 'success', messageArgs: { name: row.name, balance: r.balance.toFixed(2) } });
    });

  return { dp, run, testChannel, setStatus, saveNumber, updateBalance };
}

/**
 * Options loaded once and then kept: the query stays off once it has data, so the list's refresh
 * (which invalidates every query) does not fetch them again after each operation.
 */
function useOptions(key: string, load: () => Promise<string[]>): string[] {
  const { data } = useQuery({ queryKey: ['channel', key], queryFn: load, enabled: (query) => query.state.data === undefined });
  return data ?? [];
}

/** The groups a channel can serve (GET /api/group/): the filter's and the tag editor's options. */
export function useChannelGroups(): string[] {
  const dp = useGateway();
  return useOptions('groups', () => dp.getGroups().then((r) => r.data));
}

/** Every model the channels know (GET /api/channel/models): the model pickers' options. */
export function useChannelModels(): string[] {
  const dp = useGateway();
  return useOptions('models', () => dp.channelModels().then((r) => r.data.map((m) => String(m.id))));
}

type TypeModels = Record<string, string[]>;
const NO_TYPE_MODELS: TypeModels = {};

/**
 * The models of each channel type (GET /api/models), for "fill related models" and the kinds with
 * a predefined list. The browser keeps the map ('channel_models', also refreshed by the shell when
 * an admin loads the console): the form reads it on opening and asks the server only when nothing
 * is stored. Not kept in the query cache (gcTime 0), so each opening reads the stored map again.
 */
export function useChannelTypeModels(): TypeModels {
  const http = useApi();
  const { data } = useQuery({
    queryKey: ['channel', 'typeModels'],
    queryFn: async () => {
      const r = await http.get<TypeModels>('/api/models');
      if (!r.data || typeof r.data !== 'object') return NO_TYPE_MODELS;
      writeLocal('channel_models', r.data);
      return r.data;
    },
    initialData: () => {
      const stored = readLocal<TypeModels>('channel_models', {});
      return Object.keys(stored).length ? stored : undefined;
    },
    enabled: (query) => query.state.data === undefined,
    gcTime: 0,
    retry: false,
  });
  return data ?? NO_TYPE_MODELS;
}
