import { deepMerge } from '../lib/merge';
import type { FeatureMessages, FeatureRoute } from './types';
import * as playground from './playground';
import * as pricing from './pricing';
import * as chat from './chat';
import * as topup from './topup';
import * as personal from './personal';
import * as setting from './setting';
import * as detail from './detail';
import * as tasklogs from './tasklogs';
import * as performance from './performance';
import * as security from './security';

const FEATURES: Array<{ routes: FeatureRoute[]; messages: FeatureMessages }> = [
  playground,
  pricing,
  chat,
  topup,
  personal,
  setting,
  detail,
  tasklogs,
  performance,
  security,
];

/** Every feature page's route (private unless marked public). */
export const featureRoutes: FeatureRoute[] = FEATURES.flatMap((f) => f.routes);

/** Every feature's translations, per language. */
export const featureMessages: FeatureMessages = {
  zh: deepMerge<Record<string, unknown>>({}, ...FEATURES.map((f) => f.messages.zh)),
  en: deepMerge<Record<string, unknown>>({}, ...FEATURES.map((f) => f.messages.en)),
};
