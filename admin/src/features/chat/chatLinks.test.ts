import { describe, expect, it } from 'vitest';
import { chat2Link, chatLinkAt, chatTarget, fillLink, firstEnabledTokenId, isSafeLink, plainKey, serverAddress } from './chatLinks';

describe('tokens', () => {
  it('takes the first enabled token (its key is asked for by id: lists mask keys)', () => {
    expect(
      firstEnabledTokenId([
        { id: 1, status: 2 },
        { id: 2, status: 1 },
        { id: 3, status: 1 },
      ]),
    ).toBe(2);
    expect(
      firstEnabledTokenId([
        { id: 1, status: 3 },
        { id: 2, status: 4 },
      ]),
    ).toBeUndefined();
    expect(firstEnabledTokenId([])).toBeUndefined();
    expect(firstEnabledTokenId(undefined)).toBeUndefined();
  });
  it('reads the key answer without its sk- prefix', () => {
    expect(plainKey({ key: 'abc' })).toBe('abc');
    expect(plainKey({ key: 'sk-abc' })).toBe('abc');
    expect(plainKey({ key: '' })).toBeUndefined();
    expect(plainKey(null)).toBeUndefined();
  });
});

describe('chat links', () => {
  const chats = [{ NextChat: 'https://chat.example/#/?settings={"key":"{key}","url":"{address}"}' }, { Lobe: 'https://lobe.example/?k={key}' }];
  it('picks the link by id (0 by default)', () => {
    expect(chatLinkAt(chats, undefined)).toEqual({ ok: true, name: 'NextChat', url: chats[0]!.NextChat });
    expect(chatLinkAt(JSON.stringify(chats), '1')).toEqual({ ok: true, name: 'Lobe', url: 'https://lobe.example/?k={key}' });
  });
  it('tells apart corrupt, empty and misconfigured data', () => {
    expect(chatLinkAt('{oops', 0)).toEqual({ ok: false, error: 'parse' });
    expect(chatLinkAt('{"a":1}', 0)).toEqual({ ok: false, error: 'parse' });
    expect(chatLinkAt('[]', 0)).toEqual({ ok: false, error: 'none' });
    expect(chatLinkAt('', 0)).toEqual({ ok: false, error: 'none' });
    expect(chatLinkAt(null, 0)).toEqual({ ok: false, error: 'none' });
    expect(chatLinkAt(chats, 2)).toEqual({ ok: false, error: 'misconfigured' });
    expect(chatLinkAt(chats, 'x')).toEqual({ ok: false, error: 'misconfigured' });
    expect(chatLinkAt([{ A: '' }], 0)).toEqual({ ok: false, error: 'misconfigured' });
    expect(chatLinkAt([{}], 0)).toEqual({ ok: false, error: 'misconfigured' });
    expect(chatLinkAt(['x'], 0)).toEqual({ ok: false, error: 'misconfigured' });
  });
  it('fills {key} as sk-<key> and {address} URL-encoded, everywhere', () => {
    expect(fillLink('https://c/?a={address}&k={key}&k2={key}', 'abc', 'https://gw.example:3000')).toBe(
      'https://c/?a=https%3A%2F%2Fgw.example%3A3000&k=sk-abc&k2=sk-abc',
    );
  });
  it('uses ServerAddress, else the origin', () => {
    expect(serverAddress('https://api.example/', 'http://localhost:3000')).toBe('https://api.example');
    expect(serverAddress('', 'http://localhost:3000')).toBe('http://localhost:3000');
    expect(serverAddress(undefined, 'http://localhost:3000')).toBe('http://localhost:3000');
  });
  it('refuses script links', () => {
    expect(isSafeLink('https://x')).toBe(true);
    expect(isSafeLink('/local')).toBe(true);
    expect(isSafeLink('javascript:alert(1)')).toBe(false);
    expect(isSafeLink('//evil')).toBe(false);
    expect(isSafeLink('data:text/html,x')).toBe(false);
  });
});

describe('chat2link', () => {
  it('uses the site chat link in the settings form', () => {
    const r = chat2Link({ chatLink: 'https://next.example/', key: 'k1', address: 'https://gw' });
    expect(r).toEqual({ ok: true, name: 'chat_link', url: `https://next.example/#/?settings=${encodeURIComponent('{"key":"sk-k1","url":"https://gw"}')}` });
  });
  it('else the first chat link with placeholders', () => {
    expect(chat2Link({ chats: [{ A: 'https://a/?k={key}&u={address}' }], key: 'k', address: 'http://h' })).toEqual({
      ok: true,
      name: 'A',
      url: 'https://a/?k=sk-k&u=http%3A%2F%2Fh',
    });
    expect(chat2Link({ chats: [], key: 'k', address: 'h' })).toEqual({ ok: false, error: 'none' });
  });
});

describe('chatTarget', () => {
  const good = (key: string, address: string) => ({ ok: true as const, url: `https://chat.example/?key=${key}&url=${address}`, name: 'Chat' });
  it('fails on a broken configuration before reading tokens', () => {
    expect(chatTarget(() => ({ ok: false, error: 'none' }), undefined, 'https://gw')).toEqual({ kind: 'error', message: 'feat.chat.no_links' });
  });
  it('waits for the key, then reports its error or a missing token', () => {
    expect(chatTarget(good, undefined, 'https://gw')).toEqual({ kind: 'loading' });
    expect(chatTarget(good, undefined, 'https://gw', 'boom')).toEqual({ kind: 'error', message: 'boom' });
    expect(chatTarget(good, null, 'https://gw')).toEqual({ kind: 'error', message: 'feat.chat.no_token', toTokens: true });
  });
  it('builds the link with the key and address, refusing non-http links', () => {
    expect(chatTarget(good, 'abc', 'https://gw')).toEqual({ kind: 'ready', url: 'https://chat.example/?key=abc&url=https://gw', name: 'Chat' });
    const js = (key: string) => ({ ok: true as const, url: key ? 'javascript:alert(1)' : 'https://x', name: 'x' });
    expect(chatTarget(js, 'abc', 'https://gw')).toEqual({ kind: 'error', message: 'feat.chat.misconfigured' });
  });
});
