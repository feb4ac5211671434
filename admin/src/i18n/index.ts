import { createInstance, type i18n as I18n } from 'i18next';
import { convertRaTranslationsToI18next, getI18nProvider } from 'ra-i18n-i18next';
import englishMessages from 'ra-language-english';
import type { I18nProvider } from 'react-admin';
import chineseMessages from './raZh';
import { appMessages } from './app';
import { resourceMessages } from '../resources/messages';
import { featureMessages } from '../features';
import { KEYS, store, storedLanguage } from '../lib/storage';
import { deepMerge } from '../lib/merge';
import { setBulkTranslator } from '../lib/bulk';

export type Locale = 'zh' | 'en';
export const LOCALES: Array<{ locale: Locale; name: string }> = [
  { locale: 'zh', name: '中文' },
  { locale: 'en', name: 'English' },
];

type Tree = Record<string, unknown>;

export { deepMerge };

/** The translation tree of one language: react-admin's messages, the shell's, the resources'. */
export function translations(locale: Locale): Tree {
  const ra = convertRaTranslationsToI18next(locale === 'zh' ? chineseMessages : englishMessages) as Tree;
  return deepMerge<Tree>(ra, appMessages[locale], resourceMessages[locale] ?? {}, featureMessages[locale] ?? {});
}

/** The stored language (i18nextLng), zh by default; `zh-CN` and the like count as zh. */
export function storedLocale(): Locale {
  return storedLanguage();
}

export let i18nextInstance: I18n | undefined;

/** Builds react-admin's i18n provider (async: i18next initialises first). */
export async function createI18nProvider(): Promise<I18nProvider> {
  const instance = createInstance();
  i18nextInstance = instance;
  const provider = await getI18nProvider(
    instance,
    {
      lng: storedLocale(),
      fallbackLng: 'zh',
      supportedLngs: ['zh', 'en'],
      resources: { zh: { translation: translations('zh') }, en: { translation: translations('en') } },
      interpolation: { escapeValue: false },
      returnNull: false,
    },
    LOCALES,
  );
  setBulkTranslator((key, options) => String(instance.t(key, options)));
  const change = provider.changeLocale;
  return {
    ...provider,
    changeLocale: async (locale: string, options?: unknown) => {
      const l: Locale = locale === 'en' ? 'en' : 'zh';
      store().setItem(KEYS.language, l);
      if (typeof document !== 'undefined') document.documentElement.lang = l === 'zh' ? 'zh-CN' : 'en';
      await change(l, options);
    },
  };
}
