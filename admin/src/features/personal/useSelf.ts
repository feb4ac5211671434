import { useCallback, useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { api, errorText } from '../../lib/http';
import { getUser, setUser, type StoredUser } from '../../lib/storage';

/** The logged-in user as GET /api/user/self answers it. */
export interface SelfUser extends StoredUser {
  email?: string;
  github_id?: string;
  oidc_id?: string;
  wechat_id?: string;
  telegram_id?: string;
  linux_do_id?: string;
  quota?: number;
  used_quota?: number;
  request_count?: number;
  aff_count?: number;
  aff_quota?: number;
  aff_history_quota?: number;
  setting?: string;
}

/** Loads /api/user/self (starting from the stored user) and keeps the stored copy's display fields fresh. */
export function useSelf(): { self: SelfUser | null; loading: boolean; reload: () => Promise<void> } {
  const notify = useNotify();
  const translate = useTranslate();
  const [self, setSelf] = useState<SelfUser | null>(() => getUser() as SelfUser | null);
  const [loading, setLoading] = useState(false);
  const reload = useCallback(async () => {
    setLoading(true);
    try {
      const r = await api().get<SelfUser>('/api/user/self');
      if (r.data) {
        setSelf(r.data);
        const stored = getUser();
        if (stored && stored.id === r.data.id) {
          setUser({
            ...stored,
            display_name: r.data.display_name,
            role: r.data.role,
            group: r.data.group,
            quota: r.data.quota,
            used_quota: r.data.used_quota,
            request_count: r.data.request_count,
          });
        }
      }
    } catch (err) {
      notify(errorText(err, translate), { type: 'error' });
    } finally {
      setLoading(false);
    }
  }, [notify, translate]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { self, loading, reload };
}
