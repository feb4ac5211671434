import dns from 'node:dns';
import { msg } from '../i18n';
import net from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import type { AppContext } from '../context';
import { BadRequestError } from './errors';
import { classifyIp, inCidr, parseCidr, parseIp, type AddressKind, type Cidr } from './netAddress';

/**
 * The one way the server fetches a URL it did not configure itself (webhooks, Turnstile, identity
 * providers, channel test/model/balance calls): resolve the host here, refuse addresses the policy
 * forbids, connect to exactly the address that was checked (the agent's lookup is pinned, so a
 * second DNS answer cannot swap it), follow redirects by hand re-checking every hop, cap time and
 * size. The relay to a configured channel does not come through here (see docs/security.md).
 */

export interface FetchPolicy {
  /** Off: no address, domain or port checks (time and size caps still hold). */
  protect: boolean;
  /** Private, loopback and CGNAT ranges allowed. */
  allowPrivate: boolean;
  /** Link-local (169.254/16 with the cloud metadata address, fe80::/10) allowed. */
  allowLinkLocal: boolean;
  /** Non-empty: only these names (and their subdomains). */
  domainAllow: string[];
  domainDeny: string[];
  /** Addresses/ranges allowed even when private. */
  ipAllow: Cidr[];
  ipDeny: Cidr[];
  /** Empty: any port. */
  ports: number[];
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface GuardedRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Whole call, every hop and the body included. Default 10 s. */
  timeoutMs?: number;
  /** Response body cap. Default 1 MiB. */
  maxBytes?: number;
  /** Default 3; 0 refuses any redirect. */
  maxRedirects?: number;
  signal?: AbortSignal;
  /** Default: the root options (fetchPolicy(app)). */
  policy?: FetchPolicy;
}

export interface GuardedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The URL that answered (after redirects). */
  url: string;
  text(): string;
}

/** The guard said no (address, name, port, scheme). Console: success:false with this message. */
export class FetchRefusedError extends BadRequestError {
  constructor(message: string) {
    super(msg('fetch.refused', { reason: message }), 'fetch_refused');
  }
}
/** Unreachable, timed out, too large, too many redirects. */
export class FetchFailedError extends BadRequestError {
  constructor(message: string) {
    super(msg('fetch.failed', { reason: message }), 'fetch_failed');
  }
}

export const DEFAULT_ALLOWED_PORTS = '80,443,8080,8443';

const splitEntries = (s: string) =>
  s
    .split(/[\s,]+/)
    .map((x) => x.trim().toLowerCase())
    .filter(Boolean);

/** Parses an IP/CIDR list option; invalid entries are reported by the option schema, skipped here. */
export function parseCidrList(s: string): Cidr[] {
  return splitEntries(s)
    .map(parseCidr)
    .filter((x): x is Cidr => Boolean(x));
}

/**
 * Who chose the destination decides the policy:
 * - `user`: anyone may have typed it (webhooks): every root setting applies.
 * - `admin`: an admin typed it (a channel URL, fetch-models on an unsaved form): private, loopback
 *   and link-local addresses refused whatever "private allowed" says (only the IP allow list opens
 *   them), deny lists apply, any port (upstreams listen anywhere).
 * - `operator`: root typed it (channels root saved, login providers, Turnstile): private addresses
 *   are the operator's business (a local Ollama), but link-local/metadata stays refused unless root
 *   switched that on; deny lists apply, any port.
 * Protection off: nothing is checked for anyone.
 */
export type FetchAudience = 'user' | 'admin' | 'operator';

export function fetchPolicy(app: AppContext, audience: FetchAudience = 'user'): FetchPolicy {
  return app.options.derived(`fetch:policy:${audience}`, () => {
    const allowPrivate = app.options.bool('fetch_setting.allow_private_ip_enabled');
    const linkLocal = app.options.bool('fetch_setting.allow_link_local_enabled');
    const base = {
      protect: app.options.get('fetch_setting.ssrf_protection_enabled') !== 'false',
      domainDeny: splitEntries(app.options.get('fetch_setting.domain_deny_list')).map(normaliseDomain),
      ipAllow: parseCidrList(app.options.get('fetch_setting.ip_allow_list')),
      ipDeny: parseCidrList(app.options.get('fetch_setting.ip_deny_list')),
    };
    if (audience === 'user') {
      return {
        ...base,
        allowPrivate,
        allowLinkLocal: allowPrivate,
        domainAllow: splitEntries(app.options.get('fetch_setting.domain_allow_list')).map(normaliseDomain),
        ports: parsePorts(app.options.get('fetch_setting.allowed_ports')),
      };
    }
    return { ...base, allowPrivate: audience === 'operator', allowLinkLocal: audience === 'operator' && linkLocal, domainAllow: [], ports: [] };
  });
}

