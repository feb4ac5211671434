import type Koa from 'koa';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AppContext } from './context';

/**
 * Prometheus metrics for one app. Each app gets its own Registry (through `app.memo`), never the
 * prom-client global one: tests build many apps in one process and a global registry would both
 * mix their numbers and throw on duplicate metric names.
 *
 * Labels are kept low-cardinality: channel id (operators have tens of channels, not thousands),
 * model name, and the HTTP status class of the relay answer.
 */
export interface GatewayMetrics {
  registry: Registry;
  requests: Counter<'channel' | 'model' | 'status'>;
  upstreamSeconds: Histogram<'channel' | 'model'>;
  overheadSeconds: Histogram<'channel' | 'model'>;
  quota: Counter<'channel' | 'model'>;
  tokens: Counter<'channel' | 'model' | 'kind'>;
}

export interface RelayObservation {
  /** Channel the request went to (0 when it never reached one, e.g. auth or routing failed). */
  channelId: number;
  model: string;
  /** HTTP status returned to the client. */
  status: number;
  /** Time spent waiting on the upstream (request sent → last byte received), ms. Omit if no upstream call. */
  upstreamMs?: number;
  /** Time spent in the gateway itself (total − upstream), ms. */
  overheadMs?: number;
  /** Quota charged at settlement. */
  quota?: number;
  promptTokens?: number;
  completionTokens?: number;
}

/** Latency buckets (seconds): fine below 10 ms for the overhead, up to minutes for upstreams. */
const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export function metrics(app: AppContext): GatewayMetrics {
  return app.memo('metrics', () => {
    const registry = new Registry();
    registry.setDefaultLabels({ app: 'gateway' });
    // Process metrics (RSS, CPU, event-loop lag, GC): only in a real server, where one app = one
    // process; in tests many apps share a process and the default collector keeps timers alive.
    if (process.env.GATEWAY_PROCESS_METRICS === 'true') collectDefaultMetrics({ register: registry });
    const m: GatewayMetrics = {
      registry,
      requests: new Counter({
        name: 'gateway_relay_requests_total',
        help: 'Relay requests answered, by channel, model and HTTP status',
        labelNames: ['channel', 'model', 'status'] as const,
        registers: [registry],
      }),
      upstreamSeconds: new Histogram({
        name: 'gateway_upstream_duration_seconds',
        help: 'Time spent waiting on the upstream provider',
        labelNames: ['channel', 'model'] as const,
        buckets: UPSTREAM_BUCKETS,
        registers: [registry],
      }),
      overheadSeconds: new Histogram({
        name: 'gateway_overhead_duration_seconds',
        help: 'Time spent in the gateway itself (total minus upstream)',
        labelNames: ['channel', 'model'] as const,
        buckets: OVERHEAD_BUCKETS,
        registers: [registry],
      }),
      quota: new Counter({
        name: 'gateway_quota_spent_total',
        help: 'Quota charged at settlement',
        labelNames: ['channel', 'model'] as const,
        registers: [registry],
      }),
      tokens: new Counter({
        name: 'gateway_tokens_total',
        help: 'Tokens billed, by kind (prompt/completion)',
        labelNames: ['channel', 'model', 'kind'] as const,
        registers: [registry],
      }),
    };
    app.onClose(() => registry.clear());
    return m;
  });
}

interface SeriesChildren {
  requests: { inc(v?: number): void };
  upstream: { observe(v: number): void };
  overhead: { observe(v: number): void };
  quota: { inc(v?: number): void };
  prompt: { inc(v?: number): void };
  completion: { inc(v?: number): void };
}

/**
 * The labelled children of one (channel, model, status) series, resolved once: prom-client hashes
 * the label object on every `inc({…})`, which is a measurable part of a relay call's overhead.
 * Bounded by channels × models × statuses actually seen.
 */
