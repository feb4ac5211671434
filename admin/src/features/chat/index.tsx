import type { FeatureMessages, FeatureRoute } from '../types';
import { Chat2LinkPage, ChatPage } from './ChatPage';
import { en, zh } from './messages';

/** Routes of this feature (owned by the feature folder; registered in features/index.tsx). */
export const routes: FeatureRoute[] = [
  { path: '/chat', element: <ChatPage /> },
  { path: '/chat/:id', element: <ChatPage /> },
  { path: '/chat2link', element: <Chat2LinkPage /> },
];

/** Translations of this feature, merged into the app's i18n tree. */
export const messages: FeatureMessages = { zh: { feat: { chat: zh } }, en: { feat: { chat: en } } };
