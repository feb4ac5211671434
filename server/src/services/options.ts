import type { Knex } from 'knex';
import { msg, verbatim } from '../i18n';
import { DEFAULT_OPTIONS } from '../../../seeds/defaultOptions';
import type { KV } from '../cache/kv';
import type { AppContext } from '../context';
import { upsertOptions } from '../repositories/options';
import { BadRequestError } from '../lib/errors';
import { OPTION_RULES, OptionValueError } from '../../../seeds/optionSchemas';

const RELOAD_CHANNEL = 'options:reload';

/** Keys whose values never leave the server (GET /api/option/ omits them). */
export function isSecretOption(key: string): boolean {
  return /(Secret|Token|Key|client_secret|secret)$/.test(key) || key === 'SMTPToken';
}

export const isSwitchKey = (key: string) => /enabled$/i.test(key);

/**
 * Validates and normalises one option value before it is stored: every option has a rule (type,
 * range, shape) in seeds/optionSchemas.ts. Throws BadRequestError with a message naming the
 * option, which the console shows as is.
 */
export function normaliseOption(key: string, raw: unknown): string {
  if (!/^[A-Za-z0-9_.]{1,128}$/.test(key)) throw new BadRequestError('option.invalid_key');
  const rule = Object.prototype.hasOwnProperty.call(OPTION_RULES, key) ? OPTION_RULES[key] : undefined;
  if (!Object.hasOwn(DEFAULT_OPTIONS, key) || !rule) throw new BadRequestError(msg('option.unknown_key', { key }));
  const value = typeof raw === 'string' ? raw : typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : undefined;
  if (value === undefined) throw new BadRequestError('option.value_not_string');
  if (value.length > 1_000_000) throw new BadRequestError('option.value_too_long');
  try {
    return rule(key, value);
  } catch (err) {
    if (err instanceof OptionValueError) throw new BadRequestError(verbatim(err.message));
    throw err;
  }
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
  /** Reloads started, and the latest whose snapshot is in memory (see load()). */
  private loadsStarted = 0;
  private loadApplied = 0;

  constructor(
    private readonly knex: Knex,
    private readonly kv: KV,
  ) {
    kv.subscribe(RELOAD_CHANNEL, () => {
      void this.load().catch(() => undefined);
    });
  }

  async load(): Promise<void> {
    const seq = ++this.loadsStarted;
    const rows: Array<{ key: string; value: string }> = await this.knex('options').select('key', 'value');
    // Reloads overlap (another node's broadcast, this node's own write): one started earlier may
    // answer after a later one, with a snapshot taken before a write the later one saw. Applying it
    // would leave the node on the old value until the next change, so it is dropped.
    if (seq < this.loadApplied) return;
    this.loadApplied = seq;
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
 * settings it needs are stored, and payment needs the server address.
 */
export function checkOptionDependencies(key: string, value: string, get: (key: string) => string): void {
  const has = (k: string) => get(k).trim() !== '';
  if (value === 'true') {
    switch (key) {
      case 'GitHubOAuthEnabled':
        if (!has('GitHubClientId') || !has('GitHubClientSecret')) throw new BadRequestError('option.github_incomplete');
        break;
      case 'oidc.enabled':
        // Endpoints may come from discovery: a well-known URL is enough.
        if (
          !has('oidc.client_id') ||
          !has('oidc.client_secret') ||
          (!has('oidc.well_known') && (!has('oidc.authorization_endpoint') || !has('oidc.token_endpoint')))
        ) {
          throw new BadRequestError('option.oidc_incomplete');
        }
        break;
      case 'LinuxDOOAuthEnabled':
        if (!has('LinuxDOClientId') || !has('LinuxDOClientSecret')) throw new BadRequestError('option.linuxdo_incomplete');
        break;
      case 'WeChatAuthEnabled':
        if (!has('WeChatServerAddress')) throw new BadRequestError('option.wechat_incomplete');
        break;
      case 'TelegramOAuthEnabled':
        if (!has('TelegramBotToken') || !has('TelegramBotName')) throw new BadRequestError('option.telegram_incomplete');
        break;
      case 'TurnstileCheckEnabled':
        if (!has('TurnstileSiteKey') || !has('TurnstileSecretKey')) throw new BadRequestError('option.turnstile_incomplete');
        break;
      case 'EmailDomainRestrictionEnabled':
        if (!has('EmailDomainWhitelist')) throw new BadRequestError('option.email_domain_incomplete');
        break;
      case 'EmailVerificationEnabled':
        if (!has('SMTPServer')) throw new BadRequestError('option.smtp_incomplete');
        break;
    }
  }
  if (key === 'PayAddress' && value !== '' && !has('ServerAddress')) throw new BadRequestError('option.server_address_first');
  if (key === 'EmailDomainWhitelist' && value === '' && get('EmailDomainRestrictionEnabled') === 'true') {
    throw new BadRequestError('option.email_domain_empty');
  }
}

/** Options as the console lists them: every key but the secrets (tokens, secrets, keys), sorted. */
export function visibleOptions(options: OptionService): Array<{ key: string; value: string }> {
  const all = options.all();
  return Object.keys(all)
    .filter((k) => !isSecretOption(k))
    .sort()
    .map((key) => ({ key, value: all[key]! }));
}

/** Stores one option from the console: normalised, checked against the options it needs, reloaded on every node. */
export async function updateOption(options: OptionService, key: string, raw: string | number | boolean): Promise<void> {
  const value = normaliseOption(key, raw);
  checkOptionDependencies(key, value, (k) => options.get(k));
  await options.set(key, value);
}

const RATIO_KEYS = ['ModelRatio', 'CompletionRatio', 'CacheRatio', 'ModelPrice'] as const;

/** Resets model/completion/cache ratios and fixed prices to the shipped defaults. */
export async function resetModelRatios(app: AppContext): Promise<void> {
  await app.knex.transaction((trx) => upsertOptions(trx, Object.fromEntries(RATIO_KEYS.map((k) => [k, DEFAULT_OPTIONS[k]]))));
  await app.options.afterWrite();
}
