import { describe, expect, it } from 'vitest';
import {
  TOKEN_DEFAULTS,
  batchNames,
  expiryFromOption,
  normaliseAllowIps,
  parseBatchCount,
  parseExpiry,
  tokenPayload,
  tokenStatusKey,
  validateToken,
  asTokenForm,
  tokenChecks,
  QUOTA_PRESETS,
  maskKey,
} from './tokenForm';

describe('token expiry', () => {
  it('quick options: never, 1 hour, 1 day, 1 month = 30 days', () => {
    expect(expiryFromOption('never', 1000)).toBe(-1);
    expect(expiryFromOption('hour', 1000)).toBe(4600);
    expect(expiryFromOption('day', 1000)).toBe(1000 + 86400);
    expect(expiryFromOption('month', 1000)).toBe(1000 + 30 * 86400);
  });
  it('parses date texts; empty or -1 means never; garbage is refused', () => {
    expect(parseExpiry('')).toEqual({ value: -1 });
    expect(parseExpiry('-1')).toEqual({ value: -1 });
    expect(parseExpiry('2030-05-06 07:08:09')).toEqual({ value: Math.floor(new Date(2030, 4, 6, 7, 8, 9).getTime() / 1000) });
    expect(parseExpiry('next week')).toEqual({ error: 'res.token.msg.expiry_invalid' });
  });
});

describe('token batch', () => {
  it('count is a positive integer', () => {
    expect(parseBatchCount('10')).toBe(10);
    expect(parseBatchCount(3)).toBe(3);
    expect(parseBatchCount('0')).toBeNull();
    expect(parseBatchCount('-2')).toBeNull();
    expect(parseBatchCount('1.5')).toBeNull();
    expect(parseBatchCount('abc')).toBeNull();
  });
  it('the first name is kept, each further one gets a 6-character alphanumeric suffix', () => {
    const names = batchNames('team', 4);
    expect(names[0]).toBe('team');
    for (const n of names.slice(1)) expect(n).toMatch(/^team-[A-Za-z0-9]{6}$/);
    expect(new Set(names).size).toBe(4);
  });
});

describe('token form', () => {
  it('quota presets match $1…$1000 at 500000 per dollar', () => {
    expect(QUOTA_PRESETS.map((p) => p.value / 500000)).toEqual([1, 10, 50, 100, 500, 1000]);
    expect(TOKEN_DEFAULTS.remain_quota).toBe(500000);
  });
  it('validates name, quota, expiry and count', () => {
    const ok = { ...TOKEN_DEFAULTS, name: 'a' };
    expect(validateToken(ok, false)).toBeNull();
    expect(validateToken({ ...ok, name: ' ' }, false)).toBe('res.token.msg.name_required');
    expect(validateToken({ ...ok, name: '' }, true)).toBeNull();
    expect(validateToken({ ...ok, remain_quota: '1.5' }, false)).toBe('res.token.msg.quota_integer');
    expect(validateToken({ ...ok, remain_quota: 'x', unlimited_quota: true }, false)).toBeNull();
    expect(validateToken({ ...ok, expired_time: 'soon' }, false)).toBe('res.token.msg.expiry_invalid');
    expect(validateToken({ ...ok, count: 0 }, false)).toBe('res.token.msg.count_invalid');
  });
  it('builds the wire body', () => {
    const body = tokenPayload({
      ...TOKEN_DEFAULTS,
      name: ' t ',
      model_limits_enabled: true,
      model_limits: ['a', 'b'],
      allow_ips: ' 1.1.1.1 \n\n2.2.2.2',
      remain_quota: '42',
    });
    expect(body).toMatchObject({
      name: 't',
      remain_quota: 42,
      expired_time: -1,
      model_limits_enabled: true,
      model_limits: 'a,b',
      allow_ips: '1.1.1.1\n2.2.2.2',
    });
    expect(tokenPayload({ ...TOKEN_DEFAULTS, model_limits_enabled: true }).model_limits_enabled).toBe(false);
    expect(normaliseAllowIps(' \n')).toBe('');
  });
  it('status keys, with the limited-models variant', () => {
    expect(tokenStatusKey({ status: 1 })).toBe('enabled');
    expect(tokenStatusKey({ status: 1, model_limits_enabled: true })).toBe('enabled_limited');
    expect(tokenStatusKey({ status: 2 })).toBe('disabled');
    expect(tokenStatusKey({ status: 3 })).toBe('expired');
    expect(tokenStatusKey({ status: 4 })).toBe('exhausted');
    expect(tokenStatusKey({ status: 9 })).toBe('unknown');
  });
});

describe('token key display', () => {
  it('prefixes sk- and masks the middle', () => {
    expect(maskKey('abcdefghijklmnopqrstuvwxyz')).toBe('sk-abcd**********wxyz');
    expect(maskKey('short')).toBe('sk-short');
    // As the server answers it (lists never carry the whole key).
    expect(maskKey('abcd…wxyz')).toBe('sk-abcd…wxyz');
    expect(maskKey('…yz')).toBe('sk-…yz');
  });
});

describe('token form inputs', () => {
  it('checks each field on its own', () => {
    expect(tokenChecks.name({ ...TOKEN_DEFAULTS, name: ' ' }, false)).toBe('res.token.msg.name_required');
    expect(tokenChecks.name({ ...TOKEN_DEFAULTS, name: '' }, true)).toBeNull();
    expect(tokenChecks.quota({ ...TOKEN_DEFAULTS, remain_quota: '1.5' })).toBe('res.token.msg.quota_integer');
    expect(tokenChecks.expiry({ ...TOKEN_DEFAULTS, expired_time: 'soon' })).toBe('res.token.msg.expiry_invalid');
    expect(tokenChecks.count({ ...TOKEN_DEFAULTS, count: 0 }, false)).toBe('res.token.msg.count_invalid');
    expect(tokenChecks.count({ ...TOKEN_DEFAULTS, count: 0 }, true)).toBeNull();
    // Emptied inputs hold null: read as empty text, so an emptied quota is refused.
    const read = asTokenForm({ name: null, remain_quota: null, unlimited_quota: false, expired_time: null, model_limits: null, count: null });
    expect(read).toMatchObject({ name: '', remain_quota: '', expired_time: '', model_limits: [], count: '' });
    expect(validateToken(read, true)).toBe('res.token.msg.quota_integer');
  });
});
