import { describe, expect, it } from 'vitest';
import { groupByTag, isTagRow, tagEditPayload, validateTagPriority, validateTagWeight } from './channelTags';

describe('tag-level checks', () => {
  it('tag-level priority integer and weight non-negative integer', () => {
    expect(validateTagPriority('-3')).toBeNull();
    expect(validateTagPriority('1.5')).toBe('res.channel.msg.priority_integer');
    expect(validateTagWeight('0')).toBeNull();
    expect(validateTagWeight('-1')).toBe('res.channel.msg.weight_nonnegative');
  });
});

describe('tag mode', () => {
  const chans = [
    { id: 1, tag: 't1', group: 'default', used_quota: 10, response_time: 1000, priority: 2, weight: 1, status: 2 },
    { id: 2, tag: '', group: 'vip', used_quota: 5, response_time: 0, status: 1 },
    { id: 3, tag: 't1', group: 'vip,default', used_quota: 20, response_time: 3000, priority: 9, weight: 4, status: 1 },
    { id: 4, tag: 't1', group: 'default', used_quota: 1, response_time: 0, status: 2 },
  ];
  it('aggregates channels sharing a tag and keeps untagged channels as rows', () => {
    const rows = groupByTag(chans);
    expect(rows).toHaveLength(2);
    const tag = rows[0];
    expect(isTagRow(tag)).toBe(true);
    if (!isTagRow(tag)) return;
    expect(tag.children.map((c) => c.id)).toEqual([1, 3, 4]);
    expect(tag.used_quota).toBe(31);
    expect(tag.response_time).toBe(2000);
    expect(tag.group).toBe('default,vip');
    expect(tag.priority).toBe(2);
    expect(tag.weight).toBe(1);
    expect(tag.status).toBe(1);
    expect(rows[1]).toBe(chans[1]);
  });
  it('passes through rows the server already aggregated', () => {
    const server = [
      { id: 'tag:t', key: 'tag:t', tag: 't', name: 't', group: 'default', children: [{ id: 1 }, { id: 2 }], isTag: true },
      { id: 5, tag: '' },
    ];
    const rows = groupByTag(server);
    expect(rows).toHaveLength(2);
    expect(isTagRow(rows[0])).toBe(true);
    if (isTagRow(rows[0])) expect(rows[0].children.map((c) => c.id)).toEqual([1, 2]);
    expect(rows[1]).toBe(server[1]);
  });
  it('tag edit payload: null when nothing changed, empty new tag dissolves', () => {
    const orig = { tag: 't1', model_mapping: '', groups: ['default'], models: ['a'] };
    expect(tagEditPayload(orig, { new_tag: 't1', model_mapping: '', groups: ['default'], models: ['a'] })).toBeNull();
    expect(tagEditPayload(orig, { new_tag: '', model_mapping: '', groups: ['default'], models: ['a'] })).toEqual({ tag: 't1', new_tag: '' });
    expect(tagEditPayload(orig, { new_tag: 't1', model_mapping: '', groups: ['default', 'vip'], models: ['a', 'b'] })).toEqual({
      tag: 't1',
      groups: 'default,vip',
      models: 'a,b',
    });
  });
});
