import crypto from 'node:crypto';
import type { AppContext } from '../context';
import { metrics, scrapedMetric, type Sample } from '../metrics';

/**
 * Circuit breakers and health of channels and of single keys (docs/routing.md). Everything the
 * relay reads per call is a field of an object the route table already points at: no await, no
 * map lookup per candidate. With Redis, breaker changes (open, close) are published and kept in a
 * hash; other nodes apply them from pub/sub and a periodic re-read — successes write nothing.
 */

export const BREAKER = { closed: 0, open: 1, halfOpen: 2 } as const;
export type BreakerState = (typeof BREAKER)[keyof typeof BREAKER];
const STATE_NAME = ['closed', 'open', 'half_open'] as const;

/** What a failure was, for the breaker and the metrics. Client errors (400, 404 …) are none of these: they do not count. */
export type FailureKind = 'connect' | 'server' | 'rate_limit' | 'auth';

export interface RoutingSettings {
  breaker: boolean;
  /** Failures of a counting kind within `windowMs` that open a breaker. */
  failures: number;
  windowMs: number;
  cooldownMs: number;
  maxCooldownMs: number;
  healthAware: boolean;
}

/** EWMA weight of the newest sample (latency and error rate). */
const ALPHA = 0.3;
/** Latency smoothing (ms): channels a few ms apart score alike; hundreds of ms apart, not. */
const L0 = 100;
/** The least share a healthy-enough candidate keeps, so a recovering one is still sampled. */
const MIN_SCORE = 0.02;
/** A half-open probe that never reported (a process that lost it) frees the slot after this. */
const PROBE_STUCK_MS = 120_000;
const RESYNC_MS = 10_000;

/** One channel, or one key of a channel (`keyIndex` ≥ 0). */
export class TargetHealth {
  state: BreakerState = BREAKER.closed;
  /** Epoch ms until which an open breaker sends nothing. */
  openUntil = 0;
  /** Re-openings since it last closed (the back-off exponent). */
  reopens = 0;
  /** When the half-open probe was sent (epoch ms). */
  probeAt = 0;
  /** Epoch ms of the counting failures within the window (at most `failures` kept). */
  fails: number[] = [];
  /** EWMA of the upstream's time to first byte (ms); meaningful once `samples` > 0. */
  ttfb = 0;
  /** EWMA of failures (1) and successes (0). */
  err = 0;
  samples = 0;
  lastUsed = 0;
  lastFailure = '';
  lastFailureAt = 0;
  constructor(
    readonly id: string,
    readonly channelId: number,
    readonly keyIndex: number,
  ) {}
}

interface SharedState {
  n: string;
  t: string;
  c: number;
  k: number;
  s: BreakerState;
  u: number;
  r: number;
  m: string;
}

