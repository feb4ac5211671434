import { useEffect, useState } from 'react';
import { getUser, USER_EVENT, type StoredUser } from './storage';

/** The stored user, re-read on login/logout (same tab) and on storage changes (other tabs). */
export function useStoredUser(): StoredUser | null {
  const [user, setUser] = useState<StoredUser | null>(() => getUser());
  useEffect(() => {
    const sync = () => setUser(getUser());
    window.addEventListener(USER_EVENT, sync);
    window.addEventListener('storage', sync);
    return () => {
      window.removeEventListener(USER_EVENT, sync);
      window.removeEventListener('storage', sync);
    };
  }, []);
  return user;
}
