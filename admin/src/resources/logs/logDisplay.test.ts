import { describe, expect, it } from 'vitest';
import { firstTokenSeconds, logDetail, logTypeKey, usedChannels } from './logDisplay';

describe('logs', () => {
  it('type keys', () => {
    expect([0, 1, 2, 3, 4, 5, 9].map(logTypeKey)).toEqual(['all', 'topup', 'consume', 'manage', 'system', 'error', 'unknown']);
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
  it('details: the client and upstream protocols, converted or passed through', () => {
    const conv = logDetail({ type: 2, other: { group_ratio: 1, request_format: 'claude', upstream_format: 'openai', passthrough: false } });
    expect(conv.parts.at(-1)).toEqual({ key: 'res.log.detail.converted', params: { from: 'Claude Messages', to: 'OpenAI Chat' } });
    const pass = logDetail({ type: 2, other: { group_ratio: 1, request_format: 'responses', upstream_format: 'responses', passthrough: true } });
    expect(pass.parts.at(-1)).toEqual({ key: 'res.log.detail.passthrough', params: { from: 'OpenAI Responses' } });
  });
});
