/**
 * Personal settings: user setting parsing, the dialogs' checks, the invitation link, model list
 * collapsing. Pure functions, unit-tested in personalSettings.test.ts.
 */

export type NotifyType = 'email' | 'webhook';

/** The user's setting JSON, with the product's defaults filled in. */
export interface UserSetting {
  notify_type: NotifyType;
  quota_warning_threshold: number;
  webhook_url: string;
  webhook_secret: string;
  notification_email: string;
  accept_unset_model_ratio_model: boolean;
}

/** Quota warning threshold presets (quota → label). */
export const THRESHOLD_PRESETS: ReadonlyArray<{ value: number; label: string }> = [
  { value: 100000, label: '0.2$' },
  { value: 500000, label: '1$' },
  { value: 1000000, label: '5$' },
  { value: 5000000, label: '10$' },
];

/** Threshold used when the user's setting has none. */
export const DEFAULT_THRESHOLD_MISSING = 500000;

/** How many models show before the list collapses. */
export const MODELS_COLLAPSED = 10;

/** Parses the `setting` string of /api/user/self (bad or empty → defaults). */
export function parseSetting(raw: unknown): UserSetting {
  let s: Record<string, unknown> = {};
  if (raw && typeof raw === 'object') s = raw as Record<string, unknown>;
  else if (typeof raw === 'string' && raw.trim()) {
    try {
      const parsed = JSON.parse(raw);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) s = parsed as Record<string, unknown>;
    } catch {
      /* defaults */
    }
  }
  const threshold = Number(s.quota_warning_threshold);
  return {
    notify_type: s.notify_type === 'webhook' ? 'webhook' : 'email',
    quota_warning_threshold: Number.isFinite(threshold) && threshold > 0 ? threshold : DEFAULT_THRESHOLD_MISSING,
    webhook_url: typeof s.webhook_url === 'string' ? s.webhook_url : '',
    webhook_secret: typeof s.webhook_secret === 'string' ? s.webhook_secret : '',
    notification_email: typeof s.notification_email === 'string' ? s.notification_email : '',
    accept_unset_model_ratio_model: s.accept_unset_model_ratio_model === true || s.accept_unset_model_ratio_model === 'true',
  };
}

/** A check's outcome: a translation key with values, or null. */
export interface Problem {
  key: string;
  values?: Record<string, unknown>;
}

/** Notification settings: a positive threshold; a webhook needs an https URL. */
export function settingProblem(s: UserSetting): Problem | null {
  if (!Number.isFinite(s.quota_warning_threshold) || s.quota_warning_threshold <= 0) return { key: 'feat.personal.notify.threshold_invalid' };
  if (s.notify_type === 'webhook') {
    const url = s.webhook_url.trim();
    if (!url) return { key: 'feat.personal.notify.webhook_empty' };
    if (!isHttpsUrl(url)) return { key: 'feat.personal.notify.webhook_https' };
  }
  const email = s.notification_email.trim();
  if (s.notify_type === 'email' && email && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) return { key: 'feat.personal.notify.email_invalid' };
  return null;
}

export function isHttpsUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' && !!u.hostname;
  } catch {
    return false;
  }
}

/** The PUT /api/user/setting body. */
export function settingBody(s: UserSetting): UserSetting {
  return {
    notify_type: s.notify_type,
    quota_warning_threshold: Math.floor(Number(s.quota_warning_threshold)),
    webhook_url: s.webhook_url.trim(),
    webhook_secret: s.webhook_secret,
    notification_email: s.notification_email.trim(),
    accept_unset_model_ratio_model: s.accept_unset_model_ratio_model,
  };
}

/** Delete account: the typed text must equal the own username. */
export function deleteProblem(typed: string, username: string): Problem | null {
  return typed.trim() !== '' && typed.trim() === username ? null : { key: 'feat.personal.delete.mismatch' };
}

/** Change password: original and new required, new ≥ 8, new and confirmation equal. */
export function passwordProblem(input: { original: string; password: string; confirm: string }, hasPassword = true): Problem | null {
  if ((hasPassword && !input.original) || !input.password) return { key: 'feat.personal.password.empty' };
  if (input.password.length < 8) return { key: 'feat.personal.password.short' };
  if (input.password !== input.confirm) return { key: 'feat.personal.password.mismatch' };
  return null;
}

/** Email binding: email first, then the code. */
export function emailBindProblem(email: string, code: string, needCode = true): Problem | null {
  if (!email.trim()) return { key: 'feat.personal.bind.email_empty' };
  if (needCode && !code.trim()) return { key: 'feat.personal.bind.code_empty' };
  return null;
}

/** Invitation transfer: an integer quota of at least quota_per_unit, not more than the earnings. */
export function transferProblem(quota: number, quotaPerUnit: number, available: number): Problem | null {
  if (!Number.isFinite(quota) || quota < quotaPerUnit) return { key: 'feat.personal.aff.min', values: { amount: quotaPerUnit } };
  if (quota > available) return { key: 'feat.personal.aff.insufficient' };
  return null;
}

/** The invitation link: `${origin}/register?aff={code}`. */
export function inviteLink(origin: string, code: string): string {
  return `${origin.replace(/\/+$/, '')}/register?aff=${encodeURIComponent(code)}`;
}

/** The models shown: the first 10 unless expanded. */
export function visibleModels(models: readonly string[], expanded: boolean): string[] {
  return expanded ? [...models] : models.slice(0, MODELS_COLLAPSED);
}

/** Role → translation key and tag colour. */
export function roleInfo(role: number): { key: string; tone: 'red' | 'orange' | 'blue' } {
  if (role >= 100) return { key: 'feat.personal.role.root', tone: 'red' };
  if (role >= 10) return { key: 'feat.personal.role.admin', tone: 'orange' };
  return { key: 'feat.personal.role.user', tone: 'blue' };
}

/** The bindings shown for a status: email always; others per their switch. */
export interface BindingFlags {
  github: boolean;
  oidc: boolean;
  linuxdo: boolean;
  wechat: boolean;
  telegram: boolean;
}

export function bindingFlags(status: Record<string, unknown>): BindingFlags {
  const on = (v: unknown) => v === true || v === 'true';
  return {
    github: on(status.github_oauth),
    oidc: on(status.oidc_enabled),
    linuxdo: on(status.linuxdo_oauth),
    wechat: on(status.wechat_login),
    telegram: on(status.telegram_oauth) && typeof status.telegram_bot_name === 'string' && !!status.telegram_bot_name,
  };
}

/** The authorize redirect of a code-hosting / OIDC / forum provider. */
export function authorizeUrl(provider: 'github' | 'oidc' | 'linuxdo'): string {
  return `/api/oauth/${provider}/authorize`;
}

/** First letter for the avatar. */
export function avatarLetter(name: string | undefined | null): string {
  const t = (name ?? '').trim();
  return t ? [...t][0].toUpperCase() : '?';
}
