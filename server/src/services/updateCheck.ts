import type { AppContext } from '../context';
import { msg } from '../i18n';
import { BadRequestError } from '../lib/errors';
import { fetchPolicy, guardedFetch } from '../lib/guardedFetch';

/** What the console shows after an update check. */
export interface UpdateInfo {
  current: string;
  latest: string;
  url: string;
  newer: boolean;
}

/** How long a feed answer is kept (all nodes share it through the KV). */
const CACHE_SECONDS = 3600;

/** Is `latest` (a release tag like v1.2.3) newer than `current`? Unparseable → different text = newer. */
export function isNewerVersion(current: string, latest: string): boolean {
  const nums = (v: string) => (v.replace(/^v/i, '').match(/\d+/g) ?? []).map(Number);
  const a = nums(current);
  const b = nums(latest);
  if (!a.length || !b.length) return !!latest && latest !== current;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (y !== x) return y > x;
  }
  return false;
}

/**
 * The newest release in a feed: a GitHub-style "latest release" object (`tag_name`, `html_url`),
 * or a list of them (the first that is neither a draft nor a pre-release).
 */
function latestRelease(data: unknown): { tag: string; url: string } | undefined {
  const pick = (r: unknown) => {
    if (!r || typeof r !== 'object') return undefined;
    const o = r as Record<string, unknown>;
    if (o.draft === true || o.prerelease === true) return undefined;
    const tag = typeof o.tag_name === 'string' ? o.tag_name.trim() : typeof o.version === 'string' ? o.version.trim() : '';
    if (!tag) return undefined;
    const url = typeof o.html_url === 'string' && /^https?:\/\//i.test(o.html_url) ? o.html_url : '';
    return { tag: tag.slice(0, 100), url: url.slice(0, 2048) };
  };
  if (Array.isArray(data)) {
    for (const r of data) {
      const found = pick(r);
      if (found) return found;
    }
    return undefined;
  }
  return pick(data);
}

/**
 * Compares this server's version with the newest release of the project's own feed
 * (UpdateCheckUrl). The server fetches it (the root set the URL: the operator's fetch rule) and
 * keeps the answer an hour. No feed configured: refused, the console hides the check.
 */
export async function checkForUpdate(app: AppContext): Promise<UpdateInfo> {
  const feed = app.options.get('UpdateCheckUrl').trim();
  if (!feed) throw new BadRequestError('update.no_feed');
  const current = app.config.version;
  const key = `update_check:${feed}`;
  let release: { tag: string; url: string } | undefined;
  const hit = await app.kv.get(key);
  if (hit) release = JSON.parse(hit) as { tag: string; url: string };
  else {
    const res = await guardedFetch(app, feed, {
      headers: { accept: 'application/json', 'user-agent': `ai-gateway/${current}` },
      timeoutMs: 10_000,
      maxBytes: 1024 * 1024,
      policy: fetchPolicy(app, 'operator'),
    });
    if (res.status >= 400) throw new BadRequestError(msg('update.feed_status', { status: res.status }));
    let data: unknown;
    try {
      data = JSON.parse(res.text());
    } catch {
      data = undefined;
    }
    release = latestRelease(data);
    if (!release) throw new BadRequestError('update.no_release');
    await app.kv.set(key, JSON.stringify(release), CACHE_SECONDS);
  }
  return { current, latest: release.tag, url: release.url, newer: isNewerVersion(current, release.tag) };
}
