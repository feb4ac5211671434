import type { AppContext } from '../context';
import { RateLimitError } from '../lib/errors';

/**
 * Fixed-window counter in the shared KV (Redis script when configured, so the limit is global
 * across nodes). The services limit what they must with it; middleware/rateLimit.ts limits a whole
 * route by it, `keyOf` picking what is limited (IP, user, …).
 */
export async function hitLimit(app: AppContext, key: string, limit: number, windowSeconds: number): Promise<void> {
  if (limit <= 0) return;
  const n = await app.kv.incr(`rl:${key}`, windowSeconds);
  if (n > limit) {
    const ttl = await app.kv.ttl(`rl:${key}`);
    throw new RateLimitError('common.rate_limited', ttl > 0 ? ttl : windowSeconds);
  }
}
