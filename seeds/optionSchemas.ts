import { z } from 'zod';
import { parseCidr } from '../server/src/lib/netAddress';
import { DEFAULT_OPTIONS } from './defaultOptions';

/**
 * One rule per option: what a stored value may be (type, range, shape), next to the defaults.
 * Every rule takes the raw text and returns the text to store (trimmed / normalised), or fails
 * with a message that names the option; the console shows it as is. A test checks that every
 * default passes its own rule and that no option is without one.
 */

export type OptionRule = (key: string, value: string) => string;

export class OptionValueError extends Error {}

const fail = (message: string): never => {
  throw new OptionValueError(message);
};

const bool: OptionRule = (key, v) => (v === 'true' || v === 'false' ? v : fail(`${key} 只能是 true 或 false`));

const text =
  (max = 100_000): OptionRule =>
  (key, v) =>
    v.length <= max ? v : fail(`${key} 不能超过 ${max} 个字符`);

/** A number as text; `int` also refuses fractions. Bounds inclusive unless `above` (exclusive lower bound). */
const number =
  (min: number, max: number, opts: { int?: boolean; above?: boolean } = {}): OptionRule =>
  (key, raw) => {
    const v = raw.trim();
    const n = Number(v);
    const range = opts.above ? `大于 ${min} 且不超过 ${max}` : `在 ${min} 到 ${max} 之间`;
    const what = opts.int ? '整数' : '数字';
    if (v === '' || !Number.isFinite(n)) fail(`${key} 必须是${what}（${range}）`);
    if (opts.int && !Number.isInteger(n)) fail(`${key} 必须是${range}的整数`);
    if ((opts.above ? n <= min : n < min) || n > max) fail(`${key} 必须是${range}的${what}`);
    return v;
  };
const int = (min: number, max: number) => number(min, max, { int: true });

const oneOf =
  (...values: string[]): OptionRule =>
  (key, v) =>
    values.includes(v) ? v : fail(`${key} 只能是 ${values.join('、')} 之一`);

/** Empty, or an http(s) URL (surrounding blanks dropped; an endpoint's trailing slash may matter, so kept). */
const url: OptionRule = (key, raw) => {
  const v = raw.trim();
  if (!v) return '';
  let u: URL | undefined;
  try {
    u = new URL(v);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || v.length > 2048) fail(`${key} 必须是以 http:// 或 https:// 开头的地址`);
  return v;
};
/** A base address other paths are appended to: trailing slashes dropped. */
const baseUrl: OptionRule = (key, raw) => url(key, raw.trim().replace(/\/+$/, ''));

/** JSON text checked against a zod shape; the text is stored as given. */
const json =
  (shape: z.ZodType, describe: string, notJson?: string): OptionRule =>
  (key, v) => {
    if (v.length > 1_000_000) fail(`${key} 过长`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {
      fail(notJson ?? `${key} 不是合法的 JSON 字符串`);
    }
    const r = shape.safeParse(parsed);
    if (!r.success) {
      const issue = r.error.issues[0];
      const where = issue?.path.length ? ` 中 ${issue.path.join('.')} ` : ' ';
      fail(`${key}${where}${describe}`);
    }
    return v;
  };

const nonNegative = z.number().finite().min(0);
/** A map name → non-negative number (ratios, prices). */
const numberMap = json(z.record(z.string(), nonNegative), '的值必须是非负数字');
const stringMap = z.record(z.string(), z.string().max(1000));

const list = (v: string) =>
  v
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);
const HOST_RE = /^(\*\.)?(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*\.?$/i;
const DOMAIN_RE = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))+$/;

/** Domain names, one per line or comma separated (`*.` prefix allowed); stored one per line. */
const hostList: OptionRule = (key, v) => {
  const items = list(v.toLowerCase());
  for (const d of items) if (!HOST_RE.test(d) || d.length > 253) fail(`${key} 中 ${d} 不是合法的域名`);
  if (items.length > 1000) fail(`${key} 最多 1000 项`);
  return items.join('\n');
};

/** IPv4/IPv6 addresses or CIDR ranges; stored one per line. */
const cidrList =
  (parse: (s: string) => unknown): OptionRule =>
  (key, v) => {
    const items = list(v);
    for (const c of items) if (!parse(c)) fail(`${key} 中 ${c} 不是合法的 IP 地址或 CIDR 网段`);
    if (items.length > 1000) fail(`${key} 最多 1000 项`);
    return items.join('\n');
  };

