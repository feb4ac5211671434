import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RelayHttpContext } from '../../server/src/relay/httpContext';
import { NO_PROXY_TRUST, parseProxyTrust, type ProxyTrust } from '../../server/src/relay/ip';

/** The Koa-free context the relay runs on: Koa's semantics for the parts the relay uses. */
describe('RelayHttpContext', () => {
  let server: http.Server;
  let url: string;
  let handle: (ctx: RelayHttpContext) => void = () => undefined;
  let trustProxy: ProxyTrust = NO_PROXY_TRUST;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const ctx = new RelayHttpContext(req, res, trustProxy);
      handle(ctx);
      ctx.finish();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  test('path, method, query and headers as Koa gives them', async () => {
    let seen: Record<string, unknown> = {};
    handle = (ctx) => {
      seen = { path: ctx.path, method: ctx.method, key: ctx.query.key, auth: ctx.get('Authorization'), missing: ctx.get('x-none') };
      ctx.body = { ok: true };
    };
    const res = await fetch(`${url}/v1beta/models/x:generateContent?key=abc&alt=sse`, { method: 'POST', headers: { authorization: 'Bearer k' }, body: '{}' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await res.json()).toEqual({ ok: true });
    expect(seen).toEqual({ path: '/v1beta/models/x:generateContent', method: 'POST', key: 'abc', auth: 'Bearer k', missing: '' });
  });

  test('client address: the socket, or the entry our trusted proxy appended (the rightmost) when proxies are trusted', async () => {
    let ip = '';
    handle = (ctx) => {
      ip = ctx.ip;
      ctx.body = 'x';
    };
    trustProxy = NO_PROXY_TRUST;
    await (await fetch(url, { headers: { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' } })).text();
    expect(ip).toBe('127.0.0.1');
    trustProxy = parseProxyTrust('true', undefined);
    // 203.0.113.7 was sent by the client; our one proxy appended 10.0.0.1, the address it saw.
    await (await fetch(url, { headers: { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' } })).text();
    expect(ip).toBe('10.0.0.1');
    await (await fetch(url)).text();
    expect(ip).toBe('127.0.0.1');
    trustProxy = NO_PROXY_TRUST;
  });

  test('status and body: explicit status wins, bodies are typed, 204 has none, nothing set is a 404', async () => {
    handle = (ctx) => {
      ctx.status = 429;
      ctx.set('Retry-After', '3');
      ctx.body = { error: { message: 'slow down' } };
    };
    let res = await fetch(url);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(await res.json()).toEqual({ error: { message: 'slow down' } });

    handle = (ctx) => {
      ctx.body = 'plain';
    };
    res = await fetch(url);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await res.text()).toBe('plain');

    handle = (ctx) => {
      ctx.status = 204;
    };
    res = await fetch(url, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');

    handle = () => undefined;
    res = await fetch(url);
    expect(res.status).toBe(404);
  });

  test('a handler that answered itself (respond = false) is left alone', async () => {
    handle = (ctx) => {
      ctx.respond = false;
      ctx.res.writeHead(201, { 'content-type': 'text/event-stream' });
      ctx.res.end('data: x\n\n');
      ctx.body = { ignored: true };
    };
    const res = await fetch(url);
    expect(res.status).toBe(201);
    expect(await res.text()).toBe('data: x\n\n');
  });
});
