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
  const entries = (text ?? '').split(/[\n,;\s]+/).map((x) => x.trim()).filter(Boolean);
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
