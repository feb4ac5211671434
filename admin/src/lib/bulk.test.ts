import { describe, expect, it } from 'vitest';
import { BulkError, bulkItemsFromAnswer, bulkSummary, runEach } from './bulk';
import { errorText } from './http';

const t = (k: string, o?: Record<string, unknown>) => `${k}:${o?.ok}/${o?.failed}`;

describe('runEach', () => {
  it('keeps going after a failure and records each reason', async () => {
    const items = await runEach([1, 2, 3], async (id) => {
      if (id === 2) throw new Error('无权限');
    });
    expect(items).toEqual([
      { label: '#1', ok: true },
      { label: '#2', ok: false, message: '无权限' },
      { label: '#3', ok: true },
    ]);
  });
});

describe('bulkSummary', () => {
  it('counts successes and lists the failures with their reasons', () => {
    expect(bulkSummary([{ label: '#1', ok: true }], t)).toBe('app.bulk.summary:1/0');
    expect(
      bulkSummary(
        [
          { label: '#1', ok: true },
          { label: '#2', ok: false, message: 'gone' },
          { label: '#3', ok: false },
        ],
        t,
      ),
    ).toBe('app.bulk.summary:1/2: #2 gone; #3');
  });
  it('BulkError carries the items, and its summary is shown as is', () => {
    const e = new BulkError('x', [{ label: '#1', ok: false }]);
    expect(e.message).toBe('x');
    expect(e.items).toHaveLength(1);
    expect(errorText(e)).toBe('x');
  });
});

describe('bulkItemsFromAnswer', () => {
  it('reads a list of per-item results', () => {
    expect(
      bulkItemsFromAnswer([
        { id: 1, name: 'a', success: true, balance: 3.5 },
        { id: 2, success: false, message: 'timeout' },
        { name: 'c', error: 'bad key' },
      ]),
    ).toEqual([
      { label: 'a', ok: true, message: '3.5' },
      { label: '#2', ok: false, message: 'timeout' },
      { label: 'c', ok: false, message: 'bad key' },
    ]);
  });
  it('reads succeeded/failed lists and wrapped results', () => {
    expect(bulkItemsFromAnswer({ succeeded: ['a'], failed: [{ name: 'b', message: 'x' }] })).toEqual([
      { label: 'a', ok: true },
      { label: 'b', ok: false, message: 'x' },
    ]);
    expect(bulkItemsFromAnswer({ results: [{ name: 'z', ok: true }] })).toEqual([{ label: 'z', ok: true }]);
  });
  it('gives nothing for answers without items', () => {
    expect(bulkItemsFromAnswer(null)).toEqual([]);
    expect(bulkItemsFromAnswer(3)).toEqual([]);
    expect(bulkItemsFromAnswer({ count: 3 })).toEqual([]);
  });
});
