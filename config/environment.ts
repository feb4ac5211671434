/**
 * Every environment variable the gateway reads: its type, its default and what it means, parsed
 * and validated here in one place. `server/src/config.ts` turns the result into the app's
 * `AppConfig`; `docs/configuration.md` is generated from this table (`npm run docs:config`) and a
 * test keeps the two equal.
 *
 * An unset or empty variable takes its default. A value that does not parse stops the start with
 * one message naming every bad variable: a typo must not silently turn a guard off.
 */
import { z } from 'zod';

export interface Variable<T = unknown> {
  /** What the value means (one line of docs/configuration.md). */
  description: string;
  /** Parses the raw text: undefined when unset or empty. */
  schema: z.ZodType<T, string | undefined>;
  /**
   * The default as the docs state it, for defaults computed at start (paths, a random secret) or
   * depending on other variables; otherwise the schema's own default is shown.
   */
  defaultText?: string;
  /** An empty value is a value (not "unset"). */
  keepEmpty?: boolean;
}

const MiB = 1024 * 1024;

/** A whole number in [min, max]; `fallback` when unset. */
function wholeNumber(fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) {
  const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined) return fallback;
      const n = Number(raw.trim());
      if (Number.isSafeInteger(n) && n >= min && n <= max) return n;
      ctx.addIssue({ code: 'custom', message: `must be a whole number ${range}` });
      return z.NEVER;
    });
}

/** A number > 0, or undefined when unset (the code's default then applies). */
function positiveNumber() {
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined) return undefined;
      const n = Number(raw.trim());
      if (Number.isFinite(n) && n > 0) return n;
      ctx.addIssue({ code: 'custom', message: 'must be a number > 0' });
      return z.NEVER;
    });
}

function text() {
  return z.string().optional();
}

function oneOf<const V extends readonly [string, ...string[]]>(values: V, fallback: V[number]) {
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined) return fallback;
      const v = raw.trim().toLowerCase();
      if ((values as readonly string[]).includes(v)) return v as V[number];
      ctx.addIssue({ code: 'custom', message: `must be one of ${values.join(', ')}` });
      return z.NEVER;
    });
}

function withPrefix(prefixes: string[], what: string) {
  return z
    .string()
    .optional()
    .refine((v) => v === undefined || prefixes.some((p) => v.startsWith(p)), { message: `must be ${what}` });
}

const variable = <T>(v: Variable<T>): Variable<T> => v;

