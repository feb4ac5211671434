import crypto from 'node:crypto';
import { msg, verbatim } from '../../i18n';
import type { AppContext } from '../../context';
import { BadRequestError } from '../../lib/errors';
import { nowSec } from '../../lib/time';
import { providerJson } from './http';
import { pkceChallenge, type StateRecord } from './state';

/** What a provider tells us about the person (the id is what gets bound). */
export interface ExternalProfile {
  id: string;
  username?: string;
  displayName?: string;
  email?: string;
}

export type RedirectProvider = 'github' | 'linuxdo' | 'oidc';

const trimUrl = (u: string) => u.trim().replace(/\/+$/, '');
const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : '');

/** Where the console's callback page lives: ServerAddress when set, else this request's origin. */
export function callbackUrl(app: AppContext, origin: string, provider: RedirectProvider): string {
  const base = trimUrl(app.options.get('ServerAddress')) || trimUrl(origin);
  return `${base}/oauth/${provider}`;
}

// ---------------------------------------------------------------- GitHub

export function githubConfig(app: AppContext) {
  const o = app.options;
  return {
    enabled: o.bool('GitHubOAuthEnabled'),
    clientId: o.get('GitHubClientId'),
    clientSecret: o.get('GitHubClientSecret'),
    oauthBase: trimUrl(o.get('GitHubOAuthBaseURL')) || 'https://github.com',
    apiBase: trimUrl(o.get('GitHubAPIBaseURL')) || 'https://api.github.com',
  };
}

export function githubAuthorizeUrl(app: AppContext, state: string, redirectUri: string): string {
  const c = githubConfig(app);
  const q = new URLSearchParams({ client_id: c.clientId, state, scope: 'user:email', redirect_uri: redirectUri });
  return `${c.oauthBase}/login/oauth/authorize?${q}`;
}

export async function githubProfile(app: AppContext, code: string): Promise<ExternalProfile> {
  const c = githubConfig(app);
  if (!c.clientId || !c.clientSecret) throw new BadRequestError('oauth.github_unconfigured');
  const token = await providerJson<{ access_token?: string; error?: string; error_description?: string }>(
    app,
    'GitHub',
    `${c.oauthBase}/login/oauth/access_token`,
    {
      json: { client_id: c.clientId, client_secret: c.clientSecret, code },
    },
  );
  // GitHub answers a bad or used code with HTTP 200 and an `error` field.
  if (!token.access_token)
    throw new BadRequestError(
      msg('oauth.authorize_failed', { provider: 'GitHub', reason: token.error_description || token.error || msg('oauth.no_access_token') }),
    );
  const user = await providerJson<Record<string, unknown>>(app, 'GitHub', `${c.apiBase}/user`, {
    headers: { Authorization: `Bearer ${token.access_token}`, Accept: 'application/vnd.github+json' },
  });
  const id = str(user.id);
  if (!id) throw new BadRequestError('oauth.github_bad_user');
  const login = str(user.login);
  return { id, username: login, displayName: str(user.name) || login, email: str(user.email) };
}

// ---------------------------------------------------------------- LinuxDO (plain OAuth2)

export function linuxdoConfig(app: AppContext) {
  const o = app.options;
  return {
    enabled: o.bool('LinuxDOOAuthEnabled'),
    clientId: o.get('LinuxDOClientId'),
    clientSecret: o.get('LinuxDOClientSecret'),
    authorizationEndpoint: o.get('LinuxDOAuthorizationEndpoint').trim() || 'https://connect.linux.do/oauth2/authorize',
    tokenEndpoint: o.get('LinuxDOTokenEndpoint').trim() || 'https://connect.linux.do/oauth2/token',
    userInfoEndpoint: o.get('LinuxDOUserInfoEndpoint').trim() || 'https://connect.linux.do/api/user',
    minimumTrustLevel: o.num('LinuxDOMinimumTrustLevel', 0),
  };
}

export function linuxdoAuthorizeUrl(app: AppContext, state: string, redirectUri: string): string {
  const c = linuxdoConfig(app);
  const q = new URLSearchParams({ response_type: 'code', client_id: c.clientId, state, redirect_uri: redirectUri });
  return `${c.authorizationEndpoint}${c.authorizationEndpoint.includes('?') ? '&' : '?'}${q}`;
}

