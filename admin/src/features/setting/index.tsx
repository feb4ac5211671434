import type { FeatureMessages, FeatureRoute } from '../types';
import { SettingPage } from './SettingPage';
import { settingMessages } from './messages';

/** Routes of this feature (owned by the feature folder; registered in features/index.tsx). */
export const routes: FeatureRoute[] = [{ path: '/setting', element: <SettingPage /> }];

/** Translations of this feature, merged into the app's i18n tree. */
export const messages: FeatureMessages = settingMessages;