export class HealthBoard {
  readonly targets = new Map<string, TargetHealth>();
  settings: RoutingSettings;
  /** Counters for /metrics. */
  readonly transitions = new Map<string, number>();
  readonly failuresByKey = new Map<string, number>();
  retries = 0;
  private readonly node = crypto.randomBytes(6).toString('hex');
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly app: AppContext) {
    this.settings = readSettings(app);
    app.options.onChange(() => (this.settings = readSettings(app)));
    this.registerMetrics();
    if (app.kv.kind === 'redis') this.share();
  }

  target(channelId: number, keyIndex = -1): TargetHealth {
    const id = keyIndex < 0 ? `c${channelId}` : `c${channelId}:${keyIndex}`;
    let h = this.targets.get(id);
    if (!h) this.targets.set(id, (h = new TargetHealth(id, channelId, keyIndex)));
    return h;
  }

  /** Drops the key targets of a channel whose key list changed (indexes moved); they start afresh. */
  forgetKeys(channelId: number): void {
    const prefix = `c${channelId}:`;
    for (const id of [...this.targets.keys()]) if (id.startsWith(prefix)) this.targets.delete(id);
  }

  /** May a call go to this target now? Closed: yes; open: only once the cool-down is over (as the probe); half-open: not while the probe is out. */
  available(h: TargetHealth, now: number): boolean {
    if (h.state === BREAKER.closed || !this.settings.breaker) return true;
    if (h.state === BREAKER.open) return now >= h.openUntil;
    return now - h.probeAt > PROBE_STUCK_MS;
  }

  /** The call goes to `h`: an open breaker whose cool-down is over becomes half-open with this call as its one probe. */
  claim(h: TargetHealth, now: number): void {
    h.lastUsed = now;
    if (h.state === BREAKER.closed || !this.settings.breaker) return;
    if (h.state === BREAKER.open) this.count(h, BREAKER.halfOpen);
    h.state = BREAKER.halfOpen;
    h.probeAt = now;
  }

  success(h: TargetHealth, ttfbMs: number, now: number): void {
    h.ttfb = h.samples ? h.ttfb + ALPHA * (ttfbMs - h.ttfb) : ttfbMs;
    h.samples++;
    h.err *= 1 - ALPHA;
    if (h.state !== BREAKER.closed) {
      // The probe passed: a fresh start (the errors that opened it are history).
      h.err = 0;
      this.close(h, true);
    }
    h.lastUsed = now;
  }

  /** A call to `h` ended before its answer for a reason that is not the target's (the client left): a probe slot is freed. */
  release(h: TargetHealth): void {
    if (h.state === BREAKER.halfOpen) h.state = BREAKER.open;
  }

  failure(h: TargetHealth, kind: FailureKind, now: number, reason: string, retryAfterMs = 0): void {
    h.err = h.err + ALPHA * (1 - h.err);
    h.lastFailure = reason.slice(0, 300);
    h.lastFailureAt = now;
    const fk = `${h.channelId}|${h.keyIndex < 0 ? '' : h.keyIndex}|${kind}`;
    this.failuresByKey.set(fk, (this.failuresByKey.get(fk) ?? 0) + 1);
    const s = this.settings;
    if (!s.breaker) return;
    if (h.state === BREAKER.halfOpen) {
      h.reopens++;
      return this.open(h, now, Math.max(retryAfterMs, backoff(s, h.reopens)));
    }
    if (h.state === BREAKER.open) return; // a call sent before it opened
    if (kind === 'auth') return this.open(h, now, s.cooldownMs);
    if (kind === 'rate_limit' && retryAfterMs > 0) return this.open(h, now, Math.min(retryAfterMs, s.maxCooldownMs));
    const from = now - s.windowMs;
    const fails = h.fails.filter((t) => t > from);
    fails.push(now);
    h.fails = fails.slice(-s.failures);
    if (h.fails.length >= s.failures) this.open(h, now, s.cooldownMs);
  }

  /** Health score in (0, 1]: latency relative to the best candidate of the draw (`bestTtfb`, ms) and the error rate. */
  score(h: TargetHealth, bestTtfb: number): number {
    const lat = h.samples && h.ttfb > 0 ? h.ttfb : bestTtfb;
    const lf = (bestTtfb + L0) / (lat + L0);
    const ef = 1 - h.err;
    return Math.max(MIN_SCORE, Math.min(1, lf * lf * ef * ef));
  }

  /** A failure that is another target's (a key's) seen by this one's health score only, not its breaker. */
  noteError(h: TargetHealth, now: number, reason: string): void {
    h.err = h.err + ALPHA * (1 - h.err);
    h.lastFailure = reason.slice(0, 300);
    h.lastFailureAt = now;
  }

  /** Closes it by hand or by a passing test (console "test" is a probe too). */
  reset(h: TargetHealth): void {
    if (h.state !== BREAKER.closed) {
      h.err = 0;
      this.close(h, true);
    }
  }

  private open(h: TargetHealth, now: number, ms: number): void {
    if (h.state !== BREAKER.open) this.count(h, BREAKER.open);
    h.state = BREAKER.open;
    h.openUntil = now + Math.max(0, ms);
    h.fails = [];
    h.probeAt = 0;
    this.app.log.warn(
      { channel: h.channelId, key: h.keyIndex < 0 ? undefined : h.keyIndex, until: new Date(h.openUntil).toISOString(), reason: h.lastFailure },
      'breaker open',
    );
    this.publish(h);
  }

  private close(h: TargetHealth, publish: boolean): void {
    if (h.state !== BREAKER.closed) this.count(h, BREAKER.closed);
    h.state = BREAKER.closed;
    h.reopens = 0;
    h.fails = [];
    h.probeAt = 0;
    h.openUntil = 0;
    if (publish) this.publish(h);
  }

  private count(h: TargetHealth, to: BreakerState): void {
    const k = `${h.keyIndex < 0 ? 'channel' : 'key'}|${STATE_NAME[to]}`;
    this.transitions.set(k, (this.transitions.get(k) ?? 0) + 1);
  }

  // ------------------------------------------------------------------------------------------
  // Shared state (Redis): written on changes only, read from pub/sub and a periodic re-read.

  private get hashKey(): string {
    return `${this.app.kv.prefix}routing:breakers`;
  }

  private publish(h: TargetHealth): void {
    const kv = this.app.kv;
    if (kv.kind !== 'redis' || !kv.redis) return;
    const msg: SharedState = { n: this.node, t: h.id, c: h.channelId, k: h.keyIndex, s: h.state, u: h.openUntil, r: h.reopens, m: h.lastFailure };
    const text = JSON.stringify(msg);
    const write = h.state === BREAKER.closed ? kv.redis.hdel(this.hashKey, h.id) : kv.redis.hset(this.hashKey, h.id, text);
    void Promise.all([write, kv.publish('routing:breaker', text)]).catch((err: unknown) => this.app.log.warn({ err }, 'breaker state not shared'));
  }

  private apply(text: string): void {
    let m: SharedState;
    try {
      m = JSON.parse(text) as SharedState;
    } catch {
      return;
    }
    if (!m || m.n === this.node || typeof m.c !== 'number') return;
    const h = this.target(m.c, m.k);
    if (m.s === BREAKER.closed) {
      if (h.state !== BREAKER.closed) {
        h.err = 0;
        this.close(h, false);
      }
      return;
    }
    // Another node opened it (or re-opened it after its probe failed).
    if (h.state === BREAKER.open && h.openUntil >= m.u) return;
    if (h.state === BREAKER.closed) this.count(h, BREAKER.open);
    h.state = BREAKER.open;
    h.openUntil = m.u;
    h.reopens = m.r;
    h.fails = [];
    h.probeAt = 0;
    if (m.m) h.lastFailure = m.m;
  }

  private share(): void {
    const kv = this.app.kv;
    kv.subscribe('routing:breaker', (text) => this.apply(text));
    const resync = async () => {
      if (!kv.redis) return;
      const all = await kv.redis.hgetall(this.hashKey);
      const now = Date.now();
      for (const text of Object.values(all)) this.apply(text);
      // Entries whose cool-down ended long ago (a node that died mid-probe) are dropped.
      const stale = Object.entries(all)
        .filter(([, t]) => {
          try {
            return (JSON.parse(t) as SharedState).u < now - PROBE_STUCK_MS;
          } catch {
            return true;
          }
        })
        .map(([id]) => id);
      if (stale.length) await kv.redis.hdel(this.hashKey, ...stale);
    };
    const tick = () => void resync().catch((err: unknown) => this.app.log.warn({ err }, 'breaker resync failed'));
    tick();
    this.timer = setInterval(tick, RESYNC_MS);
    this.timer.unref();
    this.app.onClose(() => clearInterval(this.timer));
  }

  /** Re-reads the shared state now (tests; the console's health view). */
  async resync(): Promise<void> {
    const kv = this.app.kv;
    if (kv.kind !== 'redis' || !kv.redis) return;
    const all = await kv.redis.hgetall(this.hashKey);
    for (const text of Object.values(all)) this.apply(text);
  }

  // ------------------------------------------------------------------------------------------

  private registerMetrics(): void {
    const { registry } = metrics(this.app);
    const split = (k: string) => k.split('|');
    scrapedMetric(registry, 'gateway_breaker_transitions_total', 'Circuit breaker state changes, by scope (channel|key) and new state', 'counter', () =>
      [...this.transitions].map(([k, value]) => {
        const [scope, to] = split(k);
        return { labels: { scope: scope!, to: to! }, value };
      }),
    );
    scrapedMetric(registry, 'gateway_breaker_state', 'Breakers not closed (1 open, 2 half-open), by channel and key index', 'gauge', () => {
      const out: Sample[] = [];
      for (const h of this.targets.values()) {
        if (h.state !== BREAKER.closed) out.push({ labels: { channel: h.channelId, key_index: h.keyIndex < 0 ? '' : h.keyIndex }, value: h.state });
      }
      return out;
    });
    scrapedMetric(registry, 'gateway_upstream_failures_total', 'Upstream failures that count for breakers, by channel, key index and kind', 'counter', () =>
      [...this.failuresByKey].map(([k, value]) => {
        const [channel, key, kind] = split(k);
        return { labels: { channel: channel!, key_index: key!, kind: kind! }, value };
      }),
    );
    scrapedMetric(registry, 'gateway_relay_retries_total', 'Relay attempts after the first one (another channel or key)', 'counter', () => [
      { labels: {}, value: this.retries },
    ]);
    const perChannel = (pick: (h: TargetHealth) => number) => () => {
      const out: Sample[] = [];
      for (const h of this.targets.values())
        if (h.keyIndex < 0 && (h.samples || h.lastFailureAt)) out.push({ labels: { channel: h.channelId }, value: pick(h) });
      return out;
    };
    scrapedMetric(
      registry,
      'gateway_channel_ttfb_seconds',
      'EWMA of the upstream time to first byte, by channel',
      'gauge',
      perChannel((h) => h.ttfb / 1000),
    );
    scrapedMetric(
      registry,
      'gateway_channel_error_rate',
      'EWMA of the upstream error rate (0–1), by channel',
      'gauge',
      perChannel((h) => h.err),
    );
  }
}

