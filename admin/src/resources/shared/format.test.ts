import { describe, expect, it } from 'vitest';
import {
  compactNumber,
  firstTokenColor,
  formatQuota,
  formatUsd,
  modelTones,
  SERIES_TONES,
  quotaPresetLabel,
  usdPresets,
  formatTimestamp,
  groupRatioColor,
  joinComma,
  parseDateText,
  parseJsonObject,
  randomSuffix,
  readDisplaySettings,
  responseTimeColor,
  splitComma,
  elapsedColor,
} from './format';

const usd = { displayInCurrency: true, quotaPerUnit: 500000 };
const raw = { displayInCurrency: false, quotaPerUnit: 500000 };

describe('formatQuota', () => {
  it('shows dollars with two decimals in currency mode', () => {
    expect(formatQuota(500000, usd)).toBe('$1.00');
    expect(formatQuota(1250000, usd)).toBe('$2.50');
    expect(formatQuota(0, usd)).toBe('$0.00');
    expect(formatQuota(1000, { displayInCurrency: true, quotaPerUnit: 1000 })).toBe('$1.00');
  });
  it('shows small amounts with two significant digits instead of rounding them to a cent', () => {
    expect(formatQuota(65, usd)).toBe('$0.00013');
    expect(formatQuota(-65, usd)).toBe('-$0.00013');
    expect(formatQuota(1, usd)).toBe('$0.000002');
    expect(formatQuota(25000, usd)).toBe('$0.05');
    expect(formatQuota(6150, usd)).toBe('$0.012');
    expect(formatQuota(49999, usd)).toBe('$0.10');
    expect(formatQuota(75000, usd)).toBe('$0.15');
    expect(formatQuota(1234567, usd)).toBe('$2.47');
  });
  it('shows the smallest visible unit below a millionth', () => {
    expect(formatQuota(0.1, usd)).toBe('$0.000001');
    expect(formatQuota(-0.1, usd)).toBe('-$0.000001');
  });
  it('formatUsd follows the same rules', () => {
    expect(formatUsd(0.00013)).toBe('$0.00013');
    expect(formatUsd(12.345, 2)).toBe('$12.35');
    expect(formatUsd(0.5, 4)).toBe('$0.5000');
  });
  it('keeps the sign of negative amounts', () => {
    expect(formatQuota(-500000, usd)).toBe('-$1.00');
  });
  it('shows compact numbers without currency display', () => {
    expect(formatQuota(9999, raw)).toBe('9999');
    expect(formatQuota(10000, raw)).toBe('10k');
    expect(formatQuota(500000, raw)).toBe('500k');
    expect(formatQuota(2500000, raw)).toBe('2.5M');
    expect(formatQuota(3000000000, raw)).toBe('3B');
  });
});

describe('compactNumber', () => {
  it('uses k above 10 thousand, M above a million, B above a billion', () => {
    expect(compactNumber(0)).toBe('0');
    expect(compactNumber(1234)).toBe('1234');
    expect(compactNumber(12345)).toBe('12.3k');
    expect(compactNumber(1_000_000)).toBe('1M');
    expect(compactNumber(1_250_000_000)).toBe('1.3B');
    expect(compactNumber(undefined)).toBe('0');
  });
});

describe('readDisplaySettings', () => {
  it('reads display_in_currency and quota_per_unit from the cached status', () => {
    const storage = { getItem: () => JSON.stringify({ display_in_currency: false, quota_per_unit: 1000 }) };
    expect(readDisplaySettings(storage)).toEqual({ displayInCurrency: false, quotaPerUnit: 1000 });
  });
  it('falls back to defaults on a missing or broken cache', () => {
    expect(readDisplaySettings({ getItem: () => null })).toEqual({ displayInCurrency: true, quotaPerUnit: 500000 });
    expect(readDisplaySettings({ getItem: () => '{oops' })).toEqual({ displayInCurrency: true, quotaPerUnit: 500000 });
    expect(readDisplaySettings({ getItem: () => JSON.stringify({ quota_per_unit: -3 }) }).quotaPerUnit).toBe(500000);
  });
});

