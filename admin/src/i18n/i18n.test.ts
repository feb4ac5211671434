import { describe, expect, it } from 'vitest';
import englishMessages from 'ra-language-english';
import chineseMessages from './raZh';
import { appMessages } from './app';
import { deepMerge } from './index';

function keys(tree: unknown, prefix = ''): string[] {
  if (!tree || typeof tree !== 'object') return [prefix];
  return Object.entries(tree as Record<string, unknown>).flatMap(([k, v]) => keys(v, prefix ? `${prefix}.${k}` : k));
}

describe('translations', () => {
  it('the Chinese react-admin set covers every english key', () => {
    expect(keys(chineseMessages).sort()).toEqual(keys(englishMessages).sort());
  });

  it('the shell labels exist in both languages', () => {
    expect(keys(appMessages.en).sort()).toEqual(keys(appMessages.zh).sort());
    for (const k of keys(appMessages.zh)) expect(k).toMatch(/^app\./);
  });

  it('uses the product wording where it has one', () => {
    expect(appMessages.en.app.not_found.message).toBe('Page does not exist, please check your browser address');
    expect(appMessages.en.app.login.empty).toBe('Please enter username and password!');
    expect(appMessages.en.app.login.expired).toBe('Not logged in or login has expired, please log in again');
    expect(appMessages.en.app.register.short).toBe('Password length must not be less than 8 characters!');
    expect(appMessages.en.app.register.mismatch).toBe('The two passwords do not match');
    expect(appMessages.en.app.error.too_many).toBe('Error: too many requests, please try again later!');
    expect(appMessages.en.app.error.internal).toBe('Error: internal server error, please contact the administrator!');
    expect(appMessages.en.app.error.demo).toBe('This site is for demo only, no server!');
    expect(appMessages.zh.app.setup.username_empty).toBe('请输入管理员用户名');
    expect(appMessages.zh.app.setup.password_short).toBe('密码长度至少为8个字符');
    expect(appMessages.zh.app.setup.mismatch).toBe('两次输入的密码不一致');
    expect(appMessages.zh.app.copy.failed_title).toBe('无法复制到剪贴板，请手动复制');
    expect(appMessages.zh.app.oauth.failed_redirect).toBe('操作失败，重定向至登录界面中...');
  });

  it('deepMerge merges nested trees, later wins', () => {
    expect(deepMerge({ a: { b: 1, c: 2 } }, { a: { c: 3 }, d: [1] })).toEqual({ a: { b: 1, c: 3 }, d: [1] });
  });
});

describe('i18n provider', () => {
  it('starts in zh, falls back to zh, switches to en and stores i18nextLng', async () => {
    const { memoryStorage, setStore, store } = await import('../lib/storage');
    setStore(memoryStorage());
    const { createI18nProvider } = await import('./index');
    const p = await createI18nProvider();
    expect(p.getLocale()).toBe('zh');
    expect(p.translate('app.login.empty')).toBe('请输入用户名和密码！');
    expect(p.translate('ra.action.save')).toBe('保存');
    expect(p.translate('ra.navigation.page_range_info', { offsetBegin: 1, offsetEnd: 10, total: 42 })).toBe('第 1-10 条，共 42 条');
    await p.changeLocale('en');
    expect(store().getItem('i18nextLng')).toBe('en');
    expect(p.translate('app.login.empty')).toBe('Please enter username and password!');
    expect(p.translate('ra.notification.deleted', { smart_count: 2 })).toBe('2 elements deleted');
    expect(p.translate('no.such.key', { _: 'fallback text' })).toBe('fallback text');
    await p.changeLocale('fr');
    expect(store().getItem('i18nextLng')).toBe('zh');
  });

  it('reads a stored English choice', async () => {
    const { memoryStorage, setStore, store } = await import('../lib/storage');
    setStore(memoryStorage());
    store().setItem('i18nextLng', 'en-US');
    const { createI18nProvider } = await import('./index');
    expect((await createI18nProvider()).getLocale()).toBe('en');
  });
});
