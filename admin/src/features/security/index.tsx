import type { FeatureMessages, FeatureRoute } from '../types';
import { securityMessages } from './messages';

/** Two-factor login, passkeys and re-verification: no page of its own (cards, dialogs, login parts). */
export const routes: FeatureRoute[] = [];

export const messages: FeatureMessages = securityMessages;

export { useSecureAction, VerificationCancelled, isCancelled } from './secureAction';
export { TwoFactorCard } from './TwoFactorCard';
export { PasskeysCard } from './PasskeysCard';
