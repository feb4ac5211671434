import net from 'node:net';

/**
 * IP address parsing and classification for the outbound-fetch guard. Addresses are compared as
 * byte arrays (4 or 16 bytes); IPv6 forms that carry an IPv4 address (mapped ::ffff:a.b.c.d,
 * compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by that IPv4 address, so
 * `::ffff:127.0.0.1` is loopback like `127.0.0.1`.
 */

export type AddressKind = 'loopback' | 'private' | 'link-local' | 'cgnat' | 'multicast' | 'broadcast' | 'unspecified' | 'reserved';

export interface Cidr {
  bytes: Uint8Array;
  prefix: number;
}

function parseV4(s: string): Uint8Array | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    out[i] = Number(p);
  }
  return out;
}

function parseV6(input: string): Uint8Array | undefined {
  let s = input.replace(/^\[|\]$/g, '');
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (net.isIPv6(s) === false) return undefined;
  let tail: Uint8Array | undefined;
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    tail = parseV4(s.slice(lastColon + 1));
    if (!tail) return undefined;
    s = `${s.slice(0, lastColon + 1)}0:0`;
  }
  const halves = s.split('::');
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length > 1 ? groups(halves[1]!) : [];
  const fill = 8 - head.length - rest.length;
  const all = halves.length > 1 ? [...head, ...Array<string>(fill).fill('0'), ...rest] : head;
  if (all.length !== 8) return undefined;
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    const v = parseInt(g, 16);
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  });
  if (tail) out.set(tail, 12);
  return out;
}

/** Bytes of an IP literal (IPv4 dotted quad or IPv6, brackets allowed), else undefined. */
export function parseIp(s: string): Uint8Array | undefined {
  return net.isIPv4(s) ? parseV4(s) : parseV6(s);
}

const zeros = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0);

/** The IPv4 address an IPv6 address stands for (mapped, compatible, NAT64, 6to4), if any. */
export function embeddedV4(b: Uint8Array): Uint8Array | undefined {
  if (b.length !== 16) return undefined;
  if (zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return b.slice(12);
  // ::a.b.c.d (deprecated "compatible" form), but not :: and ::1 themselves.
  if (zeros(b, 0, 12) && !zeros(b, 12, 15)) return b.slice(12);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(b, 4, 12)) return b.slice(12);
  if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6);
  return undefined;
}

export function inCidr(b: Uint8Array, c: Cidr): boolean {
  if (b.length !== c.bytes.length) {
    const v4 = b.length === 16 ? embeddedV4(b) : undefined;
    return v4 ? inCidr(v4, c) : false;
  }
  let bits = c.prefix;
  for (let i = 0; i < b.length && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((b[i]! & mask) !== (c.bytes[i]! & mask)) return false;
  }
  return true;
}

/** Parses "10.0.0.0/8", "fd00::/8" or a single address (a /32 or /128). Undefined when invalid. */
export function parseCidr(s: string): Cidr | undefined {
  const [addr, len, extra] = s.trim().split('/');
  if (extra !== undefined || !addr) return undefined;
  const bytes = parseIp(addr);
  if (!bytes) return undefined;
  const max = bytes.length * 8;
  if (len === undefined) return { bytes, prefix: max };
  if (!/^\d{1,3}$/.test(len) || Number(len) > max) return undefined;
  return { bytes, prefix: Number(len) };
}

const c = (s: string) => parseCidr(s)!;
const RANGES: Array<[Cidr, AddressKind]> = [
  [c('0.0.0.0/8'), 'unspecified'],
  [c('10.0.0.0/8'), 'private'],
  [c('100.64.0.0/10'), 'cgnat'],
  [c('127.0.0.0/8'), 'loopback'],
  [c('169.254.0.0/16'), 'link-local'],
  [c('172.16.0.0/12'), 'private'],
  [c('192.0.0.0/24'), 'reserved'],
  [c('192.0.2.0/24'), 'reserved'],
  [c('192.168.0.0/16'), 'private'],
  [c('198.18.0.0/15'), 'reserved'],
  [c('198.51.100.0/24'), 'reserved'],
  [c('203.0.113.0/24'), 'reserved'],
  [c('224.0.0.0/4'), 'multicast'],
  [c('255.255.255.255/32'), 'broadcast'],
  [c('240.0.0.0/4'), 'reserved'],
  [c('::/128'), 'unspecified'],
  [c('::1/128'), 'loopback'],
  [c('100::/64'), 'reserved'],
  [c('2001:db8::/32'), 'reserved'],
  [c('fc00::/7'), 'private'],
  [c('fe80::/10'), 'link-local'],
  [c('fec0::/10'), 'private'],
  [c('ff00::/8'), 'multicast'],
];

/** The non-public range an address is in, or undefined for a public address. */
export function classifyIp(b: Uint8Array): AddressKind | undefined {
  const v4 = b.length === 16 ? embeddedV4(b) : undefined;
  const target = v4 ?? b;
  for (const [range, kind] of RANGES) if (range.bytes.length === target.length && inCidr(target, range)) return kind;
  return undefined;
}