export async function linuxdoProfile(app: AppContext, code: string, redirectUri: string): Promise<ExternalProfile> {
  const c = linuxdoConfig(app);
  if (!c.clientId || !c.clientSecret) throw new BadRequestError('oauth.linuxdo_unconfigured');
  const basic = Buffer.from(`${c.clientId}:${c.clientSecret}`).toString('base64');
  const token = await providerJson<{ access_token?: string; error?: string; error_description?: string }>(app, 'LinuxDO', c.tokenEndpoint, {
    headers: { Authorization: `Basic ${basic}` },
    form: { grant_type: 'authorization_code', code, redirect_uri: redirectUri },
  });
  if (!token.access_token)
    throw new BadRequestError(
      msg('oauth.authorize_failed', { provider: 'LinuxDO', reason: token.error_description || token.error || msg('oauth.no_access_token') }),
    );
  const user = await providerJson<Record<string, unknown>>(app, 'LinuxDO', c.userInfoEndpoint, {
    headers: { Authorization: `Bearer ${token.access_token}` },
  });
  const id = str(user.id);
  if (!id) throw new BadRequestError('oauth.linuxdo_bad_user');
  if (user.active === false || user.silenced === true) throw new BadRequestError('oauth.linuxdo_inactive');
  const trust = Number(user.trust_level ?? 0);
  if (c.minimumTrustLevel > 0 && !(trust >= c.minimumTrustLevel)) throw new BadRequestError('oauth.linuxdo_trust');
  const username = str(user.username);
  return { id, username, displayName: str(user.name) || username, email: str(user.email) };
}

// ---------------------------------------------------------------- OIDC

export const OIDC_DISCOVERY_FAILED = 'oauth.oidc_discovery_failed';

export function oidcConfig(app: AppContext) {
  const o = app.options;
  return {
    enabled: o.bool('oidc.enabled'),
    wellKnown: o.get('oidc.well_known').trim(),
    clientId: o.get('oidc.client_id'),
    clientSecret: o.get('oidc.client_secret'),
    authorizationEndpoint: o.get('oidc.authorization_endpoint').trim(),
    tokenEndpoint: o.get('oidc.token_endpoint').trim(),
    userInfoEndpoint: o.get('oidc.user_info_endpoint').trim(),
  };
}

export interface OidcEndpoints {
  authorization_endpoint: string;
  token_endpoint: string;
  user_info_endpoint: string;
}

/**
 * Fetches the discovery document at `wellKnown` and stores the three endpoints as options
 * (`oidc.authorization_endpoint`, `oidc.token_endpoint`, `oidc.user_info_endpoint`).
 */
