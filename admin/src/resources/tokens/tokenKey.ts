import { api } from '../../lib/http';

/**
 * The whole key of one of the user's tokens, as clients send it (`sk-…`). Lists and reads carry
 * the key masked; the copy buttons ask for it here, one call per key (POST /api/token/:id/key,
 * limited per user and written to the user's logs).
 */
export async function fetchTokenKey(id: number | string): Promise<string> {
  const res = await api().post<{ key?: unknown }>(`/api/token/${encodeURIComponent(String(id))}/key`);
  const key = res.data?.key;
  if (typeof key !== 'string' || !key) throw new Error('no key in the answer');
  return `sk-${key.replace(/^sk-/, '')}`;
}
