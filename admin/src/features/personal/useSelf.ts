import { useCallback, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { LOAD_ONCE, useQueryError } from '../../resources/shared/hooks';
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

/** Keeps the stored user's display fields in step with a fresh /api/user/self answer (same user only). */
export function storeSelf(self: SelfUser): void {
  const stored = getUser();
  if (stored && stored.id === self.id) {
    setUser({
      ...stored,
      display_name: self.display_name,
      role: self.role,
      group: self.group,
      quota: self.quota,
      used_quota: self.used_quota,
      request_count: self.request_count,
    });
  }
}

const SELF_KEY = ['gateway', 'self'] as const;

/** Loads /api/user/self (starting from the stored user) and keeps the stored copy's display fields fresh. */
export function useSelf(): { self: SelfUser | null; loading: boolean; reload: () => Promise<void> } {
  const notify = useNotify();
  const translate = useTranslate();
  const queryClient = useQueryClient();
  const [stored] = useState<SelfUser | null>(() => getUser() as SelfUser | null);
  const query = useQuery({
    queryKey: SELF_KEY,
    queryFn: async () => {
      const r = await api().get<SelfUser>('/api/user/self');
      // An empty answer keeps the user already shown.
      if (!r.data) return queryClient.getQueryData<SelfUser | null>(SELF_KEY) ?? null;
      storeSelf(r.data);
      return r.data;
    },
    ...LOAD_ONCE,
  });
  useQueryError(query, (err) => notify(errorText(err, translate), { type: 'error' }));
  const { refetch } = query;
  const reload = useCallback(async () => {
    await refetch();
  }, [refetch]);
  return { self: query.data ?? stored, loading: query.isFetching, reload };
}
