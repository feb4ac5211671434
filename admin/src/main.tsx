import { createRoot } from 'react-dom/client';
import { App } from './App';
import { createI18nProvider, storedLocale } from './i18n';

document.documentElement.lang = storedLocale() === 'zh' ? 'zh-CN' : 'en';

void createI18nProvider().then((i18nProvider) => {
  createRoot(document.getElementById('root')!).render(<App i18nProvider={i18nProvider} />);
});
