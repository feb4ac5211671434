/**
 * Load generator worker. The harness starts it once (pinned to the load core) and sends jobs over
 * IPC; each job answers with one result message. Four kinds:
 *   autocannon – closed-loop throughput with autocannon's programmatic API (c=50).
 *   latency    – closed loop at low concurrency with our own undici client: autocannon's latency
 *                histogram has 1 ms resolution, too coarse for sub-millisecond added latency.
 *   paced      – open loop at a fixed request rate (evenly spaced, not autocannon's per-second
 *                bursts), latency measured from the *scheduled* send time so a stalled target is
 *                not hidden by coordinated omission. Used for "max RPS with p99 under 10 ms".
 *   streams    – SSE streams: time to first frame, gaps between frames, and a content check of
 *                every stream (lost = missing/reordered deltas or no end event; stalled = a gap over
 *                `stallMs`, or a first frame later than `firstFrameMs` when given). The deltas and
 *                the end event are read in the target's client protocol (`Target.protocol`).
 */
import autocannon from 'autocannon';
import { Pool, type Dispatcher } from 'undici';

/** The protocol the client speaks to a target, which decides how its streams are read. */
export type ClientProtocol = 'openai' | 'claude' | 'responses';

export interface Target {
  origin: string;
  path: string;
  headers: Record<string, string>;
  /** Default 'openai' (Chat Completions). */
  protocol?: ClientProtocol;
}

export type Job =
  | { kind: 'autocannon'; target: Target; body: string; connections: number; durationSec: number }
  | { kind: 'latency'; target: Target; body: string; connections: number; durationSec: number; keepSamples?: boolean }
  | { kind: 'paced'; target: Target; body: string; rate: number; durationSec: number; maxConnections: number }
  | {
      kind: 'streams';
      target: Target;
      body: string;
      concurrency: number;
      total: number;
      expectContent: string;
      stallMs: number;
      timeoutMs: number;
      firstFrameMs?: number;
      rampMs?: number;
    };

