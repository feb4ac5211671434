import { describe, expect, it } from 'vitest';
import { CHANNEL_DEFAULTS, formToPayload, type ChannelForm } from './channelForm';
import {
  EMPTY_CATALOGUE,
  OPENAI_CHANNEL_TYPE,
  catalogueFrom,
  channelTypeColor,
  channelTypeLabel,
  hasPredefinedModels,
  keyHint,
  kindFields,
  typeMenu,
} from './channelTypes';
// The fixture is the server's own answer (its catalogue module is plain data), so the console's
// expectations cannot drift from what GET /api/channel/types serves.
import { AZURE_DEFAULT_API_VERSION, CHANNEL_TYPE, consoleChannelTypes } from '../../../../server/src/channels/catalogue';

const ANSWER: unknown = JSON.parse(JSON.stringify(consoleChannelTypes('zh')));
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

describe("a new channel's kind", () => {
  it("is the server's OpenAI id, offered in the type menu", () => {
    expect(OPENAI_CHANNEL_TYPE).toBe(CHANNEL_TYPE.OpenAI);
    expect(CHANNEL_DEFAULTS.type).toBe(OPENAI_CHANNEL_TYPE);
    expect(channelTypeLabel(CAT, CHANNEL_DEFAULTS.type)).toBe('OpenAI');
    expect(typeMenu(CAT, CHANNEL_DEFAULTS.type).find((t) => t.value === CHANNEL_DEFAULTS.type)).toEqual({ value: OPENAI_CHANNEL_TYPE, label: 'OpenAI' });
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
    expect(
      CAT.list
        .filter((t) => hasPredefinedModels(CAT, t.id))
        .map((t) => t.id)
        .sort((a, b) => a - b),
    ).toEqual([2, 5, 36]);
  });
  it("offers the listed kinds in the menu, plus a stored channel's own kind", () => {
    const menu = typeMenu(CAT, 1).map((t) => t.value);
    expect(menu).toHaveLength(37);
    expect(menu).not.toContain(7);
    expect(typeMenu(CAT, 7).map((t) => t.value)).toContain(7);
    expect(typeMenu(CAT, 999).at(-1)).toEqual({ value: 999, label: '#999' });
  });
  it('skips malformed items and works without the list (loading or failed)', () => {
    const cat = catalogueFrom([
      null,
      3,
      { id: 'x', label: 'bad' },
      { id: 4, label: 'Ollama', color: 'no-such-colour', fields: { base_url: { placeholder: 'no label' } } },
    ]);
    expect(cat.list).toEqual([
      { id: 4, name: '', label: 'Ollama', color: 'grey', offered: true, key_hint: '', json_key: false, predefined_models: false, retired: '', fields: {} },
    ]);
    expect(catalogueFrom({ not: 'a list' }).list).toEqual([]);
    expect(channelTypeLabel(EMPTY_CATALOGUE, 1)).toBe('#1');
    expect(typeMenu(EMPTY_CATALOGUE, 1)).toEqual([{ value: 1, label: '#1' }]);
    expect(formToPayload(form({ type: 3, models: ['gpt-4.1'] }), false, EMPTY_CATALOGUE).models).toBe('gpt-4.1');
  });
});
