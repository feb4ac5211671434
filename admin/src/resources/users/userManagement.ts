/** User administration logic (unit-tested). */

export const ROLE = { USER: 1, ADMIN: 10, ROOT: 100 } as const;

export function roleKey(role: number): string {
  return role === 1 ? 'user' : role === 10 ? 'admin' : role === 100 ? 'root' : 'unknown';
}

/** Status key: deregistered wins (DeletedAt set), else 1 activated, 2 banned, 3 other, else unknown. */
export function userStatusKey(u: { status: number; DeletedAt?: unknown; deleted_at?: unknown }): string {
  if (isDeregistered(u)) return 'deregistered';
  switch (Number(u.status)) {
    case 1:
      return 'activated';
    case 2:
      return 'banned';
    case 3:
      return 'status3';
    default:
      return 'unknown';
  }
}

export function isDeregistered(u: { DeletedAt?: unknown; deleted_at?: unknown }): boolean {
  const v = u.DeletedAt ?? u.deleted_at;
  return v !== null && v !== undefined && v !== '' && v !== 0 && v !== false;
}

export type ManageAction = 'promote' | 'demote' | 'disable' | 'enable' | 'delete';

/** Which manage actions a row offers (none for deregistered users). */
export function availableActions(u: { status: number; role: number; DeletedAt?: unknown; deleted_at?: unknown }, myRole: number): ManageAction[] {
  if (isDeregistered(u)) return [];
  if (myRole && u.role >= myRole) return [];
  const actions: ManageAction[] = [];
  if (myRole >= ROLE.ROOT && u.role < ROLE.ADMIN) actions.push('promote');
  if (myRole >= ROLE.ROOT && u.role >= ROLE.ADMIN && u.role < ROLE.ROOT) actions.push('demote');
  if (Number(u.status) === 1) actions.push('disable');
  else actions.push('enable');
  actions.push('delete');
  return actions;
}

/** The enable action is blocked for status 3. */
export function enableBlocked(u: { status: number }): boolean {
  return Number(u.status) === 3;
}

/** The user forms' per-field checks (each the i18n key of its problem, or null): the inputs' validators. */
export const userChecks = {
  /** Create: 'Username and password cannot be empty!' under the blank one. */
  username: (v: { username?: string | null }): string | null => (String(v.username ?? '').trim() ? null : 'res.user.msg.username_password_required'),
  newPassword: (v: { password?: string | null }): string | null => (v.password ? null : 'res.user.msg.username_password_required'),
  /** Edit: an optional new password of at least 8 characters. */
  passwordLength: (v: { password?: string | null }): string | null => (v.password && v.password.length < 8 ? 'res.user.msg.password_min' : null),
  quota: (v: { quota?: number | string | null }): string | null => (/^-?\d+$/.test(String(v.quota ?? '').trim()) ? null : 'res.user.msg.quota_integer'),
};

/** Create: 'Username and password cannot be empty!' when either is blank. */
export function validateNewUser(v: { username: string; password: string }): string | null {
  return userChecks.username(v) ?? userChecks.newPassword(v);
}

/** Edit: optional password of at least 8 characters; quota an integer. */
export function validateEditUser(v: { password?: string; quota: number | string }): string | null {
  return userChecks.passwordLength(v) ?? userChecks.quota(v);
}

/** Add-quota dialog: accepts negative integers, returns the new total or null for bad input. */
export function addQuota(current: number, delta: string): number | null {
  const d = delta.trim();
  if (!/^-?\d+$/.test(d)) return null;
  return current + Number(d);
}

/** A list row after a manage action: the answer's status/role replace the row's (delete → deregistered). */
export function managedRow<R extends Record<string, unknown>>(row: R, action: ManageAction, answer: { status?: number; role?: number }): R {
  if (action === 'delete') return { ...row, DeletedAt: 'deleted' };
  return { ...row, status: answer.status ?? row.status, role: answer.role ?? row.role };
}
