/** Pure logic of the metrics page (/performance): units, CPU percentage between samples, colours. */
import type { TagColor } from '../../resources/shared/format';

export interface PerfData {
  uptime_seconds: number;
  uptime_ms?: number;
  sampled_at_ms?: number;
  start_time?: number;
  node_version?: string;
  pid?: number;
  platform?: string;
  cpu_count?: number;
  load_average?: number[];
  database: string;
  cache: string;
  memory: { rss: number; heap_used: number; heap_total: number; external: number };
  cpu_user_us: number;
  cpu_system_us: number;
  event_loop_delay_ms: { mean: number | null; p99: number | null; max: number | null };
}

/** Bytes → '12.3 MB' (binary units). */
export function formatBytes(bytes: unknown): string {
  let v = Number(bytes);
  if (!Number.isFinite(v) || v < 0) return '-';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/** Seconds → parts for '1d 2h 3m 4s' (zero leading parts left out). */
export function uptimeParts(seconds: unknown): { d: number; h: number; m: number; s: number } {
  let v = Math.max(0, Math.floor(Number(seconds) || 0));
  const d = Math.floor(v / 86400);
  v -= d * 86400;
  const h = Math.floor(v / 3600);
  v -= h * 3600;
  const m = Math.floor(v / 60);
  return { d, h, m, s: v - m * 60 };
}

export function formatUptime(seconds: unknown, unit: { d: string; h: string; m: string; s: string } = { d: 'd', h: 'h', m: 'm', s: 's' }): string {
  const p = uptimeParts(seconds);
  const out: string[] = [];
  if (p.d) out.push(`${p.d}${unit.d}`);
  if (p.d || p.h) out.push(`${p.h}${unit.h}`);
  if (p.d || p.h || p.m) out.push(`${p.m}${unit.m}`);
  out.push(`${p.s}${unit.s}`);
  return out.join(' ');
}

/**
 * Process CPU use (% of one core) between two samples: CPU time spent / wall time elapsed. The
 * wall time is the server's precise uptime when both samples have it. null on the first sample
 * or after a restart (uptime went back).
 */
export function cpuPercent(prev: PerfData | null, cur: PerfData): number | null {
  if (!prev) return null;
  const wallMs =
    prev.uptime_ms !== undefined && cur.uptime_ms !== undefined
      ? cur.uptime_ms - prev.uptime_ms
      : prev.sampled_at_ms !== undefined && cur.sampled_at_ms !== undefined
        ? cur.sampled_at_ms - prev.sampled_at_ms
        : (cur.uptime_seconds - prev.uptime_seconds) * 1000;
  const cpuUs = cur.cpu_user_us + cur.cpu_system_us - (prev.cpu_user_us + prev.cpu_system_us);
  if (!(wallMs > 0) || cpuUs < 0) return null;
  return Math.round((cpuUs / 1000 / wallMs) * 1000) / 10;
}

/** Event-loop delay (ms): below 50 green, below 200 orange, else red. */
export function delayColor(ms: number | null | undefined): TagColor {
  const v = Number(ms ?? 0);
  if (v < 50) return 'green';
  if (v < 200) return 'orange';
  return 'red';
}

/** CPU (% of one core, divided by the core count when known): below 50 green, below 80 orange, else red. */
export function cpuColor(percent: number | null, cores = 1): TagColor {
  if (percent === null) return 'grey';
  const load = percent / Math.max(1, cores);
  if (load < 50) return 'green';
  if (load < 80) return 'orange';
  return 'red';
}

/** Heap use as a percentage of the heap's current size. */
export function heapPercent(m: PerfData['memory']): number {
  if (!m || !(m.heap_total > 0)) return 0;
  return Math.min(100, Math.round((m.heap_used / m.heap_total) * 1000) / 10);
}

/** Auto refresh choices (seconds; 0 = off). */
export const REFRESH_CHOICES = [0, 5, 10, 30, 60] as const;
