import { describe, expect, it } from 'vitest';
import { EMPTY_LOG_FILTER, fromEpoch, fromFilter, toEpoch, toFilter } from './logFilters';

describe('log filters', () => {
  it('datetime-local to epoch', () => {
    expect(toEpoch('')).toBeUndefined();
    expect(toEpoch('2024-01-02T03:04')).toBe(Math.floor(new Date(2024, 0, 2, 3, 4).getTime() / 1000));
  });
  it('drops empty values and keeps admin-only filters for admins', () => {
    expect(toFilter(EMPTY_LOG_FILTER, true)).toEqual({});
    const f = { ...EMPTY_LOG_FILTER, type: 2, model_name: ' gpt-4o ', channel: '3', username: 'bob', start: '2024-01-02T03:04' };
    expect(toFilter(f, true)).toEqual({
      type: 2,
      model_name: 'gpt-4o',
      channel: '3',
      username: 'bob',
      start_timestamp: Math.floor(new Date(2024, 0, 2, 3, 4).getTime() / 1000),
    });
    expect(toFilter(f, false)).not.toHaveProperty('channel');
    expect(toFilter(f, false)).not.toHaveProperty('username');
  });
  it('reads emptied inputs (null) as absent', () => {
    expect(toFilter({ type: null, token_name: null, model_name: 'm', start: null, end: null, group: null, channel: null, username: null }, true)).toEqual({
      model_name: 'm',
    });
  });
  it('reads the form back from the filters kept in the URL', () => {
    expect(fromFilter({})).toEqual(EMPTY_LOG_FILTER);
    const f = { ...EMPTY_LOG_FILTER, type: 2, model_name: 'gpt-4o', channel: '3', username: 'bob', start: '2024-01-02T03:04', end: '2024-12-31T23:59' };
    expect(fromFilter(toFilter(f, true))).toEqual(f);
    expect(fromFilter({ type: '2', channel: 3 })).toEqual({ ...EMPTY_LOG_FILTER, type: 2, channel: '3' });
    expect(fromEpoch(undefined)).toBe('');
    expect(fromEpoch('x')).toBe('');
  });
});
