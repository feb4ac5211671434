import type { FeatureMessages, FeatureRoute } from '../types';
import { TopupPage } from './TopupPage';
import { topupMessages } from './messages';

/** Routes of this feature (owned by the feature folder; registered in features/index.tsx). */
export const routes: FeatureRoute[] = [{ path: '/topup', element: <TopupPage /> }];

/** Translations of this feature, merged into the app's i18n tree. */
export const messages: FeatureMessages = topupMessages;
