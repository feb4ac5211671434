import { describe, expect, it } from 'vitest';
import { fieldText, recordExtra, recordFields } from './logRecord';

describe('recordFields', () => {
  it('lists every field, known ones first, the rest sorted, without other', () => {
    const row = { zeta: 1, quota: 65, id: 7, other: '{"a":1}', model_name: 'm', alpha: '' };
    expect(recordFields(row).map((f) => f.key)).toEqual(['id', 'model_name', 'quota', 'alpha', 'zeta']);
    expect(recordFields(row).find((f) => f.key === 'quota')?.value).toBe(65);
  });
});

describe('recordExtra', () => {
  it('pretty-prints other, from a string or an object', () => {
    expect(recordExtra({ other: '{"group_ratio":1}' })).toBe('{\n  "group_ratio": 1\n}');
    expect(recordExtra({ other: { x: [1] } })).toContain('"x"');
    expect(recordExtra({ other: 'not json' })).toBe('');
    expect(recordExtra({})).toBe('');
  });
});

describe('fieldText', () => {
  it('shows empties as a dash and objects as JSON', () => {
    expect(fieldText(null)).toBe('-');
    expect(fieldText('')).toBe('-');
    expect(fieldText(0)).toBe('0');
    expect(fieldText(false)).toBe('false');
    expect(fieldText({ a: 1 })).toBe('{"a":1}');
  });
});
