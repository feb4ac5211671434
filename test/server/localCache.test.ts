/**
 * The relay's read-through caches (token by key, user, channels) are dropped on every node when
 * something changes. A load that was reading while the change landed must not be kept: it would
 * serve the old row (a revoked token, an edited channel) for the cache's whole lifetime. In
 * process, and through Redis when TEST_REDIS_URL is set (two KV connections: two nodes).
 */
import crypto from 'node:crypto';
import { LocalCache } from '../../server/src/cache/localCache';
import { createKV, type KV } from '../../server/src/cache/kv';
import { waitFor } from '../helpers/clock';

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const KVS = [{ name: 'in-process', url: undefined }, ...(process.env.TEST_REDIS_URL ? [{ name: 'redis', url: process.env.TEST_REDIS_URL }] : [])];

describe.each(KVS)('LocalCache ($name)', ({ url }) => {
  const prefix = `test:${crypto.randomBytes(6).toString('hex')}:`;
  let kvs: KV[] = [];
  /** One node's KV; in process the nodes share one (it is the process's bus). */
  const nodeKv = () => {
    const kv = url || !kvs.length ? createKV(url, prefix) : kvs[0]!;
    if (!kvs.includes(kv)) kvs.push(kv);
    return kv;
  };
  afterEach(async () => {
    await Promise.all(kvs.map((kv) => kv.close()));
    kvs = [];
  });

  it('keeps a loaded value until it is invalidated', async () => {
    const cache = new LocalCache<string>(nodeKv(), 'keep');
    let loads = 0;
    const load = async () => `v${++loads}`;
    expect(await cache.get('k', load)).toBe('v1');
    expect(await cache.get('k', load)).toBe('v1');
    await cache.invalidate('k');
    expect(await cache.get('k', load)).toBe('v2');
  });

  it('does not keep a value whose load was running when the key was invalidated', async () => {
    const cache = new LocalCache<string>(nodeKv(), 'race');
    const slow = deferred<string>();
    const pending = cache.get('k', () => slow.promise);
    await cache.invalidate('k'); // the row changes while the old one is being read
    slow.resolve('old');
    expect(await pending).toBe('old'); // that caller asked before the change
    expect(await cache.get('k', async () => 'new')).toBe('new');
    expect(await cache.get('k', async () => 'newer')).toBe('new'); // and this one is kept
  });

  it('does the same when the invalidation comes from another node', async () => {
    const hereKv = nodeKv();
    const here = new LocalCache<string>(hereKv, 'remote');
    const thereKv = nodeKv();
    const there = new LocalCache<string>(thereKv, 'remote');
    const heard: string[] = [];
    hereKv.subscribe('invalidate:remote', (m) => heard.push(m));
    // A Redis subscription starts listening a moment after it is asked for: wait until it hears.
    await waitFor(async () => {
      await thereKv.publish('invalidate:remote', 'warm-up');
      return heard.length > 0;
    });
    const slow = deferred<string>();
    const pending = here.get('k', () => slow.promise);
    await there.invalidate('*');
    await waitFor(() => heard.includes('*'));
    slow.resolve('old');
    await pending;
    expect(await here.get('k', async () => 'new')).toBe('new');
  });
});
