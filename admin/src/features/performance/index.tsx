import type { FeatureMessages, FeatureRoute } from '../types';
import { PerformancePage } from './PerformancePage';
import { en, zh } from './messages';

/** Routes of this feature (owned by the feature folder; registered in features/index.tsx). */
export const routes: FeatureRoute[] = [{ path: '/performance', element: <PerformancePage /> }];

/** Translations of this feature, merged into the app's i18n tree. */
export const messages: FeatureMessages = { zh, en };
