import type { AppContext } from '../../context';
import { msg, type MessageParam } from '../../i18n';
import { BadRequestError } from '../../lib/errors';
import { FetchRefusedError, fetchPolicy, guardedFetch, type GuardedResponse } from '../../lib/guardedFetch';

/** Timeout for every call to an identity provider. */
export const PROVIDER_TIMEOUT_MS = 10_000;

export interface ProviderRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Form body (application/x-www-form-urlencoded). */
  form?: Record<string, string>;
  /** JSON body. */
  json?: unknown;
}

/**
 * Calls an identity provider and parses its JSON answer. Network errors, timeouts, non-2xx
 * answers and non-JSON bodies become BadRequestError with `label` in the message (the console
 * shows it); the provider's own `error_description`/`message` is passed on when present.
 * Never logs or echoes credentials: only the URL without its query string is logged.
 */
export async function providerJson<T = Record<string, unknown>>(app: AppContext, label: MessageParam, url: string, req: ProviderRequest = {}): Promise<T> {
  let target: URL;
  try {
    target = new URL(url);
    if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error('protocol');
  } catch {
    throw new BadRequestError(msg('oauth.provider_bad_url', { label }));
  }
  const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'ai-gateway', ...req.headers };
  let body: string | undefined;
  if (req.form) {
    body = new URLSearchParams(req.form).toString();
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
  } else if (req.json !== undefined) {
    body = JSON.stringify(req.json);
    headers['Content-Type'] = 'application/json';
  }
  let res: GuardedResponse;
  try {
    // Root configured these endpoints (or discovery named them): the operator policy applies, no redirects.
    res = await guardedFetch(app, target, {
      method: req.method ?? (body ? 'POST' : 'GET'),
      headers,
      body,
      maxRedirects: 0,
      timeoutMs: PROVIDER_TIMEOUT_MS,
      maxBytes: 1024 * 1024,
      policy: fetchPolicy(app, 'operator'),
    });
  } catch (err) {
    app.log.warn({ err: (err as Error).message, url: target.origin + target.pathname }, 'identity provider unreachable');
    if (err instanceof FetchRefusedError) throw new BadRequestError(msg('oauth.provider_refused', { label, reason: err.msg }));
    throw new BadRequestError(msg('oauth.provider_unreachable', { label }));
  }
  const text = res.text();
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : {};
  } catch {
    data = undefined;
  }
  const obj = (data && typeof data === 'object' ? data : {}) as Record<string, unknown>;
  const detail = [obj.error_description, obj.message, obj.error].find((v) => typeof v === 'string' && v) as string | undefined;
  if (res.status < 200 || res.status >= 300) {
    app.log.warn({ status: res.status, url: target.origin + target.pathname }, 'identity provider error');
    throw new BadRequestError(
      detail
        ? msg('oauth.provider_error_detail', { label, status: res.status, detail: detail.slice(0, 200) })
        : msg('oauth.provider_error', { label, status: res.status }),
    );
  }
  if (data === undefined || typeof data !== 'object' || data === null) {
    throw new BadRequestError(msg('oauth.provider_unparseable', { label }));
  }
  return data as T;
}
