import type { KV } from './kv';

/**
 * A per-process read-through cache whose entries are dropped on every node when `invalidate` is
 * called (broadcast through the KV's pub/sub). Used for hot lookups on the relay path (token by
 * key, user by id, channels) so a request costs no query once warm.
 */
export class LocalCache<V> {
  private readonly map = new Map<string, { value: V; expiresAt: number }>();
  private readonly channel: string;

  constructor(
    private readonly kv: KV,
    name: string,
    private readonly ttlMs = 60_000,
    private readonly maxEntries = 100_000,
  ) {
    this.channel = `invalidate:${name}`;
    kv.subscribe(this.channel, (key) => {
      if (key === '*') this.map.clear();
      else this.map.delete(key);
    });
  }

  async get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.map.get(key);
    if (hit && hit.expiresAt > Date.now()) return hit.value;
    const value = await load();
    if (this.map.size >= this.maxEntries) this.map.clear();
    this.map.set(key, { value, expiresAt: Date.now() + this.ttlMs });
    return value;
  }

  peek(key: string): V | undefined {
    const hit = this.map.get(key);
    return hit && hit.expiresAt > Date.now() ? hit.value : undefined;
  }

  /** Drops a key (or '*' for all) here and on every other node. */
  async invalidate(key: string | number): Promise<void> {
    const k = String(key);
    if (k === '*') this.map.clear();
    else this.map.delete(k);
    await this.kv.publish(this.channel, k);
  }
}