describe('colour thresholds', () => {
  it('response time: 0 grey, ≤1s green, ≤3s lime, ≤5s yellow, else red', () => {
    expect(responseTimeColor(0)).toBe('grey');
    expect(responseTimeColor(undefined)).toBe('grey');
    expect(responseTimeColor(1)).toBe('green');
    expect(responseTimeColor(1000)).toBe('green');
    expect(responseTimeColor(1001)).toBe('lime');
    expect(responseTimeColor(3000)).toBe('lime');
    expect(responseTimeColor(3001)).toBe('yellow');
    expect(responseTimeColor(5000)).toBe('yellow');
    expect(responseTimeColor(5001)).toBe('red');
  });
  it('use time: below 101 green, below 300 orange, else red', () => {
    expect(elapsedColor(0)).toBe('green');
    expect(elapsedColor(100)).toBe('green');
    expect(elapsedColor(101)).toBe('orange');
    expect(elapsedColor(299)).toBe('orange');
    expect(elapsedColor(300)).toBe('red');
  });
  it('first token: below 3 green, below 10 orange, else red', () => {
    expect(firstTokenColor(2.99)).toBe('green');
    expect(firstTokenColor(3)).toBe('orange');
    expect(firstTokenColor(9.9)).toBe('orange');
    expect(firstTokenColor(10)).toBe('red');
  });
  it('group ratio: >5 red, >3 orange, >1 blue, else green', () => {
    expect(groupRatioColor(6)).toBe('red');
    expect(groupRatioColor(5)).toBe('orange');
    expect(groupRatioColor(3.5)).toBe('orange');
    expect(groupRatioColor(3)).toBe('blue');
    expect(groupRatioColor(1.5)).toBe('blue');
    expect(groupRatioColor(1)).toBe('green');
    expect(groupRatioColor(0.5)).toBe('green');
  });
});

describe('timestamps and dates', () => {
  it('formats epoch seconds in local time and dashes empty values', () => {
    const ts = Math.floor(new Date(2024, 0, 2, 3, 4, 5).getTime() / 1000);
    expect(formatTimestamp(ts)).toBe('2024-01-02 03:04:05');
    expect(formatTimestamp(0)).toBe('-');
  });
  it('parses date texts and refuses impossible dates', () => {
    expect(parseDateText('2024-01-02 03:04:05')).toBe(Math.floor(new Date(2024, 0, 2, 3, 4, 5).getTime() / 1000));
    expect(parseDateText('2024-01-02T03:04')).toBe(Math.floor(new Date(2024, 0, 2, 3, 4).getTime() / 1000));
    expect(parseDateText('2024-02-30 00:00:00')).toBeNull();
    expect(parseDateText('2024-01-02 25:00')).toBeNull();
    expect(parseDateText('tomorrow')).toBeNull();
    expect(parseDateText('')).toBeNull();
  });
});

describe('lists and JSON', () => {
  it('splits and joins comma strings without blanks or duplicates', () => {
    expect(splitComma(' a, b,,a ,c ')).toEqual(['a', 'b', 'c']);
    expect(splitComma('')).toEqual([]);
    expect(joinComma(['x', ' y', 'x', ''])).toBe('x,y');
  });
  it('parses JSON objects leniently', () => {
    expect(parseJsonObject('{"frt":12}')).toEqual({ frt: 12 });
    expect(parseJsonObject('[1]')).toEqual({});
    expect(parseJsonObject('nope')).toEqual({});
    expect(parseJsonObject({ a: 1 })).toEqual({ a: 1 });
  });
  it('makes alphanumeric suffixes of the asked length', () => {
    const s = randomSuffix(6);
    expect(s).toMatch(/^[A-Za-z0-9]{6}$/);
  });
});

describe('presets at the configured quota per unit', () => {
  it('labels a quota preset with its real amount', () => {
    expect(quotaPresetLabel(1000000, { displayInCurrency: true, quotaPerUnit: 500000 })).toBe('1,000,000 ($2.00)');
    expect(quotaPresetLabel(1000000, { displayInCurrency: true, quotaPerUnit: 200000 })).toBe('1,000,000 ($5.00)');
    expect(quotaPresetLabel(1000000, { displayInCurrency: false, quotaPerUnit: 500000 })).toBe('1,000,000');
  });
  it('turns dollar presets into quota units', () => {
    expect(usdPresets([1, 10], { displayInCurrency: true, quotaPerUnit: 500000 })).toEqual([
      { value: 500000, usd: 1, label: '$1' },
      { value: 5000000, usd: 10, label: '$10' },
    ]);
    expect(usdPresets([1], { displayInCurrency: false, quotaPerUnit: 1000 })).toEqual([{ value: 1000, usd: 1, label: '1000' }]);
  });
});

describe('modelTones', () => {
  it('gives each model its own tone, in order, and keeps the first assignment', () => {
    const t = modelTones(['b', 'a', 'b', 'c']);
    expect([...t.entries()]).toEqual([
      ['b', SERIES_TONES[0]],
      ['a', SERIES_TONES[1]],
      ['c', SERIES_TONES[2]],
    ]);
  });
  it('repeats the tones past the palette', () => {
    const names = Array.from({ length: SERIES_TONES.length + 1 }, (_, i) => `m${i}`);
    expect(modelTones(names).get(`m${SERIES_TONES.length}`)).toBe(SERIES_TONES[0]);
  });
});
