import { describe, expect, it } from 'vitest';
import {
  completionPrice,
  filterModels,
  formatPrice,
  fuzzyMatch,
  groupRatioOf,
  initialGroup,
  isAvailable,
  availability,
  unpricedModels,
  normalisePricing,
  perCallPrice,
  priceOf,
  promptPrice,
  selectionText,
  sortModels,
  usableGroupsOf,
  usageCost,
  type PricingEntry,
} from './pricingTable';

const usd = { displayInCurrency: true, quotaPerUnit: 500000 };
const raw = { displayInCurrency: false, quotaPerUnit: 500000 };

const entry = (model_name: string, extra: Partial<PricingEntry> = {}): PricingEntry => ({
  model_name,
  quota_type: 0,
  model_ratio: 1,
  completion_ratio: 1,
  model_price: 0,
  enable_groups: ['default'],
  priced: true,
  callable: true,
  ...extra,
});

describe('formulas', () => {
  it('prompt price per 1M = model ratio × 2 × group ratio', () => {
    expect(promptPrice(0.075, 1)).toBeCloseTo(0.15, 10);
    expect(promptPrice(15, 2)).toBe(60);
    expect(promptPrice(2.5, 0.5)).toBe(2.5);
  });
  it('completion price = prompt price × completion ratio', () => {
    expect(completionPrice(0.075, 4, 1)).toBeCloseTo(0.6, 10);
    expect(completionPrice(15, 2, 2)).toBe(120);
  });
  it('per call = model price × group ratio', () => {
    expect(perCallPrice(0.04, 1)).toBe(0.04);
    expect(perCallPrice(0.04, 2.5)).toBeCloseTo(0.1, 10);
  });
  it('pay-as-you-go cost = group × model × (prompt + completion × completion ratio) / 500000', () => {
    expect(usageCost(1, 15, 1_000_000, 0, 1)).toBe(30);
    expect(usageCost(2, 1, 1000, 1000, 3)).toBeCloseTo((2 * 1 * 4000) / 500000, 12);
  });
  it('priceOf picks the billing type', () => {
    expect(priceOf(entry('a', { model_ratio: 3, completion_ratio: 2 }), 2)).toEqual({ kind: 'usage', prompt: 12, completion: 24 });
    expect(priceOf(entry('b', { quota_type: 1, model_price: 0.5 }), 3)).toEqual({ kind: 'call', call: 1.5 });
  });
  it('group ratio defaults to 1 for an unknown group', () => {
    expect(groupRatioOf({ vip: 2 }, 'vip')).toBe(2);
    expect(groupRatioOf({ vip: 2 }, 'nope')).toBe(1);
    expect(groupRatioOf({ free: 0 }, 'free')).toBe(0);
  });
});

describe('display', () => {
  it('shows dollars with 2 to 4 decimals in currency mode', () => {
    expect(formatPrice(30, usd)).toBe('$30.00');
    expect(formatPrice(0.15, usd)).toBe('$0.15');
    expect(formatPrice(0.075, usd)).toBe('$0.075');
    expect(formatPrice(0.1 * 3, usd)).toBe('$0.30');
    expect(formatPrice(0.12345, usd)).toBe('$0.1235');
    expect(formatPrice(0, usd)).toBe('$0.00');
    expect(formatPrice(0.000012, usd)).toBe('$0.000012');
  });
  it('shows quota units (USD × quota per unit) without currency display', () => {
    expect(formatPrice(30, raw)).toBe('15M');
    expect(formatPrice(0.15, raw)).toBe('75k');
    expect(formatPrice(0.004, { displayInCurrency: false, quotaPerUnit: 500000 })).toBe('2000');
  });
});

