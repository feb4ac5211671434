import { afterEach, describe, expect, it } from 'vitest';
import { clearUser, getUser, setUser } from '../../lib/storage';
import { storeSelf } from './useSelf';

describe('storeSelf', () => {
  afterEach(() => clearUser());

  it('copies the display fields of the same user into the stored one', () => {
    setUser({ id: 7, username: 'ann', role: 1, display_name: 'old', quota: 1 });
    storeSelf({ id: 7, username: 'ann', display_name: 'Ann', role: 10, group: 'vip', quota: 5, used_quota: 2, request_count: 3, email: 'a@x' });
    expect(getUser()).toEqual({ id: 7, username: 'ann', display_name: 'Ann', role: 10, group: 'vip', quota: 5, used_quota: 2, request_count: 3 });
  });

  it('leaves another stored user alone', () => {
    setUser({ id: 1, username: 'root', role: 100, display_name: 'Root' });
    storeSelf({ id: 2, username: 'bob', role: 1, display_name: 'Bob' });
    expect(getUser()).toEqual({ id: 1, username: 'root', role: 100, display_name: 'Root' });
  });

  it('stores nothing when no user is stored', () => {
    storeSelf({ id: 2, username: 'bob', role: 1 });
    expect(getUser()).toBeNull();
  });
});
