import { useCallback, useEffect, useState } from 'react';

/** A seconds countdown (email-code resend, reset retry: 30 s). */
export function useCountdown(): [number, (seconds: number) => void] {
  const [left, setLeft] = useState(0);
  useEffect(() => {
    if (left <= 0) return;
    const t = setTimeout(() => setLeft((n) => n - 1), 1000);
    return () => clearTimeout(t);
  }, [left]);
  const start = useCallback((s: number) => setLeft(s), []);
  return [left, start];
}
