import { describe, expect, it } from 'vitest';
import {
  CHANNEL_DEFAULTS,
  addCustomModels,
  copyPayload,
  baseUrlEndsWithV1,
  batchKeys,
  channelToForm,
  channelTypeLabel,
  formToPayload,
  groupByTag,
  isTagRow,
  parsePriority,
  parseWeight,
  stripModelDots,
  switchType,
  stripTrailingSlash,
  tagEditPayload,
  validateChannel,
  validateTagPriority,
  validateTagWeight,
  type ChannelForm,
} from './logic';

const form = (over: Partial<ChannelForm> = {}): ChannelForm => ({ ...CHANNEL_DEFAULTS, name: 'c', key: 'sk-x', models: ['gpt-4o'], ...over });

describe('channel type labels', () => {
  it('labels the kinds of spec 000 §3', () => {
    expect(channelTypeLabel(1)).toBe('OpenAI');
    expect(channelTypeLabel(3)).toBe('Azure OpenAI');
    expect(channelTypeLabel(8)).toBe('custom');
    expect(channelTypeLabel(48)).toBe('xAI');
    expect(channelTypeLabel(999)).toBe('#999');
  });
});

describe('channel form transform', () => {
  it('turns the wire record into form values (groups list, models list, pretty mapping)', () => {
    const f = channelToForm({ id: 3, name: 'n', type: 14, group: 'default,vip', models: 'a,b', model_mapping: '{"a":"b"}', auto_ban: 0, priority: 5, weight: 2, key: 'secret' });
    expect(f.groups).toEqual(['default', 'vip']);
    expect(f.models).toEqual(['a', 'b']);
    expect(f.model_mapping).toBe('{\n  "a": "b"\n}');
    expect(f.auto_ban).toBe(false);
    expect(f.key).toBe('');
    expect(f.id).toBe(3);
  });
  it('defaults an empty group to default', () => {
    expect(channelToForm({ group: '' }).groups).toEqual(['default']);
  });
  it('sends comma strings, removes the trailing slash and converts auto_ban', () => {
    const body = formToPayload(form({ groups: ['default', 'vip'], models: ['a', 'b', 'a'], base_url: 'https://api.x.com/// ', auto_ban: true }), false);
    expect(body.group).toBe('default,vip');
    expect(body.models).toBe('a,b');
    expect(body.base_url).toBe('https://api.x.com');
    expect(body.auto_ban).toBe(1);
    expect(body.key).toBe('sk-x');
    expect(body).not.toHaveProperty('groups');
    expect(body).not.toHaveProperty('id');
  });
  it('removes dots from Azure model names and fills the API version', () => {
    const body = formToPayload(form({ type: 3, models: ['gpt-3.5-turbo', 'gpt-4.1'], base_url: 'https://x.openai.azure.com/' }), false);
    expect(body.models).toBe('gpt-35-turbo,gpt-41');
    expect(body.other).not.toBe('');
    expect(stripModelDots(['a.b', 'ab'])).toEqual(['ab']);
  });
  it('defaults iFlytek (18) version to v2.1 and keeps an explicit one', () => {
    expect(formToPayload(form({ type: 18 }), false).other).toBe('v2.1');
    expect(formToPayload(form({ type: 18, other: 'v3.5' }), false).other).toBe('v3.5');
  });
  it('sends the organization only for OpenAI', () => {
    expect(formToPayload(form({ type: 1, openai_organization: 'org-1' }), false).openai_organization).toBe('org-1');
    expect(formToPayload(form({ type: 14, openai_organization: 'org-1' }), false).openai_organization).toBe('');
  });
  it('omits an empty key on edit and keeps the id', () => {
    const body = formToPayload(form({ id: 7, key: '' }), true);
    expect(body.id).toBe(7);
    expect(body).not.toHaveProperty('key');
    expect(formToPayload(form({ id: 7, key: 'new' }), true).key).toBe('new');
  });
  it('batch mode sends one key per line', () => {
    const body = formToPayload(form({ batch: true, key: ' k1 \n\n k2\r\nk3 ' }), false);
    expect(body.key).toBe('k1\nk2\nk3');
    expect(body.mode).toBe('batch');
    expect(batchKeys('a\n\n b \n')).toEqual(['a', 'b']);
  });
  it('parses priority and weight as integers (priority ≥ -999, weight < 0 → 0)', () => {
    expect(parsePriority('12')).toBe(12);
    expect(parsePriority('-5000')).toBe(-999);
    expect(parsePriority('x')).toBe(0);
    expect(parseWeight('-3')).toBe(0);
    expect(parseWeight('7.9')).toBe(7);
    const body = formToPayload(form({ priority: '3', weight: '-1' }), false);
    expect(body.priority).toBe(3);
    expect(body.weight).toBe(0);
  });
});

