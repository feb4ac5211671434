/**
 * Relay robustness: every phase of an upstream call is bounded and cancelled with the client,
 * SSE events are capped and split in linear time, unreadable streams end with an error (billed
 * for what was delivered), and upstream error messages never carry key material.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ALL_TARGETS, buildApp, makeUser, type TestApp } from '../helpers/app';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { testChannel } from '../../server/src/relay/channelOps';

const PRICING = {
  ModelRatio: JSON.stringify({ 'm-proxy': 1, 'm-ok': 1, 'm-huge': 1, 'm-garbage': 1, 'm-nul': 1, 'm-half': 1, 'm-keyleak': 1, 'm-bigjson': 1 }),
  CompletionRatio: JSON.stringify({}),
  GroupRatio: JSON.stringify({ default: 1 }),
  PreConsumedQuota: '500',
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A TCP server that accepts and never says a word (a proxy stuck before answering CONNECT). */
async function silentServer(): Promise<{ port: number; sockets: net.Socket[]; closed: number; close(): Promise<void> }> {
  const st = { port: 0, sockets: [] as net.Socket[], closed: 0, close: async () => undefined as void };
  const srv = net.createServer((s) => {
    st.sockets.push(s);
    s.on('error', () => undefined);
    s.on('close', () => st.closed++);
    s.resume(); // reads (and ignores) the CONNECT, so that the gateway's close is seen
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  st.port = (srv.address() as AddressInfo).port;
  st.close = async () => {
    for (const s of st.sockets) s.destroy();
    await new Promise<void>((r) => srv.close(() => r()));
  };
  return st;
}

async function until(cond: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return true;
    await sleep(20);
  }
  return cond();
}

describe.each(ALL_TARGETS.map((t) => [t.name, t] as const))('relay: upstream phases are bounded [%s]', (_n, target) => {
  let app: TestApp;
  let gw: { url: string; close(): Promise<void> };
  let proxy: Awaited<ReturnType<typeof silentServer>>;
  let channelId: number;
  let userId: number;
  let key: string;
  const INITIAL = 1_000_000;

  beforeAll(async () => {
    app = await buildApp(target, { config: { upstreamProxyTimeoutMs: 400, upstreamConnectTimeoutMs: 400 } });
    gw = await listen(app.callback);
    proxy = await silentServer();
    await setOptions(app, PRICING);
    channelId = await seedChannel(app, {
      base_url: 'http://upstream.invalid:81',
      models: 'm-proxy',
      setting: JSON.stringify({ proxy: `http://127.0.0.1:${proxy.port}` }),
    });
    userId = (await makeUser(app, { quota: INITIAL })).id;
    key = (await seedToken(app, userId)).key;
  });
  afterAll(async () => {
    await gw?.close();
    await proxy?.close();
    await app?.close();
  });
  const quota = async () => Number((await app.knex('users').where({ id: userId }).first()).quota);

  test('a proxy that never answers CONNECT: the call ends with a 504 within the bound and is refunded', async () => {
    const t0 = Date.now();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm-proxy', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    const body = (await res.json()) as { error?: { message?: string } };
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(res.status).toBe(504);
    expect(body.error?.message).toBe('上游响应超时');
    expect(proxy.sockets.length).toBeGreaterThan(0);
    expect(await until(() => proxy.closed === proxy.sockets.length, 2000)).toBe(true);
    expect(await quota()).toBe(INITIAL);
  });

  test('a channel test through that proxy ends within the bound', async () => {
    const t0 = Date.now();
    const r = await testChannel(app.ctx, channelId);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r).toMatchObject({ success: false, message: '上游响应超时' });
  });
});

describe.each(ALL_TARGETS.map((t) => [t.name, t] as const))('relay: a client abort cancels the proxy handshake [%s]', (_n, target) => {
  let app: TestApp;
  let gw: { url: string; close(): Promise<void> };
  let proxy: Awaited<ReturnType<typeof silentServer>>;
  let userId: number;
  let key: string;
  const INITIAL = 1_000_000;

  beforeAll(async () => {
    // Bounds far away: only the abort can end the handshake within the test.
    app = await buildApp(target, { config: { upstreamProxyTimeoutMs: 60_000, upstreamTimeoutMs: 60_000 } });
    gw = await listen(app.callback);
    proxy = await silentServer();
    await setOptions(app, PRICING);
    await seedChannel(app, { base_url: 'http://upstream.invalid:81', models: 'm-proxy', setting: JSON.stringify({ proxy: `http://127.0.0.1:${proxy.port}` }) });
    userId = (await makeUser(app, { quota: INITIAL })).id;
    key = (await seedToken(app, userId)).key;
  });
  afterAll(async () => {
    await gw?.close();
    await proxy?.close();
    await app?.close();
  });

  test('client gone during CONNECT: the proxy socket is closed at once and the reservation refunded', async () => {
    const before = proxy.sockets.length;
    const req = http.request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ model: 'm-proxy', messages: [{ role: 'user', content: 'hi' }] }));
    expect(await until(() => proxy.sockets.length > before, 5000)).toBe(true);
    const q = await quota();
    expect(q).toBeLessThan(INITIAL); // reserved while the call waits
    const closedBefore = proxy.closed;
    req.destroy();
    expect(await until(() => proxy.closed > closedBefore, 1500)).toBe(true);
    expect(await until(async () => (await quota()) === INITIAL, 3000)).toBe(true);
    await flushUsage(app);
    expect(await app.knex('logs').where({ user_id: userId, type: 2 })).toHaveLength(0);
  });
  const quota = async () => Number((await app.knex('users').where({ id: userId }).first()).quota);
});
