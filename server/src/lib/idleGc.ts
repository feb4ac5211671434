import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { nativeMemory } from './native';

/**
 * Gives memory back after a burst. Under load V8 grows the old generation (in-flight requests
 * and streams get promoted), and a process that then goes quiet keeps those pages: V8 only
 * shrinks the heap on a later full GC, which an idle server does not trigger. So when the server
 * has seen traffic and then nothing in flight for `idleMs`, run a full GC (two passes, tens of ms,
 * only when idle) — if RSS grew by `minGrowthBytes` since the last collection (or the start).
 * "In flight" counts responses not yet closed: a stream that runs for minutes is traffic.
 * With the native addon (native.ts) each pass is V8's LowMemoryNotification(), which also
 * compacts the old generation and shrinks the young one to its minimum (global.gc() leaves both:
 * ≈ 28 MB more RSS after 2 000 concurrent streams); without it, global.gc() (`--expose-gc`).
 * After the second pass, `trim` (glibc's `malloc_trim(0)`, same addon): `free()` keeps freed memory
 * in the middle of glibc's heap (the socket buffers of thousands of connections, freed by the GC),
 * malloc_trim gives its whole free pages back to the OS. Measured after 2 000 concurrent streams
 * (idle 103 MB): 225 MB → 144 with global.gc() and the trim, → 124 with SQLite's page cache
 * released too (onIdle), → ≈ 100 with LowMemoryNotification.
 */
export function startIdleGc(
  server: Server,
  opts: {
    idleMs?: number;
    minRequests?: number;
    gc?: () => void;
    onIdle?: () => void | Promise<void>;
    trim?: () => unknown;
    /** Collect only when RSS grew by this much since the last collection (or the start). */
    minGrowthBytes?: number;
    rss?: () => number;
  } = {},
): () => void {
  const idleMs = opts.idleMs ?? 5000;
  const minRequests = opts.minRequests ?? 200;
  const gc = opts.gc ?? defaultCollector();
  if (!gc) return () => undefined;
  const trim = opts.trim ?? nativeMemory()?.trim;
  const rss = opts.rss ?? (() => process.memoryUsage.rss());
  // Default: more than normal traffic grows back anyway after a collection — the young generation
  // (2 × --max-semi-space-size = 16 MB, shrunk to 1 MB by LowMemoryNotification), SQLite's page
  // cache (4 MB, released by onIdle), the old generation's headroom until its next major GC
  // (--heap-growing-percent=60 of a ≈ 24 MB live heap ≈ 15 MB): measured, 30 s of c=50 after a
  // collection grew RSS by 45 MB. Below that a light load between two idle spells would pay the
  // collection each time (see above).
  const minGrowth = opts.minGrowthBytes ?? 64 * 1024 * 1024;
  let baseline = rss();
  let sinceGc = 0;
  let inFlight = 0;
  let lastActivity = Date.now();
  const onClose = () => {
    inFlight--;
    lastActivity = Date.now();
  };
  const onRequest = (_req: IncomingMessage, res: ServerResponse) => {
    sinceGc++;
    inFlight++;
    lastActivity = Date.now();
    res.once('close', onClose);
  };
  server.on('request', onRequest);
  const timer = setInterval(
    () => {
      if (sinceGc < minRequests || inFlight > 0 || Date.now() - lastActivity < idleMs) return;
      // Nothing worth giving back: a full GC is not free afterwards either. The next requests'
      // optimized socket/stream code deoptimizes ("wrong map", ≈ 100 deopts against ≈ 10 before,
      // --trace-deopt) and is compiled again: measured, a c=1 load right after an idle GC had p99
      // ≈ 2.4 ms instead of ≈ 1.1 ms for its first seconds.
      if (minGrowth > 0 && rss() < baseline + minGrowth) return;
      sinceGc = 0;
      // First let go of what the burst left behind (e.g. pooled upstream clients; at most 2 s), then
      // collect it. Two passes: the first frees the garbage, the second can release the emptied pages.
      // Then trim: only now are the native buffers that JS objects held back in malloc's free lists.
      const released = Promise.resolve()
        .then(() => opts.onIdle?.())
        .catch(() => undefined);
      const bounded = new Promise<void>((resolve) => setTimeout(resolve, 2000).unref());
      void Promise.race([released, bounded]).then(() => {
        gc();
        setTimeout(() => {
          gc();
          trimQuietly(trim);
          baseline = rss();
        }, 100).unref();
      });
    },
    Math.max(250, Math.floor(idleMs / 2)),
  );
  timer.unref();
  return () => {
    clearInterval(timer);
    server.off('request', onRequest);
  };
}

/** One pass of the collection: V8's memory-reducing full GC through the addon, else global.gc(). */
function defaultCollector(): (() => void) | undefined {
  return nativeMemory()?.lowMemoryNotification ?? exposeGc();
}

/**
 * The same collection as after a burst (two passes, then the malloc trim), now. The server runs it
 * once after start-up, before it listens: migrations and loading the options and caches leave
 * garbage that an idle process would otherwise keep until its first burst (measured: idle RSS
 * anywhere between ≈ 96 and 136 MB depending on when V8 last collected).
 */
export function collectNow(opts: { gc?: () => void; trim?: () => unknown } = {}): void {
  const gc = opts.gc ?? defaultCollector();
  gc?.();
  gc?.();
  trimQuietly(opts.trim ?? nativeMemory()?.trim);
}

function trimQuietly(trim: (() => unknown) | undefined): void {
  try {
    trim?.();
  } catch {
    // best effort: a failed trim only leaves memory where it was
  }
}

/**
 * `global.gc`, which node's `--expose-gc` installs (`npm start` and the bench gateway pass it):
 * the collector when the native addon is absent. Undefined without the flag: no idle GC then.
 */
export function exposeGc(): (() => void) | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? (gc as () => void) : undefined;
}
