import type { FeatureMessages, FeatureRoute } from '../types';
import { PlaygroundPage } from './PlaygroundPage';
import { en, zh } from './messages';

/** Routes of this feature (owned by the feature folder; registered in features/index.tsx). */
export const routes: FeatureRoute[] = [{ path: '/playground', element: <PlaygroundPage /> }];

/** Translations of this feature, merged into the app's i18n tree. */
export const messages: FeatureMessages = { zh: { feat: { playground: zh } }, en: { feat: { playground: en } } };
