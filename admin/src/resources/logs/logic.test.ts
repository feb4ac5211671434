import { describe, expect, it } from 'vitest';
import { EMPTY_LOG_FILTER, firstTokenSeconds, logDetail, logTypeKey, toEpoch, toFilter, usedChannels } from './logic';

describe('logs', () => {
  it('type keys', () => {
    expect([0, 1, 2, 3, 4, 9].map(logTypeKey)).toEqual(['all', 'topup', 'consume', 'manage', 'system', 'unknown']);
  });
  it('first-token time from other.frt in ms', () => {
    expect(firstTokenSeconds('{"frt":2500}')).toBe(2.5);
    expect(firstTokenSeconds({ frt: 0 })).toBeNull();
    expect(firstTokenSeconds('')).toBeNull();
  });
  it('retry channels from other.admin_info.use_channel', () => {
    expect(usedChannels({ admin_info: { use_channel: [3, '5'] } })).toEqual(['3', '5']);
    expect(usedChannels('{}')).toEqual([]);
  });
  it('details: ratios for consumption, content otherwise', () => {
    const d = logDetail({ type: 2, other: { model_ratio: 15, completion_ratio: 4, group_ratio: 1 } });
    expect(d.parts.map((p) => p.key)).toEqual(['res.log.detail.model_ratio', 'res.log.detail.completion_ratio', 'res.log.detail.group_ratio']);
    const priced = logDetail({ type: 2, other: { model_price: 0.02, group_ratio: 2 } });
    expect(priced.parts.map((p) => p.key)).toEqual(['res.log.detail.model_price', 'res.log.detail.group_ratio']);
    expect(logDetail({ type: 1, content: 'topped up' })).toEqual({ parts: [], text: 'topped up' });
  });
  it('datetime-local to epoch', () => {
    expect(toEpoch('')).toBeUndefined();
    expect(toEpoch('2024-01-02T03:04')).toBe(Math.floor(new Date(2024, 0, 2, 3, 4).getTime() / 1000));
  });
});

describe('log filters', () => {
  it('drops empty values and keeps admin-only filters for admins', () => {
    expect(toFilter(EMPTY_LOG_FILTER, true)).toEqual({});
    const f = { ...EMPTY_LOG_FILTER, type: 2, model_name: ' gpt-4o ', channel: '3', username: 'bob', start: '2024-01-02T03:04' };
    expect(toFilter(f, true)).toEqual({ type: 2, model_name: 'gpt-4o', channel: '3', username: 'bob', start_timestamp: Math.floor(new Date(2024, 0, 2, 3, 4).getTime() / 1000) });
    expect(toFilter(f, false)).not.toHaveProperty('channel');
    expect(toFilter(f, false)).not.toHaveProperty('username');
  });
});