export const parsePorts = (s: string) =>
  splitEntries(s)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0 && n < 65536);

const normaliseDomain = (d: string) => d.replace(/^\*\./, '').replace(/\.$/, '');
const domainMatches = (host: string, entry: string) => host === entry || host.endsWith(`.${entry}`);

const systemResolver: Resolver = async (hostname) => {
  const list = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return list.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** Per-app resolver: tests replace it to simulate DNS (a public-looking name → 127.0.0.1). */
function resolverHolder(app: AppContext): { resolve: Resolver } {
  return app.memo('guardedFetch:resolver', () => ({ resolve: systemResolver }));
}
export function setResolver(app: AppContext, resolve: Resolver | undefined): void {
  resolverHolder(app).resolve = resolve ?? systemResolver;
}
export function resolveHost(app: AppContext, hostname: string): Promise<ResolvedAddress[]> {
  return resolverHolder(app).resolve(hostname);
}

const KIND_TEXT: Record<AddressKind, string> = {
  loopback: 'a private address (loopback)',
  private: 'a private address',
  'link-local': 'a private address (link-local)',
  cgnat: 'a private address (carrier-grade NAT)',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  unspecified: 'an unspecified address',
  reserved: 'a reserved address',
};
/** Ranges `allowPrivate` opens (link-local has its own switch); multicast, broadcast, 0.0.0.0 and reserved only the IP allow list opens. */
const PRIVATE_KINDS = new Set<AddressKind>(['loopback', 'private', 'cgnat']);

/** Why `address` may not be reached under `policy`, or undefined when it may. */
export function addressRefusal(policy: FetchPolicy, address: string): string | undefined {
  const bytes = parseIp(address);
  if (!bytes) return `${address} is not an IP address`;
  if (policy.ipDeny.some((r) => inCidr(bytes, r))) return `${address} is on the IP deny list`;
  if (policy.ipAllow.some((r) => inCidr(bytes, r))) return undefined;
  const kind = classifyIp(bytes);
  if (!kind) return undefined;
  if (policy.allowPrivate && PRIVATE_KINDS.has(kind)) return undefined;
  if (policy.allowLinkLocal && kind === 'link-local') return undefined;
  return `${address} is ${KIND_TEXT[kind]}`;
}

export interface CheckedTarget {
  url: URL;
  /** Addresses that passed, to connect to (empty when protection is off: normal DNS). */
  addresses: ResolvedAddress[];
}

function parseTarget(raw: string | URL): URL {
  let url: URL;
  try {
    url = new URL(String(raw));
  } catch {
    throw new FetchRefusedError('invalid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FetchRefusedError(`${url.protocol} URLs are not allowed`);
  if (url.username || url.password) throw new FetchRefusedError('URLs with credentials are not allowed');
  return url;
}

/** Applies the policy to one URL: scheme, port, name lists, then every address the name resolves to. */
export async function checkUrl(app: AppContext, raw: string | URL, policy: FetchPolicy = fetchPolicy(app)): Promise<CheckedTarget> {
  const url = parseTarget(raw);
  if (!policy.protect) return { url, addresses: [] };
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  if (policy.ports.length && !policy.ports.includes(port)) throw new FetchRefusedError(`port ${port} is not allowed`);
  const addresses = await checkHost(app, url.hostname, policy);
  return { url, addresses };
}

/**
 * Applies the name lists to a host (name or IP literal, brackets allowed), resolves it and checks
 * every address. Returns the addresses to connect to.
 */
export async function checkHost(app: AppContext, hostname: string, policy: FetchPolicy): Promise<ResolvedAddress[]> {
  if (!policy.protect) return [];
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const family = net.isIP(host);
  let addresses: ResolvedAddress[];
  if (family) {
    addresses = [{ address: host, family: family === 6 ? 6 : 4 }];
  } else {
    const name = host.replace(/\.$/, '');
    if (policy.domainDeny.some((d) => domainMatches(name, d))) throw new FetchRefusedError(`${name} is on the domain deny list`);
    if (policy.domainAllow.length && !policy.domainAllow.some((d) => domainMatches(name, d)))
      throw new FetchRefusedError(`${name} is not on the domain allow list`);
    try {
      addresses = await resolveHost(app, name);
    } catch (err) {
      throw new FetchFailedError(`cannot resolve ${name} (${(err as { code?: string }).code ?? 'DNS error'})`);
    }
    if (!addresses.length) throw new FetchFailedError(`cannot resolve ${name}`);
  }
  // Every answer must pass: the connection could otherwise pick the forbidden one.
  for (const a of addresses) {
    const why = addressRefusal(policy, a.address);
    if (why) throw new FetchRefusedError(why);
  }
  return addresses;
}

/**
 * An agent whose connections go only to `addresses` (checked before): its lookup answers from that
 * list, so the Host header and TLS name stay the URL's while no second DNS query happens.
 */
export function pinnedAgent(addresses: ResolvedAddress[], opts: Agent.Options = {}): Agent {
  if (!addresses.length) return new Agent(opts);
  const lookup = (_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (options?.all)
      cb(
        null,
        addresses.map((a) => ({ address: a.address, family: a.family })),
      );
    else cb(null, addresses[0]!.address, addresses[0]!.family);
  };
  return new Agent({ ...opts, connect: { ...(opts.connect as object), lookup } as Agent.Options['connect'] });
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Drops a body we will not read; its abort error has nobody to report to. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

async function readCapped(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      discard(body);
      throw new FetchFailedError(`response larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** `p`, or `onAbort()` as soon as `signal` aborts (a DNS lookup cannot be cancelled, only left behind). */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal, onAbort: () => Error): Promise<T> {
  if (signal.aborted) return Promise.reject(onAbort());
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(onAbort());
    signal.addEventListener('abort', abort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/** Fetches `raw` under the guard. Throws FetchRefusedError / FetchFailedError (both BadRequestError). */
export async function guardedFetch(app: AppContext, raw: string | URL, req: GuardedRequest = {}): Promise<GuardedResponse> {
  const policy = req.policy ?? fetchPolicy(app);
  const timeoutMs = req.timeoutMs ?? 10_000;
  const maxBytes = req.maxBytes ?? 1024 * 1024;
  const maxRedirects = req.maxRedirects ?? 3;
  const timer = AbortSignal.timeout(timeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, timer]) : timer;
  let method = (req.method ?? 'GET').toUpperCase();
  let body = req.body;
  let headers: Record<string, string> = { ...req.headers };
  let current = raw;
  for (let hop = 0; ; hop++) {
    const target = await untilAborted(checkUrl(app, current, policy), signal, () => new FetchFailedError(`timed out after ${timeoutMs} ms`));
    const agent = pinnedAgent(target.addresses, { connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    try {
      let res: Dispatcher.ResponseData;
      try {
        res = await request(target.url, { method: method as Dispatcher.HttpMethod, headers, body, dispatcher: agent, signal });
      } catch (err) {
        if (timer.aborted) throw new FetchFailedError(`timed out after ${timeoutMs} ms`);
        const e = err as Error & { code?: string };
        throw new FetchFailedError(`${target.url.host} unreachable (${e.code ?? e.message})`);
      }
      const location = res.headers.location;
      if (REDIRECTS.has(res.statusCode) && typeof location === 'string' && location) {
        discard(res.body);
        if (hop >= maxRedirects) throw new FetchFailedError(maxRedirects ? `more than ${maxRedirects} redirects` : 'redirects are not followed');
        let next: URL;
        try {
          next = new URL(location, target.url);
        } catch {
          throw new FetchFailedError('invalid redirect location');
        }
        if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^content-/i.test(k)));
        }
        // Credentials never follow a redirect to another origin.
        if (next.origin !== target.url.origin)
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^(authorization|cookie|proxy-authorization)$/i.test(k)));
        current = next;
        continue;
      }
      const len = Number(res.headers['content-length']);
      if (Number.isFinite(len) && len > maxBytes) {
        discard(res.body);
        throw new FetchFailedError(`response larger than ${maxBytes} bytes`);
      }
      let buf: Buffer;
      try {
        buf = await readCapped(res.body, maxBytes);
      } catch (err) {
        if (err instanceof FetchFailedError) throw err;
        if (timer.aborted) throw new FetchFailedError(`timed out after ${timeoutMs} ms`);
        throw new FetchFailedError(`reading the response failed (${(err as { code?: string }).code ?? (err as Error).message})`);
      }
      const finalUrl = target.url.toString();
      return { status: res.statusCode, headers: res.headers, body: buf, url: finalUrl, text: () => buf.toString('utf8') };
    } finally {
      void agent.destroy().catch(() => undefined);
    }
  }
}
