/**
 * Chat links of the chat page and the chat redirect page: which configured link to frame, the
 * token it carries, the placeholders it fills. Pure, tested in chatLinks.test.ts.
 */

export interface TokenLike {
  id: number;
  status: number;
}

/**
 * The id of the first enabled token (status 1) of the list, or undefined. Lists carry masked keys:
 * the page then asks for that token's key (POST /api/token/:id/key, see `plainKey`).
 */
export function firstEnabledTokenId(tokens: readonly TokenLike[] | null | undefined): number | undefined {
  const t = (tokens ?? []).find((x) => x && Number(x.status) === 1 && Number.isInteger(Number(x.id)) && Number(x.id) > 0);
  return t ? Number(t.id) : undefined;
}

/** A key answer as the links use it: without its `sk-` prefix; undefined when the answer has none. */
export function plainKey(answer: unknown): string | undefined {
  const key = answer && typeof answer === 'object' ? (answer as { key?: unknown }).key : undefined;
  return typeof key === 'string' && key ? key.replace(/^sk-/, '') : undefined;
}

export type LinkResult = { ok: true; url: string; name: string } | { ok: false; error: 'parse' | 'none' | 'misconfigured' };

/**
 * The configured link number `id` of the `chats` option (a JSON list of `{ name: url }`).
 * Unreadable → 'parse' (聊天数据解析失败); empty → 'none' (请联系管理员配置聊天链接);
 * no such entry, or an entry without a URL → 'misconfigured' (聊天链接配置错误，请联系管理员).
 */
export function chatLinkAt(chats: unknown, id: string | number | undefined): LinkResult {
  let list: unknown = chats;
  if (typeof chats === 'string') {
    if (!chats.trim()) return { ok: false, error: 'none' };
    try {
      list = JSON.parse(chats);
    } catch {
      return { ok: false, error: 'parse' };
    }
  }
  if (list === null || list === undefined) return { ok: false, error: 'none' };
  if (!Array.isArray(list)) return { ok: false, error: 'parse' };
  if (list.length === 0) return { ok: false, error: 'none' };
  const idx = id === undefined || id === '' ? 0 : Number(id);
  if (!Number.isInteger(idx) || idx < 0 || idx >= list.length) return { ok: false, error: 'misconfigured' };
  const entry = list[idx];
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return { ok: false, error: 'misconfigured' };
  const pairs = Object.entries(entry as Record<string, unknown>);
  if (pairs.length === 0) return { ok: false, error: 'misconfigured' };
  const [name, url] = pairs[0]!;
  if (typeof url !== 'string' || !url.trim()) return { ok: false, error: 'misconfigured' };
  return { ok: true, name, url: url.trim() };
}

/**
 * Fills a link's placeholders like new-api: `{key}` → `sk-<key>`, `{address}` → the server address
 * (URL-encoded: it usually sits inside a query or fragment).
 */
export function fillLink(link: string, key: string, address: string): string {
  return link.split('{key}').join(`sk-${key}`).split('{address}').join(encodeURIComponent(address));
}

/** A link the page may open: http(s) or relative, never javascript: and the like. */
export function isSafeLink(link: string): boolean {
  const l = link.trim();
  if (/^https?:\/\//i.test(l)) return true;
  if (/^[a-z][a-z0-9+.-]*:/i.test(l)) return false;
  return l.startsWith('/') && !l.startsWith('//');
}

/** The server address: the ServerAddress option, else this page's origin (trailing slash dropped). */
export function serverAddress(configured: unknown, origin: string): string {
  const s = typeof configured === 'string' ? configured.trim() : '';
  return (s || origin).replace(/\/+$/, '');
}

/**
 * The redirect page's target: the site's chat link (status chat_link) in the ChatGPT-Next-Web
 * settings form new-api uses, else the first configured chat link with its placeholders filled.
 */
export function chat2Link(opts: { chatLink?: unknown; chats?: unknown; key: string; address: string }): LinkResult {
  const base = typeof opts.chatLink === 'string' ? opts.chatLink.trim().replace(/\/+$/, '') : '';
  if (base) {
    const settings = JSON.stringify({ key: `sk-${opts.key}`, url: opts.address });
    return { ok: true, name: 'chat_link', url: `${base}/#/?settings=${encodeURIComponent(settings)}` };
  }
  const first = chatLinkAt(opts.chats, 0);
  if (!first.ok) return first;
  return { ...first, url: fillLink(first.url, opts.key, opts.address) };
}

/** Where a chat page stands: waiting, failed (an i18n key or a server message; `toTokens` when the user has no enabled token), or ready. */
export type ChatTarget = { kind: 'loading' } | { kind: 'error'; message: string; toTokens?: boolean } | { kind: 'ready'; url: string; name: string };

const LINK_ERROR_KEYS: Record<Exclude<LinkResult, { ok: true }>['error'], string> = {
  parse: 'feat.chat.parse_failed',
  none: 'feat.chat.no_links',
  misconfigured: 'feat.chat.misconfigured',
};

/**
 * The chat target from the link builder and the first enabled token: the configuration is checked
 * first (`build('', '')`, no tokens needed for a broken link), then the key (`undefined` while it
 * loads, `null` for none), then the built link, which must be http(s).
 */
export function chatTarget(
  build: (key: string, address: string) => LinkResult,
  key: string | null | undefined,
  address: string,
  keyError?: string,
): ChatTarget {
  const probe = build('', '');
  if (!probe.ok) return { kind: 'error', message: LINK_ERROR_KEYS[probe.error] };
  if (keyError !== undefined) return { kind: 'error', message: keyError };
  if (key === undefined) return { kind: 'loading' };
  if (!key) return { kind: 'error', message: 'feat.chat.no_token', toTokens: true };
  const result = build(key, address);
  if (!result.ok) return { kind: 'error', message: LINK_ERROR_KEYS[result.error] };
  if (!isSafeLink(result.url)) return { kind: 'error', message: LINK_ERROR_KEYS.misconfigured };
  return { kind: 'ready', url: result.url, name: result.name };
}
