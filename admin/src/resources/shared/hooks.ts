import { useCallback, useEffect, useMemo, useState } from 'react';
import { useStatus } from '../../lib/StatusContext';
import { useLocation, useMatch, useNavigate } from 'react-router-dom';
import { useCreatePath, useNotify, useTranslate } from 'react-admin';
import { readDisplaySettings, type DisplaySettings } from './format';
import { errorText, useApi } from './api';

/**
 * Route-driven drawers: /<resource>/create opens the create drawer, /<resource>/<id> the edit drawer.
 * The list stays mounted underneath (Resource registers no edit/create route, so these paths reach the list);
 * the query string (the list's filters and page) goes along so the list keeps them.
 */
export function useRouteDrawer(resource: string) {
  const navigate = useNavigate();
  const createPath = useCreatePath();
  const base = createPath({ resource, type: 'list' });
  const createMatch = useMatch(`${base}/create`);
  const editMatch = useMatch(`${base}/:id`);
  const editId = editMatch && editMatch.params.id !== 'create' ? editMatch.params.id : undefined;
  const { search } = useLocation();
  const close = useCallback(() => navigate({ pathname: base, search }), [navigate, base, search]);
  const openCreate = useCallback(() => navigate({ pathname: `${base}/create`, search }), [navigate, base, search]);
  const openEdit = useCallback((id: string | number) => navigate({ pathname: `${base}/${id}`, search }), [navigate, base, search]);
  return { creating: !!createMatch, editId, close, openCreate, openEdit };
}

/** Display settings (currency display, quota per unit) from the cached status. */
export function useDisplaySettings(): DisplaySettings {
  const { status } = useStatus();
  return useMemo(() => {
    const cached = readDisplaySettings();
    const qpu = Number(status.quota_per_unit);
    return {
      displayInCurrency: typeof status.display_in_currency === 'boolean' ? status.display_in_currency : cached.displayInCurrency,
      quotaPerUnit: Number.isFinite(qpu) && qpu > 0 ? qpu : cached.quotaPerUnit,
    };
  }, [status]);
}

/** Loads a list of options from an endpoint once (groups, models…). */
export function useOptionsFrom<T>(path: string | null, map: (data: unknown) => T[], deps: unknown[] = []): T[] {
  const api = useApi();
  const [items, setItems] = useState<T[]>([]);
  useEffect(() => {
    if (!path) return;
    let alive = true;
    api
      .get(path)
      .then((r) => {
        if (alive && r.success) setItems(map(r.data));
      })
      .catch(() => undefined);
    return () => {
      alive = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- callers pass an inline `map` and list their own re-fetch triggers in `deps`
  }, [api, path, ...deps]);
  return items;
}

/** Notifies an error (server message, or the generic handler's translated text). */
export function useNotifyError() {
  const notify = useNotify();
  const translate = useTranslate();
  return useCallback(
    (err: unknown) =>
      notify(
        errorText(err, (k, o) => translate(k, o)),
        { type: 'error' },
      ),
    [notify, translate],
  );
}
