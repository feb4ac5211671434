/**
 * `/v1/realtime` over a real gateway socket: the WebSocket relay to an OpenAI and an Azure
 * channel (mock-upstream/realtime.ts), the key from `Authorization` or the browser subprotocol,
 * events both ways, each `response.done` billed with the audio ratios, and a session that runs out
 * of quota closed with an `error` event. Then the holes closed since: a client leaving mid-response
 * pays for it (the upstream's usage of the cancelled response, else what was delivered); the
 * reservation is sized at the price of what the session can produce (audio); upstream errors
 * reach the client scrubbed.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { ALL_TARGETS, buildApp, makeUser, type TestApp } from '../helpers/app';
import { startRealtimeMock, DEFAULT_REALTIME_USAGE, type RealtimeMock } from '../mock-upstream/realtime';
import { flushUsage, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { realtimeQuota, realtimeUsage } from '../../server/src/relay/realtime/billing';

const MODEL = 'gpt-realtime-test';
/** A channel whose upstream refuses connections. */
const DOWN_MODEL = 'rt-down';
const PRICING = {
  ModelRatio: JSON.stringify({ [MODEL]: 1, 'az-realtime': 1, 'other-kind-rt': 1, [DOWN_MODEL]: 1 }),
  CompletionRatio: JSON.stringify({ [MODEL]: 2, 'az-realtime': 2 }),
  AudioRatio: JSON.stringify({ [MODEL]: 8, 'az-realtime': 8 }),
  AudioCompletionRatio: JSON.stringify({ [MODEL]: 2, 'az-realtime': 2 }),
  GroupRatio: JSON.stringify({ default: 1 }),
  PreConsumedQuota: '100',
};
/** Default usage: text in 20, audio in 100 × 8, text out 10 × 2, audio out 50 × 8 × 2. */
const PER_RESPONSE = 20 + 100 * 8 + 10 * 2 + 50 * 8 * 2;
/** The same response in a text-only session: no audio out. */
const PER_TEXT_RESPONSE = 20 + 100 * 8 + 10 * 2;
/** The reservation held for each response of a session that speaks: 4096 output tokens at the audio output price (8 × 2). */
const RESERVE = 4096 * 8 * 2;
/** …and of a text-only session: at the text output price. */
const TEXT_RESERVE = 4096 * 2;
/** How long a session whose client left waits for the cancelled response's usage (config realtimeCancelWaitMs). */
const CANCEL_WAIT_MS = 400;

interface Session {
  ws: WebSocket;
  events: Array<Record<string, any>>;
  next(type: string): Promise<Record<string, any>>;
  closed: Promise<{ code: number; reason: string }>;
}

function connect(url: string, opts: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<Session> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, opts.protocols ?? [], { headers: opts.headers });
    const events: Array<Record<string, any>> = [];
    const waiters: Array<{ type: string; resolve: (e: Record<string, any>) => void }> = [];
    let seen = 0;
    ws.on('message', (d) => {
      const ev = JSON.parse(d.toString());
      events.push(ev);
      const i = waiters.findIndex((w) => w.type === ev.type);
      if (i >= 0) waiters.splice(i, 1)[0]!.resolve(ev);
    });
    const closed = new Promise<{ code: number; reason: string }>((r) => ws.on('close', (code, reason) => r({ code, reason: reason.toString() })));
    const next = (type: string) =>
      new Promise<Record<string, any>>((r) => {
        const found = events.slice(seen).find((e) => e.type === type);
        if (found) {
          seen = events.indexOf(found) + 1;
          return r(found);
        }
        waiters.push({
          type,
          resolve: (e) => {
            seen = events.indexOf(e) + 1;
            r(e);
          },
        });
      });
    ws.once('open', () => resolve({ ws, events, next, closed }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => reject(Object.assign(new Error(`status ${res.statusCode}`), { status: res.statusCode, body: JSON.parse(body || '{}') })));
    });
    ws.once('error', (e) => reject(e));
  });
}

/** Polls a condition of the test's own state (no database). */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!cond()) throw new Error('condition not met');
}

