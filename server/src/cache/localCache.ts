import type { KV } from './kv';

/**
 * A per-process read-through cache whose entries are dropped on every node when `invalidate` is
 * called (broadcast through the KV's pub/sub). Used for hot lookups on the relay path (token by
 * key, user by id, channels) so a request costs no query once warm.
 */
export class LocalCache<V> {
  private readonly map = new Map<string, { value: V; expiresAt: number }>();
  private readonly channel: string;
  /** Counts invalidations, here or from another node: a load that saw one begin is not kept. */
  private invalidations = 0;

  constructor(
    private readonly kv: KV,
    name: string,
    private readonly ttlMs = 60_000,
    private readonly maxEntries = 100_000,
  ) {
    this.channel = `invalidate:${name}`;
    kv.subscribe(this.channel, (key) => this.drop(key));
  }

  async get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.map.get(key);
    if (hit && hit.expiresAt > Date.now()) return hit.value;
    const seen = this.invalidations;
    const value = await load();
    // Invalidated while loading: the value may have been read before the change (a token revoked,
    // a channel edited). It answers this caller, but kept it would outlive the change by the TTL.
    if (seen !== this.invalidations) return value;
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
    this.drop(k);
    await this.kv.publish(this.channel, k);
  }

  private drop(key: string): void {
    this.invalidations++;
    if (key === '*') this.map.clear();
    else this.map.delete(key);
  }
}
