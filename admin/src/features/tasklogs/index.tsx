import type { FeatureMessages, FeatureRoute } from '../types';
import { DrawingLogPage } from './DrawingLogPage';
import { TaskLogPage } from './TaskLogPage';
import { en, zh } from './messages';

/** Routes of this feature (owned by the feature folder; registered in features/index.tsx). */
export const routes: FeatureRoute[] = [
  { path: '/midjourney', element: <DrawingLogPage /> },
  { path: '/task', element: <TaskLogPage /> },
];

/** Translations of this feature, merged into the app's i18n tree. */
export const messages: FeatureMessages = { zh, en };
