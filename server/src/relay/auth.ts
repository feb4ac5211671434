import type { AppContext } from '../context';
import { msg } from '../i18n';
import { tokenCache, userCache, invalidateToken } from '../services/invalidate';
import { nowSec } from '../lib/time';
import { parseAllowIps, type IpAllowList } from './ip';
import { RelayError } from './errors';
import { splitList } from '../repositories/channels';
import { findUserById, USER_STATUS } from '../repositories/users';
import { findTokenByKey, markTokenUsedUp, TOKEN_STATUS, type TokenRow } from '../repositories/tokens';

export { TOKEN_STATUS };

/** A token as the relay needs it (parsed once, cached per process). */
export interface TokenRecord {
  id: number;
  userId: number;
  key: string;
  name: string;
  status: number;
  expiredTime: number;
  /** As of the cache load; the authoritative check is the atomic pre-consume. */
  remainQuota: number;
  unlimited: boolean;
  modelLimits: Set<string> | null;
  allowIps: IpAllowList | null;
  group: string;
}

/** User settings the relay reads (users.setting JSON). */
export interface UserSetting {
  accept_unset_model_ratio_model?: boolean;
  quota_warning_threshold?: number;
  notify_type?: string;
  notification_email?: string;
  webhook_url?: string;
  webhook_secret?: string;
  [k: string]: unknown;
}

export interface UserRecord {
  id: number;
  username: string;
  status: number;
  role: number;
  group: string;
  email: string;
  setting: UserSetting;
}

const truthy = (v: unknown) => v === true || v === 1 || v === '1' || v === 'true';

function toTokenRecord(r: TokenRow): TokenRecord {
  return {
    id: Number(r.id),
    userId: Number(r.user_id),
    key: String(r.key),
    name: String(r.name ?? ''),
    status: Number(r.status),
    expiredTime: Number(r.expired_time ?? -1),
    remainQuota: Number(r.remain_quota ?? 0),
    unlimited: truthy(r.unlimited_quota),
    modelLimits: truthy(r.model_limits_enabled) ? new Set(splitList(String(r.model_limits ?? ''))) : null,
    allowIps: parseAllowIps(String(r.allow_ips ?? '')),
    group: String(r.group ?? '').trim(),
  };
}

export function parseUserSetting(raw: unknown): UserSetting {
  if (typeof raw !== 'string' || !raw.trim()) return {};
  try {
    const v = JSON.parse(raw) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as UserSetting) : {};
  } catch {
    return {};
  }
}

/** Token by key (without `sk-`); undefined when absent or deleted. Only hits are cached. */
export async function loadToken(app: AppContext, key: string): Promise<TokenRecord | undefined> {
  if (!key || key.length > 64) return undefined;
  const cache = tokenCache(app);
  const hit = cache.peek(key) as TokenRecord | undefined;
  if (hit) return hit;
  const row = await findTokenByKey(app.knex, key);
  if (!row) return undefined;
  const rec = toTokenRecord(row);
  return (await cache.get(key, async () => rec)) as TokenRecord;
}

export async function loadUser(app: AppContext, id: number): Promise<UserRecord | undefined> {
  const cache = userCache(app);
  const k = String(id);
  const hit = cache.peek(k) as UserRecord | undefined;
  if (hit) return hit;
  const row = await findUserById(app.knex, id);
  if (!row) return undefined;
  const rec: UserRecord = {
    id: Number(row.id),
    username: String(row.username),
    status: Number(row.status),
    role: Number(row.role),
    group: String(row.group || 'default'),
    email: String(row.email ?? ''),
    setting: parseUserSetting(row.setting),
  };
  return (await cache.get(k, async () => rec)) as UserRecord;
}

/** Groups a user may route through: their own group plus UserUsableGroups. */
export function usableGroups(app: AppContext, userGroup: string): Set<string> {
  const map = app.options.json<Record<string, unknown>>('UserUsableGroups', {});
  const set = new Set(map && typeof map === 'object' ? Object.keys(map) : []);
  set.add(userGroup);
  return set;
}

export interface Principal {
  user: UserRecord;
  token?: TokenRecord;
  group: string;
  tokenName: string;
  /** Admin keys may pin one channel with a `-<channel id>` suffix (`sk-<key>-<id>`). */
  pinnedChannel?: number;
}

