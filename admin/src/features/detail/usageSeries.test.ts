import { describe, expect, it } from 'vitest';
import { compactNumber, parseDateText } from '../../resources/shared/format';
import {
  OTHER,
  bucketAxis,
  bucketLabel,
  bucketOf,
  buildSeries,
  dataUrl,
  defaultForm,
  defaultGranularity,
  labelStride,
  modelTotals,
  niceScale,
  quotaTick,
  formatRate,
  stackTotals,
  totals,
  type DataRow,
} from './usageSeries';
import { en, zh } from './messages';

const H = 3600;
const t0 = 1_700_000_000 - (1_700_000_000 % H); // an hour boundary
const row = (h: number, model: string, count: number, quota: number, tokens: number): DataRow => ({
  created_at: t0 + h * H,
  model_name: model,
  count,
  quota,
  token_used: tokens,
});
const rows = [row(0, 'a', 2, 100, 30), row(0, 'b', 1, 50, 10), row(2, 'a', 3, 300, 60)];

describe('granularity and default range', () => {
  it('takes the site default (data_export_default_time), hour otherwise', () => {
    expect(defaultGranularity('day')).toBe('day');
    expect(defaultGranularity('week')).toBe('week');
    expect(defaultGranularity('')).toBe('hour');
    expect(defaultGranularity(undefined)).toBe('hour');
    expect(defaultGranularity('month')).toBe('hour');
  });
  it('looks back one day / 7 days / 30 days and ends one hour ahead', () => {
    const now = new Date(2026, 10, 22, 10, 0, 0);
    const sec = Math.floor(now.getTime() / 1000);
    const back = (g: 'hour' | 'day' | 'week') => sec - parseDateText(defaultForm(g, now).start)!;
    expect(back('hour')).toBe(86400);
    expect(back('day')).toBe(7 * 86400);
    expect(back('week')).toBe(30 * 86400);
    expect(parseDateText(defaultForm('hour', now).end)).toBe(sec + 3600);
    expect(defaultForm('week', now).granularity).toBe('week');
  });
});

describe('totals', () => {
  it('sums quota, requests and tokens and averages per minute over the range', () => {
    const t = totals(rows, t0, t0 + 3 * H, t0 + 100 * H);
    expect(t).toMatchObject({ quota: 450, count: 6, tokens: 100 });
    expect(t.rpm).toBeCloseTo(6 / 180, 3);
    expect(t.tpm).toBeCloseTo(100 / 180, 3);
  });
  it('counts a future end only up to now, and at least one minute', () => {
    expect(totals(rows, t0, t0 + 10 * H, t0 + 60).rpm).toBe(6);
    expect(totals(rows, t0, t0, t0).rpm).toBe(6);
    expect(totals([], t0, t0 + H, t0 + H)).toEqual({ quota: 0, count: 0, tokens: 0, rpm: 0, tpm: 0 });
  });
});

