import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api } from './http';
import { cachedStatus, saveStatus, type SiteStatus } from './status';
import { getUser, isAdmin, KEYS, store } from './storage';

interface StatusState {
  status: SiteStatus;
  /** true once the server answered in this page view. */
  loaded: boolean;
  /** 'unreachable' (network) or 'failed' (success:false), when the last load failed. */
  error?: 'unreachable' | 'failed';
  reload(): Promise<void>;
}

const Ctx = createContext<StatusState>({ status: {}, loaded: false, reload: async () => undefined });

/** Loads GET /api/status once per page view, caching it locally. */
export function StatusProvider({ children }: { children: ReactNode }) {
  const [status, setStatus] = useState<SiteStatus>(() => cachedStatus());
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<StatusState['error']>();

  const reload = useCallback(async () => {
    try {
      const res = await api().raw<SiteStatus>('GET', '/api/status');
      if (res.success && res.data) {
        saveStatus(res.data);
        setStatus(res.data);
        setError(undefined);
      } else setError('failed');
    } catch {
      setError('unreachable');
    } finally {
      setLoaded(true);
    }
  }, []);

  useEffect(() => {
    void reload();
    // Admins also cache the channel-type → models map (channel_models).
    if (getUser() && isAdmin()) {
      api()
        .raw('GET', '/api/models')
        .then((r) => {
          if (r.success && r.data) store().setItem(KEYS.channelModels, JSON.stringify(r.data));
        })
        .catch(() => undefined);
    }
  }, [reload]);

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
