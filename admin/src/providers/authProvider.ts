import type { AuthProvider } from 'react-admin';
import { api as browserApi, type Api } from '../lib/http';
import { clearUser, getUser, setUser, type StoredUser } from '../lib/storage';

export const LOGIN_PATH = '/login';

/** A right password on an account with two-factor authentication: the code is asked next. */
export class TwoFactorRequired extends Error {
  constructor() {
    super('two-factor code required');
  }
}
export const EXPIRED_PATH = '/login?expired=true';

export interface LoginParams {
  username: string;
  password: string;
  /** Turnstile token when the bot-check is on. */
  turnstile?: string;
}

/**
 * Session handling: the logged-in user is kept in localStorage `user`; its id
 * is the `New-Api-User` header of every call. A 401 anywhere sends the browser to
 * /login?expired=true.
 */
export function createAuthProvider(http: Api): AuthProvider {
  return {
    async login(params: LoginParams) {
      const username = String(params?.username ?? '').trim();
      const password = String(params?.password ?? '');
      if (!username || !password) throw new Error('app.login.empty');
      const answer = await http.post<StoredUser>(`/api/user/login?turnstile=${encodeURIComponent(params.turnstile ?? '')}`, {
        username,
        password,
      });
      // The account has 2FA: no session yet, the login page asks for the code (POST /api/user/login/2fa).
      if ((answer.data as { require_2fa?: boolean } | null)?.require_2fa) throw new TwoFactorRequired();
      const user = answer.data;
      if (!user || typeof user !== 'object' || user.id == null) throw new Error(answer.message || 'Login failed');
      setUser(user);
      // After a password login the console opens the token page.
      return { redirectTo: '/token' };
    },

    async logout() {
      const hadUser = !!getUser();
      clearUser();
      if (hadUser) {
        try {
          await http.get('/api/user/logout');
        } catch {
          // The session may already be gone; the local state is what matters.
        }
      }
      // undefined: react-admin follows the redirect given by the caller (e.g. /login?expired=true).
      return undefined;
    },

    async checkAuth() {
      if (!getUser()) throw { redirectTo: LOGIN_PATH, message: false };
    },

    async checkError(error: { status?: number } | undefined) {
      const status = error?.status;
      if (status === 401) {
        clearUser();
        throw { redirectTo: EXPIRED_PATH, logoutUser: true, message: false };
      }
      // 403 (role too low) and everything else keep the session.
    },

    async getPermissions() {
      const user = getUser();
      return user ? Number(user.role) : undefined;
    },

    async getIdentity() {
      const user = getUser();
      if (!user) throw new Error('not logged in');
      return { id: user.id, fullName: user.display_name || user.username, username: user.username, role: user.role, group: user.group };
    },
  };
}

let browserAuth: AuthProvider | undefined;

export function authProvider(): AuthProvider {
  if (!browserAuth) browserAuth = createAuthProvider(browserApi());
  return browserAuth;
}
