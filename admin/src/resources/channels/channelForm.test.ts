import { describe, expect, it } from 'vitest';
import {
  CHANNEL_DEFAULTS,
  addCustomModels,
  asChannelForm,
  channelChecks,
  baseUrlEndsWithV1,
  batchKeys,
  changesKeyDestination,
  channelToForm,
  copyPayload,
  formToPayload,
  parsePriority,
  parseWeight,
  stripModelDots,
  stripTrailingSlash,
  switchType,
  validateChannel,
  type ChannelForm,
} from './channelForm';
import { catalogueFrom } from './channelTypes';
// The fixture is the server's own answer (its catalogue module is plain data), so the console's
// expectations cannot drift from what GET /api/channel/types serves.
import { AZURE_DEFAULT_API_VERSION, consoleChannelTypes } from '../../../../server/src/channels/catalogue';

const ANSWER: unknown = JSON.parse(JSON.stringify(consoleChannelTypes('zh')));
const CAT = catalogueFrom(ANSWER);

const form = (over: Partial<ChannelForm> = {}): ChannelForm => ({ ...CHANNEL_DEFAULTS, name: 'c', key: 'sk-x', models: ['gpt-4o'], ...over });
describe('channel form transform', () => {
  it('turns the wire record into form values (groups list, models list, pretty mapping)', () => {
    const f = channelToForm({
      id: 3,
      name: 'n',
      type: 14,
      group: 'default,vip',
      models: 'a,b',
      model_mapping: '{"a":"b"}',
      auto_ban: 0,
      priority: 5,
      weight: 2,
      key: 'secret',
    });
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
  it('an edit that sends the key somewhere new (base URL host, proxy, kind, Vertex region) needs the key typed again', () => {
    const stored = form({ key: '', base_url: 'https://api.example.com', setting: '' });
    const moved = (over: Partial<ChannelForm>) => changesKeyDestination(stored, { ...stored, ...over }, CAT);
    expect(moved({ base_url: 'https://attacker.example.net' })).toBe(true);
    expect(moved({ base_url: 'https://api.example.com:8443' })).toBe(true);
    expect(moved({ base_url: '' })).toBe(true);
    expect(moved({ setting: '{"proxy":"http://proxy.example.net:3128"}' })).toBe(true);
    // Same host, other fields, a kind change behind the same base URL: the key goes nowhere new.
    expect(moved({ base_url: 'https://api.example.com/openai/', name: 'x', models: ['a'], priority: 3 })).toBe(false);
    expect(moved({ type: 43, setting: '{"force_format":true}' })).toBe(false);
    const official = form({ key: '', base_url: '' });
    expect(changesKeyDestination(official, { ...official, type: 43 }, CAT)).toBe(true);
    const vertex = form({ key: '', type: 41, base_url: '', other: 'us-central1' });
    expect(changesKeyDestination(vertex, { ...vertex, other: 'europe-west4' }, CAT)).toBe(true);
    const azure = form({ key: '', type: 3, base_url: 'https://res.openai.azure.com', other: '2024-10-21' });
    expect(changesKeyDestination(azure, { ...azure, other: '2025-04-01-preview' }, CAT)).toBe(false);
    const withProxy = form({ key: '', setting: '{"proxy":"http://p.example.net:1"}' });
    expect(changesKeyDestination(withProxy, { ...withProxy, setting: '' }, CAT)).toBe(false);
    // The form then asks for the key; typed, it passes.
    expect(validateChannel({ ...stored, base_url: 'https://attacker.example.net' }, true, CAT, true)).toBe('res.channel.msg.key_for_destination');
    expect(validateChannel({ ...stored, base_url: 'https://attacker.example.net', key: 'sk-typed' }, true, CAT, true)).toBeNull();
    expect(validateChannel(stored, true, CAT, false)).toBeNull();
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
    const body = copyPayload({
      id: 9,
      name: 'a',
      type: 14,
      key: 'k',
      models: 'm',
      group: 'g',
      priority: 3,
      balance: 12,
      used_quota: 50,
      response_time: 300,
      test_time: 5,
      created_time: 1,
    });
    expect(body).toEqual({ name: 'a_复制', type: 14, key: 'k', models: 'm', group: 'g', priority: 3 });
  });
});

describe('multi-key create', () => {
  it("sends new-api's shape: mode multi_to_single, the key order, one key per line", () => {
    const body = formToPayload(form({ key: ' sk-a \n\nsk-b\n', multi: true, multi_key_mode: 'polling' }), false, CAT);
    expect(body).toMatchObject({ mode: 'multi_to_single', multi_key_mode: 'polling', key: 'sk-a\nsk-b' });
    expect(formToPayload(form({ key: 'sk-a\nsk-b', multi: false, batch: true }), false, CAT)).toMatchObject({ mode: 'batch' });
  });
  it('an edited multi-key channel keeps its key order field', () => {
    const f = channelToForm({ id: 4, name: 'm', type: 1, channel_info: { is_multi_key: true, multi_key_mode: 'polling' } });
    expect(f).toMatchObject({ multi: true, multi_key_mode: 'polling' });
    expect(formToPayload({ ...f, models: ['a'] }, true, CAT)).toMatchObject({ id: 4, multi_key_mode: 'polling' });
    expect(formToPayload(channelToForm({ id: 5, name: 's', type: 1 }), true, CAT)).not.toHaveProperty('multi_key_mode');
  });
  it('takes a JSON list for a JSON-credential kind as typed, and rejects a broken one', () => {
    const list = JSON.stringify(
      [
        { type: 'service_account', project_id: 'p1' },
        { type: 'service_account', project_id: 'p2' },
      ],
      null,
      2,
    );
    const vertex = form({ type: 41, key: list, multi: true });
    expect(validateChannel(vertex, false, CAT)).toBeNull();
    expect(formToPayload(vertex, false, CAT).key).toBe(list);
    expect(validateChannel(form({ type: 41, key: '[{"a":', multi: true }), false, CAT)).toBe('res.channel.msg.key_json');
  });
});

describe('channel form inputs', () => {
  it('reads emptied inputs (null) as the field defaults', () => {
    const f = asChannelForm({ name: 'n', key: null, base_url: null, priority: null, models: null, groups: ['vip'] });
    expect(f).toMatchObject({ name: 'n', key: '', base_url: '', priority: 0, models: [], groups: ['vip'], auto_ban: true });
  });
  it('checks each field on its own', () => {
    expect(channelChecks.name(form({ name: ' ' }))).toBe('res.channel.msg.name_key_required');
    expect(channelChecks.keyPresent(form({ key: '' }), false)).toBe('res.channel.msg.name_key_required');
    expect(channelChecks.keyPresent(form({ key: '' }), true)).toBeNull();
    expect(channelChecks.keyPresent(form({ key: '' }), true, true)).toBe('res.channel.msg.key_for_destination');
    expect(channelChecks.keyFormat(form({ type: 41, key: 'nope' }), false, CAT)).toBe('res.channel.msg.key_json');
    expect(channelChecks.models(form({ models: [] }))).toBe('res.channel.msg.models_required');
    expect(channelChecks.mapping(form({ model_mapping: '[]' }))).toBe('res.channel.msg.mapping_json');
  });
  it('asks for the base URL of a kind that needs one (Azure endpoint)', () => {
    expect(channelChecks.baseUrl(form({ type: 3, base_url: '' }), CAT)).toBe('ra.validation.required');
    expect(validateChannel(form({ type: 3, base_url: ' ' }), false, CAT)).toBe('ra.validation.required');
    expect(channelChecks.baseUrl(form({ type: 3, base_url: 'https://x.openai.azure.com' }), CAT)).toBeNull();
    expect(channelChecks.baseUrl(form({ type: 1, base_url: '' }), CAT)).toBeNull();
  });
});