/** The table, in the order of docs/configuration.md. */
export const ENVIRONMENT = {
  PORT: variable({ description: 'HTTP port', schema: wholeNumber(3000, 0, 65535) }),
  DATABASE_URL: variable({
    description: '`sqlite:<path>`, `sqlite::memory:` or `postgres://user@host/db`',
    defaultText: '`sqlite:data/gateway.db` (under the repository root)',
    schema: withPrefix(['sqlite:', 'postgres://', 'postgresql://'], 'sqlite:<path> or postgres://…'),
  }),
  DATABASE_SCHEMA: variable({ description: 'PostgreSQL schema to use (the tests take a fresh one per run)', schema: text() }),
  MIGRATE_ONLY: variable({
    description:
      '`true`: bring the database up to date (migrations, default options) and exit without serving: a one-shot run before the nodes start (`docs/deploy.md`)',
    schema: oneOf(['true', 'false'], 'false'),
  }),
  REDIS_URL: variable({
    description: '`redis://…`; unset means in-process cache, limits and pub/sub (one node only); login sessions live in the database',
    schema: withPrefix(['redis://', 'rediss://'], 'redis://… or rediss://…'),
  }),
  REDIS_PREFIX: variable({
    description: 'prefix of every Redis key and channel, so that apps sharing a Redis stay apart (empty: none)',
    schema: z.string().default('gw:'),
    keepEmpty: true,
  }),
  SESSION_SECRET: variable({
    description: 'signs session cookies; share it between nodes',
    defaultText: 'random per start (warning)',
    schema: text(),
  }),
  SERVER_LANGUAGE: variable({
    description:
      'language of what the server writes with no reader at hand: operator notifications (mail, Telegram), usage-log text, mails to users whose language is unknown (`zh` or `en`; answers follow each request’s `Accept-Language`)',
    schema: oneOf(['zh', 'en'], 'zh'),
  }),
  LOG_LEVEL: variable({ description: 'pino level', schema: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info') }),
  ADMIN_DIST: variable({
    description: 'directory of the built console, served at `/`',
    defaultText: '`admin/dist` (under the repository root)',
    schema: text(),
  }),
  APP_VERSION: variable({ description: 'version reported by `/api/status`', defaultText: 'the root package.json version', schema: text() }),
  API_BODY_LIMIT: variable({ description: 'largest console API request body, bytes', defaultText: '1 MiB', schema: wholeNumber(MiB, 1) }),
  RELAY_BODY_LIMIT: variable({ description: 'largest relay request body, bytes', defaultText: '32 MiB', schema: wholeNumber(32 * MiB, 1) }),
  HTTP_HEADERS_TIMEOUT_MS: variable({
    description:
      'a client must send a request’s headers within this time, or gets 408 and the connection closes (idle keep-alive connections are not affected)',
    schema: wholeNumber(20_000, 1_000),
  }),
  HTTP_REQUEST_TIMEOUT_MS: variable({
    description:
      'a client must send a whole request (headers and body: the relay’s uploads) within this time, or gets 408 and the connection closes; the answer may take as long as it needs (streams)',
    schema: wholeNumber(300_000, 1_000),
  }),
  API_BODY_TIMEOUT_MS: variable({ description: 'a console API request body must arrive within this time (else 408)', schema: wholeNumber(30_000, 100) }),
  UPSTREAM_TIMEOUT_MS: variable({ description: 'upstream request timeout', schema: wholeNumber(300_000, 1) }),
  UPSTREAM_CONNECT_TIMEOUT_MS: variable({
    description: 'opening an upstream connection: TCP + TLS, per hop (to a channel’s proxy, then through it)',
    defaultText: '`10000` (at most `UPSTREAM_TIMEOUT_MS`)',
    schema: positiveNumber(),
  }),
  UPSTREAM_PROXY_TIMEOUT_MS: variable({
    description: 'a channel proxy’s answer to CONNECT',
    defaultText: '`10000` (at most `UPSTREAM_TIMEOUT_MS`)',
    schema: positiveNumber(),
  }),
  UPSTREAM_HEADERS_TIMEOUT_MS: variable({
    description: 'request sent → response headers (a non-streamed completion answers only when generated)',
    defaultText: '`UPSTREAM_TIMEOUT_MS`',
    schema: positiveNumber(),
  }),
  UPSTREAM_IDLE_TIMEOUT_MS: variable({
    description: 'longest silence between two chunks of an upstream body',
    defaultText: '`UPSTREAM_TIMEOUT_MS`',
    schema: positiveNumber(),
  }),
  RELAY_MAX_SSE_EVENT_BYTES: variable({
    description: 'largest single SSE event (or Bedrock event-stream frame) read from an upstream; past it the call ends with an error',
    defaultText: '4 MiB',
    schema: positiveNumber(),
  }),
  TRUST_PROXY: variable({
    description:
      'number of reverse proxies in front of the gateway (`true` = 1): the client IP is the `X-Forwarded-For` entry that many hops from the right (entries further left are the client’s own and ignored); also enables `X-Forwarded-Proto`/`Host`',
    defaultText: '`false`',
    schema: z
      .string()
      .optional()
      .refine((v) => v === undefined || /^(true|false|\d{1,2})$/i.test(v.trim()), { message: 'must be true, false or a number of proxy hops' }),
  }),
  TRUST_PROXY_CIDRS: variable({
    description:
      'comma-separated IPs/CIDRs of trusted proxies (e.g. `10.0.0.0/8,::1`): `X-Forwarded-For` is walked from the right past every address in them; may be combined with `TRUST_PROXY`',
    schema: text(),
  }),
  LOGIN_FAIL_LIMIT_ACCOUNT: variable({
    description: 'failed password logins per account per window before logins of that account are 429 (0 = off)',
    schema: wholeNumber(5),
  }),
  LOGIN_FAIL_LIMIT_IP: variable({ description: 'failed password logins per client IP per window (0 = off)', schema: wholeNumber(20) }),
  LOGIN_FAIL_WINDOW_SECONDS: variable({ description: 'that window, seconds (0 counts as 1)', schema: wholeNumber(900) }),
  GLOBAL_API_RATE_LIMIT: variable({ description: 'console API calls per IP per window (0 = off)', schema: wholeNumber(600) }),
  GLOBAL_API_RATE_LIMIT_DURATION: variable({ description: 'that window, seconds', schema: wholeNumber(60, 1) }),
  SHUTDOWN_TIMEOUT_MS: variable({
    description: 'on SIGTERM/SIGINT, how long calls in flight (streams included) may still run before they are cut',
    defaultText: '`30000`',
    schema: positiveNumber(),
  }),
  SHUTDOWN_DELAY_MS: variable({
    description: 'on SIGTERM/SIGINT, how long the node still serves, `/readyz` answering 503, before it stops accepting: load balancers take it out first',
    schema: wholeNumber(0, 0, 600_000),
  }),
  NODE_ID: variable({
    description:
      'this node’s name for its quota reservations: unique among live nodes and stable across restarts, so a restarted node settles or refunds what it left behind (`docs/billing.md`)',
    defaultText: '`<host>:<PORT>`',
    schema: text(),
  }),
  LEDGER_HEARTBEAT_MS: variable({ description: 'how often a node says it is alive (PostgreSQL)', defaultText: '`10000`', schema: positiveNumber() }),
  LEDGER_STALE_MS: variable({
    description: 'after how long without a heartbeat another node takes over a node’s open reservations',
    defaultText: '`60000`',
    schema: positiveNumber(),
  }),
  LEDGER_DURABLE_COMMIT: variable({
    description:
      'PostgreSQL: `on` waits for every ledger commit (reserve, settle, refund, usage flush) to be flushed to disk (`synchronous_commit = on`, ≈ 0.1–0.2 ms more per commit); `off` keeps SQLite’s class: a commit survives any crash of a gateway node, a crash of the database host may lose its last few hundred milliseconds of ledger transactions, each whole (`docs/billing.md`)',
    schema: oneOf(['on', 'off'], 'off'),
  }),
  DATABASE_STATEMENT_TIMEOUT_MS: variable({
    description:
      'PostgreSQL: longest a statement may run (`statement_timeout`); a call past it fails with a clear error instead of hanging (`0`: no limit; migrations have none)',
    schema: wholeNumber(30_000, 0),
  }),
  DATABASE_ACQUIRE_TIMEOUT_MS: variable({
    description: 'PostgreSQL: longest a call waits for a pooled connection (the database unreachable, the pool busy) before it fails with a clear error',
    schema: wholeNumber(10_000, 100),
  }),
  DATABASE_LOCK_TIMEOUT_MS: variable({
    description:
      'PostgreSQL: longest a statement waits for a lock (`lock_timeout`); a relay call that waits longer answers 503 in its caller’s format (`0`: no limit)',
    schema: wholeNumber(5_000, 0),
  }),
  TASK_POLL_MS: variable({
    description: 'how often each node polls the upstreams of unfinished asynchronous tasks (Midjourney, Suno, video); `0` turns the poller off',
    defaultText: '`15000`',
    schema: wholeNumber(15000, 0),
  }),
  METRICS_TOKEN: variable({
    description: '`GET /metrics` requires `Authorization: Bearer <token>`; unset: only loopback clients may scrape',
    schema: text(),
  }),
  GATEWAY_PROCESS_METRICS: variable({
    description: '`true`: `/metrics` adds the process metrics (RSS, CPU, event-loop lag, GC)',
    schema: oneOf(['true', 'false'], 'false'),
  }),
  GATEWAY_NATIVE: variable({
    description:
      '`off`: do without the optional native addon (`server/native/addon`: accept-queue draining, memory-reducing idle GC, malloc_trim) even when it is built',
    schema: oneOf(['on', 'off'], 'on'),
  }),
} satisfies Record<string, Variable>;

export type VariableName = keyof typeof ENVIRONMENT;

/** The parsed environment: one typed value per variable. */
export type Environment = { [K in VariableName]: z.output<(typeof ENVIRONMENT)[K]['schema']> };

/** The environment did not parse; `problems` names each bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The raw value a variable's schema sees: undefined when unset or empty (unless empty is a value). */
function rawValue(env: Readonly<Record<string, string | undefined>>, name: VariableName): string | undefined {
  const raw = env[name];
  if (raw === undefined) return undefined;
  return raw.trim() === '' && !(ENVIRONMENT[name] as Variable).keepEmpty ? undefined : raw;
}

/** Parses every variable; throws one ConfigError listing all that are invalid. */
export function parseEnvironment(env: Readonly<Record<string, string | undefined>>): Environment {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const name of Object.keys(ENVIRONMENT) as VariableName[]) {
    const result = (ENVIRONMENT[name] as Variable).schema.safeParse(rawValue(env, name));
    if (result.success) out[name] = result.data;
    else problems.push(`${name}=${JSON.stringify(env[name])}: ${result.error.issues.map((i) => i.message).join('; ')}`);
  }
  if (problems.length) throw new ConfigError(problems);
  return out as Environment;
}

/** One variable alone (for switches read outside the app's config, e.g. GATEWAY_NATIVE at load time). */
export function readVariable<K extends VariableName>(name: K, env: Readonly<Record<string, string | undefined>> = process.env): Environment[K] {
  const result = (ENVIRONMENT[name] as Variable).schema.safeParse(rawValue(env, name));
  if (!result.success) throw new ConfigError([`${name}=${JSON.stringify(env[name])}: ${result.error.issues.map((i) => i.message).join('; ')}`]);
  return result.data as Environment[K];
}
