import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router-dom';
import { useStoredUser } from '../lib/useUser';

/** Private guard: without a stored user, go to /login (and come back after). */
export function RequireUser({ children }: { children: ReactNode }) {
  const user = useStoredUser();
  const location = useLocation();
  if (!user) return <Navigate to="/login" replace state={{ nextPathname: location.pathname, nextSearch: location.search }} />;
  return <>{children}</>;
}
