import type { Knex } from 'knex';
import { DEFAULT_OPTIONS } from '../../../seeds/defaultOptions';
import type { KV } from '../cache/kv';
import { BadRequestError } from '../lib/errors';

const RELOAD_CHANNEL = 'options:reload';

/** Keys whose values never leave the server (GET /api/option/ omits them). */
export function isSecretOption(key: string): boolean {
  return /(Secret|Token|Key|client_secret|secret)$/.test(key) || key === 'SMTPToken';
}

/** Keys whose value must be valid JSON. */
const JSON_KEYS = new Set([
  'ModelRatio', 'CompletionRatio', 'CacheRatio', 'ModelPrice', 'GroupRatio', 'UserUsableGroups', 'TopupGroupRatio',
  'Chats', 'gemini.safety_settings', 'gemini.version_settings', 'gemini.supported_imagine_models',
  'claude.model_headers_settings', 'claude.default_max_tokens',
]);
/** JSON maps whose values must all be non-negative numbers. */
const NUMBER_MAP_KEYS = new Set(['ModelRatio', 'CompletionRatio', 'CacheRatio', 'ModelPrice', 'GroupRatio', 'TopupGroupRatio']);
const NUMBER_KEYS = new Set([
  'Price', 'MinTopUp', 'SMTPPort', 'QuotaForNewUser', 'QuotaForInviter', 'QuotaForInvitee', 'QuotaRemindThreshold',
  'PreConsumedQuota', 'StreamCacheQueueLength', 'QuotaPerUnit', 'ChannelDisableThreshold', 'RetryTimes',
  'DataExportInterval', 'ModelRequestRateLimitCount', 'ModelRequestRateLimitSuccessCount',
  'ModelRequestRateLimitDurationMinutes', 'gemini.thinking_adapter_budget_tokens_percentage',
  'claude.thinking_adapter_budget_tokens_percentage', 'general_setting.ping_interval_seconds',
]);
/** Lower bounds of spec 001 §5 (rate limit: duration ≥ 0, count ≥ 0, success count ≥ 1; ping interval ≥ 1). */
const NUMBER_MIN: Record<string, number> = {
  ModelRequestRateLimitDurationMinutes: 0,
  ModelRequestRateLimitCount: 0,
  ModelRequestRateLimitSuccessCount: 1,
  'general_setting.ping_interval_seconds': 1,
};
const URL_TRIM_KEYS = new Set(['ServerAddress', 'WorkerUrl', 'PayAddress', 'WeChatServerAddress', 'CustomCallbackAddress']);
const DOMAIN_RE = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))+$/;

export const isSwitchKey = (key: string) => /enabled$/i.test(key);

/**
 * Validates and normalises one option value before it is stored. Throws BadRequestError with a
 * message the console shows as is.
 */