const portList: OptionRule = (key, v) => {
  const items = list(v);
  for (const p of items) if (!/^\d{1,5}$/.test(p) || Number(p) < 1 || Number(p) > 65535) fail(`${key} 中 ${p} 不是合法的端口（1 到 65535）`);
  return Array.from(new Set(items.map(Number))).join(',');
};

const emailDomains: OptionRule = (_key, value) => {
  const domains = value
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean);
  for (const d of domains) if (!DOMAIN_RE.test(d)) fail('Email domain format is incorrect, please enter a valid domain such as example.com');
  if (new Set(domains).size !== domains.length) fail('This domain already exists in the whitelist');
  return domains.join(',');
};

const MAX_QUOTA = 1e15;

const cidrs = cidrList(parseCidr);

export const OPTION_RULES: Record<string, OptionRule> = {
  ServerAddress: baseUrl,
  WorkerUrl: baseUrl,
  WorkerValidKey: text(512),
  PayAddress: baseUrl,
  CustomCallbackAddress: baseUrl,
  EpayId: text(128),
  EpayKey: text(512),
  Price: number(0, 1e6, { above: true }),
  MinTopUp: int(0, 1e9),
  TopupGroupRatio: json(z.record(z.string(), nonNegative), '的值必须是非负数字', 'Top-up group ratio is not a valid JSON string'),
  TopUpLink: text(2048),
  PasswordLoginEnabled: bool,
  PasswordRegisterEnabled: bool,
  EmailVerificationEnabled: bool,
  RegisterEnabled: bool,
  TurnstileCheckEnabled: bool,
  TurnstileSiteKey: text(512),
  TurnstileSecretKey: text(512),
  TurnstileVerifyURL: url,
  GitHubOAuthEnabled: bool,
  GitHubClientId: text(512),
  GitHubClientSecret: text(512),
  GitHubOAuthBaseURL: baseUrl,
  GitHubAPIBaseURL: baseUrl,
  WeChatAuthEnabled: bool,
  WeChatServerAddress: baseUrl,
  WeChatServerToken: text(512),
  WeChatAccountQRCodeImageURL: text(2048),
  TelegramOAuthEnabled: bool,
  TelegramBotToken: text(512),
  TelegramBotName: text(128),
  TelegramAdminChatId: text(128),
  LinuxDOOAuthEnabled: bool,
  LinuxDOClientId: text(512),
  LinuxDOClientSecret: text(512),
  LinuxDOAuthorizationEndpoint: url,
  LinuxDOTokenEndpoint: url,
  LinuxDOUserInfoEndpoint: url,
  LinuxDOMinimumTrustLevel: int(0, 4),
  'oidc.enabled': bool,
  'oidc.well_known': (key, v) => (v && !/^https?:\/\//.test(v.trim()) ? fail('OIDC Well-Known URL 必须以 http:// 或 https:// 开头') : url(key, v)),
  'oidc.client_id': text(512),
  'oidc.client_secret': text(512),
  'oidc.authorization_endpoint': url,
  'oidc.token_endpoint': url,
  'oidc.user_info_endpoint': url,
  EmailDomainRestrictionEnabled: bool,
  EmailAliasRestrictionEnabled: bool,
  EmailDomainWhitelist: emailDomains,
  SMTPServer: text(255),
  SMTPPort: int(1, 65535),
  SMTPAccount: text(255),
  SMTPFrom: text(255),
  SMTPToken: text(512),
  SMTPSSLEnabled: bool,
  Notice: text(1_000_000),
  SystemName: text(128),
  Logo: text(100_000),
  Footer: text(1_000_000),
  About: text(1_000_000),
  HomePageContent: text(1_000_000),
  QuotaForNewUser: int(0, MAX_QUOTA),
  QuotaForInviter: int(0, MAX_QUOTA),
  QuotaForInvitee: int(0, MAX_QUOTA),
  QuotaRemindThreshold: int(0, MAX_QUOTA),
  PreConsumedQuota: int(0, MAX_QUOTA),
  StreamCacheQueueLength: int(0, 100_000),
  QuotaPerUnit: number(0, 1e9, { above: true }),
  ModelRatio: numberMap,
  CompletionRatio: numberMap,
  CacheRatio: numberMap,
  ModelPrice: numberMap,
  AudioRatio: numberMap,
  AudioCompletionRatio: numberMap,
  GroupRatio: json(
    z.record(z.string().min(1), nonNegative).refine((m) => Object.keys(m).length > 0, '至少需要一个分组'),
    '必须是非空的 分组→非负倍率 对象',
  ),
  UserUsableGroups: json(
    z.record(z.string().min(1).max(64), z.string().max(255)).refine((m) => Object.keys(m).length > 0, '至少需要一个分组'),
    '必须是非空的 分组→描述 对象',
  ),
  AutomaticDisableChannelEnabled: bool,
  AutomaticEnableChannelEnabled: bool,
  ChannelDisableThreshold: number(0, 3600),
  AutomaticDisableKeywords: text(),
  RetryTimes: int(0, 10),
  RoutingBreakerEnabled: bool,
  RoutingBreakerFailures: int(1, 1000),
  RoutingBreakerWindowSeconds: int(1, 86_400),
  RoutingBreakerCooldownSeconds: int(0, 86_400),
  RoutingBreakerMaxCooldownSeconds: int(0, 86_400),
  RoutingHealthAwareEnabled: bool,
  LogConsumeEnabled: bool,
  ErrorLogEnabled: bool,
  DisplayInCurrencyEnabled: bool,
  DisplayTokenStatEnabled: bool,
  DefaultCollapseSidebar: bool,
  ChatLink: baseUrl,
  ChatLink2: baseUrl,
  Chats: json(z.array(stringMap).max(100), '必须是 JSON 数组，每项为 名称→地址 对象'),
  CheckSensitiveEnabled: bool,
  CheckSensitiveOnPromptEnabled: bool,
  SensitiveWords: text(1_000_000),
  DrawingEnabled: bool,
  TaskEnabled: bool,
  MjNotifyEnabled: bool,
  MjAccountFilterEnabled: bool,
  MjModeClearEnabled: bool,
  MjForwardUrlEnabled: bool,
  MjActionCheckSuccessEnabled: bool,
  DataExportEnabled: bool,
  DataExportDefaultTime: oneOf('hour', 'day', 'week'),
  DataExportInterval: int(1, 1440),
  UpdateCheckUrl: url,
  DemoSiteEnabled: bool,
  SelfUseModeEnabled: bool,
  ModelRequestRateLimitEnabled: bool,
  ModelRequestRateLimitCount: int(0, 1e9),
  ModelRequestRateLimitSuccessCount: int(1, 1e9),
  ModelRequestRateLimitDurationMinutes: int(0, 525_600),
  'gemini.safety_settings': json(stringMap, '必须是 名称→字符串 的 JSON 对象'),
  'gemini.version_settings': json(stringMap, '必须是 名称→字符串 的 JSON 对象'),
  'gemini.supported_imagine_models': json(z.array(z.string().max(255)).max(1000), '必须是字符串的 JSON 数组'),
  'gemini.thinking_adapter_enabled': bool,
  'gemini.thinking_adapter_budget_tokens_percentage': number(0.1, 1),
  'claude.model_headers_settings': json(
    z.record(z.string(), z.record(z.string(), z.union([z.string(), z.array(z.string())]))),
    '必须是 模型→{请求头: 值} 的 JSON 对象',
  ),
  'claude.default_max_tokens': json(z.record(z.string(), z.number().int().min(1).max(10_000_000)), '的值必须是正整数'),
  'claude.thinking_adapter_enabled': bool,
  'claude.thinking_adapter_budget_tokens_percentage': number(0.1, 1),
  'global.pass_through_request_enabled': bool,
  'general_setting.docs_link': text(2048),
  'general_setting.ping_interval_enabled': bool,
  'general_setting.ping_interval_seconds': int(1, 3600),
  'fetch_setting.ssrf_protection_enabled': bool,
  'fetch_setting.allow_private_ip_enabled': bool,
  'fetch_setting.allow_link_local_enabled': bool,
  'fetch_setting.domain_allow_list': hostList,
  'fetch_setting.domain_deny_list': hostList,
  'fetch_setting.ip_allow_list': cidrs,
  'fetch_setting.ip_deny_list': cidrs,
  'fetch_setting.allowed_ports': portList,
  SecureVerificationWindowSeconds: int(30, 86_400),
  AdminTwoFactorRequired: bool,
  PasskeyLoginEnabled: bool,
};

/** Keys of DEFAULT_OPTIONS without a rule, or rules without a default (both must be empty). */
export function uncoveredOptions(rules: Record<string, OptionRule> = OPTION_RULES): { noRule: string[]; noDefault: string[] } {
  return {
    noRule: Object.keys(DEFAULT_OPTIONS).filter((k) => !(k in rules)),
    noDefault: Object.keys(rules).filter((k) => !(k in DEFAULT_OPTIONS)),
  };
}
