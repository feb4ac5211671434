import { useCallback, useState } from 'react';
import { KEYS, store } from './storage';

/** Page size options of every paged list. */
export const PAGE_SIZE_OPTIONS = [10, 20, 50, 100] as const;
export const DEFAULT_PAGE_SIZE = 10;

function keyFor(scope?: string): string {
  return scope ? `${KEYS.pageSize}-${scope}` : KEYS.pageSize;
}

/** The stored page size (per list when `scope` is given, else the shared one), 10 by default. */
export function getPageSize(scope?: string): number {
  const raw = Number(store().getItem(keyFor(scope)) ?? store().getItem(KEYS.pageSize));
  return (PAGE_SIZE_OPTIONS as readonly number[]).includes(raw) ? raw : DEFAULT_PAGE_SIZE;
}

/** Remembers a page size; values outside the options are ignored. */
export function setPageSize(size: number, scope?: string): void {
  if (!(PAGE_SIZE_OPTIONS as readonly number[]).includes(size)) return;
  store().setItem(keyFor(scope), String(size));
}

/** [size, setSize] persisted locally. */
export function usePageSize(scope?: string): [number, (size: number) => void] {
  const [size, set] = useState(() => getPageSize(scope));
  const update = useCallback(
    (n: number) => {
      setPageSize(n, scope);
      set(getPageSize(scope));
    },
    [scope],
  );
  return [size, update];
}
