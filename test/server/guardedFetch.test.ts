import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DB_TARGETS, describeEach, loginAgent, makeUser, setupRoot } from '../helpers/app';
import { addressRefusal, FetchFailedError, FetchRefusedError, fetchPolicy, guardedFetch, setResolver } from '../../server/src/lib/guardedFetch';
import { classifyIp, parseIp } from '../../server/src/lib/netAddress';
import { notifyQuota } from '../../server/src/services/notify';
import { providerJson } from '../../server/src/services/oauth/http';
import { verifyTurnstile } from '../../server/src/services/turnstile';
import type { UserRecord } from '../../server/src/relay/auth';

/** A TCP listener that counts connections (and answers HTTP 200 "ok" to whatever comes). */
async function counter(host: string, handler?: http.RequestListener) {
  let connections = 0;
  const server = http.createServer(handler ?? ((_req, res) => res.end('ok')));
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, host, r));
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('address classification', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['169.254.169.254', 'link-local'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'link-local'],
    ['ff02::1', 'multicast'],
  ])('%s is %s', (ip, kind) => {
    expect(classifyIp(parseIp(ip)!)).toBe(kind);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])('%s is public', (ip) => {
    expect(classifyIp(parseIp(ip)!)).toBeUndefined();
  });
});

describeEach(DB_TARGETS, 'guarded fetch', (app) => {
  const set = (key: string, value: string) => app().ctx.options.set(key, value);
  beforeAll(async () => {
    await setupRoot(app());
  });
  afterEach(async () => {
    setResolver(app().ctx, undefined);
    for (const [k, v] of Object.entries({
      'fetch_setting.ssrf_protection_enabled': 'true',
      'fetch_setting.allow_private_ip_enabled': 'false',
      'fetch_setting.ip_allow_list': '',
      'fetch_setting.ip_deny_list': '',
      'fetch_setting.domain_allow_list': '',
      'fetch_setting.domain_deny_list': '',
      'fetch_setting.allowed_ports': '80,443,8080,8443',
    }))
      await set(k, v);
  });

  it('refuses loopback, private, link-local, CGNAT, multicast, broadcast and unspecified addresses in every spelling, connecting nowhere', async () => {
    const local = await counter('127.0.0.1');
    // Ports are allowed here so that only the address rule can refuse.
    await set('fetch_setting.allowed_ports', '');
    try {
      const p = local.port;
      const urls = [
        `http://127.0.0.1:${p}/`,
        `http://localhost:${p}/`,
        `http://2130706433:${p}/`,
        `http://0177.0.0.1:${p}/`,
        `http://127.1:${p}/`,
        `http://0x7f.1:${p}/`,
        `http://0x7f000001:${p}/`,
        `http://127.000.000.001:${p}/`,
        `http://[::ffff:127.0.0.1]:${p}/`,
        `http://[::ffff:7f00:1]:${p}/`,
        `http://[64:ff9b::7f00:1]:${p}/`,
        `http://[::1]:${p}/`,
        `http://0.0.0.0:${p}/`,
        `http://0:${p}/`,
        `http://[::]:${p}/`,
        'http://169.254.169.254/latest/meta-data/',
        'http://[fe80::1]/',
        'http://[::ffff:169.254.169.254]/',
        'http://10.0.0.1/',
        'http://172.16.5.4/',
        'http://192.168.0.1/',
        'http://100.64.1.1/',
        'http://224.0.0.1/',
        'http://255.255.255.255/',
        'http://[fd00::1]/',
        'http://[ff02::1]/',
      ];
      for (const url of urls) {
        const err = await guardedFetch(app().ctx, url).catch((e: unknown) => e);
        expect([url, err instanceof FetchRefusedError]).toEqual([url, true]);
        expect((err as Error).message).toMatch(/^fetch refused: .+ is an? .*address/);
      }
      expect(local.connections).toBe(0);
      const err = await guardedFetch(app().ctx, `http://127.0.0.1:${p}/`).catch((e: Error) => e);
      expect((err as Error).message).toBe('fetch refused: 127.0.0.1 is a private address (loopback)');
    } finally {
      await local.close();
    }
  });

  it('refuses other schemes, credentials in the URL and ports outside the allowed list', async () => {
    await set('fetch_setting.allow_private_ip_enabled', 'true');
    for (const [url, msg] of [
      ['file:///etc/passwd', /file: URLs are not allowed/],
      ['gopher://127.0.0.1/', /gopher: URLs/],
      ['http://user:pw@example.com/', /credentials/],
      ['http://127.0.0.1:22/', /port 22 is not allowed/],
      ['http://127.0.0.1:6379/', /port 6379 is not allowed/],
      ['not a url', /invalid URL/],
    ] as const) {
      await expect(guardedFetch(app().ctx, url)).rejects.toThrow(msg);
    }
  });

  it('a name that resolves to a private address is refused; the IP allow list lets a chosen private host through', async () => {
    const local = await counter('127.0.0.1');
    await set('fetch_setting.allowed_ports', '');
    setResolver(app().ctx, async () => [{ address: '127.0.0.1', family: 4 }]);
    try {
      await expect(guardedFetch(app().ctx, `http://internal.example.com:${local.port}/`)).rejects.toThrow(
        'fetch refused: 127.0.0.1 is a private address (loopback)',
      );
      expect(local.connections).toBe(0);
      await set('fetch_setting.ip_allow_list', '127.0.0.1/32');
      const res = await guardedFetch(app().ctx, `http://internal.example.com:${local.port}/`);
      expect([res.status, res.text()]).toEqual([200, 'ok']);
      expect(local.connections).toBe(1);
      // The deny list wins over everything.
      await set('fetch_setting.ip_deny_list', '127.0.0.0/8');
      await expect(guardedFetch(app().ctx, `http://127.0.0.1:${local.port}/`)).rejects.toThrow(/IP deny list/);
    } finally {
      await local.close();
    }
  });

  it('every resolved address must pass (one private answer among public ones refuses)', async () => {
    setResolver(app().ctx, async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ]);
    await expect(guardedFetch(app().ctx, 'http://mixed.example.com/')).rejects.toThrow('fetch refused: 10.0.0.7 is a private address');
  });

  it('connects to the address it checked: a second DNS answer is never asked for', async () => {
    const allowed = await counter('127.0.0.2');
    const forbidden = await counter('127.0.0.1');
    await set('fetch_setting.allowed_ports', '');
    await set('fetch_setting.ip_allow_list', '127.0.0.2');
    let calls = 0;
    // Rebinding: the first answer is the allowed address, any later one the forbidden one.
    setResolver(app().ctx, async () => [{ address: calls++ === 0 ? '127.0.0.2' : '127.0.0.1', family: 4 }]);
    try {
      // Same port on both would be ideal; the host header carries the name, the socket goes to the checked IP.
      const res = await guardedFetch(app().ctx, `http://rebind.example.com:${allowed.port}/`);
      expect(res.status).toBe(200);
      expect(calls).toBe(1);
      expect(allowed.connections).toBe(1);
      expect(forbidden.connections).toBe(0);
    } finally {
      await allowed.close();
      await forbidden.close();
    }
  });

  it('follows redirects itself and refuses a hop to a private address', async () => {
    const inside = await counter('127.0.0.1');
    const outside = await counter('127.0.0.2', (req, res) => {
      if (req.url === '/to-ip') res.writeHead(302, { location: `http://127.0.0.1:${inside.port}/secret` }).end();
      else if (req.url === '/to-name') res.writeHead(307, { location: `http://metadata.internal:${inside.port}/secret` }).end();
      else if (req.url === '/loop') res.writeHead(302, { location: '/loop' }).end();
      else if (req.url === '/hop') res.writeHead(301, { location: '/final' }).end();
      else res.end(`final ${req.method} ${req.headers.host}`);
    });
    await set('fetch_setting.allowed_ports', '');
    // The "public" host: only 127.0.0.2 is let through.
    await set('fetch_setting.ip_allow_list', '127.0.0.2');
    setResolver(app().ctx, async (name) => [{ address: name === 'public.example.com' ? '127.0.0.2' : '127.0.0.1', family: 4 }]);
    const base = `http://public.example.com:${outside.port}`;
    try {
      await expect(guardedFetch(app().ctx, `${base}/to-ip`)).rejects.toThrow('fetch refused: 127.0.0.1 is a private address (loopback)');
      await expect(guardedFetch(app().ctx, `${base}/to-name`, { method: 'POST', body: 'x' })).rejects.toThrow(
        'fetch refused: 127.0.0.1 is a private address (loopback)',
      );
      expect(inside.connections).toBe(0);
      await expect(guardedFetch(app().ctx, `${base}/loop`)).rejects.toThrow('fetch failed: more than 3 redirects');
      await expect(guardedFetch(app().ctx, `${base}/hop`, { maxRedirects: 0 })).rejects.toThrow('fetch failed: redirects are not followed');
      const ok = await guardedFetch(app().ctx, `${base}/hop`, { method: 'POST', body: 'x' });
      expect(ok.text()).toBe(`final GET public.example.com:${outside.port}`);
      expect(ok.url).toBe(`${base}/final`);
    } finally {
      await inside.close();
      await outside.close();
    }
  });

  it('caps the response size and the total time', async () => {
    const big = Buffer.alloc(200_000, 97);
    const server = await counter('127.0.0.1', (req, res) => {
      if (req.url === '/big') res.end(big);
      else if (req.url === '/chunked') {
        res.write(big);
        res.end(big);
      } else if (req.url === '/slow-body') {
        res.write('a');
      } // '/hang': never answers
    });
    await set('fetch_setting.allowed_ports', '');
    await set('fetch_setting.ip_allow_list', '127.0.0.1');
    const base = `http://127.0.0.1:${server.port}`;
    try {
      await expect(guardedFetch(app().ctx, `${base}/big`, { maxBytes: 1000 })).rejects.toThrow('fetch failed: response larger than 1000 bytes');
      await expect(guardedFetch(app().ctx, `${base}/chunked`, { maxBytes: 300_000 })).rejects.toThrow('fetch failed: response larger than 300000 bytes');
      expect((await guardedFetch(app().ctx, `${base}/big`, { maxBytes: 200_000 })).body.length).toBe(200_000);
      for (const path of ['/hang', '/slow-body']) {
        const started = Date.now();
        const err = await guardedFetch(app().ctx, `${base}${path}`, { timeoutMs: 300 }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(FetchFailedError);
        expect((err as Error).message).toBe('fetch failed: timed out after 300 ms');
        expect(Date.now() - started).toBeLessThan(3000);
      }
    } finally {
      await server.close();
    }
  });

  it('domain deny and allow lists; protection off lets everything through', async () => {
    const local = await counter('127.0.0.1');
    setResolver(app().ctx, async () => [{ address: '127.0.0.1', family: 4 }]);
    await set('fetch_setting.allowed_ports', '');
    await set('fetch_setting.ip_allow_list', '127.0.0.1');
    try {
      await set('fetch_setting.domain_deny_list', 'evil.example.com');
      await expect(guardedFetch(app().ctx, `http://api.evil.example.com:${local.port}/`)).rejects.toThrow(
        'fetch refused: api.evil.example.com is on the domain deny list',
      );
      await set('fetch_setting.domain_deny_list', '');
      await set('fetch_setting.domain_allow_list', 'hooks.example.org');
      await expect(guardedFetch(app().ctx, `http://other.example.com:${local.port}/`)).rejects.toThrow('is not on the domain allow list');
      expect((await guardedFetch(app().ctx, `http://a.hooks.example.org:${local.port}/`)).status).toBe(200);
      await set('fetch_setting.domain_allow_list', '');
      await set('fetch_setting.ip_allow_list', '');
      await set('fetch_setting.allowed_ports', '80,443');
      await set('fetch_setting.ssrf_protection_enabled', 'false');
      expect((await guardedFetch(app().ctx, `http://127.0.0.1:${local.port}/`)).status).toBe(200);
    } finally {
      await local.close();
    }
  });

  it('root-configured URLs (identity providers, Turnstile): loopback allowed, metadata refused unless root allows link-local', async () => {
    const local = await counter('127.0.0.1', (_req, res) => res.end('{"success":true}'));
    try {
      // Loopback is the operator's choice (a local identity provider), any port.
      expect(await providerJson(app().ctx, 'OIDC', `http://127.0.0.1:${local.port}/.well-known/openid-configuration`)).toEqual({ success: true });
      await app().ctx.options.set('TurnstileVerifyURL', `http://127.0.0.1:${local.port}/siteverify`);
      expect(await verifyTurnstile(app().ctx, 'tok', '1.2.3.4')).toBe(true);
      expect(local.connections).toBe(2);
      setResolver(app().ctx, async () => [{ address: '169.254.169.254', family: 4 }]);
      await expect(providerJson(app().ctx, 'OIDC', `http://metadata.example.com:${local.port}/`)).rejects.toThrow(
        'OIDC: fetch refused: 169.254.169.254 is a private address (link-local)',
      );
      await app().ctx.options.set('TurnstileVerifyURL', 'http://169.254.169.254/siteverify');
      expect(await verifyTurnstile(app().ctx, 'tok', '1.2.3.4')).toBe(false);
      // Root's switch opens link-local for root-configured URLs only, never for user-typed ones.
      await set('fetch_setting.allow_link_local_enabled', 'true');
      expect(addressRefusal(fetchPolicy(app().ctx, 'operator'), '169.254.169.254')).toBeUndefined();
      expect(addressRefusal(fetchPolicy(app().ctx, 'admin'), '169.254.169.254')).toMatch(/link-local/);
      expect(addressRefusal(fetchPolicy(app().ctx, 'user'), '169.254.169.254')).toMatch(/link-local/);
    } finally {
      await set('fetch_setting.allow_link_local_enabled', 'false');
      await app().ctx.options.set('TurnstileVerifyURL', 'https://challenges.cloudflare.com/turnstile/v0/siteverify');
      await local.close();
    }
  });

  it('quota webhook: a plain user saving a loopback, localhost or metadata URL gets nothing delivered', async () => {
    const hook = await counter('127.0.0.1');
    await set('fetch_setting.allowed_ports', '');
    try {
      const targets = [
        `https://127.0.0.1:${hook.port}/hook`,
        `https://localhost:${hook.port}/hook`,
        `https://[::1]:${hook.port}/hook`,
        `https://2130706433:${hook.port}/hook`,
        'https://169.254.169.254/latest/meta-data/',
      ];
      for (const url of targets) {
        const u = await makeUser(app());
        const s = await loginAgent(app(), u.username, u.password);
        const saved = await s
          .put('/api/user/setting')
          .send({ notify_type: 'webhook', quota_warning_threshold: 1000, webhook_url: url, webhook_secret: 'whsec' });
        expect(saved.body.success).toBe(true);
        const row = await app().knex('users').where({ id: u.id }).first();
        const user = { id: u.id, username: u.username, status: 1, role: 1, group: 'default', email: '', setting: JSON.parse(row.setting) } as UserRecord;
        await expect(notifyQuota(app().ctx, user, 10, 1000)).rejects.toThrow(/^fetch refused: .* is a private address/);
      }
      expect(hook.connections).toBe(0);
    } finally {
      await hook.close();
    }
  });
});
