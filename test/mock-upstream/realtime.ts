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

export interface RealtimeMock {
  url: string;
  handshakes: RealtimeHandshake[];
  /** Events the mock received, per connection. */
  received: unknown[][];
  usage: RealtimeUsageShape;
  /** Refuse the next handshakes with this status (0: accept). */
  refuseStatus: number;
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
      const body = JSON.stringify({ error: { message: status === 401 ? 'Incorrect API key provided' : 'refused', type: 'invalid_request_error', code: null } });
      socket.end(`HTTP/1.1 ${status} Error\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on('close', () => sockets.delete(ws));
      const got: unknown[] = [];
      state.received.push(got);
      const model = u.searchParams.get('model') ?? u.searchParams.get('deployment') ?? '';
      let seq = 0;
      const send = (ev: Record<string, unknown>) => ws.send(JSON.stringify({ event_id: `event_${++seq}`, ...ev }));
      send({ type: 'session.created', session: { id: 'sess_mock', object: 'realtime.session', model, modalities: ['text', 'audio'], voice: 'alloy' } });
      ws.on('message', (data, isBinary) => {
        if (isBinary) return;
        let ev: { type?: string; session?: unknown };
        try {
          ev = JSON.parse(data.toString());
        } catch {
          send({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_json', message: 'invalid JSON' } });
          return;
        }
        got.push(ev);
        if (ev.type === 'session.update') send({ type: 'session.updated', session: { id: 'sess_mock', ...(ev.session as object) } });
        if (ev.type === 'response.create') {
          const id = `resp_${seq}`;
          send({ type: 'response.created', response: { id, object: 'realtime.response', status: 'in_progress', output: [] } });
          send({
            type: 'response.output_item.added',
            response_id: id,
            output_index: 0,
            item: { id: `item_${seq}`, type: 'message', role: 'assistant', content: [] },
          });
          send({ type: 'response.audio_transcript.delta', response_id: id, item_id: `item_${seq}`, output_index: 0, content_index: 0, delta: 'Hello there' });
          send({
            type: 'response.audio.delta',
            response_id: id,
            item_id: `item_${seq}`,
            output_index: 0,
            content_index: 0,
            delta: Buffer.from('pcm16').toString('base64'),
          });
          const usage = state.usage;
          send({
            type: 'response.done',
            response: {
              id,
              object: 'realtime.response',
              status: 'completed',
              output: [],
              usage: { total_tokens: usage.input_tokens + usage.output_tokens, ...usage },
            },
          });
        }
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
