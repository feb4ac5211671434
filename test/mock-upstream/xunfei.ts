/**
 * iFlytek Spark chat over WebSocket, as iFlytek documents it: `GET /{version}/chat?authorization=
 * …&date=…&host=…` (pro-128k / max-32k: `/chat/{name}`). The mock checks the signature itself: the
 * `authorization` query is base64 of `api_key="…", algorithm="hmac-sha256", headers="host date
 * request-line", signature="…"` where the signature is base64 HMAC-SHA256 (APISecret) of
 * `host: {host}\ndate: {date}\nGET {path} HTTP/1.1`; a bad one is refused at the handshake with 401
 * `{"message":"HMAC signature does not match"}`, a stale date with 403. Then it reads one request
 * frame and answers frames `{header:{code:0, sid, status 0/1/2}, payload:{choices:{status, seq,
 * text:[{content, role:'assistant', index:0}]}}}`, usage on the last; a request frame with a wrong
 * app_id or no domain gets an error frame (code 10163 / 11200) and a close.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export const SPARK_APP_ID = 'spark-app';
export const SPARK_API_KEY = 'spark-api-key';
export const SPARK_API_SECRET = 'spark-api-secret';

export interface SparkMock {
  url: string;
  /** Handshakes: the path and whether the signature held. */
  handshakes: Array<{ path: string; signed: boolean }>;
  frames: Array<Record<string, any>>;
  chunks: string[];
  usage: { prompt_tokens: number; completion_tokens: number };
  close(): Promise<void>;
}

export async function startSparkMock(): Promise<SparkMock> {
  const server = http.createServer((_req, res) => {
    res.statusCode = 426;
    res.end();
  });
  const wss = new WebSocketServer({ noServer: true });
  const sockets = new Set<WebSocket>();
  const state: SparkMock = {
    url: '',
    handshakes: [],
    frames: [],
    chunks: ['Hello', ' from', ' Spark'],
    usage: { prompt_tokens: 11, completion_tokens: 7 },
    close: async () => {
      for (const s of sockets) s.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  server.on('upgrade', (req, socket, head) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const q = u.searchParams;
    const date = q.get('date') ?? '';
    const host = q.get('host') ?? '';
    let signed = false;
    try {
      const auth = Buffer.from(q.get('authorization') ?? '', 'base64').toString('utf8');
      const m = /^api_key="([^"]+)", algorithm="hmac-sha256", headers="host date request-line", signature="([^"]+)"$/.exec(auth);
      const expected = crypto.createHmac('sha256', SPARK_API_SECRET).update(`host: ${host}\ndate: ${date}\nGET ${u.pathname} HTTP/1.1`).digest('base64');
      signed = !!m && m[1] === SPARK_API_KEY && m[2] === expected && host === req.headers.host;
    } catch {
      /* not base64: unsigned */
    }
    state.handshakes.push({ path: u.pathname, signed });
    const refuse = (status: number, message: string) => {
      const body = JSON.stringify({ message });
      socket.end(`HTTP/1.1 ${status} Error\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    };
    if (!signed) return refuse(401, 'HMAC signature does not match');
    if (Math.abs(Date.parse(date) - Date.now()) > 300_000) return refuse(403, 'HMAC signature cannot be verified, a valid date or x-date header is required');
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on('close', () => sockets.delete(ws));
      ws.once('message', (data) => {
        const f = JSON.parse(data.toString());
        state.frames.push(f);
        const sid = 'cht000b1234@dx18d';
        const error = (code: number, message: string) => {
          ws.send(JSON.stringify({ header: { code, message, sid, status: 2 } }));
          ws.close();
        };
        if (f?.header?.app_id !== SPARK_APP_ID) return error(11200, 'AppIdNoAuthError:(11200)auth no license');
        if (!f?.parameter?.chat?.domain || !Array.isArray(f?.payload?.message?.text)) return error(10163, 'request parameter error');
        state.chunks.forEach((c, i) => {
          const status = i === 0 ? 0 : i === state.chunks.length - 1 ? 2 : 1;
          const frame: Record<string, any> = {
            header: { code: 0, message: 'Success', sid, status },
            payload: { choices: { status, seq: i, text: [{ content: c, role: 'assistant', index: 0 }] } },
          };
          if (status === 2) {
            const u = state.usage;
            frame.payload.usage = {
              text: {
                question_tokens: 4,
                prompt_tokens: u.prompt_tokens,
                completion_tokens: u.completion_tokens,
                total_tokens: u.prompt_tokens + u.completion_tokens,
              },
            };
          }
          ws.send(JSON.stringify(frame));
        });
        ws.close();
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
