import type Koa from 'koa';
import { Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { AppContext } from './context';

/**
 * Prometheus metrics for one app. Each app gets its own Registry (through `app.memo`), never the
 * prom-client global one: tests build many apps in one process and a global registry would both
 * mix their numbers and throw on duplicate metric names.
 *
 * Labels are kept low-cardinality: channel id (operators have tens of channels, not thousands),
 * model name, and the HTTP status of the relay answer.
 *
 * The relay series are plain numbers updated in place (a few additions per call) and turned into
 * Prometheus samples only when scraped: prom-client's own Counter/Histogram hash the label set on
 * every `inc`/`observe`, even through `labels()` children, which cost ≈ 5 % of a relayed call.
 */
export interface GatewayMetrics {
  registry: Registry;
  /** channel id → model → series. */
  relay: Map<number, Map<string, RelaySeries>>;
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

/** Observations of one histogram series: counts per bucket (not cumulative; last = above all bounds). */
class HistogramSeries {
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(readonly bounds: number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }
  observe(v: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > b[i]!) i++;
    this.counts[i]!++;
    this.sum += v;
    this.count++;
  }
}

/** Everything recorded for one (channel, model). */
export class RelaySeries {
  /** Requests by HTTP status. */
  readonly statuses = new Map<number, number>();
  quota = 0;
  promptTokens = 0;
  completionTokens = 0;
  readonly upstream = new HistogramSeries(UPSTREAM_BUCKETS);
  readonly overhead = new HistogramSeries(OVERHEAD_BUCKETS);
  constructor(
    readonly channel: string,
    readonly model: string,
  ) {}
}

export type Sample = { labels: Record<string, string | number>; value: number; metricName?: string };

/** A metric the registry renders from `samples()` at scrape time (prom-client's custom-metric shape). */
export function scrapedMetric(registry: Registry, name: string, help: string, type: 'counter' | 'histogram' | 'gauge', samples: () => Sample[]): void {
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: samples() }),
    reset() {}, // counters only grow (Prometheus handles restarts); nothing here calls resetMetrics
  };
  registry.registerMetric(metric as unknown as Metric);
}

function eachSeries(m: GatewayMetrics, fn: (s: RelaySeries) => void): void {
  for (const byModel of m.relay.values()) for (const s of byModel.values()) fn(s);
}

function histogramSamples(m: GatewayMetrics, name: string, pick: (s: RelaySeries) => HistogramSeries): Sample[] {
  const out: Sample[] = [];
  eachSeries(m, (s) => {
    const h = pick(s);
    if (!h.count) return;
    const labels = { channel: s.channel, model: s.model };
    let cumulative = 0;
    h.bounds.forEach((le, i) => {
      cumulative += h.counts[i]!;
      out.push({ labels: { ...labels, le }, value: cumulative, metricName: `${name}_bucket` });
    });
    out.push({ labels: { ...labels, le: '+Inf' }, value: h.count, metricName: `${name}_bucket` });
    out.push({ labels, value: h.sum, metricName: `${name}_sum` });
    out.push({ labels, value: h.count, metricName: `${name}_count` });
  });
  return out;
}

export function metrics(app: AppContext): GatewayMetrics {
  return app.memo('metrics', () => {
    const registry = new Registry();
    registry.setDefaultLabels({ app: 'gateway' });
    // Process metrics (RSS, CPU, event-loop lag, GC): only in a real server, where one app = one
    // process; in tests many apps share a process and the default collector keeps timers alive.
    if (app.config.processMetrics) collectDefaultMetrics({ register: registry });
    const m: GatewayMetrics = { registry, relay: new Map() };
    scrapedMetric(registry, 'gateway_relay_requests_total', 'Relay requests answered, by channel, model and HTTP status', 'counter', () => {
      const out: Sample[] = [];
      eachSeries(m, (s) => {
        for (const [status, n] of s.statuses) out.push({ labels: { channel: s.channel, model: s.model, status }, value: n });
      });
      return out;
    });
    scrapedMetric(registry, 'gateway_upstream_duration_seconds', 'Time spent waiting on the upstream provider', 'histogram', () =>
      histogramSamples(m, 'gateway_upstream_duration_seconds', (s) => s.upstream),
    );
    scrapedMetric(registry, 'gateway_overhead_duration_seconds', 'Time spent in the gateway itself (total minus upstream)', 'histogram', () =>
      histogramSamples(m, 'gateway_overhead_duration_seconds', (s) => s.overhead),
    );
    scrapedMetric(registry, 'gateway_quota_spent_total', 'Quota charged at settlement', 'counter', () => {
      const out: Sample[] = [];
      eachSeries(m, (s) => {
        if (s.quota) out.push({ labels: { channel: s.channel, model: s.model }, value: s.quota });
      });
      return out;
    });
    scrapedMetric(registry, 'gateway_tokens_total', 'Tokens billed, by kind (prompt/completion)', 'counter', () => {
      const out: Sample[] = [];
      eachSeries(m, (s) => {
        if (s.promptTokens) out.push({ labels: { channel: s.channel, model: s.model, kind: 'prompt' }, value: s.promptTokens });
        if (s.completionTokens) out.push({ labels: { channel: s.channel, model: s.model, kind: 'completion' }, value: s.completionTokens });
      });
      return out;
    });
    app.onClose(() => registry.clear());
    return m;
  });
}

/** The series of one (channel, model): created on first use, bounded by the pairs actually seen. */
function seriesFor(m: GatewayMetrics, channelId: number, model: string): RelaySeries {
  let byModel = m.relay.get(channelId);
  if (!byModel) m.relay.set(channelId, (byModel = new Map()));
  let s = byModel.get(model);
  if (!s) byModel.set(model, (s = new RelaySeries(String(channelId), model)));
  return s;
}

/** Records one finished relay request. Cheap: two map lookups and a few additions, no I/O. Never throws. */
export function recordRelay(app: AppContext, o: RelayObservation): void {
  try {
    const s = seriesFor(metrics(app), o.channelId || 0, o.model || 'unknown');
    s.statuses.set(o.status, (s.statuses.get(o.status) ?? 0) + 1);
    if (o.upstreamMs !== undefined && o.upstreamMs >= 0) s.upstream.observe(o.upstreamMs / 1000);
    if (o.overheadMs !== undefined && o.overheadMs >= 0) s.overhead.observe(o.overheadMs / 1000);
    if (o.quota) s.quota += o.quota;
    if (o.promptTokens) s.promptTokens += o.promptTokens;
    if (o.completionTokens) s.completionTokens += o.completionTokens;
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
 *   - `METRICS_TOKEN` set (config.metricsToken) → requires `Authorization: Bearer <token>` (any client address);
 *   - otherwise only loopback clients (127.0.0.1/::1, by socket address, never X-Forwarded-For)
 *     may scrape, so a public gateway does not leak its channel/model traffic.
 */
export function metricsMiddleware(app: AppContext): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.path !== '/metrics' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    const token = app.config.metricsToken;
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
