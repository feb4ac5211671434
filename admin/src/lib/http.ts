import { HttpError } from 'react-admin';
import { getUserId, storedLanguage } from './storage';

/** The server's envelope (every console API answer is `{ success, message, data }`). */
export interface Envelope<T = unknown> {
  success: boolean;
  message: string;
  data: T;
  [extra: string]: unknown;
}

export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; credentials?: 'include' | 'same-origin' },
) => Promise<{
  status: number;
  statusText?: string;
  text(): Promise<string>;
}>;

export interface ApiOptions {
  /** The transport (window.fetch in the browser, a recorder in unit tests). */
  fetch: FetchLike;
  /** The logged-in user's id, sent as `New-Api-User` on every call. */
  getUserId?: () => number | string | undefined;
  /** Called on any 401 (the browser goes to /login?expired=true). */
  onUnauthorized?: () => void;
  /** The console's language, sent as `Accept-Language` (the server's messages follow it). */
  getLanguage?: () => string;
}

export interface Api {
  get<T = unknown>(url: string): Promise<Envelope<T>>;
  post<T = unknown>(url: string, body?: unknown): Promise<Envelope<T>>;
  put<T = unknown>(url: string, body?: unknown): Promise<Envelope<T>>;
  del<T = unknown>(url: string, body?: unknown): Promise<Envelope<T>>;
  /** The raw call: answers the envelope even when success is false (callers that branch on it). */
  raw<T = unknown>(method: string, url: string, body?: unknown): Promise<Envelope<T>>;
}

/** Translation keys of the generic handler, resolved by the i18n provider. */
export const ERROR_KEYS = {
  tooMany: 'app.error.too_many',
  internal: 'app.error.internal',
  demo: 'app.error.demo',
  expired: 'app.error.expired',
} as const;

/** Builds a query string from the defined, non-empty values (order kept). */
export function qs(params: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

/** Creates the console's API client. Statuses are mapped per the generic error rules. */
export function createApi(opts: ApiOptions): Api {
  const userId = opts.getUserId ?? getUserId;
  const language = opts.getLanguage ?? storedLanguage;

  async function call<T>(method: string, url: string, body: unknown, strict: boolean): Promise<Envelope<T>> {
    const headers: Record<string, string> = { 'Cache-Control': 'no-store', Accept: 'application/json', 'Accept-Language': language() };
    const uid = userId();
    if (uid !== undefined && uid !== null && uid !== '') headers['New-Api-User'] = String(uid);
    const init: Parameters<FetchLike>[1] = { method, headers, credentials: 'same-origin' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let res: Awaited<ReturnType<FetchLike>>;
    try {
      res = await opts.fetch(url, init);
    } catch (err) {
      throw new HttpError(`Error: ${(err as Error)?.message ?? String(err)}`, 0);
    }
    const text = await res.text().catch(() => '');
    let json: Envelope<T> | undefined;
    try {
      json = text ? (JSON.parse(text) as Envelope<T>) : undefined;
    } catch {
      json = undefined;
    }
    if (res.status === 401) {
      opts.onUnauthorized?.();
      throw new HttpError(ERROR_KEYS.expired, 401, json);
    }
    if (res.status === 429) throw new HttpError(ERROR_KEYS.tooMany, 429, json);
    if (res.status === 500) throw new HttpError(ERROR_KEYS.internal, 500, json);
    if (res.status === 405) throw new HttpError(ERROR_KEYS.demo, 405, json);
    if (res.status < 200 || res.status >= 300) {
      throw new HttpError(`Error: ${json?.message || res.statusText || `HTTP ${res.status}`}`, res.status, json);
    }
    if (!json || typeof json !== 'object') throw new HttpError(`Error: ${res.statusText || 'invalid response'}`, res.status, text);
    if (strict && json.success === false) throw new HttpError(json.message || 'Error', res.status, json);
    return json;
  }

  return {
    get: (url) => call('GET', url, undefined, true),
    post: (url, body) => call('POST', url, body ?? {}, true),
    put: (url, body) => call('PUT', url, body ?? {}, true),
    del: (url, body) => call('DELETE', url, body, true),
    raw: (method, url, body) => call(method, url, body, false),
  };
}

let browserApi: Api | undefined;

/** The browser's client: window.fetch, 401 → /login?expired=true (once, not from /login itself). */
export function api(): Api {
  if (!browserApi) {
    browserApi = createApi({
      fetch: (url, init) => window.fetch(url, init),
      onUnauthorized: () => {
        // Only a session that existed can expire: visitors on public pages are not redirected.
        let hadUser = false;
        try {
          hadUser = !!localStorage.getItem('user');
          localStorage.removeItem('user');
        } catch {
          /* ignore */
        }
        if (hadUser && !window.location.pathname.startsWith('/login')) window.location.href = '/login?expired=true';
      },
    });
  }
  return browserApi;
}

/** Replace the browser client (tests). */
export function setApi(a: Api): void {
  browserApi = a;
}

/** Text of an error for a notification: translation keys are translated, the rest shown as is. */
export function errorText(err: unknown, translate?: (key: string, opts?: Record<string, unknown>) => string): string {
  const msg = err instanceof Error ? err.message : typeof err === 'string' ? err : String(err);
  if (msg.startsWith('app.') || msg.startsWith('ra.')) return translate ? translate(msg, { _: msg }) : msg;
  // A bulk summary (lib/bulk.ts) is already a sentence in the console's language.
  if (err instanceof HttpError || msg.startsWith('Error:') || (err instanceof Error && err.name === 'BulkError')) return msg;
  return `Error: ${msg}`;
}
