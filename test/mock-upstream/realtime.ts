/**
 * OpenAI Realtime API over WebSocket, as OpenAI publishes it: `GET /v1/realtime?model=…` with
 * `Authorization: Bearer` (Azure: `/openai/realtime?api-version=…&deployment=…` with `api-key`).
 * On open the server sends `session.created`; `session.update` → `session.updated`;
 * `input_audio_buffer.append` is acknowledged by nothing (as upstream); `response.create` →
 * `response.created`, `response.output_item.added`, `response.audio_transcript.delta`,
 * `response.audio.delta`, `response.done` with `response.usage` (input/output token details).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface RealtimeUsageShape {
  input_tokens: number;
  output_tokens: number;
  input_token_details: {
    text_tokens: number;
    audio_tokens: number;
    cached_tokens: number;
    cached_tokens_details?: { text_tokens: number; audio_tokens: number };
  };
  output_token_details: { text_tokens: number; audio_tokens: number };
}

export interface RealtimeHandshake {
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
}

/** A response sent as `deltas` pairs of deltas (audio of `audioBytes` bytes, worth `audioTokens` tokens; transcript `text`, one token). */
export interface RealtimeStream {
  deltas: number;
  /** Stop after this many pairs and wait (for a cancel). */
  pauseAfter?: number;
  audioBytes: number;
  audioTokens: number;
  text: string;
  /** `response.cancel` ends the response with a `cancelled` `response.done` (false: the cancel is ignored). */
  honorCancel: boolean;
}

export interface RealtimeMock {
  url: string;
  handshakes: RealtimeHandshake[];
  /** Events the mock received, per connection. */
  received: unknown[][];
  usage: RealtimeUsageShape;
  /** Refuse the next handshakes with this status (0: accept). */
  refuseStatus: number;
  /** The body of a refusal, instead of the default error. */
  refuseBody?: string;
  /** Responses stream their deltas this way (undefined: all at once). */
  stream?: RealtimeStream;
  open(): number;
  close(): Promise<void>;
}

export const DEFAULT_REALTIME_USAGE: RealtimeUsageShape = {
  input_tokens: 120,
  output_tokens: 60,
  input_token_details: { text_tokens: 20, audio_tokens: 100, cached_tokens: 0, cached_tokens_details: { text_tokens: 0, audio_tokens: 0 } },
  output_token_details: { text_tokens: 10, audio_tokens: 50 },
};

