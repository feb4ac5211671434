import { api } from './http';
import { KEYS, readJSON, store } from './storage';

/** The public status object, as answered by GET /api/status. */
export interface SiteStatus {
  system_name?: string;
  logo?: string;
  footer_html?: string;
  quota_per_unit?: number;
  display_in_currency?: boolean;
  enable_drawing?: boolean;
  enable_task?: boolean;
  enable_data_export?: boolean;
  chats?: unknown;
  data_export_default_time?: string;
  default_collapse_sidebar?: boolean;
  mj_notify_enabled?: boolean;
  chat_link?: string;
  chat_link2?: string;
  docs_link?: string;
  version?: string;
  start_time?: number;
  email_verification?: boolean;
  turnstile_check?: boolean;
  turnstile_site_key?: string;
  github_oauth?: boolean;
  github_client_id?: string;
  oidc_enabled?: boolean;
  oidc_client_id?: string;
  oidc_authorization_endpoint?: string;
  wechat_login?: boolean;
  wechat_qrcode?: string;
  telegram_oauth?: boolean;
  telegram_bot_name?: string;
  linuxdo_oauth?: boolean;
  linuxdo_client_id?: string;
  self_use_mode_enabled?: boolean;
  demo_site_enabled?: boolean;
  /** A release feed is configured: the settings page offers the update check. */
  update_check?: boolean;
  password_login_enabled?: boolean;
  /** Passkeys on (switch and ServerAddress): the login page offers a passkey login. */
  passkey_login?: boolean;
  password_register_enabled?: boolean;
  register_enabled?: boolean;
  setup?: boolean;
  [key: string]: unknown;
}

/** Status fields also cached under their own local storage key. */
export const STATUS_KEYS = [
  'system_name',
  'logo',
  'footer_html',
  'quota_per_unit',
  'display_in_currency',
  'enable_drawing',
  'enable_task',
  'enable_data_export',
  'chats',
  'data_export_default_time',
  'default_collapse_sidebar',
  'mj_notify_enabled',
  'chat_link',
  'chat_link2',
  'docs_link',
] as const;

export function cachedStatus(): SiteStatus {
  return readJSON<SiteStatus>(KEYS.status, {});
}

/** Caches the status as `status` plus the individual keys (objects as JSON, the rest as text). */
export function saveStatus(status: SiteStatus): void {
  const s = store();
  s.setItem(KEYS.status, JSON.stringify(status));
  for (const key of STATUS_KEYS) {
    const v = status[key];
    if (v === undefined || v === null) s.removeItem(key);
    else s.setItem(key, typeof v === 'object' ? JSON.stringify(v) : String(v));
  }
}

/** Why the status could not be loaded: no answer (network), or an answer with success:false. */
export type StatusErrorKind = 'unreachable' | 'failed';

export class StatusLoadError extends Error {
  constructor(readonly kind: StatusErrorKind) {
    super(kind);
  }
}

/** GET /api/status, cached locally for the next page load; rejects with a StatusLoadError. */
export async function loadStatus(): Promise<SiteStatus> {
  const res = await api()
    .raw<SiteStatus>('GET', '/api/status')
    .catch(() => {
      throw new StatusLoadError('unreachable');
    });
  if (!res.success || !res.data) throw new StatusLoadError('failed');
  saveStatus(res.data);
  return res.data;
}

/** The kind of a failed status load (any other error counts as no answer); undefined without error. */
export function statusErrorKind(error: unknown): StatusErrorKind | undefined {
  if (error === null || error === undefined) return undefined;
  return error instanceof StatusLoadError ? error.kind : 'unreachable';
}

/**
 * The admins' channel-type → models map (GET /api/models), kept locally (channel_models) for the
 * channel form. A failure keeps what is stored; never rejects.
 */
export async function storeChannelModels(): Promise<null> {
  const r = await api()
    .raw('GET', '/api/models')
    .catch(() => null);
  if (r?.success && r.data) store().setItem(KEYS.channelModels, JSON.stringify(r.data));
  return null;
}

/** A local flag such as enable_drawing ('true' text). */
export function localFlag(key: string): boolean {
  return store().getItem(key) === 'true';
}

/** A chat link entry (from the `chats` option: a list of `{ name: url }` objects). */
export interface ChatLink {
  name: string;
  url: string;
}

/** Parses the locally stored `chats` (bad data → no entries). */
export function chatLinks(raw: string | null = store().getItem('chats')): ChatLink[] {
  if (!raw) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const out: ChatLink[] = [];
  for (const entry of parsed) {
    if (entry && typeof entry === 'object') {
      for (const [name, url] of Object.entries(entry as Record<string, unknown>)) {
        if (typeof url === 'string') out.push({ name, url });
      }
    }
  }
  return out;
}
