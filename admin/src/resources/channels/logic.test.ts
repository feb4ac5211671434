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
  EMPTY_CATALOGUE,
  catalogueFrom,
  channelTypeColor,
  hasPredefinedModels,
  keyHint,
  kindFields,
  typeMenu,
  type ChannelForm,
} from './logic';
// The fixture is the server's own answer (its catalogue module is plain data), so the console's
// expectations cannot drift from what GET /api/channel/types serves.
import { AZURE_DEFAULT_API_VERSION, consoleChannelTypes } from '../../../../server/src/channels/catalogue';

const ANSWER: unknown = JSON.parse(JSON.stringify(consoleChannelTypes()));
const CAT = catalogueFrom(ANSWER);

const form = (over: Partial<ChannelForm> = {}): ChannelForm => ({ ...CHANNEL_DEFAULTS, name: 'c', key: 'sk-x', models: ['gpt-4o'], ...over });

describe('channel type labels', () => {
  it('labels the kinds the product lists', () => {
    expect(channelTypeLabel(CAT, 1)).toBe('OpenAI');
    expect(channelTypeLabel(CAT, 3)).toBe('Azure OpenAI');
    expect(channelTypeLabel(CAT, 8)).toBe('custom');
    expect(channelTypeLabel(CAT, 48)).toBe('xAI');
    expect(channelTypeLabel(CAT, 999)).toBe('#999');
    expect(channelTypeColor(CAT, 14)).toBe('indigo');
    expect(channelTypeColor(CAT, 999)).toBe('grey');
  });
});

describe('channel types from GET /api/channel/types', () => {
  it('keeps the server order and every type of the answer', () => {
    expect(CAT.list.map((t) => t.id)).toEqual((ANSWER as { id: number }[]).map((t) => t.id));
    expect(CAT.list.slice(0, 4).map((t) => t.label)).toEqual(['OpenAI', 'Midjourney Proxy', 'Midjourney Proxy Plus', 'Suno']);
  });
  it('turns each kind into its form fields', () => {
    expect(kindFields(CAT, 1)).toEqual({ organization: true });
    expect(kindFields(CAT, 3)).toEqual({
      baseUrl: { label: 'res.channel.fields.azure_endpoint', placeholder: 'https://docs-test-001.openai.azure.com', required: true, fullUrl: false },
      other: { label: 'res.channel.fields.azure_api_version', placeholder: AZURE_DEFAULT_API_VERSION, default: AZURE_DEFAULT_API_VERSION, multiline: false },
      stripModelDots: true,
      hint: 'res.channel.hint.azure',
    });
    expect(kindFields(CAT, 8)).toMatchObject({ baseUrl: { required: true, fullUrl: true }, hint: 'res.channel.hint.custom' });
    expect(kindFields(CAT, 41)).toMatchObject({ jsonKey: true, other: { label: 'res.channel.fields.region', multiline: true } });
    expect(kindFields(CAT, 18).other?.default).toBe('v2.1');
    expect(kindFields(CAT, 14)).toEqual({});
    expect(kindFields(CAT, 999)).toEqual({});
  });
  it('gives key hints and the predefined-model kinds', () => {
    expect(keyHint(CAT, 18)).toBe('APPID|APISecret|APIKey');
    expect(keyHint(CAT, 33)).toBe('AccessKey|SecretAccessKey|Region');
    expect(keyHint(CAT, 1)).toBe('');
    expect(CAT.list.filter((t) => hasPredefinedModels(CAT, t.id)).map((t) => t.id).sort((a, b) => a - b)).toEqual([2, 5, 36]);
  });
  it('offers the listed kinds in the menu, plus a stored channel\'s own kind', () => {
    const menu = typeMenu(CAT, 1).map((t) => t.value);
    expect(menu).toHaveLength(37);
    expect(menu).not.toContain(7);
    expect(typeMenu(CAT, 7).map((t) => t.value)).toContain(7);
    expect(typeMenu(CAT, 999).at(-1)).toEqual({ value: 999, label: '#999' });
  });
  it('skips malformed items and works without the list (loading or failed)', () => {
    const cat = catalogueFrom([null, 3, { id: 'x', label: 'bad' }, { id: 4, label: 'Ollama', color: 'no-such-colour', fields: { base_url: { placeholder: 'no label' } } }]);
    expect(cat.list).toEqual([{ id: 4, name: '', label: 'Ollama', color: 'grey', offered: true, key_hint: '', json_key: false, predefined_models: false, fields: {} }]);
    expect(catalogueFrom({ not: 'a list' }).list).toEqual([]);
    expect(channelTypeLabel(EMPTY_CATALOGUE, 1)).toBe('#1');
    expect(typeMenu(EMPTY_CATALOGUE, 1)).toEqual([{ value: 1, label: '#1' }]);
    expect(formToPayload(form({ type: 3, models: ['gpt-4.1'] }), false, EMPTY_CATALOGUE).models).toBe('gpt-4.1');
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
    const body = formToPayload(form({ groups: ['default', 'vip'], models: ['a', 'b', 'a'], base_url: 'https://api.x.com/// ', auto_ban: true }), false, CAT);
    expect(body.group).toBe('default,vip');
    expect(body.models).toBe('a,b');
    expect(body.base_url).toBe('https://api.x.com');
    expect(body.auto_ban).toBe(1);
    expect(body.key).toBe('sk-x');
    expect(body).not.toHaveProperty('groups');
    expect(body).not.toHaveProperty('id');
  });
  it('removes dots from Azure model names and fills the API version', () => {
    const body = formToPayload(form({ type: 3, models: ['gpt-3.5-turbo', 'gpt-4.1'], base_url: 'https://x.openai.azure.com/' }), false, CAT);
    expect(body.models).toBe('gpt-35-turbo,gpt-41');
    expect(body.other).toBe(AZURE_DEFAULT_API_VERSION);
    expect(stripModelDots(['a.b', 'ab'])).toEqual(['ab']);
  });
  it('defaults iFlytek (18) version to v2.1 and keeps an explicit one', () => {
    expect(formToPayload(form({ type: 18 }), false, CAT).other).toBe('v2.1');
    expect(formToPayload(form({ type: 18, other: 'v3.5' }), false, CAT).other).toBe('v3.5');
  });
  it('sends the organization only for OpenAI', () => {
    expect(formToPayload(form({ type: 1, openai_organization: 'org-1' }), false, CAT).openai_organization).toBe('org-1');
    expect(formToPayload(form({ type: 14, openai_organization: 'org-1' }), false, CAT).openai_organization).toBe('');
  });
  it('omits an empty key on edit and keeps the id', () => {
    const body = formToPayload(form({ id: 7, key: '' }), true, CAT);
    expect(body.id).toBe(7);
    expect(body).not.toHaveProperty('key');
    expect(formToPayload(form({ id: 7, key: 'new' }), true, CAT).key).toBe('new');
  });
  it('batch mode sends one key per line', () => {
    const body = formToPayload(form({ batch: true, key: ' k1 \n\n k2\r\nk3 ' }), false, CAT);
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
    const body = formToPayload(form({ priority: '3', weight: '-1' }), false, CAT);
    expect(body.priority).toBe(3);
    expect(body.weight).toBe(0);
  });
});

