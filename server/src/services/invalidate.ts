import type { AppContext } from '../context';
import { LocalCache } from '../cache/localCache';

/**
 * The per-process caches the relay reads on every call, shared by name so that the console API
 * can drop entries on every node when it changes a row. Names are the pub/sub channels.
 */
export const tokenCache = (app: AppContext) => app.memo('cache:token', () => new LocalCache<unknown>(app.kv, 'token', 30_000));
export const userCache = (app: AppContext) => app.memo('cache:user', () => new LocalCache<unknown>(app.kv, 'user', 30_000));
/** Channels and abilities (routing table); one entry per group/model or '*' for all. */
export const channelCache = (app: AppContext) => app.memo('cache:channels', () => new LocalCache<unknown>(app.kv, 'channels', 60_000));

/** Call after any change to a token row (key = the token's 48-char key). */
export const invalidateToken = (app: AppContext, key: string) => tokenCache(app).invalidate(key);
/** Call after any change to a user row that the relay reads (status, group, quota settings…). */
export const invalidateUser = (app: AppContext, id: number) => userCache(app).invalidate(id);
/** Call after any change to channels or abilities. */
export const invalidateChannels = (app: AppContext) => channelCache(app).invalidate('*');
