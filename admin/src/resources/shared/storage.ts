import { useCallback, useState } from 'react';

/** Reads a JSON value stored locally, falling back to `fallback` when missing or malformed. */
export function readLocal<T>(key: string, fallback: T): T {
  try {
    const raw = localStorage.getItem(key);
    if (raw == null) return fallback;
    return JSON.parse(raw) as T;
  } catch {
    return fallback;
  }
}

export function writeLocal(key: string, value: unknown): void {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    /* storage full or disabled: keep the in-memory value only */
  }
}

/** useState persisted to localStorage (id-sort preference, column visibility…). */
export function useLocalState<T>(key: string, fallback: T): [T, (v: T) => void] {
  const [value, setValue] = useState<T>(() => readLocal(key, fallback));
  const set = useCallback(
    (v: T) => {
      setValue(v);
      writeLocal(key, v);
    },
    [key],
  );
  return [value, set];
}