/**
 * Validates a key for a relay call (401 bad/disabled/expired key or user, 403 exhausted token or
 * IP not allowed or unusable group); `key-<channel id>` pins a channel for admins. Model limits are
 * checked later (`checkModelAllowed`). Answers synchronously when the token and its user are cached
 * (the usual case: no promise on the hot path), else with a promise that loads them.
 */
export function authenticateKey(app: AppContext, key: string, ip: string): Principal | Promise<Principal> {
  if (!key) throw new RelayError(401, 'relay.no_token', 'invalid_api_key');
  const token = key.length <= 64 ? (tokenCache(app).peek(key) as TokenRecord | undefined) : undefined;
  const user = token ? (userCache(app).peek(String(token.userId)) as UserRecord | undefined) : undefined;
  if (token && user) {
    checkToken(app, token, ip);
    return principalOf(app, token, user, undefined);
  }
  return loadPrincipal(app, key, ip);
}

async function loadPrincipal(app: AppContext, key: string, ip: string): Promise<Principal> {
  let pinned: number | undefined;
  let token = await loadToken(app, key);
  if (!token) {
    const m = /^(.+)-(\d{1,10})$/.exec(key);
    if (m) {
      token = await loadToken(app, m[1]!);
      pinned = Number(m[2]);
    }
  }
  if (!token) throw new RelayError(401, 'relay.bad_token', 'invalid_api_key');
  checkToken(app, token, ip);
  const user = await loadUser(app, token.userId);
  return principalOf(app, token, user, pinned);
}

/** The token's own refusals (status, expiry, quota, IP), in this order. */
function checkToken(app: AppContext, token: TokenRecord, ip: string): void {
  if (token.status === TOKEN_STATUS.expired) throw new RelayError(401, 'relay.token_expired', 'token_expired');
  if (token.status === TOKEN_STATUS.exhausted) throw new RelayError(403, 'relay.token_exhausted', 'token_quota_exhausted', 'insufficient_quota');
  if (token.status !== TOKEN_STATUS.enabled) throw new RelayError(401, 'relay.token_disabled', 'token_disabled');
  if (token.expiredTime !== -1 && token.expiredTime > 0 && token.expiredTime < nowSec()) {
    void markToken(app, token, TOKEN_STATUS.expired);
    throw new RelayError(401, 'relay.token_expired', 'token_expired');
  }
  if (!token.unlimited && token.remainQuota <= 0) {
    void markToken(app, token, TOKEN_STATUS.exhausted);
    throw new RelayError(403, 'relay.token_exhausted', 'token_quota_exhausted', 'insufficient_quota');
  }
  if (token.allowIps && !token.allowIps.allows(ip)) {
    throw new RelayError(403, msg('relay.ip_not_allowed', { ip }), 'ip_not_allowed');
  }
}

/** The user's refusals and the resulting principal (the token was checked before). */
function principalOf(app: AppContext, token: TokenRecord, user: UserRecord | undefined, pinned: number | undefined): Principal {
  if (!user) throw new RelayError(401, 'relay.bad_token', 'invalid_api_key');
  if (user.status !== USER_STATUS.enabled) throw new RelayError(401, 'user.banned', 'user_banned');
  const group = token.group || user.group;
  if (token.group && !usableGroups(app, user.group).has(token.group)) {
    throw new RelayError(403, msg('relay.group_forbidden', { group: token.group }), 'group_not_allowed');
  }
  if (pinned !== undefined && user.role < 10) throw new RelayError(403, 'relay.pin_forbidden', 'channel_pin_forbidden');
  return { user, token, group, tokenName: token.name, pinnedChannel: pinned };
}

export function checkModelAllowed(p: Principal, model: string): void {
  if (p.token?.modelLimits && !p.token.modelLimits.has(model)) {
    throw new RelayError(403, msg('relay.model_not_allowed', { model }), 'model_not_allowed');
  }
}

/** Expired/exhausted: persist the status (conditional, so a concurrent top-up is not undone). */
async function markToken(app: AppContext, token: TokenRecord, status: typeof TOKEN_STATUS.expired | typeof TOKEN_STATUS.exhausted): Promise<void> {
  try {
    const n = await markTokenUsedUp(app.knex, token.id, status, nowSec());
    if (n) await invalidateToken(app, token.key);
  } catch (err) {
    app.log.warn({ err }, 'could not update token status');
  }
}
