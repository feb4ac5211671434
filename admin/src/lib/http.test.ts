import { describe, expect, it } from 'vitest';
import { HttpError } from 'react-admin';
import { createApi, errorText, qs } from './http';
import { KEYS, memoryStorage, setStore } from './storage';

describe('qs', () => {
  it('keeps order, encodes, drops empty values', () => {
    expect(qs({ a: 1, b: '', c: undefined, d: null, e: 'x y&z', f: 0, g: false })).toBe('?a=1&e=x%20y%26z&f=0&g=false');
    expect(qs({})).toBe('');
  });
});

describe('api client', () => {
  it('sends JSON bodies with the content type; GET has none', async () => {
    const seen: Array<{ url: string; init: { method: string; headers: Record<string, string>; body?: string } }> = [];
    const http = createApi({
      fetch: async (url, init) => (seen.push({ url, init }), { status: 200, text: async () => '{"success":true,"message":"","data":1}' }),
      getUserId: () => 9,
    });
    await http.post('/api/x', { a: 1 });
    await http.get('/api/y');
    expect(seen[0]!.init).toMatchObject({
      method: 'POST',
      body: '{"a":1}',
      headers: { 'Content-Type': 'application/json', 'New-Api-User': '9', 'Cache-Control': 'no-store' },
    });
    expect(seen[1]!.init.body).toBeUndefined();
    expect(seen[1]!.init.headers['Content-Type']).toBeUndefined();
  });

  it("sends the console's language as Accept-Language, following a switch", async () => {
    const s = memoryStorage();
    setStore(s);
    const langs: string[] = [];
    const http = createApi({
      fetch: async (_url, init) => (langs.push(init.headers['Accept-Language']!), { status: 200, text: async () => '{"success":true,"message":"","data":1}' }),
    });
    await http.get('/api/a');
    s.setItem(KEYS.language, 'en');
    await http.get('/api/b');
    s.setItem(KEYS.language, 'zh-CN');
    await http.get('/api/c');
    expect(langs).toEqual(['zh', 'en', 'zh']);
  });

  it('raw answers a success:false envelope instead of throwing', async () => {
    const http = createApi({ fetch: async () => ({ status: 200, text: async () => '{"success":false,"message":"nope","data":null}' }) });
    expect(await http.raw('GET', '/api/x')).toMatchObject({ success: false, message: 'nope' });
    await expect(http.get('/api/x')).rejects.toMatchObject({ message: 'nope' });
  });

  it('network failures and non-JSON answers become "Error: …"', async () => {
    const down = createApi({ fetch: async () => Promise.reject(new Error('Failed to fetch')) });
    await expect(down.get('/api/x')).rejects.toMatchObject({ message: 'Error: Failed to fetch', status: 0 });
    const html = createApi({ fetch: async () => ({ status: 200, statusText: 'OK', text: async () => '<html>' }) });
    await expect(html.get('/api/x')).rejects.toMatchObject({ message: 'Error: OK' });
    const teapot = createApi({ fetch: async () => ({ status: 418, statusText: "I'm a teapot", text: async () => '' }) });
    await expect(teapot.get('/api/x')).rejects.toMatchObject({ message: "Error: I'm a teapot", status: 418 });
  });

  it('a 401 calls onUnauthorized', async () => {
    let n = 0;
    const http = createApi({ fetch: async () => ({ status: 401, text: async () => '{"success":false,"message":"未登录"}' }), onUnauthorized: () => void n++ });
    await expect(http.get('/api/user/self')).rejects.toMatchObject({ status: 401, message: 'app.error.expired' });
    expect(n).toBe(1);
  });
});

describe('errorText', () => {
  const t = (k: string) => `T(${k})`;
  it('translates keys, keeps server messages, prefixes other errors', () => {
    expect(errorText(new HttpError('app.error.too_many', 429), t)).toBe('T(app.error.too_many)');
    expect(errorText(new HttpError('令牌名称过长', 200), t)).toBe('令牌名称过长');
    expect(errorText(new Error('boom'), t)).toBe('Error: boom');
    expect(errorText('app.login.empty', t)).toBe('T(app.login.empty)');
  });
});
