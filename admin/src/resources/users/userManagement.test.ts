import { describe, expect, it } from 'vitest';
import { addQuota, managedRow, availableActions, enableBlocked, roleKey, userChecks, userStatusKey, validateEditUser, validateNewUser } from './userManagement';

describe('users', () => {
  it('role keys: 1/10/100, other unknown', () => {
    expect([1, 10, 100, 5].map(roleKey)).toEqual(['user', 'admin', 'root', 'unknown']);
  });
  it('status keys; DeletedAt wins as deregistered', () => {
    expect(userStatusKey({ status: 1 })).toBe('activated');
    expect(userStatusKey({ status: 2 })).toBe('banned');
    expect(userStatusKey({ status: 3 })).toBe('status3');
    expect(userStatusKey({ status: 7 })).toBe('unknown');
    expect(userStatusKey({ status: 1, DeletedAt: '2024-01-01' })).toBe('deregistered');
  });
  it('actions: none for deregistered or same-role users, promote/demote by root only', () => {
    expect(availableActions({ status: 1, role: 1, DeletedAt: 'x' }, 100)).toEqual([]);
    expect(availableActions({ status: 1, role: 10 }, 10)).toEqual([]);
    expect(availableActions({ status: 1, role: 1 }, 10)).toEqual(['disable', 'delete']);
    expect(availableActions({ status: 2, role: 1 }, 100)).toEqual(['promote', 'enable', 'delete']);
    expect(availableActions({ status: 1, role: 10 }, 100)).toEqual(['demote', 'disable', 'delete']);
    expect(enableBlocked({ status: 3 })).toBe(true);
    expect(enableBlocked({ status: 2 })).toBe(false);
  });
  it('create needs username and password', () => {
    expect(validateNewUser({ username: ' ', password: 'x' })).toBe('res.user.msg.username_password_required');
    expect(validateNewUser({ username: 'a', password: '' })).toBe('res.user.msg.username_password_required');
    expect(validateNewUser({ username: 'a', password: 'p' })).toBeNull();
  });
  it('edit: optional password of 8+, integer quota', () => {
    expect(validateEditUser({ password: '', quota: 5 })).toBeNull();
    expect(validateEditUser({ password: 'short', quota: 5 })).toBe('res.user.msg.password_min');
    expect(validateEditUser({ password: '12345678', quota: '1.2' })).toBe('res.user.msg.quota_integer');
  });
  it('add-quota accepts negatives and gives the new total', () => {
    expect(addQuota(100, '50')).toBe(150);
    expect(addQuota(100, '-150')).toBe(-50);
    expect(addQuota(100, 'x')).toBeNull();
  });
});

describe('user form checks', () => {
  it('create: username and password must be there', () => {
    expect(validateNewUser({ username: 'a', password: 'p' })).toBeNull();
    expect(userChecks.username({ username: ' ' })).toBe('res.user.msg.username_password_required');
    expect(userChecks.username({ username: null })).toBe('res.user.msg.username_password_required');
    expect(userChecks.newPassword({ password: '' })).toBe('res.user.msg.username_password_required');
  });
  it('edit: password length, then quota', () => {
    expect(validateEditUser({ password: '', quota: 5 })).toBeNull();
    expect(userChecks.passwordLength({ password: 'short' })).toBe('res.user.msg.password_min');
    expect(userChecks.passwordLength({ password: null })).toBeNull();
    expect(userChecks.quota({ quota: '1.2' })).toBe('res.user.msg.quota_integer');
    expect(userChecks.quota({ quota: null })).toBe('res.user.msg.quota_integer');
  });
});
describe('managedRow', () => {
  const row = { id: 3, status: 1, role: 1, DeletedAt: null };
  it('takes the status and role of the answer, keeping the row where it sends none', () => {
    expect(managedRow(row, 'promote', { status: 1, role: 10 })).toEqual({ id: 3, status: 1, role: 10, DeletedAt: null });
    expect(managedRow(row, 'disable', { status: 2 })).toEqual({ id: 3, status: 2, role: 1, DeletedAt: null });
  });
  it('marks a deleted user deregistered', () => {
    expect(managedRow(row, 'delete', {})).toEqual({ id: 3, status: 1, role: 1, DeletedAt: 'deleted' });
  });
});