export interface LatencyStats {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface AutocannonResult {
  rps: number;
  total: number;
  /** Seconds the run took (autocannon's own measure). */
  durationSec: number;
  errors: number;
  non2xx: number;
  p50: number;
  p99: number;
}
export interface LatencyResult extends LatencyStats {
  errors: number;
  /** Median of the X-Gateway-Overhead-Ms header, when the target sends it. */
  overheadHeaderP50?: number;
  /** With `keepSamples`: every latency and overhead header, so slices can be pooled. */
  samples?: number[];
  overheadSamples?: number[];
}
export interface PacedResult extends LatencyStats {
  rate: number;
  achievedRps: number;
  errors: number;
  late: number;
}
export interface StreamsResult {
  total: number;
  ok: number;
  lost: number;
  stalled: number;
  errors: number;
  firstError?: string;
  ttft: LatencyStats;
  gap: LatencyStats;
  maxGap: number;
  durationMs: number;
  /** Most streams open at the same moment. */
  peakActive: number;
}

export function stats(values: number[]): LatencyStats {
  if (!values.length) return { count: 0, p50: NaN, p90: NaN, p99: NaN, max: NaN, mean: NaN };
  const v = Float64Array.from(values).sort();
  const q = (p: number) => v[Math.min(v.length - 1, Math.floor(p * v.length))];
  let sum = 0;
  for (const x of v) sum += x;
  return { count: v.length, p50: q(0.5), p90: q(0.9), p99: q(0.99), max: v[v.length - 1], mean: sum / v.length };
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runAutocannon(job: Extract<Job, { kind: 'autocannon' }>): Promise<AutocannonResult> {
  const res = await autocannon({
    url: job.target.origin + job.target.path,
    method: 'POST',
    headers: job.target.headers,
    body: job.body,
    connections: job.connections,
    duration: job.durationSec,
    pipelining: 1,
    timeout: 30,
  });
  const ok = res['2xx'];
  const durationSec = res.duration || job.durationSec;
  return {
    rps: ok / durationSec,
    total: ok,
    durationSec,
    errors: res.errors + res.timeouts,
    non2xx: res.non2xx,
    p50: res.latency.p50,
    p99: res.latency.p99,
  };
}

async function oneRequest(pool: Dispatcher, t: Target, body: string): Promise<{ ok: boolean; overhead?: number }> {
  const r = await pool.request({ path: t.path, method: 'POST', headers: t.headers, body });
  await r.body.dump({ limit: Infinity });
  const oh = r.headers['x-gateway-overhead-ms'];
  return { ok: r.statusCode === 200, overhead: oh !== undefined ? Number(oh) : undefined };
}

async function runLatency(job: Extract<Job, { kind: 'latency' }>): Promise<LatencyResult> {
  const pool = new Pool(job.target.origin, { connections: job.connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const lat: number[] = [];
  const overheads: number[] = [];
  let errors = 0;
  const end = nowMs() + job.durationSec * 1000;
  const worker = async () => {
    while (nowMs() < end) {
      const t0 = nowMs();
      try {
        const r = await oneRequest(pool, job.target, job.body);
        if (r.ok) lat.push(nowMs() - t0);
        else errors++;
        if (r.overhead !== undefined && Number.isFinite(r.overhead)) overheads.push(r.overhead);
      } catch {
        errors++;
        await sleep(10);
      }
    }
  };
  await Promise.all(Array.from({ length: job.connections }, worker));
  await pool.close();
  return {
    ...stats(lat),
    errors,
    overheadHeaderP50: overheads.length ? stats(overheads).p50 : undefined,
    ...(job.keepSamples ? { samples: lat, overheadSamples: overheads } : {}),
  };
}

async function runPaced(job: Extract<Job, { kind: 'paced' }>): Promise<PacedResult> {
  const pool = new Pool(job.target.origin, { connections: job.maxConnections, pipelining: 1, keepAliveTimeout: 60_000 });
  const lat: number[] = [];
  let errors = 0;
  let sent = 0;
  let late = 0;
  const inflight = new Set<Promise<void>>();
  const start = nowMs();
  const total = Math.round(job.rate * job.durationSec);
  const intervalMs = 1000 / job.rate;
  // A 1 ms ticker sends every request whose scheduled time has come; latency counts from the
  // schedule, so queueing inside the client or the target shows up in the percentiles.
  while (sent < total) {
    const now = nowMs();
    const due = Math.min(total, Math.floor((now - start) / intervalMs) + 1);
    while (sent < due) {
      const scheduled = start + sent * intervalMs;
      sent++;
      if (inflight.size >= job.maxConnections * 4) {
        late++;
        continue;
      }
      const p: Promise<void> = oneRequest(pool, job.target, job.body)
        .then((r) => {
          if (r.ok) lat.push(nowMs() - scheduled);
          else errors++;
        })
        .catch(() => {
          errors++;
        })
        .finally(() => inflight.delete(p));
      inflight.add(p);
    }
    await sleep(1);
  }
  await Promise.all(inflight);
  const elapsed = (nowMs() - start) / 1000;
  await pool.close();
  return { ...stats(lat), rate: job.rate, achievedRps: lat.length / elapsed, errors: errors + late, late };
}

interface FrameReading {
  /** Text of a content delta. */
  text?: string;
  /** The protocol's end of stream. */
  done?: boolean;
  /** An error event inside the stream. */
  error?: string;
}
type FrameReader = (data: string) => FrameReading | undefined;

const errorText = (o: { error?: { message?: string } | string; message?: string }): string =>
  typeof o.error === 'string' ? o.error : (o.error?.message ?? o.message ?? 'stream error event');

/**
 * Per client protocol: the text deltas to concatenate and the end of stream. Chat Completions:
 * `choices[0].delta.content`, `[DONE]`; Claude Messages: `content_block_delta` text deltas,
 * `message_stop`; Responses: `response.output_text.delta`, `response.completed`.
 */
const FRAME_READERS: Record<ClientProtocol, FrameReader> = {
  openai: (data) => {
    if (data === '[DONE]') return { done: true };
    const o = JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }>; error?: { message?: string } };
    if (o.error) return { error: errorText(o) };
    const c = o.choices?.[0]?.delta?.content;
    return c ? { text: c } : undefined;
  },
  claude: (data) => {
    const o = JSON.parse(data) as { type?: string; delta?: { type?: string; text?: string }; error?: { message?: string } };
    switch (o.type) {
      case 'content_block_delta':
        return o.delta?.type === 'text_delta' && o.delta.text ? { text: o.delta.text } : undefined;
      case 'message_stop':
        return { done: true };
      case 'error':
        return { error: errorText(o) };
      default:
        return undefined;
    }
  },
  responses: (data) => {
    const o = JSON.parse(data) as { type?: string; delta?: string; error?: { message?: string }; message?: string };
    switch (o.type) {
      case 'response.output_text.delta':
        return o.delta ? { text: o.delta } : undefined;
      case 'response.completed':
        return { done: true };
      case 'error':
      case 'response.failed':
        return { error: errorText(o) };
      default:
        return undefined;
    }
  },
};

async function runStreams(job: Extract<Job, { kind: 'streams' }>): Promise<StreamsResult> {
  const pool = new Pool(job.target.origin, {
    connections: job.concurrency,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: job.timeoutMs,
    bodyTimeout: job.timeoutMs,
  });
  const readFrame = FRAME_READERS[job.target.protocol ?? 'openai'];
  const ttfts: number[] = [];
  const gaps: number[] = [];
  let ok = 0;
  let lost = 0;
  let stalled = 0;
  let errors = 0;
  let maxGap = 0;
  let firstError: string | undefined;
  let next = 0;
  let active = 0;
  let peakActive = 0;
  const start = nowMs();

  const one = async () => {
    const t0 = nowMs();
    active++;
    if (active > peakActive) peakActive = active;
    let content = '';
    let done = false;
    let streamError: string | undefined;
    let last = 0;
    let first = true;
    let streamMaxGap = 0;
    let ttft = Infinity;
    let buf = '';
    try {
      const r = await pool.request({ path: job.target.path, method: 'POST', headers: job.target.headers, body: job.body });
      if (r.statusCode !== 200) {
        const text = await r.body.text();
        throw new Error(`HTTP ${r.statusCode}: ${text.slice(0, 200)}`);
      }
      r.body.setEncoding('utf8');
      for await (const chunk of r.body as AsyncIterable<string>) {
        const t = nowMs();
        buf += chunk;
        let idx: number;
        while ((idx = buf.indexOf('\n\n')) >= 0) {
          const raw = buf.slice(0, idx);
          buf = buf.slice(idx + 2);
          const line = raw.split('\n').find((l) => l.startsWith('data:'));
          if (!line) continue;
          const data = line.slice(5).trim();
          if (first) {
            ttft = t - t0;
            ttfts.push(ttft);
            first = false;
          } else {
            const g = t - last;
            gaps.push(g);
            if (g > streamMaxGap) streamMaxGap = g;
          }
          last = t;
          let f: FrameReading | undefined;
          try {
            f = readFrame(data);
          } catch {
            /* a non-JSON frame counts as nothing */
          }
          if (!f) continue;
          if (f.text) content += f.text;
          if (f.done) done = true;
          if (f.error && !streamError) streamError = f.error;
        }
      }
      if (!done || content !== job.expectContent) lost++;
      else if (streamMaxGap > job.stallMs || (job.firstFrameMs !== undefined && ttft > job.firstFrameMs)) stalled++;
      else ok++;
      if (streamMaxGap > maxGap) maxGap = streamMaxGap;
      if ((!done || content !== job.expectContent) && !firstError)
        firstError = `incomplete stream: done=${done} got ${content.length}/${job.expectContent.length} chars${streamError ? ` (error event: ${streamError.slice(0, 200)})` : ''}`;
    } catch (err) {
      errors++;
      lost++;
      if (!firstError) firstError = (err as Error).message;
    } finally {
      active--;
    }
  };
  const workers = Math.min(job.concurrency, job.total);
  const worker = async (i: number) => {
    // Spread the first opens over rampMs: a burst of thousands of SYNs at once overflows the
    // listen backlog and measures TCP retransmission timers, not the target.
    if (job.rampMs) await sleep((i * job.rampMs) / workers);
    while (next < job.total) {
      next++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: workers }, (_, i) => worker(i)));
  const durationMs = nowMs() - start;
  await pool.close();
  return { total: job.total, ok, lost, stalled, errors, firstError, ttft: stats(ttfts), gap: stats(gaps), maxGap, durationMs, peakActive };
}

export async function runJob(job: Job): Promise<unknown> {
  switch (job.kind) {
    case 'autocannon':
      return runAutocannon(job);
    case 'latency':
      return runLatency(job);
    case 'paced':
      return runPaced(job);
    case 'streams':
      return runStreams(job);
  }
}

if (require.main === module && typeof process.send === 'function') {
  process.on('message', (m: { id: number; job: Job }) => {
    runJob(m.job).then(
      (result) => process.send!({ id: m.id, result }),
      (err: Error) => process.send!({ id: m.id, error: err.stack ?? err.message }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