describe('channel validations', () => {
  it('needs a name and a key on create', () => {
    expect(validateChannel(form({ name: '' }), false, CAT)).toBe('res.channel.msg.name_key_required');
    expect(validateChannel(form({ key: ' ' }), false, CAT)).toBe('res.channel.msg.name_key_required');
    expect(validateChannel(form({ key: '' }), true, CAT)).toBeNull();
  });
  it('needs at least one model', () => {
    expect(validateChannel(form({ models: [] }), false, CAT)).toBe('res.channel.msg.models_required');
  });
  it('needs a JSON object as model mapping', () => {
    expect(validateChannel(form({ model_mapping: '{"a":' }), false, CAT)).toBe('res.channel.msg.mapping_json');
    expect(validateChannel(form({ model_mapping: '[1]' }), false, CAT)).toBe('res.channel.msg.mapping_json');
    expect(validateChannel(form({ model_mapping: '{"a":"b"}' }), false, CAT)).toBeNull();
  });
  it('needs service-account JSON for Vertex AI', () => {
    expect(validateChannel(form({ type: 41, key: 'not json' }), false, CAT)).toBe('res.channel.msg.key_json');
    expect(validateChannel(form({ type: 41, key: '{"type":"service_account"}' }), false, CAT)).toBeNull();
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
    expect(switchType(form({ type: 1, other: '' }), 18, CAT).other).toBe('v2.1');
    expect(switchType(form({ type: 18, other: 'v3.5' }), 1, CAT).other).toBe('');
    expect(switchType(form({ type: 21, other: 'kb-1' }), 39, CAT).other).toBe('');
    expect(switchType(form({ type: 1, other: 'x' }), 14, CAT).other).toBe('x');
    expect(switchType(form({ type: 1 }), 3, CAT).type).toBe(3);
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
