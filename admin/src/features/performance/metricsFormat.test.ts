import { describe, expect, it } from 'vitest';
import { cpuColor, cpuPercent, delayColor, formatBytes, formatUptime, heapPercent, uptimeParts, type PerfData } from './metricsFormat';
import { en, zh } from './messages';

const sample = (over: Partial<PerfData>): PerfData => ({
  uptime_seconds: 10,
  database: 'sqlite',
  cache: 'memory',
  memory: { rss: 1, heap_used: 1, heap_total: 2, external: 0 },
  cpu_user_us: 0,
  cpu_system_us: 0,
  event_loop_delay_ms: { mean: 0, p99: 0, max: 0 },
  ...over,
});

describe('units', () => {
  it('formats bytes in binary units', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(50 * 1024 * 1024)).toBe('50.0 MB');
    expect(formatBytes(-1)).toBe('-');
  });
  it('formats uptime without empty leading parts', () => {
    expect(uptimeParts(90061)).toEqual({ d: 1, h: 1, m: 1, s: 1 });
    expect(formatUptime(59)).toBe('59s');
    expect(formatUptime(3600)).toBe('1h 0m 0s');
    expect(formatUptime(86400 * 2 + 5, { d: '天', h: '小时', m: '分', s: '秒' })).toBe('2天 0小时 0分 5秒');
  });
});

describe('CPU between samples', () => {
  it('divides CPU time by elapsed wall time', () => {
    const a = sample({ uptime_ms: 10_000, cpu_user_us: 1_000_000, cpu_system_us: 0 });
    const b = sample({ uptime_ms: 12_000, cpu_user_us: 1_400_000, cpu_system_us: 100_000 });
    expect(cpuPercent(a, b)).toBe(25);
    expect(cpuPercent(null, b)).toBeNull();
  });
  it('falls back to the sample times, and gives up after a restart', () => {
    const a = sample({ sampled_at_ms: 1_000, cpu_user_us: 0 });
    const b = sample({ sampled_at_ms: 3_000, cpu_user_us: 2_000_000 });
    expect(cpuPercent(a, b)).toBe(100);
    expect(cpuPercent(sample({ uptime_ms: 9_000, cpu_user_us: 5 }), sample({ uptime_ms: 1_000, cpu_user_us: 1 }))).toBeNull();
  });
  it('colours CPU and event-loop delay', () => {
    expect(cpuColor(null)).toBe('grey');
    expect(cpuColor(30)).toBe('green');
    expect(cpuColor(60)).toBe('orange');
    expect(cpuColor(160, 2)).toBe('red');
    expect(delayColor(10)).toBe('green');
    expect(delayColor(100)).toBe('orange');
    expect(delayColor(500)).toBe('red');
    expect(delayColor(null)).toBe('green');
  });
  it('computes heap use', () => {
    expect(heapPercent({ rss: 0, heap_used: 25, heap_total: 100, external: 0 })).toBe(25);
    expect(heapPercent({ rss: 0, heap_used: 25, heap_total: 0, external: 0 })).toBe(0);
  });
});

describe('messages', () => {
  it('has the same keys in both languages', () => {
    const keys = (o: object, p = ''): string[] => Object.entries(o).flatMap(([k, v]) => (v && typeof v === 'object' ? keys(v, `${p}${k}.`) : [`${p}${k}`]));
    expect(keys(en)).toEqual(keys(zh));
  });
});
