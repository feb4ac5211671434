import { EventEmitter } from 'node:events';
import type Redis from 'ioredis';

/**
 * Shared key-value store: Redis when configured (global across nodes), in-process otherwise.
 * Everything that must be global (verification codes, reset tokens, oauth states, rate-limit
 * counters, cache invalidation) goes through this.
 */
export interface KV {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSeconds?: number): Promise<void>;
  /** Sets only when absent; true when this call set it. */
  setNX(key: string, value: string, ttlSeconds: number): Promise<boolean>;
  /** Reads and deletes atomically (one-time codes); null when absent. */
  take(key: string): Promise<string | null>;
  del(key: string): Promise<void>;
  /** Increments a counter; the TTL is set when the counter is created. Returns the new value. */
  /** Takes 1 back from a counter made by incr (a refund); nothing when the key is gone. */
  decr(key: string): Promise<void>;
  incr(key: string, ttlSeconds: number): Promise<number>;
  /** Seconds left on a key (-2 absent, -1 no expiry). */
  ttl(key: string): Promise<number>;
  /** Fire-and-forget broadcast to every node (including this one). */
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, handler: (message: string) => void): void;
  /** Underlying Redis client (for scripts), when kind is 'redis'. */
  readonly redis?: Redis;
  readonly prefix: string;
  close(): Promise<void>;
}

interface Entry {
  value: string;
  expiresAt: number; // ms epoch, 0 = never
}

export class MemoryKV implements KV {
  readonly kind = 'memory' as const;
  readonly prefix = '';
  private readonly map = new Map<string, Entry>();
  private readonly bus = new EventEmitter();
  private readonly sweeper: NodeJS.Timeout;

  constructor() {
    this.bus.setMaxListeners(0);
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  private live(key: string): Entry | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    if (e.expiresAt && e.expiresAt <= Date.now()) {
      this.map.delete(key);
      return undefined;
    }
    return e;
  }

  private sweep() {
    const now = Date.now();
    for (const [k, e] of this.map) if (e.expiresAt && e.expiresAt <= now) this.map.delete(k);
  }

  async get(key: string) {
    return this.live(key)?.value ?? null;
  }
  async set(key: string, value: string, ttlSeconds?: number) {
    this.map.set(key, { value, expiresAt: ttlSeconds ? Date.now() + ttlSeconds * 1000 : 0 });
  }
  async setNX(key: string, value: string, ttlSeconds: number) {
    if (this.live(key)) return false;
    await this.set(key, value, ttlSeconds);
    return true;
  }
  async take(key: string) {
    const e = this.live(key);
    this.map.delete(key);
    return e?.value ?? null;
  }
  async del(key: string) {
    this.map.delete(key);
  }
  async incr(key: string, ttlSeconds: number) {
    const e = this.live(key);
    if (!e) {
      this.map.set(key, { value: '1', expiresAt: Date.now() + ttlSeconds * 1000 });
      return 1;
    }
    const n = Number(e.value) + 1;
    e.value = String(n);
    return n;
  }
  async decr(key: string) {
    const e = this.live(key);
    if (e) e.value = String(Number(e.value) - 1);
  }
  async ttl(key: string) {
    const e = this.live(key);
    if (!e) return -2;
    if (!e.expiresAt) return -1;
    return Math.ceil((e.expiresAt - Date.now()) / 1000);
  }
  async publish(channel: string, message: string) {
    this.bus.emit(channel, message);
  }
  subscribe(channel: string, handler: (message: string) => void) {
    this.bus.on(channel, handler);
  }
  async close() {
    clearInterval(this.sweeper);
    this.bus.removeAllListeners();
    this.map.clear();
  }
}

const INCR_WITH_TTL = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n`;

// DECR only an existing key: a plain DECR after expiry would leave a counter without a TTL.
const DECR_IF_EXISTS = `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end
return 0`;

export class RedisKV implements KV {
  readonly kind = 'redis' as const;
  readonly redis: Redis;
  private sub?: Redis;
  private readonly handlers = new Map<string, Array<(m: string) => void>>();

  constructor(
    url: string,
    readonly prefix: string,
  ) {
    // Required here, not at the top: deployments without Redis never load the client.
    const RedisClient = require('ioredis') as typeof Redis; // eslint-disable-line @typescript-eslint/no-require-imports -- loaded only when REDIS_URL is set (memory)
    this.redis = new RedisClient(url, { maxRetriesPerRequest: 3, enableAutoPipelining: true, lazyConnect: false });
    this.redis.defineCommand('incrWithTtl', { numberOfKeys: 1, lua: INCR_WITH_TTL });
    this.redis.defineCommand('decrIfExists', { numberOfKeys: 1, lua: DECR_IF_EXISTS });
  }

  private k(key: string) {
    return this.prefix + key;
  }
  async get(key: string) {
    return this.redis.get(this.k(key));
  }
  async set(key: string, value: string, ttlSeconds?: number) {
    if (ttlSeconds) await this.redis.set(this.k(key), value, 'EX', ttlSeconds);
    else await this.redis.set(this.k(key), value);
  }
  async setNX(key: string, value: string, ttlSeconds: number) {
    return (await this.redis.set(this.k(key), value, 'EX', ttlSeconds, 'NX')) === 'OK';
  }
  async take(key: string) {
    return this.redis.getdel(this.k(key));
  }
  async del(key: string) {
    await this.redis.del(this.k(key));
  }
  async incr(key: string, ttlSeconds: number) {
    const r = await (this.redis as unknown as { incrWithTtl(k: string, ttl: number): Promise<number> }).incrWithTtl(this.k(key), ttlSeconds);
    return Number(r);
  }
  async decr(key: string) {
    await (this.redis as unknown as { decrIfExists(k: string): Promise<number> }).decrIfExists(this.k(key));
  }
  async ttl(key: string) {
    return this.redis.ttl(this.k(key));
  }
  async publish(channel: string, message: string) {
    await this.redis.publish(this.k(channel), message);
  }
  subscribe(channel: string, handler: (message: string) => void) {
    if (!this.sub) {
      this.sub = this.redis.duplicate();
      this.sub.on('message', (ch: string, msg: string) => {
        for (const h of this.handlers.get(ch) ?? []) h(msg);
      });
    }
    const ch = this.k(channel);
    const list = this.handlers.get(ch) ?? [];
    // A subscribe still in flight when the app closes is rejected ("Connection is closed"): that
    // is expected then, not an error worth an unhandled rejection.
    if (!list.length)
      this.sub.subscribe(ch).catch((err: Error) => {
        if (!this.closing) this.onSubscribeError?.(err);
      });
    list.push(handler);
    this.handlers.set(ch, list);
  }
  private closing = false;
  /** Called when a subscription fails while the KV is open (logged by the owner). */
  onSubscribeError?: (err: Error) => void;
  async close() {
    this.closing = true;
    this.handlers.clear();
    if (this.sub) this.sub.disconnect();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

export function createKV(redisUrl: string | undefined, prefix: string): KV {
  return redisUrl ? new RedisKV(redisUrl, prefix) : new MemoryKV();
}
