import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { cachedStatus, loadStatus, statusErrorKind, storeChannelModels, type SiteStatus, type StatusErrorKind } from './status';
import { getUser, isAdmin } from './storage';

interface StatusState {
  status: SiteStatus;
  /** true once the server answered in this page view. */
  loaded: boolean;
  /** 'unreachable' (network) or 'failed' (success:false), when the last load failed. */
  error?: StatusErrorKind;
  reload(): Promise<void>;
}

const Ctx = createContext<StatusState>({ status: {}, loaded: false, reload: async () => undefined });

/** A query that has not answered yet (data or error) in this page view. */
const notLoaded = (query: { state: { dataUpdateCount: number; errorUpdateCount: number } }) => query.state.dataUpdateCount + query.state.errorUpdateCount === 0;

/**
 * Once per page view, and again only when asked (`reload()`): not when the window regains focus,
 * nor when a list's refresh invalidates every query; one attempt.
 */
const ONCE_PER_PAGE_VIEW = { enabled: notLoaded, retry: false, refetchOnWindowFocus: false } as const;

/**
 * Loads GET /api/status once per page view, caching it locally (the cached copy is shown until the
 * server answers, and kept when it cannot).
 */
export function StatusProvider({ children }: { children: ReactNode }) {
  const [cached] = useState<SiteStatus>(cachedStatus);
  // Admins (a user stored when the console loads) also cache the channel-type → models map.
  const [adminAtLoad] = useState(() => !!getUser() && isAdmin());
  const query = useQuery({ queryKey: ['gateway', 'status'], queryFn: loadStatus, ...ONCE_PER_PAGE_VIEW });
  useQuery({
    queryKey: ['gateway', 'channelModelsMap'],
    queryFn: storeChannelModels,
    ...ONCE_PER_PAGE_VIEW,
    enabled: (q) => adminAtLoad && notLoaded(q),
  });
  const status = query.data ?? cached;
  const loaded = query.isFetched;
  const error = statusErrorKind(query.error);
  const { refetch } = query;
  const reload = useCallback(async () => {
    await refetch();
  }, [refetch]);

  // The site's name and logo also title the browser tab.
  useEffect(() => {
    if (status.system_name) document.title = String(status.system_name);
    if (status.logo) {
      let link = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
      if (!link) {
        link = document.createElement('link');
        link.rel = 'icon';
        document.head.appendChild(link);
      }
      link.href = String(status.logo);
    }
  }, [status.system_name, status.logo]);

  const value = useMemo(() => ({ status, loaded, error, reload }), [status, loaded, error, reload]);
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

export function useStatus(): StatusState {
  return useContext(Ctx);
}