function backoff(s: RoutingSettings, reopens: number): number {
  return Math.min(s.maxCooldownMs, s.cooldownMs * 2 ** Math.min(reopens, 20));
}

function readSettings(app: AppContext): RoutingSettings {
  const o = app.options;
  const cooldownMs = Math.max(0, o.num('RoutingBreakerCooldownSeconds', 30)) * 1000;
  return {
    breaker: o.get('RoutingBreakerEnabled') !== 'false',
    failures: Math.max(1, Math.floor(o.num('RoutingBreakerFailures', 5))),
    windowMs: Math.max(1, o.num('RoutingBreakerWindowSeconds', 60)) * 1000,
    cooldownMs,
    maxCooldownMs: Math.max(cooldownMs, o.num('RoutingBreakerMaxCooldownSeconds', 600) * 1000),
    healthAware: o.get('RoutingHealthAwareEnabled') !== 'false',
  };
}

export function healthBoard(app: AppContext): HealthBoard {
  return app.memo('routing:board', () => new HealthBoard(app));
}

/** How an upstream status counts: 0 (no answer) connect, 5xx and 408 server, 429 rate limit, 401/403 auth; else undefined (the caller's error). */
export function failureKind(status: number): FailureKind | undefined {
  if (status === 0) return 'connect';
  if (status === 429) return 'rate_limit';
  if (status === 401 || status === 403) return 'auth';
  if (status >= 500 || status === 408) return 'server';
  return undefined;
}

/** `Retry-After` as ms (seconds or an HTTP date); 0 when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number {
  if (!value) return 0;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const t = Date.parse(v);
  return Number.isFinite(t) ? Math.max(0, t - now) : 0;
}