export function normaliseOption(key: string, raw: unknown): string {
  if (!/^[A-Za-z0-9_.]{1,128}$/.test(key)) throw new BadRequestError('无效的配置项');
  if (!(key in DEFAULT_OPTIONS)) throw new BadRequestError(`未知的配置项：${key}`);
  let value = typeof raw === 'string' ? raw : typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : undefined;
  if (value === undefined) throw new BadRequestError('配置值必须是字符串');
  if (value.length > 1_000_000) throw new BadRequestError('配置值过长');
  if (isSwitchKey(key)) {
    if (value !== 'true' && value !== 'false') throw new BadRequestError(`${key} 只能是 true 或 false`);
    return value;
  }
  if (NUMBER_KEYS.has(key)) {
    const v = value.trim();
    if (v === '' || !Number.isFinite(Number(v))) throw new BadRequestError(`${key} 必须是数字`);
    if (key.endsWith('_percentage') && (Number(v) < 0.1 || Number(v) > 1)) throw new BadRequestError(`${key} 必须在 0.1 到 1 之间`);
    if (key === 'QuotaPerUnit' && Number(v) <= 0) throw new BadRequestError('QuotaPerUnit 必须大于 0');
    const min = NUMBER_MIN[key];
    if (min !== undefined && Number(v) < min) throw new BadRequestError(`${key} 不能小于 ${min}`);
    return v;
  }
  if (JSON_KEYS.has(key)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new BadRequestError(key === 'TopupGroupRatio' ? 'Top-up group ratio is not a valid JSON string' : `${key} 不是合法的 JSON 字符串`);
    }
    if (NUMBER_MAP_KEYS.has(key)) {
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new BadRequestError(`${key} 必须是 JSON 对象`);
      for (const [name, v] of Object.entries(parsed as Record<string, unknown>)) {
        if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new BadRequestError(`${key} 中 ${name} 的值必须是非负数字`);
      }
    }
    if (key === 'Chats' && !Array.isArray(parsed)) throw new BadRequestError('Chats 必须是 JSON 数组');
    return value;
  }
  if (key === 'EmailDomainWhitelist') {
    const domains = value.split(',').map((d) => d.trim()).filter(Boolean);
    for (const d of domains) {
      if (!DOMAIN_RE.test(d)) throw new BadRequestError(`Email domain format is incorrect, please enter a valid domain such as example.com`);
    }
    if (new Set(domains).size !== domains.length) throw new BadRequestError('This domain already exists in the whitelist');
    return domains.join(',');
  }
  if (key === 'oidc.well_known' && value && !/^https?:\/\//.test(value)) {
    throw new BadRequestError('OIDC Well-Known URL 必须以 http:// 或 https:// 开头');
  }
  if (URL_TRIM_KEYS.has(key)) value = value.trim().replace(/\/+$/, '');
  return value;
}

/**
 * All options in memory, loaded from the table merged over defaults. A change is written to the
 * table, then every node reloads (pub/sub through the KV). Typed getters parse on demand and
 * memoise the parsed JSON until the next change.
 */
export class OptionService {
  private values: Record<string, string> = { ...DEFAULT_OPTIONS };
  private parsed = new Map<string, unknown>();
  /** Numeric options as parsed (NaN: not a number), until the next change: the relay reads some per call. */
  private numbers = new Map<string, number>();
  private derivedValues = new Map<string, unknown>();
  private listeners: Array<(keys: string[]) => void> = [];

  constructor(
    private readonly knex: Knex,
    private readonly kv: KV,
  ) {
    kv.subscribe(RELOAD_CHANNEL, () => {
      void this.load().catch(() => undefined);
    });
  }

  async load(): Promise<void> {
    const rows: Array<{ key: string; value: string }> = await this.knex('options').select('key', 'value');
    const next: Record<string, string> = { ...DEFAULT_OPTIONS };
    for (const r of rows) next[r.key] = r.value ?? '';
    const changed = Object.keys(next).filter((k) => next[k] !== this.values[k]);
    this.values = next;
    this.parsed.clear();
    this.numbers.clear();
    this.derivedValues.clear();
    if (changed.length) for (const l of this.listeners) l(changed);
  }

  /** Called with the changed keys after every (re)load. */
  onChange(listener: (keys: string[]) => void): void {
    this.listeners.push(listener);
  }

  get(key: string): string {
    return this.values[key] ?? '';
  }
  all(): Record<string, string> {
    return { ...this.values };
  }
  bool(key: string): boolean {
    return this.get(key) === 'true';
  }
  num(key: string, fallback = 0): number {
    let n = this.numbers.get(key);
    if (n === undefined) {
      const raw = this.get(key);
      n = raw.trim() === '' ? NaN : Number(raw);
      this.numbers.set(key, n);
    }
    return Number.isFinite(n) ? n : fallback;
  }
  json<T>(key: string, fallback: T): T {
    if (this.parsed.has(key)) return this.parsed.get(key) as T;
    let v: T = fallback;
    try {
      const raw = this.get(key);
      if (raw.trim()) v = JSON.parse(raw) as T;
    } catch {
      v = fallback;
    }
    this.parsed.set(key, v);
    return v;
  }

