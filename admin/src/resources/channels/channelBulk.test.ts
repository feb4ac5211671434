import { describe, expect, it } from 'vitest';
import { channelReportItems } from './channelBulk';

const t = (key: string, o?: Record<string, unknown>) => (key === 'res.channel.msg.delete_deleted' ? 'gone' : String(o?._ ?? key));

describe('channelReportItems', () => {
  it('names the channels on screen and translates the outcome, keeping the server text for unknown codes', () => {
    const items = channelReportItems(
      [
        { label: '#1', ok: true, code: 'deleted' },
        { label: '#2', ok: false, code: 'refused', message: 'server says no' },
        { label: '#3', ok: false, message: 'plain' },
      ],
      [
        { id: 1, name: 'alpha' },
        { id: 3, name: 'gamma' },
      ],
      'delete',
      t,
    );
    expect(items).toEqual([
      { label: '#1 alpha', ok: true, code: 'deleted', message: 'gone' },
      { label: '#2', ok: false, code: 'refused', message: 'server says no' },
      { label: '#3 gamma', ok: false, message: 'plain' },
    ]);
  });
});
