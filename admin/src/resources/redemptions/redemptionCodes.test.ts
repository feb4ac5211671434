import { describe, expect, it } from 'vitest';
import {
  REDEMPTION_USD_PRESETS,
  amountText,
  codesFileText,
  asRedemptionForm,
  redemptionChecks,
  redemptionPayload,
  redemptionStatusKey,
  validateRedemption,
} from './redemptionCodes';

const usd = { displayInCurrency: true, quotaPerUnit: 500000 };

describe('redemption codes', () => {
  it('validates name length, integer quota and count 1..100', () => {
    expect(validateRedemption({ name: 'a', quota: 100000, count: 1 }, false)).toBeNull();
    expect(validateRedemption({ name: 'x'.repeat(21), quota: 1, count: 1 }, false)).toBe('res.redemption.msg.name_length');
    expect(validateRedemption({ name: '', quota: '1.5', count: 1 }, false)).toBe('res.redemption.msg.quota_integer');
    expect(validateRedemption({ name: '', quota: 1, count: 101 }, false)).toBe('res.redemption.msg.count_range');
    expect(validateRedemption({ name: '', quota: 1, count: 0 }, false)).toBe('res.redemption.msg.count_range');
    expect(validateRedemption({ name: '', quota: 1, count: 0 }, true)).toBeNull();
  });
  it('an empty name defaults to the formatted quota', () => {
    expect(redemptionPayload({ name: '', quota: '100000', count: '3' }, false, usd)).toEqual({ name: '$0.20', quota: 100000, count: 3 });
    expect(redemptionPayload({ id: 4, name: 'n', quota: 5, count: 1 }, true, usd)).toEqual({ id: 4, name: 'n', quota: 5 });
  });
  it('writes one code per line', () => {
    expect(codesFileText(['a', 'b'])).toBe('a\nb\n');
    expect(codesFileText([])).toBe('');
  });
  it('status keys', () => {
    expect([1, 2, 3, 4].map(redemptionStatusKey)).toEqual(['unused', 'disabled', 'used', 'unknown']);
  });
});

describe('redemption form inputs', () => {
  it('checks each field on its own', () => {
    expect(redemptionChecks.name({ name: 'a', quota: 1, count: 1 })).toBeNull();
    expect(redemptionChecks.name({ name: 'x'.repeat(21), quota: 1, count: 1 })).toBe('res.redemption.msg.name_length');
    expect(redemptionChecks.quota({ name: '', quota: '1.5', count: 1 })).toBe('res.redemption.msg.quota_integer');
    expect(redemptionChecks.count({ name: '', quota: 1, count: 101 }, false)).toBe('res.redemption.msg.count_range');
    expect(redemptionChecks.count({ name: '', quota: 1, count: 101 }, true)).toBeNull();
  });
  it('reads emptied inputs (null) as empty text, which the checks refuse', () => {
    const f = asRedemptionForm({ id: '4', name: null, quota: null, count: null });
    expect(f).toEqual({ id: 4, name: '', quota: '', count: '' });
    expect(redemptionChecks.quota(f)).toBe('res.redemption.msg.quota_integer');
    expect(redemptionChecks.count(f, false)).toBe('res.redemption.msg.count_range');
  });
});

describe('amount in dollars', () => {
  it('shows quota units as dollars at the configured quota per unit', () => {
    expect(amountText(5000000, 500000)).toBe('10');
    expect(amountText(100000, 500000)).toBe('0.2');
    expect(amountText(1, 3)).toBe('0.333333333333');
    expect(amountText(Number.NaN, 500000)).toBe('');
  });
  it('the first preset is $10', () => {
    expect(REDEMPTION_USD_PRESETS[0]).toBe(10);
  });
});