  /**
   * A value derived from options (e.g. a model's price), built once and kept until the next
   * change, like the parsed JSON. Bounded: past 10 000 entries everything is rebuilt on demand.
   */
  derived<T>(key: string, build: () => T): T {
    const hit = this.derivedValues.get(key);
    if (hit !== undefined || this.derivedValues.has(key)) return hit as T;
    const v = build();
    if (this.derivedValues.size >= 10_000) this.derivedValues.clear();
    this.derivedValues.set(key, v);
    return v;
  }

  get quotaPerUnit(): number {
    return this.num('QuotaPerUnit', 500000) || 500000;
  }

  /** Validates, stores and broadcasts one option. Returns the stored (normalised) value. */
  async set(key: string, raw: unknown, trx?: Knex.Transaction): Promise<string> {
    const value = normaliseOption(key, raw);
    await (trx ?? this.knex)('options').insert({ key, value }).onConflict('key').merge();
    await this.afterWrite();
    return value;
  }

  /** Reload here and on all other nodes after a direct table write. */
  async afterWrite(): Promise<void> {
    await this.load();
    await this.kv.publish(RELOAD_CHANNEL, String(Date.now()));
  }
}

/**
 * Rules that depend on other options (checked by PUT /api/option/ after normaliseOption, like
 * new-api's UpdateOption): a login provider or restriction cannot be switched on before the
 * settings it needs are stored, and payment needs the server address (spec 000 §5).
 */
export function checkOptionDependencies(key: string, value: string, get: (key: string) => string): void {
  const has = (k: string) => get(k).trim() !== '';
  if (value === 'true') {
    switch (key) {
      case 'GitHubOAuthEnabled':
        if (!has('GitHubClientId') || !has('GitHubClientSecret')) throw new BadRequestError('无法启用 GitHub OAuth，请先填入 GitHub Client Id 以及 GitHub Client Secret！');
        break;
      case 'oidc.enabled':
        // Endpoints may come from discovery: a well-known URL is enough.
        if (!has('oidc.client_id') || !has('oidc.client_secret') || (!has('oidc.well_known') && (!has('oidc.authorization_endpoint') || !has('oidc.token_endpoint')))) {
          throw new BadRequestError('无法启用 OIDC 登录，请先填入 OIDC Client Id、Client Secret 以及端点地址！');
        }
        break;
      case 'LinuxDOOAuthEnabled':
        if (!has('LinuxDOClientId') || !has('LinuxDOClientSecret')) throw new BadRequestError('无法启用 LinuxDO OAuth，请先填入 LinuxDO Client Id 以及 LinuxDO Client Secret！');
        break;
      case 'WeChatAuthEnabled':
        if (!has('WeChatServerAddress')) throw new BadRequestError('无法启用微信登录，请先填入微信登录相关配置信息！');
        break;
      case 'TelegramOAuthEnabled':
        if (!has('TelegramBotToken') || !has('TelegramBotName')) throw new BadRequestError('无法启用 Telegram OAuth，请先填入 Telegram Bot Token 以及 Bot Name！');
        break;
      case 'TurnstileCheckEnabled':
        if (!has('TurnstileSiteKey') || !has('TurnstileSecretKey')) throw new BadRequestError('无法启用 Turnstile 校验，请先填入 Turnstile 校验相关配置信息！');
        break;
      case 'EmailDomainRestrictionEnabled':
        if (!has('EmailDomainWhitelist')) throw new BadRequestError('无法启用邮箱域名限制，请先填入限制的邮箱域名！');
        break;
      case 'EmailVerificationEnabled':
        if (!has('SMTPServer')) throw new BadRequestError('无法启用邮箱验证，请先填入 SMTP 相关配置信息！');
        break;
    }
  }
  if (key === 'PayAddress' && value !== '' && !has('ServerAddress')) throw new BadRequestError('Please fill in the server address first');
  if (key === 'EmailDomainWhitelist' && value === '' && get('EmailDomainRestrictionEnabled') === 'true') {
    throw new BadRequestError('已启用邮箱域名限制，白名单不能为空');
  }
}
