import type { FeatureMessages, FeatureRoute } from '../types';
import { PersonalPage } from './PersonalPage';
import { personalMessages } from './messages';

/** Routes of this feature (owned by the feature folder; registered in features/index.tsx). */
export const routes: FeatureRoute[] = [{ path: '/personal', element: <PersonalPage /> }];

/** Translations of this feature, merged into the app's i18n tree. */
export const messages: FeatureMessages = personalMessages;