export async function startRealtimeMock(): Promise<RealtimeMock> {
  const server = http.createServer((_req, res) => {
    res.statusCode = 426;
    res.end('upgrade required');
  });
  const wss = new WebSocketServer({ noServer: true });
  const sockets = new Set<WebSocket>();
  const state: RealtimeMock = {
    url: '',
    handshakes: [],
    received: [],
    usage: DEFAULT_REALTIME_USAGE,
    refuseStatus: 0,
    open: () => sockets.size,
    close: async () => {
      for (const s of sockets) s.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  server.on('upgrade', (req, socket, head) => {
    const u = new URL(req.url ?? '/', 'http://mock');
    const okPath = u.pathname === '/v1/realtime' || u.pathname === '/openai/realtime';
    const authed = u.pathname === '/v1/realtime' ? /^Bearer \S+/.test(req.headers.authorization ?? '') : Boolean(req.headers['api-key']);
    state.handshakes.push({ path: u.pathname, query: Object.fromEntries(u.searchParams), headers: req.headers });
    const status = !okPath ? 404 : !authed ? 401 : state.refuseStatus;
    if (status) {
      const body =
        (okPath && state.refuseBody) ||
        JSON.stringify({ error: { message: status === 401 ? 'Incorrect API key provided' : 'refused', type: 'invalid_request_error', code: null } });
      socket.end(`HTTP/1.1 ${status} Error\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on('close', () => sockets.delete(ws));
      const got: unknown[] = [];
      state.received.push(got);
      const model = u.searchParams.get('model') ?? u.searchParams.get('deployment') ?? '';
      let seq = 0;
      const send = (ev: Record<string, unknown>) => ws.readyState === ws.OPEN && ws.send(JSON.stringify({ event_id: `event_${++seq}`, ...ev }));
      let session: Record<string, unknown> = {
        id: 'sess_mock',
        object: 'realtime.session',
        model,
        modalities: ['text', 'audio'],
        output_audio_format: 'pcm16',
        voice: 'alloy',
      };
      /** The streamed response in flight: its id, the pairs sent, its timer. */
      let streaming: { id: string; sent: number; timer?: NodeJS.Timeout; audio: boolean } | undefined;
      ws.on('close', () => clearTimeout(streaming?.timer));
      send({ type: 'session.created', session });
      const usageFor = (audio: boolean, streamed?: { sent: number; stream: RealtimeStream }) => {
        const u = state.usage;
        let out = u.output_token_details;
        if (streamed) out = { text_tokens: streamed.sent, audio_tokens: audio ? streamed.sent * streamed.stream.audioTokens : 0 };
        else if (!audio) out = { text_tokens: out.text_tokens, audio_tokens: 0 };
        const output_tokens = out.text_tokens + out.audio_tokens;
        return { total_tokens: u.input_tokens + output_tokens, ...u, output_tokens, output_token_details: out };
      };
      const done = (id: string, status: string, usage: ReturnType<typeof usageFor>) =>
        send({ type: 'response.done', response: { id, object: 'realtime.response', status, output: [], usage } });
      ws.on('message', (data, isBinary) => {
        if (isBinary) return;
        let ev: { type?: string; session?: Record<string, unknown>; response?: { modalities?: string[] } };
        try {
          ev = JSON.parse(data.toString());
        } catch {
          send({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_json', message: 'invalid JSON' } });
          return;
        }
        got.push(ev);
        if (ev.type === 'session.update') {
          session = { ...session, ...ev.session };
          send({ type: 'session.updated', session });
        }
        // Test hooks: an upstream `error` event, or a close, with the text given.
        if (ev.type === 'mock.error')
          send({ type: 'error', error: { type: 'invalid_request_error', code: 'mock_error', message: (ev as { message?: string }).message } });
        if (ev.type === 'mock.close') ws.close(4000, (ev as { reason?: string }).reason);
        if (ev.type === 'response.cancel') {
          const s = streaming;
          if (!s || !state.stream?.honorCancel) return;
          clearTimeout(s.timer);
          streaming = undefined;
          done(s.id, 'cancelled', usageFor(s.audio, { sent: s.sent, stream: state.stream }));
        }
        if (ev.type === 'response.create') {
          const id = `resp_${seq}`;
          const modalities = ev.response?.modalities ?? (session.modalities as string[]);
          const audio = modalities.includes('audio');
          send({
            type: 'response.created',
            response: { id, object: 'realtime.response', status: 'in_progress', output: [], modalities, output_audio_format: session.output_audio_format },
          });
          send({
            type: 'response.output_item.added',
            response_id: id,
            output_index: 0,
            item: { id: `item_${seq}`, type: 'message', role: 'assistant', content: [] },
          });
          const item = { response_id: id, item_id: `item_${seq}`, output_index: 0, content_index: 0 };
          const stream = state.stream;
          if (stream) {
            const s: NonNullable<typeof streaming> = { id, sent: 0, audio };
            streaming = s;
            const tick = () => {
              if (s.sent === stream.deltas) {
                streaming = undefined;
                done(id, 'completed', usageFor(audio, { sent: s.sent, stream }));
                return;
              }
              if (s.sent === stream.pauseAfter) return;
              s.sent++;
              if (audio) {
                send({ type: 'response.audio.delta', ...item, delta: Buffer.alloc(stream.audioBytes, s.sent).toString('base64') });
                send({ type: 'response.audio_transcript.delta', ...item, delta: stream.text });
              } else send({ type: 'response.text.delta', ...item, delta: stream.text });
              s.timer = setTimeout(tick, 2);
            };
            tick();
            return;
          }
          if (audio) {
            send({ type: 'response.audio_transcript.delta', ...item, delta: 'Hello there' });
            send({ type: 'response.audio.delta', ...item, delta: Buffer.from('pcm16').toString('base64') });
          } else send({ type: 'response.text.delta', ...item, delta: 'Hello there' });
          done(id, 'completed', usageFor(audio));
        }
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
