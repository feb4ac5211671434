/**
 * Local storage keys the console keeps, and typed accessors. Everything goes through
 * `store()` so unit tests (node, no window) can run with an in-memory replacement.
 */
export interface StoredUser {
  id: number;
  username: string;
  display_name?: string;
  role: number;
  status?: number;
  group?: string;
  [key: string]: unknown;
}

export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** In-memory store (tests, or a browser with storage disabled). */
export function memoryStorage(): KeyValueStore {
  const m = new Map<string, string>();
  return {
    getItem: (k) => (m.has(k) ? m.get(k)! : null),
    setItem: (k, v) => void m.set(k, String(v)),
    removeItem: (k) => void m.delete(k),
  };
}

let current: KeyValueStore | undefined;

export function store(): KeyValueStore {
  if (!current) {
    try {
      current = typeof localStorage !== 'undefined' ? localStorage : memoryStorage();
    } catch {
      current = memoryStorage();
    }
  }
  return current;
}

/** Tests swap the storage. */
export function setStore(s: KeyValueStore): void {
  current = s;
}

export const KEYS = {
  user: 'user',
  status: 'status',
  themeMode: 'theme-mode',
  language: 'i18nextLng',
  collapse: 'default_collapse_sidebar',
  /** The user's own sidebar choice (collapsed or not), remembered across visits. */
  sidebarCollapsed: 'sidebar_collapsed',
  aff: 'aff',
  pageSize: 'page-size',
  channelModels: 'channel_models',
} as const;

export function readJSON<T>(key: string, fallback: T): T {
  const raw = store().getItem(key);
  if (raw == null || raw === '') return fallback;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return fallback;
  }
}

export function getUser(): StoredUser | null {
  const u = readJSON<StoredUser | null>(KEYS.user, null);
  return u && typeof u === 'object' && u.id != null ? u : null;
}

/** Fired on window when the stored user changes (login, logout, 401). */
export const USER_EVENT = 'gateway:user';

function announceUser(): void {
  if (typeof window !== 'undefined' && typeof window.dispatchEvent === 'function') {
    try {
      window.dispatchEvent(new Event(USER_EVENT));
    } catch {
      /* ignore */
    }
  }
}

export function setUser(user: StoredUser): void {
  store().setItem(KEYS.user, JSON.stringify(user));
  announceUser();
}

export function clearUser(): void {
  store().removeItem(KEYS.user);
  announceUser();
}

export function getUserId(): number | undefined {
  return getUser()?.id;
}

export const ROLE = { user: 1, admin: 10, root: 100 } as const;

export function isAdmin(user: StoredUser | null = getUser()): boolean {
  return !!user && Number(user.role) >= ROLE.admin;
}

export function isRoot(user: StoredUser | null = getUser()): boolean {
  return !!user && Number(user.role) >= ROLE.root;
}

/**
 * The console's language as stored (i18nextLng, which the language switch writes before it
 * changes i18next): zh by default, `en…` is English. Sent as `Accept-Language` on every call so
 * the server answers its messages in the same language.
 */
export function storedLanguage(): 'zh' | 'en' {
  const raw = store().getItem(KEYS.language) ?? '';
  return raw.toLowerCase().startsWith('en') ? 'en' : 'zh';
}
