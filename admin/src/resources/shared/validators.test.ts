import { describe, expect, it } from 'vitest';
import { fromCheck, jsonObject, requiredText } from './validators';

const call = (v: ReturnType<typeof requiredText>, value: unknown, values: Record<string, unknown> = {}) => v(value, values, {} as never);

describe('form validators', () => {
  it('requiredText refuses empty and blank text and marks the input required', () => {
    const v = requiredText('msg.name');
    expect(call(v, '')).toBe('msg.name');
    expect(call(v, '   ')).toBe('msg.name');
    expect(call(v, null)).toBe('msg.name');
    expect(call(v, 'x')).toBeUndefined();
    expect((v as { isRequired?: boolean }).isRequired).toBe(true);
  });
  it('jsonObject takes nothing or a JSON object', () => {
    const v = jsonObject('msg.json');
    expect(call(v, '')).toBeUndefined();
    expect(call(v, null)).toBeUndefined();
    expect(call(v, '{"a":"b"}')).toBeUndefined();
    expect(call(v, '[1]')).toBe('msg.json');
    expect(call(v, '3')).toBe('msg.json');
    expect(call(v, '{"a":')).toBe('msg.json');
  });
  it('fromCheck runs a whole-form check on the values react-hook-form holds', () => {
    const v = fromCheck(
      (f: { a: string; b: string }) => (f.a === f.b ? 'msg.same' : null),
      (values) => ({ a: String(values.a ?? ''), b: String(values.b ?? '') }),
      { required: true },
    );
    expect(call(v, 'x', { a: 'x', b: 'x' })).toBe('msg.same');
    expect(call(v, 'x', { a: 'x', b: 'y' })).toBeUndefined();
    expect((v as { isRequired?: boolean }).isRequired).toBe(true);
    expect(
      (
        fromCheck(
          () => null,
          (x) => x,
        ) as { isRequired?: boolean }
      ).isRequired,
    ).toBeUndefined();
  });
});
