import net from 'node:net';

/** A parsed `allow_ips` list (one IP or CIDR per line; commas accepted too). */
export interface IpAllowList {
  readonly size: number;
  allows(ip: string): boolean;
}

/** Strips IPv4-mapped IPv6 (::ffff:1.2.3.4) and zone ids. */
export function normaliseIp(ip: string): string {
  let s = ip.trim();
  if (s.startsWith('::ffff:') && net.isIPv4(s.slice(7))) s = s.slice(7);
  const pct = s.indexOf('%');
  if (pct >= 0) s = s.slice(0, pct);
  return s;
}

/** Returns null for an empty list (everything allowed). Unparseable entries are ignored. */
export function parseAllowIps(text: string | null | undefined): IpAllowList | null {
  const entries = (text ?? '')
    .split(/[\n,;\s]+/)
    .map((x) => x.trim())
    .filter(Boolean);
  if (!entries.length) return null;
  const list = new net.BlockList();
  let size = 0;
  for (const e of entries) {
    const [addrRaw, bits] = e.split('/');
    const addr = normaliseIp(addrRaw ?? '');
    const fam = net.isIPv4(addr) ? 'ipv4' : net.isIPv6(addr) ? 'ipv6' : null;
    if (!fam) continue;
    try {
      if (bits !== undefined) {
        const prefix = Number(bits);
        if (!Number.isInteger(prefix) || prefix < 0 || prefix > (fam === 'ipv4' ? 32 : 128)) continue;
        list.addSubnet(addr, prefix, fam);
      } else list.addAddress(addr, fam);
      size++;
    } catch {
      /* skip */
    }
  }
  return {
    size,
    allows(ipRaw: string) {
      const ip = normaliseIp(ipRaw);
      if (net.isIPv4(ip)) return list.check(ip, 'ipv4');
      if (net.isIPv6(ip)) return list.check(ip, 'ipv6');
      return false;
    },
  };
}

/**
 * Which proxies in front of the gateway are trusted to report the client address
 * (TRUST_PROXY / TRUST_PROXY_CIDRS). `hops`: that many addresses, counted from the socket's peer
 * leftwards through X-Forwarded-For, are our own proxies; `cidrs`: addresses in these ranges are
 * our proxies wherever they appear. Both empty: X-Forwarded-For is ignored.
 */
export interface ProxyTrust {
  readonly hops: number;
  readonly cidrs: IpAllowList | null;
}

export const NO_PROXY_TRUST: ProxyTrust = { hops: 0, cidrs: null };

/** `TRUST_PROXY`: unset/false/0 → 0, true → 1, a whole number n → n hops. Anything else throws. */
export function parseProxyTrust(hopsText: string | undefined, cidrText: string | undefined): ProxyTrust {
  const h = (hopsText ?? '').trim().toLowerCase();
  let hops: number;
  if (h === '' || h === 'false' || h === '0') hops = 0;
  else if (h === 'true') hops = 1;
  else if (/^\d{1,2}$/.test(h)) hops = Number(h);
  else throw new Error(`TRUST_PROXY must be true, false or a number of proxy hops, not "${hopsText}"`);
  const cidrs = parseAllowIps(cidrText);
  if (cidrText?.trim() && !cidrs?.size) throw new Error('TRUST_PROXY_CIDRS has no valid IP or CIDR');
  return { hops, cidrs: cidrs?.size ? cidrs : null };
}

/** True when X-Forwarded-For is read at all (Koa's `proxy` flag: X-Forwarded-Proto/Host too). */
export const trustsProxies = (t: ProxyTrust): boolean => t.hops > 0 || t.cidrs !== null;

/**
 * The client address for a request: the address the nearest untrusted hop had, as seen by our
 * trusted proxies. X-Forwarded-For is walked from the RIGHT (the entries our proxies appended)
 * past every trusted proxy; entries further left were written by the client and are ignored, so
 * a client cannot choose its own address by sending X-Forwarded-For. An entry that is not an IP
 * stops the walk at the last trusted address (no proxy of ours writes one). Used by the relay and
 * the console API alike.
 */
export function clientIp(socketAddress: string | undefined, xff: string | string[] | undefined, trust: ProxyTrust): string {
  const peer = socketAddress ?? '';
  if (trust.hops <= 0 && !trust.cidrs) return peer;
  const header = Array.isArray(xff) ? xff.join(',') : xff;
  if (!header) return peer;
  const entries = header.split(',');
  let current = peer;
  let pos = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const trusted = pos < trust.hops || (trust.cidrs !== null && trust.cidrs.allows(current));
    if (!trusted) break;
    const next = normaliseIp(entries[i] ?? '');
    if (!net.isIP(next)) break;
    current = next;
    pos++;
  }
  return current;
}
