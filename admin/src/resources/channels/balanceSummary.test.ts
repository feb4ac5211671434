import { describe, expect, it } from 'vitest';
import { balanceSummaryFrom } from './balanceSummary';
import { catalogueFrom, typeMenu } from './channelTypes';
import { consoleChannelTypes } from '../../../../server/src/channels/catalogue';

describe('update-all-balances summary', () => {
  it('reads the per-channel results, failures first, and counts them', () => {
    const s = balanceSummaryFrom({
      total: 4,
      results: [
        { id: 1, name: 'ds', type: 43, status: 'updated', balance: 110.5 },
        { id: 2, name: 'claude', type: 14, status: 'unsupported', message: 'Claude 渠道不提供余额查询接口' },
        { id: 3, name: 'ms', type: 25, status: 'failed', message: '查询余额失败（401）' },
        { id: 4, name: 'bad', type: 1, status: 'weird' },
        'junk',
      ],
    });
    expect(s).toMatchObject({ total: 3, updated: 1, failed: 1, unsupported: 1 });
    expect(s.results.map((r) => r.id)).toEqual([3, 1, 2]);
    expect(s.results[0]).toMatchObject({ status: 'failed', message: '查询余额失败（401）' });
    expect(s.results[1]!.balance).toBe(110.5);
  });

  it('a malformed answer is an empty summary', () => {
    expect(balanceSummaryFrom(null)).toEqual({ total: 0, updated: 0, failed: 0, unsupported: 0, results: [] });
    expect(balanceSummaryFrom({ results: 'x' }).results).toEqual([]);
  });
});

describe('retired kinds in the type menu', () => {
  const cat = catalogueFrom(consoleChannelTypes('zh'));
  it('PaLM2 is listed disabled with its reason for another channel, selectable as its own kind', () => {
    const palm = typeMenu(cat, 1).find((t) => t.value === 11)!;
    expect(palm).toMatchObject({ disabled: true, retired: expect.stringContaining('PaLM2') });
    expect(typeMenu(cat, 11).find((t) => t.value === 11)).toMatchObject({ disabled: false });
    expect(typeMenu(cat, 1).find((t) => t.value === 24)).toEqual({ value: 24, label: 'Gemini' });
    expect(cat.byId.get(11)!.retired).toContain('Gemini');
  });
});
