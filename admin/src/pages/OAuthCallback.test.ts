import { describe, expect, it } from 'vitest';
import { callbackOutcome, loginLanding } from './OAuthCallback';

describe('login callback outcomes', () => {
  it('bind', () => expect(callbackOutcome({ success: true, message: 'bind', data: null })).toEqual({ kind: 'bind' }));
  it('login stores the user', () =>
    expect(callbackOutcome({ success: true, message: '', data: { id: 2, username: 'gh_1', role: 1 } })).toEqual({
      kind: 'login',
      user: { id: 2, username: 'gh_1', role: 1 },
    }));
  it('failure carries the message', () =>
    expect(callbackOutcome({ success: false, message: 'state 无效' })).toEqual({ kind: 'failed', message: 'state 无效' }));
  it('a success without a user is a failure', () => expect(callbackOutcome({ success: true, message: 'x', data: null }).kind).toBe('failed'));
});

describe('login landing', () => {
  it('telegram lands on the home page, the redirect providers on the token page', () => {
    expect(loginLanding('telegram')).toBe('/');
    expect(loginLanding('github')).toBe('/token');
    expect(loginLanding('oidc')).toBe('/token');
    expect(loginLanding('linuxdo')).toBe('/token');
  });
});
