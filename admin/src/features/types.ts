import type { ReactElement } from 'react';

/** A console page built as a feature folder: its routes and its translations. */
export interface FeatureRoute {
  path: string;
  element: ReactElement;
  /** Public pages skip the login guard (pricing). */
  isPublic?: boolean;
}

export interface FeatureMessages {
  zh: Record<string, unknown>;
  en: Record<string, unknown>;
}