describe('channel validations', () => {
  it('needs a name and a key on create', () => {
    expect(validateChannel(form({ name: '' }), false)).toBe('res.channel.msg.name_key_required');
    expect(validateChannel(form({ key: ' ' }), false)).toBe('res.channel.msg.name_key_required');
    expect(validateChannel(form({ key: '' }), true)).toBeNull();
  });
  it('needs at least one model', () => {
    expect(validateChannel(form({ models: [] }), false)).toBe('res.channel.msg.models_required');
  });
  it('needs a JSON object as model mapping', () => {
    expect(validateChannel(form({ model_mapping: '{"a":' }), false)).toBe('res.channel.msg.mapping_json');
    expect(validateChannel(form({ model_mapping: '[1]' }), false)).toBe('res.channel.msg.mapping_json');
    expect(validateChannel(form({ model_mapping: '{"a":"b"}' }), false)).toBeNull();
  });
  it('needs service-account JSON for Vertex AI', () => {
    expect(validateChannel(form({ type: 41, key: 'not json' }), false)).toBe('res.channel.msg.key_json');
    expect(validateChannel(form({ type: 41, key: '{"type":"service_account"}' }), false)).toBeNull();
  });
  it('warns about base URLs ending in /v1', () => {
    expect(baseUrlEndsWithV1('https://x.com/v1')).toBe(true);
    expect(baseUrlEndsWithV1('https://x.com/v1/')).toBe(true);
    expect(baseUrlEndsWithV1('https://x.com/v1beta')).toBe(false);
    expect(stripTrailingSlash('https://x.com/')).toBe('https://x.com');
  });
  it('tag-level priority integer and weight non-negative integer', () => {
    expect(validateTagPriority('-3')).toBeNull();
    expect(validateTagPriority('1.5')).toBe('res.channel.msg.priority_integer');
    expect(validateTagWeight('0')).toBeNull();
    expect(validateTagWeight('-1')).toBe('res.channel.msg.weight_nonnegative');
  });
  it('custom models are comma separated and duplicates are reported', () => {
    expect(addCustomModels(['a'], 'b, c ,b')).toEqual({ models: ['a', 'b', 'c'], duplicate: false });
    expect(addCustomModels(['a'], 'a,d')).toEqual({ models: ['a', 'd'], duplicate: true });
  });
});

describe('channel kind switch', () => {
  it('fills the new kind default and clears a value meant for the old kind', () => {
    expect(switchType(form({ type: 1, other: '' }), 18).other).toBe('v2.1');
    expect(switchType(form({ type: 18, other: 'v3.5' }), 1).other).toBe('');
    expect(switchType(form({ type: 21, other: 'kb-1' }), 39).other).toBe('');
    expect(switchType(form({ type: 1, other: 'x' }), 14).other).toBe('x');
    expect(switchType(form({ type: 1 }), 3).type).toBe(3);
  });
});

describe('channel copy', () => {
  it('keeps settings and key, renames, drops counters and id', () => {
    const body = copyPayload({ id: 9, name: 'a', type: 14, key: 'k', models: 'm', group: 'g', priority: 3, balance: 12, used_quota: 50, response_time: 300, test_time: 5, created_time: 1 });
    expect(body).toEqual({ name: 'a_复制', type: 14, key: 'k', models: 'm', group: 'g', priority: 3 });
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
    const server = [{ id: 'tag:t', key: 'tag:t', tag: 't', name: 't', group: 'default', children: [{ id: 1 }, { id: 2 }], isTag: true }, { id: 5, tag: '' }];
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
