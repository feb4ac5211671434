import type { AppContext } from '../context';
import { msg, type MessageParam } from '../i18n';
import { BadRequestError } from '../lib/errors';
import { checkHost, fetchPolicy, FetchRefusedError, type FetchAudience } from '../lib/guardedFetch';
import { ROLE } from '../repositories/users';

/**
 * Where a channel may point. The relay itself is not guarded (a local Ollama on 127.0.0.1 is a
 * normal root choice), so the rule is applied when a channel is saved and again when the console
 * makes a call with it (test, fetch models, balance):
 * - root ("operator" policy): any address but link-local / cloud metadata (169.254.0.0/16,
 *   fe80::/10), unless root allowed those (`fetch_setting.allow_link_local_enabled`);
 * - admin ("admin" policy): public addresses only (the IP allow list can open chosen ones).
 * The base URL, the proxy and a Vertex key's `token_uri` are all destinations.
 */
export const audienceOf = (role: number): FetchAudience => (role >= ROLE.root ? 'operator' : 'admin');

/** Host names a channel's fields point at: base URL, proxy (any scheme), key's token_uri. */
export interface ChannelHost {
  what: MessageParam;
  host: string;
  /** scheme://host:port, to tell a changed destination (another port of the same host too). */
  origin: string;
}

export function channelHosts(fields: { base_url?: string | null; setting?: string | null; key?: string | null }): ChannelHost[] {
  const out: ChannelHost[] = [];
  const add = (what: MessageParam, raw: unknown) => {
    if (typeof raw !== 'string' || !raw.trim()) return;
    let u: URL;
    try {
      u = new URL(raw.trim());
    } catch {
      throw new BadRequestError(msg('channel.bad_address', { what }));
    }
    if (u.hostname) out.push({ what, host: u.hostname, origin: `${u.protocol}//${u.host}` });
  };
  add('Base URL', fields.base_url);
  const setting = parseObject(fields.setting);
  if (setting) add(msg('channel.field_proxy'), setting.proxy);
  const key = parseObject(fields.key);
  if (key && typeof key.token_uri === 'string' && /^https?:\/\//.test(key.token_uri)) add(msg('channel.field_token_uri'), key.token_uri);
  return out;
}

function parseObject(s: string | null | undefined): Record<string, unknown> | undefined {
  if (!s || !s.trim().startsWith('{')) return undefined;
  try {
    const v: unknown = JSON.parse(s);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Refuses a channel save whose destinations the actor may not use. A name that does not resolve
 * now is let through (the call-time check still applies); a refusal names the field and why.
 */
export async function vetChannelHosts(app: AppContext, hosts: ChannelHost[], role: number): Promise<void> {
  const audience = audienceOf(role);
  const policy = fetchPolicy(app, audience);
  for (const { what, host } of hosts) {
    try {
      await checkHost(app, host, policy);
    } catch (err) {
      if (!(err instanceof FetchRefusedError)) continue;
      const hint = msg(audience === 'admin' ? 'channel.private_root_only' : 'channel.metadata_needs_setting');
      throw new BadRequestError(msg('channel.target_refused', { what, reason: err.msg, hint }));
    }
  }
}
