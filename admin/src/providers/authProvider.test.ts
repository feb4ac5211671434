import { beforeEach, describe, expect, it } from 'vitest';
import { createAuthProvider } from './authProvider';
import { recorder } from '../test/recorder';
import { getUser, memoryStorage, setStore, setUser, store } from '../lib/storage';

beforeEach(() => setStore(memoryStorage()));

const alice = { id: 3, username: 'alice', display_name: 'Alice', role: 10, status: 1, group: 'default' };

describe('authProvider', () => {
  it('login posts the credentials with the turnstile token and stores the user', async () => {
    const r = recorder(null);
    const auth = createAuthProvider(r.http);
    r.answer(alice, { message: '' });
    const out = await auth.login({ username: ' alice ', password: 'secret123', turnstile: 'tok' });
    expect(r.last).toMatchObject({ method: 'POST', url: '/api/user/login?turnstile=tok', body: { username: 'alice', password: 'secret123' } });
    expect(JSON.parse(store().getItem('user')!)).toEqual(alice);
    expect(out).toEqual({ redirectTo: '/token' });
  });

  it('login without a bot-check sends an empty turnstile', async () => {
    const r = recorder(null);
    r.answer(alice);
    await createAuthProvider(r.http).login({ username: 'alice', password: 'x' });
    expect(r.last.url).toBe('/api/user/login?turnstile=');
  });

  it('login with an empty field is refused before any call', async () => {
    const r = recorder(null);
    await expect(createAuthProvider(r.http).login({ username: '', password: 'x' })).rejects.toThrow('app.login.empty');
    await expect(createAuthProvider(r.http).login({ username: 'a', password: '' })).rejects.toThrow('app.login.empty');
    expect(r.calls).toHaveLength(0);
  });

  it('a refused login keeps nobody stored and carries the server message', async () => {
    const r = recorder(null);
    r.answerRaw(200, { success: false, message: '用户名或密码错误，或用户已被封禁' });
    await expect(createAuthProvider(r.http).login({ username: 'a', password: 'b' })).rejects.toMatchObject({ message: '用户名或密码错误，或用户已被封禁' });
    expect(getUser()).toBeNull();
  });

  it('after login, calls carry the stored user id', async () => {
    setUser(alice);
    const { createApi } = await import('../lib/http');
    const seen: Record<string, string>[] = [];
    const http = createApi({
      fetch: async (_u, init) => (seen.push(init.headers), { status: 200, text: async () => '{"success":true,"message":"","data":null}' }),
    });
    await http.get('/api/user/self');
    expect(seen[0]!['New-Api-User']).toBe('3');
  });

  it('logout calls GET /api/user/logout and clears the user', async () => {
    setUser(alice);
    const r = recorder(3);
    const auth = createAuthProvider(r.http);
    expect(await auth.logout({})).toBeUndefined();
    expect(r.last).toMatchObject({ method: 'GET', url: '/api/user/logout' });
    expect(getUser()).toBeNull();
  });

  it('logout survives a failing server call', async () => {
    setUser(alice);
    const r = recorder(3);
    r.answerRaw(500, '');
    await createAuthProvider(r.http).logout({});
    expect(getUser()).toBeNull();
  });

  it('logout without a stored user makes no call', async () => {
    const r = recorder(null);
    await createAuthProvider(r.http).logout({});
    expect(r.calls).toHaveLength(0);
  });

  it('checkAuth follows the stored user', async () => {
    const auth = createAuthProvider(recorder(null).http);
    await expect(auth.checkAuth({})).rejects.toMatchObject({ redirectTo: '/login' });
    setUser(alice);
    await expect(auth.checkAuth({})).resolves.toBeUndefined();
  });

  it('checkError: 401 clears the user and sends to /login?expired=true; 403 and others keep the session', async () => {
    setUser(alice);
    const auth = createAuthProvider(recorder(3).http);
    await expect(auth.checkError({ status: 403 })).resolves.toBeUndefined();
    await expect(auth.checkError({ status: 500 })).resolves.toBeUndefined();
    expect(getUser()).not.toBeNull();
    await expect(auth.checkError({ status: 401 })).rejects.toMatchObject({ redirectTo: '/login?expired=true' });
    expect(getUser()).toBeNull();
  });

  it('getPermissions is the role; getIdentity the stored user', async () => {
    const auth = createAuthProvider(recorder(null).http);
    expect(await auth.getPermissions!({})).toBeUndefined();
    await expect(auth.getIdentity!()).rejects.toThrow();
    setUser({ ...alice, role: 100 });
    expect(await auth.getPermissions!({})).toBe(100);
    expect(await auth.getIdentity!()).toMatchObject({ id: 3, fullName: 'Alice', username: 'alice' });
  });
});