describe('buckets and series', () => {
  it('aligns buckets like the server and fills empty ones', () => {
    expect(bucketOf(t0 + 1799, 'hour')).toBe(t0);
    expect(bucketOf(86400 * 3 + 5, 'day')).toBe(86400 * 3);
    const axis = bucketAxis(rows, 'hour', t0 + 10, t0 + 3 * H, t0 + 100 * H);
    expect(axis).toEqual([t0, t0 + H, t0 + 2 * H, t0 + 3 * H]);
  });
  it('caps the axis at now and keeps only data buckets for very long ranges', () => {
    expect(bucketAxis(rows, 'hour', t0, t0 + 10 * H, t0 + 2 * H + 5)).toEqual([t0, t0 + H, t0 + 2 * H]);
    expect(bucketAxis(rows, 'hour', t0 - 365 * 86400, t0 + 3 * H, t0 + 3 * H)).toEqual([t0, t0 + 2 * H]);
  });
  it('builds one stacked series per model, aligned with the axis', () => {
    const axis = [t0, t0 + H, t0 + 2 * H];
    const s = buildSeries(rows, axis, 'quota');
    expect(s.map((x) => x.name)).toEqual(['a', 'b']);
    expect(s[0].values).toEqual([100, 0, 300]);
    expect(s[1].values).toEqual([50, 0, 0]);
    expect(stackTotals(s, axis.length)).toEqual([150, 0, 300]);
    expect(buildSeries(rows, axis, 'count')[0].values).toEqual([2, 0, 3]);
    expect(buildSeries(rows, axis, 'token_used')[1].total).toBe(10);
  });
  it('merges the smallest models into "other"', () => {
    const many = Array.from({ length: 5 }, (_, i) => row(0, `m${i}`, 1, (i + 1) * 10, 1));
    const s = buildSeries(many, [t0], 'quota', 3);
    expect(s.map((x) => x.name)).toEqual(['m4', 'm3', OTHER]);
    expect(s[2].values).toEqual([30 + 20 + 10]);
  });
  it('ranks models by quota for the table', () => {
    expect(modelTotals(rows)).toEqual([
      { model: 'a', count: 5, quota: 400, token_used: 90 },
      { model: 'b', count: 1, quota: 50, token_used: 10 },
    ]);
  });
});

describe('axis helpers', () => {
  it('rounds the scale up to a nice maximum', () => {
    expect(niceScale(0)).toEqual({ max: 1, step: 0.25 });
    expect(niceScale(450)).toEqual({ max: 500, step: 125 });
    expect(niceScale(7)).toEqual({ max: 8, step: 2 });
    expect(niceScale(1, 4, true)).toEqual({ max: 1, step: 1 });
    expect(niceScale(3, 4, true)).toEqual({ max: 3, step: 1 });
    expect(niceScale(9, 4, true)).toEqual({ max: 12, step: 3 });
    expect(niceScale(0, 4, true)).toEqual({ max: 1, step: 1 });
    const s = niceScale(123456);
    expect(s.max).toBeGreaterThanOrEqual(123456);
    expect(s.max / 4).toBe(s.step);
  });
  it('labels buckets by granularity and thins the labels', () => {
    const d = new Date(2026, 0, 5, 7, 0, 0).getTime() / 1000;
    expect(bucketLabel(d, 'hour')).toBe('01-05 07:00');
    expect(bucketLabel(d, 'day')).toBe('01-05');
    expect(labelStride(100, 10)).toBe(10);
    expect(labelStride(5, 10)).toBe(1);
  });
  it('formats quota ticks in dollars or as numbers', () => {
    expect(quotaTick(250000, true, 500000, compactNumber)).toBe('$0.5');
    expect(quotaTick(25, true, 500000, compactNumber)).toBe('$0.00005');
    expect(quotaTick(0, true, 500000, compactNumber)).toBe('$0');
    expect(quotaTick(25000, false, 500000, compactNumber)).toBe('25k');
  });
});

describe('rates', () => {
  it('keeps small per-minute rates visible', () => {
    expect(formatRate(3 / 1440, compactNumber)).toBe('0.00208');
    expect(formatRate(0, compactNumber)).toBe('0');
    expect(formatRate(1.5, compactNumber)).toBe('1.5');
    expect(formatRate(12345, compactNumber)).toBe('12.3k');
  });
});

describe('data URL', () => {
  it('admins may filter by username; users get their own data', () => {
    expect(dataUrl(true, 10, 20, 'day', ' alice ')).toBe('/api/data/?start_timestamp=10&end_timestamp=20&default_time=day&username=alice');
    expect(dataUrl(false, 10, null, 'hour', 'alice')).toBe('/api/data/self?start_timestamp=10&default_time=hour');
  });
});

describe('messages', () => {
  it('has the same keys in both languages', () => {
    const keys = (o: object, p = ''): string[] => Object.entries(o).flatMap(([k, v]) => (v && typeof v === 'object' ? keys(v, `${p}${k}.`) : [`${p}${k}`]));
    expect(keys(en)).toEqual(keys(zh));
  });
});
