import { describe, expect, it } from 'vitest';
import { menuGroups, sidebarHiddenOn } from './SideMenu';
import { isNewYear } from './TopBar';

const keys = (groups: ReturnType<typeof menuGroups>) => groups.map((g) => [g.key, g.items.map((i) => i.key)]);
const user = { id: 2, username: 'u', role: 1 };
const admin = { id: 1, username: 'a', role: 10 };
const off = () => false;

describe('side menu', () => {
  it('a user: playground, tokens and logs, personal group; no admin group', () => {
    expect(keys(menuGroups(user, off, []))).toEqual([
      ['chat', ['playground']],
      ['console', ['token', 'log']],
      ['personal', ['topup', 'personal']],
    ]);
  });

  it('an admin also sees metrics and the admin group', () => {
    expect(keys(menuGroups(admin, off, []))).toEqual([
      ['chat', ['playground']],
      ['console', ['performance', 'token', 'log']],
      ['admin', ['channel', 'redemption', 'topup_order', 'user', 'setting']],
      ['personal', ['topup', 'personal']],
    ]);
  });

  it('local flags add the dashboard, drawing log and task log; chats add entries', () => {
    const flags = (k: string) => ['enable_data_export', 'enable_drawing', 'enable_task'].includes(k);
    const groups = menuGroups(user, flags, [
      { name: 'NextChat', url: 'https://n' },
      { name: 'Lobe', url: 'https://l' },
    ]);
    expect(keys(groups)).toEqual([
      ['chat', ['playground', 'chat']],
      ['console', ['detail', 'token', 'log', 'midjourney', 'task']],
      ['personal', ['topup', 'personal']],
    ]);
    expect(groups[0]!.items[1]).toMatchObject({ label: 'app.menu.chat', to: '/chat/0' });
    expect(groups[0]!.items[1]!.children!.map((c) => [c.label, c.literal, c.to])).toEqual([
      ['NextChat', true, '/chat/0'],
      ['Lobe', true, '/chat/1'],
    ]);
  });

  it('only the site chat link (ChatLink): one chat entry opening /chat2link', () => {
    const groups = menuGroups(user, off, [], 'https://chat.example.com');
    expect(keys(groups)[0]).toEqual(['chat', ['playground', 'chat']]);
    expect(groups[0]!.items[1]).toMatchObject({ label: 'app.menu.chat', to: '/chat2link' });
    expect(keys(menuGroups(user, off, [], '  '))[0]).toEqual(['chat', ['playground']]);
  });

  it('each flag alone', () => {
    expect(keys(menuGroups(user, (k) => k === 'enable_task', []))[1]).toEqual(['console', ['token', 'log', 'task']]);
    expect(keys(menuGroups(user, (k) => k === 'enable_drawing', []))[1]).toEqual(['console', ['token', 'log', 'midjourney']]);
  });

  it('is hidden on home, chat and setup only', () => {
    for (const p of ['/', '/setup', '/chat', '/chat/0']) expect(sidebarHiddenOn(p)).toBe(true);
    for (const p of ['/token', '/channel', '/chat2link', '/login', '/log']) expect(sidebarHiddenOn(p)).toBe(false);
  });
});

describe('new year easter egg', () => {
  it('only on 1 January', () => {
    expect(isNewYear(new Date(2027, 0, 1, 12))).toBe(true);
    expect(isNewYear(new Date(2027, 0, 2))).toBe(false);
    expect(isNewYear(new Date(2026, 11, 31))).toBe(false);
  });
});

describe('sidebar initial state and third-party links', () => {
  it('the user choice wins over the site default', async () => {
    const { memoryStorage, setStore, store } = await import('../lib/storage');
    const { initialCollapsed } = await import('./AppLayout');
    setStore(memoryStorage());
    expect(initialCollapsed()).toBe(false);
    store().setItem('default_collapse_sidebar', 'true');
    expect(initialCollapsed()).toBe(true);
    store().setItem('sidebar_collapsed', 'false');
    expect(initialCollapsed()).toBe(false);
  });

  it('OAuth buttons go through the server with the stored inviter code', async () => {
    const { memoryStorage, setStore, store } = await import('../lib/storage');
    const { oauthStartUrl } = await import('../pages/Login');
    setStore(memoryStorage());
    expect(oauthStartUrl('github')).toBe('/api/oauth/github/authorize');
    store().setItem('aff', 'AB CD');
    expect(oauthStartUrl('oidc')).toBe('/api/oauth/oidc/authorize?aff=AB%20CD');
    expect(oauthStartUrl('linuxdo', 'x')).toBe('/api/oauth/linuxdo/authorize?aff=x');
  });
});
