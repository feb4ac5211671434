/**
 * `fn` memoised by its string argument: for facts derived per call from a value that a handful of
 * distinct strings take every time (a channel's base URL, a model or group name). Bounded
 * (cleared when `max` values are held), since such strings can come from clients.
 */
export function memoByString<T>(fn: (s: string) => T, max = 512): (s: string) => T {
  const memo = new Map<string, T>();
  return (s) => {
    let v = memo.get(s);
    if (v === undefined && !memo.has(s)) {
      v = fn(s);
      if (memo.size >= max) memo.clear();
      memo.set(s, v);
    }
    return v as T;
  };
}