export async function discoverOidc(app: AppContext, wellKnown: string): Promise<OidcEndpoints> {
  if (!/^https?:\/\//.test(wellKnown)) throw new BadRequestError(OIDC_DISCOVERY_FAILED);
  let doc: Record<string, unknown>;
  try {
    doc = await providerJson(app, 'OIDC', wellKnown);
  } catch {
    throw new BadRequestError(OIDC_DISCOVERY_FAILED);
  }
  const endpoints: OidcEndpoints = {
    authorization_endpoint: str(doc.authorization_endpoint),
    token_endpoint: str(doc.token_endpoint),
    user_info_endpoint: str(doc.userinfo_endpoint),
  };
  if (!Object.values(endpoints).every((u) => /^https?:\/\//.test(u))) throw new BadRequestError(OIDC_DISCOVERY_FAILED);
  await app.options.set('oidc.authorization_endpoint', endpoints.authorization_endpoint);
  await app.options.set('oidc.token_endpoint', endpoints.token_endpoint);
  await app.options.set('oidc.user_info_endpoint', endpoints.user_info_endpoint);
  return endpoints;
}

/** The configured endpoints, discovered (and stored) from `oidc.well_known` when any is missing. */
export async function oidcEndpoints(app: AppContext): Promise<OidcEndpoints> {
  const c = oidcConfig(app);
  if (c.authorizationEndpoint && c.tokenEndpoint && c.userInfoEndpoint) {
    return { authorization_endpoint: c.authorizationEndpoint, token_endpoint: c.tokenEndpoint, user_info_endpoint: c.userInfoEndpoint };
  }
  if (!c.wellKnown) throw new BadRequestError('oauth.oidc_no_well_known');
  return discoverOidc(app, c.wellKnown);
}

export async function oidcAuthorizeUrl(app: AppContext, state: string, record: StateRecord): Promise<string> {
  const c = oidcConfig(app);
  const e = await oidcEndpoints(app);
  const q = new URLSearchParams({
    client_id: c.clientId,
    redirect_uri: record.redirectUri ?? '',
    response_type: 'code',
    scope: 'openid profile email',
    state,
  });
  if (record.verifier) {
    q.set('code_challenge', pkceChallenge(record.verifier));
    q.set('code_challenge_method', 'S256');
  }
  return `${e.authorization_endpoint}${e.authorization_endpoint.includes('?') ? '&' : '?'}${q}`;
}

export async function oidcProfile(app: AppContext, code: string, redirectUri: string, verifier?: string): Promise<ExternalProfile> {
  const c = oidcConfig(app);
  if (!c.clientId || !c.clientSecret) throw new BadRequestError('oauth.oidc_unconfigured');
  const e = await oidcEndpoints(app);
  const form: Record<string, string> = {
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    client_id: c.clientId,
    client_secret: c.clientSecret,
  };
  if (verifier) form.code_verifier = verifier;
  const token = await providerJson<{ access_token?: string; error?: string; error_description?: string }>(app, 'OIDC', e.token_endpoint, { form });
  if (!token.access_token)
    throw new BadRequestError(
      msg('oauth.authorize_failed', { provider: 'OIDC', reason: token.error_description || token.error || msg('oauth.no_access_token') }),
    );
  const info = await providerJson<Record<string, unknown>>(app, 'OIDC', e.user_info_endpoint, {
    headers: { Authorization: `Bearer ${token.access_token}` },
  });
  const id = str(info.sub);
  if (!id) throw new BadRequestError('oauth.oidc_bad_user');
  const username = str(info.preferred_username);
  return { id, username, displayName: str(info.name) || username, email: info.email_verified === false ? '' : str(info.email) };
}

// ---------------------------------------------------------------- WeChat (via the WeChat server)

export async function wechatOpenId(app: AppContext, code: string): Promise<ExternalProfile> {
  const base = trimUrl(app.options.get('WeChatServerAddress'));
  if (!base) throw new BadRequestError('oauth.wechat_no_server');
  const res = await providerJson<{ success?: boolean; message?: string; data?: unknown }>(
    app,
    msg('oauth.wechat_server'),
    `${base}/api/wechat/user?code=${encodeURIComponent(code)}`,
    {
      headers: { Authorization: app.options.get('WeChatServerToken') },
    },
  );
  if (!res.success) throw new BadRequestError(res.message ? verbatim(res.message) : 'user.email_code_wrong');
  const id = str(res.data);
  if (!id) throw new BadRequestError('user.email_code_wrong');
  return { id };
}

// ---------------------------------------------------------------- Telegram login widget

export const TELEGRAM_MAX_AGE_SECONDS = 24 * 3600;

/**
 * Verifies the login widget's data: `hash` must be HMAC-SHA256(key = SHA256(bot token)) over the
 * data-check-string (every other field as `key=value`, sorted by key, joined with '\n'), and
 * `auth_date` no older than a day (nor in the future beyond a minute of skew).
 */
export function verifyTelegram(botToken: string, query: Record<string, unknown>): ExternalProfile {
  if (!botToken) throw new BadRequestError('oauth.telegram_no_token');
  const fields: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) {
    const s = Array.isArray(v) ? v[0] : v;
    if (typeof s === 'string') fields[k] = s;
  }
  const hash = fields.hash ?? '';
  delete fields.hash;
  if (!/^[0-9a-f]{64}$/i.test(hash) || !fields.id || !fields.auth_date) throw new BadRequestError('oauth.telegram_bad_data');
  const secret = crypto.createHash('sha256').update(botToken).digest();
  const given = Buffer.from(hash, 'hex');
  const signs = (data: Record<string, string>) => {
    const checkString = Object.keys(data)
      .sort()
      .map((k) => `${k}=${data[k]}`)
      .join('\n');
    const expected = crypto.createHmac('sha256', secret).update(checkString).digest();
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  };
  // The console may append `lang`, which Telegram does not sign.
  const withoutLang = () => {
    const rest = { ...fields };
    delete rest.lang;
    return rest;
  };
  if (!signs(fields) && !('lang' in fields && signs(withoutLang()))) throw new BadRequestError('oauth.telegram_check_failed');
  const authDate = Number(fields.auth_date);
  const now = nowSec();
  if (!Number.isFinite(authDate) || now - authDate > TELEGRAM_MAX_AGE_SECONDS || authDate - now > 60) {
    throw new BadRequestError('oauth.telegram_expired');
  }
  const name = [fields.first_name, fields.last_name].filter(Boolean).join(' ');
  return { id: fields.id, username: fields.username, displayName: name || fields.username };
}
