import { describe, expect, it } from 'vitest';
import { registerError, setupError, usageModeFlags } from './validation';

describe('registration checks', () => {
  const ok = { username: 'bob', password: '12345678', password2: '12345678' };
  const noBot = { required: false, token: '' };
  it('passes a good form', () => expect(registerError(ok, noBot)).toBeNull());
  it('short password', () => expect(registerError({ ...ok, password: '1234567', password2: '1234567' }, noBot)).toBe('app.register.short'));
  it('mismatch', () => expect(registerError({ ...ok, password2: '12345679' }, noBot)).toBe('app.register.mismatch'));
  it('empty', () => expect(registerError({ ...ok, username: ' ' }, noBot)).toBe('app.register.empty'));
  it('bot-check pending', () => {
    expect(registerError(ok, { required: true, token: '' })).toBe('app.register.turnstile');
    expect(registerError(ok, { required: true, token: 't' })).toBeNull();
  });
});

describe('setup checks', () => {
  const ok = { username: 'root', password: '12345678', confirmPassword: '12345678' };
  it('passes', () => expect(setupError(ok, false)).toBeNull());
  it('username', () => expect(setupError({ ...ok, username: '' }, false)).toBe('app.setup.username_empty'));
  it('password length', () => expect(setupError({ ...ok, password: 'short', confirmPassword: 'short' }, false)).toBe('app.setup.password_short'));
  it('mismatch', () => expect(setupError({ ...ok, confirmPassword: 'x2345678' }, false)).toBe('app.setup.mismatch'));
  it('skipped when the admin exists', () => expect(setupError({ username: '', password: '', confirmPassword: 'x' }, true)).toBeNull());
  it('usage modes', () => {
    expect(usageModeFlags('external')).toEqual({ SelfUseModeEnabled: false, DemoSiteEnabled: false });
    expect(usageModeFlags('self')).toEqual({ SelfUseModeEnabled: true, DemoSiteEnabled: false });
    expect(usageModeFlags('demo')).toEqual({ SelfUseModeEnabled: false, DemoSiteEnabled: true });
  });
});
