import { beforeEach, describe, expect, it } from 'vitest';
import { cachedStatus, chatLinks, localFlag, saveStatus } from './status';
import { memoryStorage, setStore, store } from './storage';

beforeEach(() => setStore(memoryStorage()));

describe('status cache', () => {
  it('stores the object and the individual keys', () => {
    saveStatus({
      system_name: 'GW',
      enable_drawing: true,
      enable_task: false,
      chats: [{ A: 'https://a' }],
      footer_html: '<b>x</b>',
      default_collapse_sidebar: true,
      setup: true,
    });
    expect(cachedStatus()).toMatchObject({ system_name: 'GW', setup: true });
    expect(store().getItem('system_name')).toBe('GW');
    expect(store().getItem('enable_drawing')).toBe('true');
    expect(store().getItem('enable_task')).toBe('false');
    expect(store().getItem('chats')).toBe('[{"A":"https://a"}]');
    expect(store().getItem('footer_html')).toBe('<b>x</b>');
    expect(localFlag('enable_drawing')).toBe(true);
    expect(localFlag('enable_task')).toBe(false);
    expect(localFlag('default_collapse_sidebar')).toBe(true);
  });

  it('removes keys the server no longer sends', () => {
    saveStatus({ docs_link: 'https://docs' });
    saveStatus({});
    expect(store().getItem('docs_link')).toBeNull();
  });

  it('parses chat links and tolerates bad data', () => {
    expect(chatLinks('[{"Next":"https://n?key={key}"},{"B":"https://b","C":"https://c"}]')).toEqual([
      { name: 'Next', url: 'https://n?key={key}' },
      { name: 'B', url: 'https://b' },
      { name: 'C', url: 'https://c' },
    ]);
    expect(chatLinks('not json')).toEqual([]);
    expect(chatLinks('{"a":1}')).toEqual([]);
    expect(chatLinks(null)).toEqual([]);
  });
});
