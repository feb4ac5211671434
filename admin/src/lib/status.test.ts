import { beforeEach, describe, expect, it } from 'vitest';
import { cachedStatus, chatLinks, loadStatus, localFlag, saveStatus, statusErrorKind, StatusLoadError, storeChannelModels } from './status';
import { createApi, setApi } from './http';
import { recorder } from '../test/recorder';
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

describe('status load (GET /api/status) and the admins’ models map (GET /api/models)', () => {
  const failing = () => createApi({ fetch: async () => Promise.reject(new Error('offline')) });

  it('answers the status and caches it for the next page load', async () => {
    const r = recorder();
    setApi(r.http);
    r.answer({ system_name: 'GW', setup: true });
    await expect(loadStatus()).resolves.toEqual({ system_name: 'GW', setup: true });
    expect(r.last).toMatchObject({ method: 'GET', url: '/api/status' });
    expect(cachedStatus()).toEqual({ system_name: 'GW', setup: true });
    expect(store().getItem('system_name')).toBe('GW');
  });

  it('success:false is a failed load, no answer an unreachable server; the cache is kept', async () => {
    saveStatus({ system_name: 'cached' });
    const r = recorder();
    setApi(r.http);
    r.answerRaw(200, { success: false, message: 'no' });
    const failed = await loadStatus().catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(StatusLoadError);
    expect(statusErrorKind(failed)).toBe('failed');
    setApi(failing());
    expect(statusErrorKind(await loadStatus().catch((e: unknown) => e))).toBe('unreachable');
    expect(cachedStatus()).toEqual({ system_name: 'cached' });
  });

  it('error kinds: none without an error, unreachable for any other error', () => {
    expect(statusErrorKind(null)).toBeUndefined();
    expect(statusErrorKind(undefined)).toBeUndefined();
    expect(statusErrorKind(new StatusLoadError('failed'))).toBe('failed');
    expect(statusErrorKind(new Error('x'))).toBe('unreachable');
  });

  it('stores the channel-type → models map; a failure keeps the stored one and does not reject', async () => {
    const r = recorder();
    setApi(r.http);
    r.answer({ '1': ['gpt-4o'] });
    await expect(storeChannelModels()).resolves.toBeNull();
    expect(r.last.url).toBe('/api/models');
    expect(store().getItem('channel_models')).toBe('{"1":["gpt-4o"]}');
    r.answerRaw(200, { success: false, message: 'no' });
    await expect(storeChannelModels()).resolves.toBeNull();
    setApi(failing());
    await expect(storeChannelModels()).resolves.toBeNull();
    expect(store().getItem('channel_models')).toBe('{"1":["gpt-4o"]}');
  });
});
