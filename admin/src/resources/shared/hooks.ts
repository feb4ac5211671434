import { useCallback, useEffect, useMemo, useState } from 'react';
import { useStatus } from '../../lib/StatusContext';
import { useLocation, useMatch, useNavigate } from 'react-router-dom';
import { useCreatePath, useEvent, useNotify, useTranslate } from 'react-admin';
import { readDisplaySettings, type DisplaySettings } from './format';
import { errorText } from './api';
import { api } from '../../lib/http';

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

/**
 * Options of the console's own GETs made with useQuery: one attempt per load, as these calls always
 * made (react-query's default three retries would hold an error message back for seconds), and no
 * reload when the window regains focus (a screen loads on opening, and again on a refresh).
 */
export const LOAD_ONCE = { retry: false, refetchOnWindowFocus: false } as const;

/**
 * useQuery options that read one console API answer once (`LOAD_ONCE`) under `['gateway', name]`,
 * its `data` shaped by `read`; `method` 'post' for the few state-minting calls read like a GET.
 */
export function apiQuery<T, R = T>(name: string, path: string, read: (data: T) => R = (d) => d as unknown as R, method: 'get' | 'post' = 'get') {
  return {
    queryKey: ['gateway', name],
    queryFn: () =>
      api()
        [method]<T>(path)
        .then((r) => read(r.data)),
    ...LOAD_ONCE,
  };
}

/** An answer read as text (an empty one when the server sent nothing). */
export const asText = (v: unknown): string => String(v ?? '');

/**
 * Calls `onError` once for each failed fetch of a query, when it has settled: react-query's
 * useQuery has no onError callback since v5; this is how react-admin's own useGetOne calls its one.
 */
export function useQueryError(query: { error: unknown; isFetching: boolean }, onError: (error: unknown) => void): void {
  const handler = useEvent(onError);
  const { error, isFetching } = query;
  useEffect(() => {
    if (error != null && !isFetching) handler(error);
  }, [handler, error, isFetching]);
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

/** `value`, once it has stayed the same for `ms` (a query keyed by it asks once the typing stops). */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}
