import type { AppContext } from '../context';
import { msg } from '../i18n';
import { RateLimitError } from '../lib/errors';

/**
 * Per-user model request limits (operation settings → rate limit):
 * `ModelRequestRateLimitCount` requests of any outcome and `ModelRequestRateLimitSuccessCount`
 * successful requests per `ModelRequestRateLimitDurationMinutes`, as sliding windows.
 * On Redis each check is one Lua script (atomic, global across nodes); otherwise in process.
 */

const CHECK_AND_ADD = `
local key, now, window, limit, member = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local n = redis.call('ZCARD', key)
if limit > 0 and n >= limit then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return {0, tonumber(oldest[2]) + window - now}
end
if member ~= '' then redis.call('ZADD', key, now, member) end
redis.call('PEXPIRE', key, window)
return {1, 0}`;

interface Window {
  /** true when allowed; retryAfterMs otherwise. `add` records this request in the window. */
  check(key: string, limit: number, windowMs: number, add: boolean): Promise<{ ok: boolean; retryAfterMs: number }>;
}

function memoryWindow(): Window {
  const hits = new Map<string, number[]>();
  return {
    async check(key, limit, windowMs, add) {
      const now = Date.now();
      const list = (hits.get(key) ?? []).filter((t) => t > now - windowMs);
      if (limit > 0 && list.length >= limit) {
        hits.set(key, list);
        return { ok: false, retryAfterMs: list[0]! + windowMs - now };
      }
      if (add) list.push(now);
      hits.set(key, list);
      return { ok: true, retryAfterMs: 0 };
    },
  };
}

function redisWindow(app: AppContext): Window {
  const redis = app.kv.redis!;
  let seq = 0;
  return {
    async check(key, limit, windowMs, add) {
      const now = Date.now();
      const member = add ? `${now}-${process.pid}-${++seq}-${Math.random().toString(36).slice(2, 8)}` : '';
      const [ok, retry] = (await redis.eval(CHECK_AND_ADD, 1, app.kv.prefix + key, now, windowMs, limit, member)) as [number, number];
      return { ok: ok === 1, retryAfterMs: Number(retry) };
    },
  };
}

const windowOf = (app: AppContext): Window => app.memo('modelRateLimit', () => (app.kv.redis ? redisWindow(app) : memoryWindow()));

export interface RateLimitTicket {
  /** Record a successful request (counts toward the success limit). */
  success(): Promise<void>;
}

const NOOP: RateLimitTicket = { success: async () => undefined };

/**
 * Checks (and counts) one relay request for `userId`. Throws RateLimitError (429 with
 * Retry-After) when either limit is reached.
 */
export async function checkModelRateLimit(app: AppContext, userId: number): Promise<RateLimitTicket> {
  const o = app.options;
  if (!o.bool('ModelRequestRateLimitEnabled')) return NOOP;
  const minutes = o.num('ModelRequestRateLimitDurationMinutes', 1);
  if (minutes <= 0) return NOOP;
  const windowMs = minutes * 60_000;
  const total = Math.max(0, Math.trunc(o.num('ModelRequestRateLimitCount', 0)));
  const successLimit = Math.max(0, Math.trunc(o.num('ModelRequestRateLimitSuccessCount', 1000)));
  const w = windowOf(app);
  const deny = (retryAfterMs: number) => {
    throw new RateLimitError(msg('ratelimit.model', { minutes, count: total || successLimit }), Math.max(1, Math.ceil(retryAfterMs / 1000)));
  };
  if (successLimit > 0) {
    const s = await w.check(`mrl:s:${userId}`, successLimit, windowMs, false);
    if (!s.ok) deny(s.retryAfterMs);
  }
  if (total > 0) {
    const t = await w.check(`mrl:t:${userId}`, total, windowMs, true);
    if (!t.ok) deny(t.retryAfterMs);
  }
  return {
    success: async () => {
      if (successLimit > 0) await w.check(`mrl:s:${userId}`, 0, windowMs, true);
    },
  };
}