describe('sorting, search and groups', () => {
  it('puts gpt models first, then by name', () => {
    const sorted = sortModels([entry('claude-3'), entry('gpt-4o'), entry('abc'), entry('GPT-3.5'), entry('gemini')]);
    expect(sorted.map((e) => e.model_name)).toEqual(['GPT-3.5', 'gpt-4o', 'abc', 'claude-3', 'gemini']);
  });
  it('fuzzy-matches model names', () => {
    expect(fuzzyMatch('gpt-4o-mini', '')).toBe(true);
    expect(fuzzyMatch('gpt-4o-mini', 'GPT')).toBe(true);
    expect(fuzzyMatch('gpt-4o-mini', 'gpt4o')).toBe(true);
    expect(fuzzyMatch('gpt-4o-mini', '4omini')).toBe(true);
    expect(fuzzyMatch('gpt-4o-mini', 'claude')).toBe(false);
    expect(fuzzyMatch('claude-3-haiku', 'c3h')).toBe(true);
    expect(fuzzyMatch('claude-3-haiku', 'h3c')).toBe(false);
    expect(filterModels([entry('gpt-4o'), entry('claude')], 'cla').map((e) => e.model_name)).toEqual(['claude']);
  });
  it('availability and usable groups follow the viewed group', () => {
    const e = entry('m', { enable_groups: ['default', 'vip', 'hidden'] });
    expect(isAvailable(e, 'vip')).toBe(true);
    expect(isAvailable(e, 'svip')).toBe(false);
    expect(usableGroupsOf(e, { default: 'd', vip: 'v' })).toEqual(['default', 'vip']);
    expect(usableGroupsOf(e, {})).toEqual(['default', 'vip', 'hidden']);
  });
  it('starts on the user group, else default', () => {
    expect(initialGroup('vip')).toBe('vip');
    expect(initialGroup(undefined)).toBe('default');
    expect(initialGroup(' ')).toBe('default');
  });
  it('copies the selection as a comma list', () => {
    expect(selectionText(['a', 'b'])).toBe('a,b');
  });
});

describe('normalisePricing', () => {
  it('keeps valid entries and fills defaults', () => {
    const n = normalisePricing({
      data: [
        { model_name: 'x', quota_type: 1, model_price: '0.2', enable_groups: ['default', 3] },
        { model_name: '' },
        null,
        { model_name: 'y', model_ratio: 2 },
      ],
      group_ratio: { default: 1, vip: '2', bad: 'x' },
      usable_group: { default: '默认' },
    });
    expect(n.data).toEqual([
      { model_name: 'x', quota_type: 1, model_ratio: 0, completion_ratio: 1, model_price: 0.2, enable_groups: ['default'], priced: true, callable: true },
      { model_name: 'y', quota_type: 0, model_ratio: 2, completion_ratio: 1, model_price: 0, enable_groups: [], priced: true, callable: true },
    ]);
    expect(n.group_ratio).toEqual({ default: 1, vip: 2 });
    expect(n.usable_group).toEqual({ default: '默认' });
    expect(normalisePricing(null)).toEqual({ data: [], group_ratio: {}, usable_group: {} });
  });
});

describe('availability', () => {
  it('marks a model with no price or ratio as unpriced for a viewer who does not accept unset models', () => {
    const e = entry('x', { priced: false, callable: false, model_ratio: 0 });
    expect(availability(e, 'default')).toBe('unpriced');
    expect(availability(e, 'vip')).toBe('unpriced');
    expect(isAvailable(e, 'default')).toBe(false);
  });
  it('an unpriced model the viewer accepts is available at the default ratio, in the groups serving it', () => {
    const e = entry('x', { priced: false, callable: true, model_ratio: 37.5 });
    expect(availability(e, 'default')).toBe('default');
    expect(isAvailable(e, 'default')).toBe(true);
    expect(availability(e, 'vip')).toBe('group');
    expect(priceOf(e, 1)).toEqual({ kind: 'usage', prompt: 75, completion: 75 });
  });
  it('a priced model is available only to the groups serving it', () => {
    expect(availability(entry('x'), 'default')).toBe('ok');
    expect(availability(entry('x'), 'vip')).toBe('group');
  });
  it('normalisePricing reads priced, and guesses it from the ratio or price when absent', () => {
    const a = normalisePricing({
      data: [
        { model_name: 'a', quota_type: 0, model_ratio: 0, enable_groups: [], priced: false },
        { model_name: 'b', quota_type: 0, model_ratio: 0, enable_groups: [] },
        { model_name: 'c', quota_type: 1, model_price: 0.1, enable_groups: [] },
      ],
    });
    expect(a.data.map((e) => e.priced)).toEqual([false, false, true]);
    // Without `callable` (older servers) it follows priced.
    expect(a.data.map((e) => e.callable)).toEqual([false, false, true]);
    const b = normalisePricing({ data: [{ model_name: 'a', quota_type: 0, model_ratio: 37.5, enable_groups: [], priced: false, callable: true }] });
    expect(b.data[0]).toMatchObject({ priced: false, callable: true, model_ratio: 37.5 });
  });
});

describe('unpricedModels', () => {
  it('lists the models without a priced pricing entry or a configured ratio/price', () => {
    const pricing = [entry('gpt-4o'), entry('free', { priced: false })];
    expect(unpricedModels(['gpt-4o', 'free', 'new-one', 'rated'], pricing, { price: {}, ratio: { rated: 1 } })).toEqual(['free', 'new-one']);
    expect(unpricedModels(['gpt-4o', 'new-one'], pricing)).toEqual(['new-one']);
  });
});
