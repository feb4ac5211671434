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
import { testChannel } from '../../server/src/channels/operations';

const PRICING = {
  ModelRatio: JSON.stringify({
    'm-proxy': 1,
    'm-ok': 1,
    'm-huge': 1,
    'm-garbage': 1,
    'm-jgarbage': 1,
    'm-nul': 1,
    'm-half': 1,
    'm-keyleak': 1,
    'm-bigjson': 1,
  }),
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

  test('a proxy that never answers CONNECT: the call ends with a 502 timeout error within the bound and is refunded', async () => {
    const t0 = Date.now();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm-proxy', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    const body = (await res.json()) as { error?: { message?: string } };
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(res.status).toBe(502); // like every upstream timeout (relayRouting.test.ts)
    expect(body.error?.message).toBe('The upstream timed out');
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
    const req = http.request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    });
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

// ---- streams and errors from a scripted upstream (OpenAI-compatible channel) ----

const CHANNEL_KEY = 'sk-UPSTREAMSECRETKEY7Q2x9Lm4Vb8Nw3Rt';
const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

interface Script {
  /** Bytes the upstream managed to write before the gateway hung up (huge events). */
  written: number;
  closedEarly: boolean;
}

async function scriptedUpstream(state: Script): Promise<{ url: string; close(): Promise<void> }> {
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      const model = String((JSON.parse(body || '{}') as { model?: string }).model ?? '');
      if (model === 'm-keyleak') {
        res.writeHead(401, { 'content-type': 'application/json' });
        const quoted = `${CHANNEL_KEY.slice(0, 13)}${'*'.repeat(14)}${CHANNEL_KEY.slice(-4)}`;
        res.end(
          JSON.stringify({
            error: {
              message: `Incorrect API key provided: ${quoted}. Also seen: Bearer ${CHANNEL_KEY} and AIzaSyD3adB33fC0ffee1234567 and fragment ${CHANNEL_KEY.slice(5, 17)}.`,
              type: 'invalid_request_error',
              code: 'invalid_api_key',
            },
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.on('close', () => {
        if (!res.writableFinished) state.closedEarly = true;
      });
      if (model === 'm-ok') {
        res.write(chunk('hello'));
        res.end('data: [DONE]\n\n');
      } else if (model === 'm-huge') {
        // One valid event, then 20 MB without a blank line.
        res.write(chunk('hello'));
        const piece = Buffer.alloc(64 * 1024, 'x');
        res.write('data: {"x":"');
        for (let i = 0; i < 320 && !res.destroyed; i++) {
          if (!res.write(piece)) {
            await new Promise<void>((r) => {
              const go = () => {
                res.off('drain', go);
                res.off('close', go);
                r();
              };
              res.on('drain', go);
              res.on('close', go);
            });
          }
          state.written += piece.length;
        }
        res.end('"}\n\n');
      } else if (model === 'm-garbage') {
        res.end('data: {not json\n\ndata: [DONE]\n\n');
      } else if (model === 'm-jgarbage') {
        // Shaped like JSON, readable by no translator.
        res.end('data: {garbage}\n\ndata: {"nothing": "known"}\n\ndata: [DONE]\n\n');
      } else if (model === 'm-nul') {
        res.end(Buffer.alloc(4096, 0));
      } else if (model === 'm-half') {
        res.write(chunk('hello'));
        await sleep(30);
        res.end('data: {"choices":[{"delta":{"content":"x"\n\n');
      } else res.end();
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}

describe.each(ALL_TARGETS.map((t) => [t.name, t] as const))('relay: unreadable and oversized upstream streams, key scrubbing [%s]', (_n, target) => {
  let app: TestApp;
  let gw: { url: string; close(): Promise<void> };
  let up: { url: string; close(): Promise<void> };
  const state: Script = { written: 0, closedEarly: false };
  const CAP = 1024 * 1024;
  const INITIAL = 1_000_000;

  beforeAll(async () => {
    app = await buildApp(target, { config: { maxSseEventBytes: CAP } });
    gw = await listen(app.callback);
    up = await scriptedUpstream(state);
    // One channel answers every failure case here, many times: with its breaker on it would rest
    // after a few (docs/routing.md); these tests are about what each failure looks like.
    await setOptions(app, { ...PRICING, RoutingBreakerEnabled: 'false' });
    await seedChannel(app, { base_url: up.url, key: CHANNEL_KEY, models: 'm-ok,m-huge,m-garbage,m-jgarbage,m-nul,m-half,m-keyleak' });
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
    await app?.close();
  });

  const newUser = async () => {
    const id = (await makeUser(app, { quota: INITIAL })).id;
    return { id, key: (await seedToken(app, id)).key };
  };
  const quotaOf = async (id: number) => Number((await app.knex('users').where({ id }).first()).quota);
  const logsOf = async (id: number) => {
    await flushUsage(app);
    return app.knex('logs').where({ user_id: id, type: 2 });
  };
  type Caller = 'openai' | 'claude' | 'gemini';
  const call = async (caller: Caller, key: string, model: string, stream = true) => {
    const [path, headers, body] =
      caller === 'openai'
        ? ['/v1/chat/completions', { authorization: `Bearer ${key}` }, { model, stream, messages: [{ role: 'user', content: 'hi' }] }]
        : caller === 'claude'
          ? [
              '/v1/messages',
              { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
              { model, stream, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
            ]
          : [
              `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
              { 'x-goog-api-key': key },
              { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
            ];
    const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, ctype: res.headers.get('content-type') ?? '', text: await res.text() };
  };
  /** The error the caller's format carries, from a JSON answer or the stream's error event. */
  const errorOf = (caller: Caller, text: string): { message: string; code?: string } | undefined => {
    const datas = text.includes('data:')
      ? text
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
      : [text];
    for (const d of datas) {
      let j: Record<string, unknown>;
      try {
        j = JSON.parse(d) as Record<string, unknown>;
      } catch {
        continue;
      }
      const e = j.error as { message?: string; code?: string | number; type?: string } | undefined;
      if (!e) continue;
      if (caller === 'claude') expect(j.type).toBe('error');
      if (caller === 'gemini') expect(typeof e.code).toBe('number');
      return { message: String(e.message), code: typeof e.code === 'string' ? e.code : undefined };
    }
    return undefined;
  };

  test('a 20 MB event without a blank line ends the stream with an error event past the cap; only the delivered part is billed', async () => {
    const u = await newUser();
    state.written = 0;
    state.closedEarly = false;
    const r = await call('openai', u.key, 'm-huge');
    expect(r.status).toBe(200);
    expect(r.text).toContain('"content":"hello"');
    const err = errorOf('openai', r.text);
    expect(err).toMatchObject({ code: 'upstream_event_too_large' });
    expect(r.text).not.toContain('xxxxxxxx'); // nothing of the oversized event reached the client
    // The gateway stopped reading at the cap and hung up on the upstream.
    expect(await until(() => state.closedEarly, 3000)).toBe(true);
    expect(state.written).toBeLessThan(20 * 1024 * 1024);
    const logs = await logsOf(u.id);
    expect(logs).toHaveLength(1);
    expect(Number(logs[0].completion_tokens)).toBeGreaterThan(0);
    expect(Number(logs[0].completion_tokens)).toBeLessThan(10);
    expect(await quotaOf(u.id)).toBe(INITIAL - Number(logs[0].quota));
  });

  for (const caller of ['openai', 'claude', 'gemini'] as const) {
    test(`${caller} caller: a stream that is not JSON ({not json / NUL bytes) is an error, refunded`, async () => {
      for (const model of ['m-garbage', 'm-nul']) {
        const u = await newUser();
        const r = await call(caller, u.key, model);
        expect(r.status).toBe(502);
        const err = errorOf(caller, r.text);
        expect(err?.message).toBe('The upstream returned an unreadable stream');
        expect(r.text).not.toContain('not json');
        expect(await quotaOf(u.id)).toBe(INITIAL);
        expect(await logsOf(u.id)).toHaveLength(0);
      }
    });

    if (caller !== 'openai') {
      test(`${caller} caller: a converted stream of JSON-shaped frames no translator reads delivered nothing: an error, refunded`, async () => {
        const u = await newUser();
        const r = await call(caller, u.key, 'm-jgarbage');
        expect(r.status).toBe(502);
        expect(errorOf(caller, r.text)?.message).toBe('The upstream returned an unreadable stream');
        expect(await quotaOf(u.id)).toBe(INITIAL);
        expect(await logsOf(u.id)).toHaveLength(0);
      });
    }

    test(`${caller} caller: a bad frame after a good one ends the stream with an error event; billed for what was delivered`, async () => {
      const u = await newUser();
      const r = await call(caller, u.key, 'm-half');
      expect(r.status).toBe(200);
      expect(r.text).toContain('hello');
      expect(errorOf(caller, r.text)?.message).toBe('The upstream returned an unreadable stream');
      const logs = await logsOf(u.id);
      expect(logs).toHaveLength(1);
      expect(Number(logs[0].completion_tokens)).toBeLessThan(5);
      expect(await quotaOf(u.id)).toBe(INITIAL - Number(logs[0].quota));
    });

    test(`${caller} caller: an upstream 401 quoting the channel key reaches the client without it`, async () => {
      const u = await newUser();
      for (const stream of [false, true]) {
        const r = await call(caller, u.key, 'm-keyleak', stream);
        expect(r.status).toBe(401);
        const err = errorOf(caller, r.text);
        expect(err?.message).toContain('Incorrect API key provided');
        for (const frag of [CHANNEL_KEY.slice(0, 10), 'UPSTREAMSE', CHANNEL_KEY.slice(5, 17), 'AIzaSyD3adB33f', CHANNEL_KEY.slice(-10)])
          expect(r.text).not.toContain(frag);
      }
      expect(await quotaOf(u.id)).toBe(INITIAL);
    });
  }

  test('a normal stream still passes untouched', async () => {
    const u = await newUser();
    const r = await call('openai', u.key, 'm-ok');
    expect(r.status).toBe(200);
    expect(r.text).toBe(`${chunk('hello')}data: [DONE]\n\n`);
  });
});
