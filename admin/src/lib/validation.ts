/** Registration checks, in the order the form shows them; answers a translation key or null. */
export function registerError(
  input: { username: string; password: string; password2: string },
  turnstile: { required: boolean; token: string },
): string | null {
  if (!input.username.trim() || !input.password) return 'app.register.empty';
  if (input.password.length < 8) return 'app.register.short';
  if (input.password !== input.password2) return 'app.register.mismatch';
  if (turnstile.required && !turnstile.token) return 'app.register.turnstile';
  return null;
}

/** Setup checks (only when the admin is not initialised yet). */
export function setupError(input: { username: string; password: string; confirmPassword: string }, rootInit: boolean): string | null {
  if (rootInit) return null;
  if (!input.username.trim()) return 'app.setup.username_empty';
  if (input.password.length < 8) return 'app.setup.password_short';
  if (input.password !== input.confirmPassword) return 'app.setup.mismatch';
  return null;
}

export type UsageMode = 'external' | 'self' | 'demo';

/** The setup payload's switches for a usage mode. */
export function usageModeFlags(mode: UsageMode): { SelfUseModeEnabled: boolean; DemoSiteEnabled: boolean } {
  return { SelfUseModeEnabled: mode === 'self', DemoSiteEnabled: mode === 'demo' };
}