describe.each(ALL_TARGETS.map((t) => [t.name, t] as const))('relay: /v1/realtime WebSocket [%s]', (_name, target) => {
  let app: TestApp;
  let mock: RealtimeMock;
  let server: http.Server;
  let wsUrl: string;
  let userId: number;
  let key: string;
  let downPort: number;

  beforeAll(async () => {
    app = await buildApp(target, { config: { realtimeCancelWaitMs: CANCEL_WAIT_MS } });
    mock = await startRealtimeMock();
    await setOptions(app, PRICING);
    server = http.createServer(app.callback);
    server.on('upgrade', app.upgrade);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    wsUrl = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const u = await makeUser(app, { quota: 10_000_000 });
    userId = u.id;
    key = (await seedToken(app, userId)).key;
    await seedChannel(app, { name: 'oa-rt', type: 1, key: 'sk-upstream-rt', base_url: mock.url, models: MODEL });
    await seedChannel(app, { name: 'az-rt', type: 3, key: 'azure-key', base_url: mock.url, models: 'az-realtime', other: '2025-04-01-preview' });
    await seedChannel(app, { name: 'claude-rt', type: 14, key: 'x', base_url: mock.url, models: 'other-kind-rt' });
    // A port nothing listens on: its channel's upstream refuses the connection.
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    downPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await seedChannel(app, { name: 'down-rt', type: 1, key: 'sk-upstream-down', base_url: `http://127.0.0.1:${downPort}`, models: DOWN_MODEL });
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    await mock?.close();
    await app?.close();
  });
  beforeEach(() => {
    mock.handshakes.length = 0;
    mock.received.length = 0;
    mock.usage = DEFAULT_REALTIME_USAGE;
    mock.stream = undefined;
    mock.refuseBody = undefined;
  });

  const quota = async () => Number((await app.knex('users').where({ id: userId }).first()).quota);
  const openReservations = async () => Number((await app.knex('reservations').where({ user_id: userId }).count({ n: '*' }).first())?.n ?? 0);
  const logsSince = async (id: number) => {
    await flushUsage(app);
    return app.knex('logs').where({ user_id: userId, type: 2 }).andWhere('id', '>', id).orderBy('id');
  };
  const lastLogId = async () => {
    await flushUsage(app);
    return Number((await app.knex('logs').max('id as m').first())?.m ?? 0);
  };
  /** Polls (the session's bills and refund land after the close; settled rows go with the usage flush). */
  const waitFor = async (cond: () => Promise<boolean>) => {
    for (let i = 0; i < 250; i++) {
      await flushUsage(app);
      if (await cond()) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('condition not met');
  };

  test('usage of a response: text and audio split, cached tokens, quota with the audio ratios', () => {
    const u = realtimeUsage({
      input_tokens: 300,
      output_tokens: 40,
      input_token_details: { text_tokens: 100, audio_tokens: 200, cached_tokens: 150, cached_tokens_details: { text_tokens: 50, audio_tokens: 100 } },
      output_token_details: { text_tokens: 10, audio_tokens: 30 },
    })!;
    expect(u).toEqual({ textIn: 100, audioIn: 200, cachedText: 50, cachedAudio: 100, textOut: 10, audioOut: 30 });
    const price = { model: MODEL, usePrice: false, modelPrice: -1, modelRatio: 2, completionRatio: 4, cacheRatio: 0.5, groupRatio: 1, unset: false };
    // 2 × (50 + 50×0.5 + 100×8 + 100×8×0.5 + 10×4 + 30×8×2)
    expect(realtimeQuota(app.ctx, price, u)).toBe(2 * (50 + 25 + 800 + 400 + 40 + 480));
    expect(realtimeUsage({ foo: 1 })).toBeUndefined();
  });

  test('Authorization key: events both ways, each response.done billed and logged, the rest refunded', async () => {
    const before = await quota();
    const logId = await lastLogId();
    const s = await connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: `Bearer ${key}`, 'OpenAI-Beta': 'realtime=v1' } });
    const created = await s.next('session.created');
    expect(created.session.model).toBe(MODEL);
    // A reservation is held while the session runs.
    expect(await quota()).toBe(before - RESERVE);
    s.ws.send(JSON.stringify({ type: 'session.update', session: { voice: 'verse', instructions: 'be brief' } }));
    expect((await s.next('session.updated')).session).toMatchObject({ voice: 'verse', instructions: 'be brief' });
    s.ws.send(JSON.stringify({ type: 'response.create' }));
    expect((await s.next('response.audio_transcript.delta')).delta).toBe('Hello there');
    const done = await s.next('response.done');
    expect(done.response.usage.output_token_details.audio_tokens).toBe(50);
    s.ws.send(JSON.stringify({ type: 'response.create' }));
    await s.next('response.done');
    // The upstream saw the client's events as sent, and the gateway's handshake.
    await waitFor(async () => mock.received[0]?.length === 3);
    expect(mock.received[0]!.map((e: any) => e.type)).toEqual(['session.update', 'response.create', 'response.create']);
    const hs = mock.handshakes[0]!;
    expect(hs.path).toBe('/v1/realtime');
    expect(hs.query.model).toBe(MODEL);
    expect(hs.headers.authorization).toBe('Bearer sk-upstream-rt');
    expect(hs.headers['openai-beta']).toBe('realtime=v1');
    s.ws.close();
    await s.closed;
    await waitFor(async () => (await quota()) === before - 2 * PER_RESPONSE).catch(async (e) => {
      throw new Error(`${e.message}: spent ${before - (await quota())}, rows ${JSON.stringify(await app.knex('reservations').select())}`);
    });
    await waitFor(async () => (await app.knex('reservations').count('* as n').first())!.n == 0);
    const logs = await logsSince(logId);
    expect(logs).toHaveLength(2);
    for (const l of logs) {
      expect(Number(l.quota)).toBe(PER_RESPONSE);
      expect(l.model_name).toBe(MODEL);
      expect(Number(l.prompt_tokens)).toBe(120);
      expect(Number(l.completion_tokens)).toBe(60);
      const other = JSON.parse(l.other);
      expect(other).toMatchObject({ realtime: true, audio_ratio: 8, audio_completion_ratio: 2, audio_input: 100, audio_output: 50 });
    }
  });

  test('browser subprotocol key accepted; the answer names `realtime`, never the key', async () => {
    const raw = key.slice(3);
    const s = await connect(`${wsUrl}/v1/realtime?model=${MODEL}`, {
      protocols: ['realtime', `openai-insecure-api-key.${key}`, 'openai-beta.realtime-v1'],
    });
    expect(s.ws.protocol).toBe('realtime');
    await s.next('session.created');
    expect(mock.handshakes[0]!.headers['openai-beta']).toBe('realtime=v1');
    expect(mock.handshakes[0]!.headers['sec-websocket-protocol']).toBeUndefined();
    expect(JSON.stringify(mock.handshakes[0]!.headers)).not.toContain(raw);
    s.ws.close();
    await s.closed;
  });

  test('Azure channel: /openai/realtime with deployment, api-version and api-key', async () => {
    const s = await connect(`${wsUrl}/v1/realtime?model=az-realtime`, { headers: { Authorization: `Bearer ${key}` } });
    await s.next('session.created');
    const hs = mock.handshakes[0]!;
    expect(hs.path).toBe('/openai/realtime');
    expect(hs.query).toMatchObject({ deployment: 'az-realtime', 'api-version': '2025-04-01-preview' });
    expect(hs.headers['api-key']).toBe('azure-key');
    expect(hs.headers.authorization).toBeUndefined();
    s.ws.close();
    await s.closed;
  });

  test('refusals before the handshake, in OpenAI error shape', async () => {
    await expect(connect(`${wsUrl}/v1/realtime?model=${MODEL}`)).rejects.toMatchObject({ status: 401, body: { error: { code: 'invalid_api_key' } } });
    await expect(connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: 'Bearer sk-nope' } })).rejects.toMatchObject({ status: 401 });
    await expect(connect(`${wsUrl}/v1/realtime`, { headers: { Authorization: `Bearer ${key}` } })).rejects.toMatchObject({ status: 400 });
    await expect(connect(`${wsUrl}/v1/realtime?model=other-kind-rt`, { headers: { Authorization: `Bearer ${key}` } })).rejects.toMatchObject({
      status: 400,
      body: { error: { code: 'endpoint_not_supported' } },
    });
    // A plain HTTP request is told to upgrade.
    const plain = await app.http().get(`/v1/realtime?model=${MODEL}`).set('authorization', `Bearer ${key}`);
    expect(plain.status).toBe(426);
    expect(plain.body.error.code).toBe('upgrade_required');
    await expect(connect(`${wsUrl}/v1/elsewhere`, { headers: { Authorization: `Bearer ${key}` } })).rejects.toMatchObject({ status: 404 });
    // Upstream refuses: 502 with its reason; the reservation goes back. The balance is read once
    // the earlier tests' sessions hold nothing (their refunds land after their close).
    await waitFor(async () => (await openReservations()) === 0);
    const before = await quota();
    mock.refuseStatus = 401;
    try {
      await expect(connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: `Bearer ${key}` } })).rejects.toMatchObject({
        status: 502,
        body: { error: { message: expect.stringContaining('Incorrect API key') } },
      });
    } finally {
      mock.refuseStatus = 0;
    }
    await waitFor(async () => (await quota()) === before);
    // A token that cannot cover the first reservation — sized at the audio output price, since a new
    // session speaks (it used to be the text price, 16× less): 403 before any upstream connection.
    const poor = await seedToken(app, userId, { unlimited_quota: false, remain_quota: RESERVE - 1 });
    const n = mock.handshakes.length;
    await expect(connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: `Bearer ${poor.key}` } })).rejects.toMatchObject({
      status: 403,
      body: { error: { type: 'insufficient_quota' } },
    });
    expect(mock.handshakes.length).toBe(n);
  });

  test('a session that runs out of quota: the response is billed, then an error event and a close', async () => {
    const t = await seedToken(app, userId, { unlimited_quota: false, remain_quota: RESERVE + 1000 });
    const logId = await lastLogId();
    const s = await connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: `Bearer ${t.key}` } });
    await s.next('session.created');
    s.ws.send(JSON.stringify({ type: 'response.create' }));
    await s.next('response.done');
    const err = await s.next('error');
    expect(err.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    expect(err.error.message).toContain('Out of quota');
    // It says what the next response needs: the audio-sized reservation.
    expect(err.error.message).toContain(String(RESERVE));
    const closed = await s.closed;
    expect(closed.code).toBe(1008);
    await waitFor(async () => mock.open() === 0);
    const logs = await logsSince(logId);
    expect(logs).toHaveLength(1);
    expect(Number(logs[0].quota)).toBe(PER_RESPONSE);
    await waitFor(async () => Number((await app.knex('tokens').where({ id: t.id }).first()).remain_quota) === RESERVE + 1000 - PER_RESPONSE);
    await waitFor(async () => (await app.knex('reservations').count('* as n').first())!.n == 0);
  });

  test('a response that costs more than the balance held: billed as far as it reaches, then an error event and a close', async () => {
    const t = await seedToken(app, userId, { unlimited_quota: false, remain_quota: RESERVE + 100 });
    const userBefore = await quota();
    const logId = await lastLogId();
    // 5000 audio output tokens: 5000 × 8 × 2 = 80 000, above the token's RESERVE + 100.
    mock.usage = { ...DEFAULT_REALTIME_USAGE, output_tokens: 5010, output_token_details: { text_tokens: 10, audio_tokens: 5000 } };
    const s = await connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: `Bearer ${t.key}` } });
    await s.next('session.created');
    s.ws.send(JSON.stringify({ type: 'response.create' }));
    expect((await s.next('response.done')).response.usage.output_tokens).toBe(5010);
    const err = await s.next('error');
    expect(err.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    expect((await s.closed).code).toBe(1008);
    await waitFor(async () => Number((await app.knex('tokens').where({ id: t.id }).first()).remain_quota) === 0);
    await waitFor(async () => (await app.knex('reservations').count('* as n').first())!.n == 0);
    const logs = await logsSince(logId);
    expect(logs).toHaveLength(1);
    expect(Number(logs[0].quota)).toBe(RESERVE + 100);
    expect(Number(logs[0].completion_tokens)).toBe(5010);
    // The user pays what the token could cover, not the whole response and not less.
    expect(userBefore - (await quota())).toBe(RESERVE + 100);
  });

  test('closing the app ends its open sessions and settles them before the database closes', async () => {
    // Two nodes on one database: the one closed, and one to read the outcome with afterwards.
    const file = path.join(os.tmpdir(), `realtime-close-${process.pid}-${Date.now()}.db`);
    const keeper = await buildApp(app.target, app.target.db === 'sqlite' ? { config: { databaseUrl: `sqlite:${file}` } } : {});
    try {
      await setOptions(keeper, PRICING);
      await seedChannel(keeper, { name: 'oa-rt', type: 1, key: 'sk-upstream-rt', base_url: mock.url, models: MODEL });
      const u = await makeUser(keeper, { quota: 1_000_000 });
      const k = (await seedToken(keeper, u.id)).key;
      const node = await buildApp(app.target, { shareWith: keeper });
      const srv = http.createServer(node.callback);
      srv.on('upgrade', node.upgrade);
      await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
      const s = await connect(`ws://127.0.0.1:${(srv.address() as AddressInfo).port}/v1/realtime?model=${MODEL}`, {
        headers: { Authorization: `Bearer ${k}` },
      });
      await s.next('session.created');
      s.ws.send(JSON.stringify({ type: 'response.create' }));
      await s.next('response.done');
      await node.close(); // the session is still open
      srv.closeAllConnections();
      srv.close();
      await s.closed;
      // The response is billed and logged, the rest of the reservation given back: no open row left.
      expect(Number((await keeper.knex('users').where({ id: u.id }).first()).quota)).toBe(1_000_000 - PER_RESPONSE);
      expect(Number((await keeper.knex('reservations').count('* as n').first())!.n)).toBe(0);
      const logs = await keeper.knex('logs').where({ user_id: u.id, type: 2 });
      expect(logs.map((l: { quota: number }) => Number(l.quota))).toEqual([PER_RESPONSE]);
    } finally {
      await keeper.close();
      fs.rmSync(file, { force: true });
    }
  });

  /** A fresh user (and unlimited key) for a test that counts its quota exactly. */
  const freshUser = async (quota = 1_000_000) => {
    const u = await makeUser(app, { quota });
    return { id: u.id, key: (await seedToken(app, u.id)).key };
  };
  const quotaOf = async (id: number) => Number((await app.knex('users').where({ id }).first()).quota);
  const reservationsOf = async (id: number) => Number((await app.knex('reservations').where({ user_id: id }).count({ n: '*' }).first())?.n ?? 0);
  const logsOf = async (id: number) => {
    await flushUsage(app);
    return app.knex('logs').where({ user_id: id, type: 2 }).orderBy('id');
  };
  const audioDeltas = (s: Session) => s.events.filter((e) => e.type === 'response.audio.delta').length;
  /** 30 pairs of deltas make the whole response; the upstream stops after 29 (the client leaves then). */
  const CUT_STREAM = { deltas: 30, pauseAfter: 29, audioTokens: 2, text: ' hi' };

  describe('a client that leaves mid-response pays for it', () => {
    test('the response is cancelled upstream and billed from the usage of its cancelled response.done', async () => {
      // 0.1 s of pcm16 (24 kHz) a delta, 2 audio tokens; ' hi' is one text token.
      mock.stream = { ...CUT_STREAM, audioBytes: 4800, honorCancel: true };
      const u = await freshUser();
      const s = await connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: `Bearer ${u.key}` } });
      await s.next('session.created');
      s.ws.send(JSON.stringify({ type: 'response.create' }));
      await until(() => audioDeltas(s) === 29);
      s.ws.close();
      await s.closed;
      await waitFor(async () => (await reservationsOf(u.id)) === 0);
      // The whole response would have cost 20 + 800 + 30 × 2 + 60 × 16 = 1 840; the 29 deltas the
      // upstream made before the cancel: text in 20 + audio in 100 × 8 + text out 29 × 2 + audio out 58 × 16.
      const cut = 20 + 100 * 8 + 29 * 2 + 58 * 8 * 2;
      expect(cut).toBe(1806);
      expect(1_000_000 - (await quotaOf(u.id))).toBe(cut);
      const logs = await logsOf(u.id);
      expect(logs.map((l: { quota: number }) => Number(l.quota))).toEqual([cut]);
      const other = JSON.parse(logs[0].other);
      expect(other).toMatchObject({ client_gone: true, text_output: 29, audio_output: 58, audio_input: 100 });
      expect(other.usage_estimated).toBeUndefined();
      // The gateway cancelled the response it saw created.
      const sent = mock.received[0] as Array<{ type: string; response_id?: string }>;
      expect(sent.map((e) => e.type)).toEqual(['response.create', 'response.cancel']);
      expect(sent[1]!.response_id).toBe(s.events.find((e) => e.type === 'response.created')!.response.id);
      await waitFor(async () => mock.open() === 0);
    });

    test('no usage within the wait: billed for the text and audio the client got (pcm16)', async () => {
      mock.stream = { ...CUT_STREAM, audioBytes: 4800, honorCancel: false };
      const u = await freshUser();
      const s = await connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: `Bearer ${u.key}` } });
      await s.next('session.created');
      s.ws.send(JSON.stringify({ type: 'response.create' }));
      await until(() => audioDeltas(s) === 29);
      const left = Date.now();
      s.ws.close();
      await s.closed;
      await waitFor(async () => (await reservationsOf(u.id)) === 0);
      // Settled only once the wait for the cancelled response's usage ran out.
      expect(Date.now() - left).toBeGreaterThanOrEqual(CANCEL_WAIT_MS - 50);
      // Delivered: 29 × 4 800 bytes of pcm16 at 48 000 bytes/s = 2.9 s = 58 audio tokens (20 a
      // second); 29 × ' hi' = 29 text tokens. The input it read is unknown and not billed.
      const delivered = 29 * 2 + 58 * 8 * 2;
      expect(delivered).toBe(986);
      expect(1_000_000 - (await quotaOf(u.id))).toBe(delivered);
      const logs = await logsOf(u.id);
      expect(logs.map((l: { quota: number }) => Number(l.quota))).toEqual([delivered]);
      expect(JSON.parse(logs[0].other)).toMatchObject({ client_gone: true, usage_estimated: true, text_output: 29, audio_output: 58, audio_input: 0 });
      expect((mock.received[0] as Array<{ type: string }>).map((e) => e.type)).toEqual(['response.create', 'response.cancel']);
      await waitFor(async () => mock.open() === 0);
    });

    test('the delivered audio is timed at the session format: g711_ulaw is 8 000 bytes a second', async () => {
      mock.stream = { ...CUT_STREAM, audioBytes: 800, honorCancel: false };
      const u = await freshUser();
      const s = await connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: `Bearer ${u.key}` } });
      await s.next('session.created');
      s.ws.send(JSON.stringify({ type: 'session.update', session: { output_audio_format: 'g711_ulaw' } }));
      await s.next('session.updated');
      s.ws.send(JSON.stringify({ type: 'response.create' }));
      await until(() => audioDeltas(s) === 29);
      s.ws.close();
      await s.closed;
      await waitFor(async () => (await reservationsOf(u.id)) === 0);
      // 29 × 800 bytes at 8 000 bytes/s = 2.9 s = 58 audio tokens (read as pcm16 it would be 10).
      expect(1_000_000 - (await quotaOf(u.id))).toBe(29 * 2 + 58 * 8 * 2);
      expect(JSON.parse((await logsOf(u.id))[0].other)).toMatchObject({ usage_estimated: true, audio_output: 58 });
    });

    test('an upstream that goes away mid-response: billed for what the client got', async () => {
      mock.stream = { ...CUT_STREAM, audioBytes: 4800, honorCancel: true };
      const u = await freshUser();
      const s = await connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: `Bearer ${u.key}` } });
      await s.next('session.created');
      s.ws.send(JSON.stringify({ type: 'response.create' }));
      await until(() => audioDeltas(s) === 29);
      s.ws.send(JSON.stringify({ type: 'mock.close', reason: 'bye' }));
      expect((await s.closed).code).toBe(4000);
      await waitFor(async () => (await reservationsOf(u.id)) === 0);
      expect(1_000_000 - (await quotaOf(u.id))).toBe(29 * 2 + 58 * 8 * 2);
      expect(JSON.parse((await logsOf(u.id))[0].other)).toMatchObject({ usage_estimated: true, text_output: 29, audio_output: 58 });
    });

    test('a client that leaves between responses: nothing is cancelled, the reservation comes back whole', async () => {
      const u = await freshUser();
      const s = await connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: `Bearer ${u.key}` } });
      await s.next('session.created');
      s.ws.send(JSON.stringify({ type: 'response.create' }));
      await s.next('response.done');
      s.ws.close();
      await s.closed;
      await waitFor(async () => (await reservationsOf(u.id)) === 0);
      expect(1_000_000 - (await quotaOf(u.id))).toBe(PER_RESPONSE);
      expect((mock.received[0] as Array<{ type: string }>).map((e) => e.type)).toEqual(['response.create']);
    });
  });

  describe('the reservation covers what the session can produce', () => {
    test('a text-only session holds a text-sized reservation; a response asking for audio takes the audio-sized one first', async () => {
      const u = await freshUser();
      const s = await connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: `Bearer ${u.key}` } });
      await s.next('session.created');
      expect(1_000_000 - (await quotaOf(u.id))).toBe(RESERVE);
      s.ws.send(JSON.stringify({ type: 'session.update', session: { modalities: ['text'] } }));
      await s.next('session.updated');
      s.ws.send(JSON.stringify({ type: 'response.create' }));
      expect((await s.next('response.done')).response.usage.output_token_details.audio_tokens).toBe(0);
      // Billed, and the next reservation is sized for text.
      await waitFor(async () => 1_000_000 - (await quotaOf(u.id)) === PER_TEXT_RESPONSE + TEXT_RESERVE);
      s.ws.send(JSON.stringify({ type: 'response.create', response: { modalities: ['audio', 'text'] } }));
      expect((await s.next('response.done')).response.usage.output_token_details.audio_tokens).toBe(50);
      await waitFor(async () => 1_000_000 - (await quotaOf(u.id)) === PER_TEXT_RESPONSE + PER_RESPONSE + TEXT_RESERVE);
      s.ws.close();
      await s.closed;
      await waitFor(async () => (await reservationsOf(u.id)) === 0);
      expect(1_000_000 - (await quotaOf(u.id))).toBe(PER_TEXT_RESPONSE + PER_RESPONSE);
    });

    test('a response asking for audio that the balance cannot cover: error event, close, never sent upstream', async () => {
      const u = await freshUser();
      const t = await seedToken(app, u.id, { unlimited_quota: false, remain_quota: RESERVE + 100 });
      const s = await connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: `Bearer ${t.key}` } });
      await s.next('session.created');
      s.ws.send(JSON.stringify({ type: 'session.update', session: { modalities: ['text'] } }));
      await s.next('session.updated');
      s.ws.send(JSON.stringify({ type: 'response.create' }));
      await s.next('response.done');
      // RESERVE + 100 − 840 left: a text reservation fits, an audio one (RESERVE) does not.
      s.ws.send(JSON.stringify({ type: 'response.create', response: { modalities: ['audio', 'text'] } }));
      s.ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [] } }));
      const err = await s.next('error');
      expect(err.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
      expect(err.error.message).toContain(String(RESERVE));
      expect((await s.closed).code).toBe(1008);
      expect((mock.received[0] as Array<{ type: string }>).map((e) => e.type)).toEqual(['session.update', 'response.create']);
      await waitFor(async () => (await reservationsOf(u.id)) === 0);
      expect(Number((await app.knex('tokens').where({ id: t.id }).first()).remain_quota)).toBe(RESERVE + 100 - PER_TEXT_RESPONSE);
      expect(1_000_000 - (await quotaOf(u.id))).toBe(PER_TEXT_RESPONSE);
      expect((await logsOf(u.id)).map((l: { quota: number }) => Number(l.quota))).toEqual([PER_TEXT_RESPONSE]);
    });

    test('turning audio on that the balance cannot cover: error event, close, the update never sent upstream', async () => {
      const u = await freshUser();
      const t = await seedToken(app, u.id, { unlimited_quota: false, remain_quota: RESERVE + 100 });
      const s = await connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: `Bearer ${t.key}` } });
      await s.next('session.created');
      s.ws.send(JSON.stringify({ type: 'session.update', session: { modalities: ['text'] } }));
      await s.next('session.updated');
      s.ws.send(JSON.stringify({ type: 'response.create' }));
      await s.next('response.done');
      // The GA spelling, with the type escaped: still seen.
      s.ws.send('{"type":"session\\u002eupdate","session":{"output_modalities":["audio"]}}');
      expect((await s.next('error')).error.code).toBe('insufficient_quota');
      expect((await s.closed).code).toBe(1008);
      expect((mock.received[0] as Array<{ type: string }>).map((e) => e.type)).toEqual(['session.update', 'response.create']);
      await waitFor(async () => (await reservationsOf(u.id)) === 0);
      expect(Number((await app.knex('tokens').where({ id: t.id }).first()).remain_quota)).toBe(RESERVE + 100 - PER_TEXT_RESPONSE);
    });
  });

  describe('upstream errors reach the client scrubbed', () => {
    test('an unreachable upstream: the error code, not its address', async () => {
      const e = await connect(`${wsUrl}/v1/realtime?model=${DOWN_MODEL}`, { headers: { Authorization: `Bearer ${key}` } }).catch((x) => x);
      expect(e.status).toBe(502);
      const m: string = e.body.error.message;
      expect(m).toContain('ECONNREFUSED');
      expect(m).not.toContain('127.0.0.1');
      expect(m).not.toContain(String(downPort));
    });

    test('a refusal quoting the channel key and internal hosts: the message without them', async () => {
      const mockHost = new URL(mock.url).host;
      mock.refuseStatus = 401;
      mock.refuseBody = JSON.stringify({
        error: { message: `Incorrect API key provided: sk-upstream-rt. Gateway ${mockHost} (upstream 10.20.30.40:8443, [fd00::7]:9000) refused it` },
      });
      try {
        const e = await connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: `Bearer ${key}` } }).catch((x) => x);
        expect(e.status).toBe(502);
        const m: string = e.body.error.message;
        expect(m).toContain('Incorrect API key provided');
        for (const leak of ['sk-upstream-rt', 'upstream-rt', mockHost, '127.0.0.1', '10.20.30.40', 'fd00::7']) expect(m).not.toContain(leak);
      } finally {
        mock.refuseStatus = 0;
      }
    });

    test('upstream error events and close reasons in a session: scrubbed', async () => {
      const mockHost = new URL(mock.url).host;
      const s = await connect(`${wsUrl}/v1/realtime?model=${MODEL}`, { headers: { Authorization: `Bearer ${key}` } });
      await s.next('session.created');
      s.ws.send(JSON.stringify({ type: 'mock.error', message: `bad key sk-upstream-rt at ${mockHost}, via 192.168.7.7:81` }));
      const err = await s.next('error');
      expect(err.error.code).toBe('mock_error');
      expect(err.error.message).toBe('bad key sk-*** at ***, via ***');
      s.ws.send(JSON.stringify({ type: 'mock.close', reason: `gone: 10.1.2.3:7000 and ${mockHost}` }));
      const closed = await s.closed;
      expect(closed.code).toBe(4000);
      expect(closed.reason).toBe('gone: *** and ***');
    });
  });
});
