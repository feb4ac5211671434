import type { FeatureMessages, FeatureRoute } from '../types';
import { PricingPage } from './PricingPage';
import { en, zh } from './messages';

/** Routes of this feature (owned by the feature folder; registered in features/index.tsx). */
export const routes: FeatureRoute[] = [{ path: '/pricing', element: <PricingPage />, isPublic: true }];

/** Translations of this feature, merged into the app's i18n tree. */
export const messages: FeatureMessages = { zh: { feat: { pricing: zh } }, en: { feat: { pricing: en } } };