function seriesFor(app: AppContext, m: GatewayMetrics, channel: string, model: string, status: string): SeriesChildren {
  const cache = app.memo('metrics:series', () => new Map<string, SeriesChildren>());
  const key = `${channel}\u0000${model}\u0000${status}`;
  let c = cache.get(key);
  if (!c) {
    c = {
      requests: m.requests.labels({ channel, model, status }),
      upstream: m.upstreamSeconds.labels({ channel, model }),
      overhead: m.overheadSeconds.labels({ channel, model }),
      quota: m.quota.labels({ channel, model }),
      prompt: m.tokens.labels({ channel, model, kind: 'prompt' }),
      completion: m.tokens.labels({ channel, model, kind: 'completion' }),
    };
    cache.set(key, c);
  }
  return c;
}

/** Records one finished relay request. Cheap: a few map lookups, no I/O. Never throws. */
export function recordRelay(app: AppContext, o: RelayObservation): void {
  try {
    const m = metrics(app);
    const c = seriesFor(app, m, String(o.channelId || 0), o.model || 'unknown', String(o.status));
    c.requests.inc();
    if (o.upstreamMs !== undefined && o.upstreamMs >= 0) c.upstream.observe(o.upstreamMs / 1000);
    if (o.overheadMs !== undefined && o.overheadMs >= 0) c.overhead.observe(o.overheadMs / 1000);
    if (o.quota) c.quota.inc(o.quota);
    if (o.promptTokens) c.prompt.inc(o.promptTokens);
    if (o.completionTokens) c.completion.inc(o.completionTokens);
  } catch (err) {
    app.log.warn({ err }, 'metrics: could not record relay request');
  }
}

/** Header carrying the gateway's own time for a relay answer (ms, 3 decimals). */
export const OVERHEAD_HEADER = 'X-Gateway-Overhead-Ms';

/** Formats an overhead value for OVERHEAD_HEADER. */
export function formatOverhead(ms: number): string {
  return Math.max(0, ms).toFixed(3);
}

/**
 * Monotonic stopwatch for the relay: `const t = startTimer()` on entry; `t.upstreamStart()` /
 * `t.upstreamEnd()` around the upstream call (streaming: end at the last chunk); `t.overheadMs()`
 * gives total − upstream so far. Pure helper, no I/O.
 */
export function startTimer() {
  const t0 = process.hrtime.bigint();
  let upstreamNs = 0n;
  let upStart: bigint | undefined;
  const ms = (ns: bigint) => Number(ns) / 1e6;
  return {
    upstreamStart() {
      upStart = process.hrtime.bigint();
    },
    upstreamEnd() {
      if (upStart === undefined) return;
      upstreamNs += process.hrtime.bigint() - upStart;
      upStart = undefined;
    },
    /** Upstream time so far (ms), including a call still in flight. */
    upstreamMs(): number {
      const live = upStart === undefined ? 0n : process.hrtime.bigint() - upStart;
      return ms(upstreamNs + live);
    },
    totalMs(): number {
      return ms(process.hrtime.bigint() - t0);
    },
    overheadMs(): number {
      const now = process.hrtime.bigint();
      const live = upStart === undefined ? 0n : now - upStart;
      return ms(now - t0 - upstreamNs - live);
    },
  };
}
export type RelayTimer = ReturnType<typeof startTimer>;

/**
 * Serves `GET /metrics` in the Prometheus text format. Access:
 *   - env `METRICS_TOKEN` set → requires `Authorization: Bearer <token>` (any client address);
 *   - otherwise only loopback clients (127.0.0.1/::1, by socket address, never X-Forwarded-For)
 *     may scrape, so a public gateway does not leak its channel/model traffic.
 */
export function metricsMiddleware(app: AppContext): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.path !== '/metrics' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    const token = process.env.METRICS_TOKEN;
    if (token) {
      if (ctx.get('authorization') !== `Bearer ${token}`) {
        ctx.status = 401;
        ctx.body = 'unauthorized\n';
        return;
      }
    } else if (!isLoopback(ctx.req.socket.remoteAddress)) {
      ctx.status = 403;
      ctx.body = 'forbidden: set METRICS_TOKEN to scrape from another host\n';
      return;
    }
    const m = metrics(app);
    ctx.set('Content-Type', m.registry.contentType);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await m.registry.metrics();
  };
}

function isLoopback(addr: string | undefined): boolean {
  if (!addr) return false;
  return addr === '::1' || addr.startsWith('127.') || addr.startsWith('::ffff:127.');
}
