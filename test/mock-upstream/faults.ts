/**
 * An OpenAI-compatible upstream (POST /v1/chat/completions, JSON answers as OpenAI sends them)
 * whose behaviour is scheduled per upstream key: a channel's key gives a per-channel schedule,
 * each key of a multi-key channel its own. Every request is recorded with the key it carried.
 *
 * Schedules: ok; fail (always `status`, 500 by default); failN (`n` failures, then healed);
 * flaky (every `every`-th request fails with `status`, the first one included);
 * slow (`delayMs` before answering); hold (answers once `until` settles: the test decides when);
 * rate (429 with `Retry-After: retryAfter` seconds);
 * auth (401 `invalid_api_key`, as OpenAI answers a revoked key); quota (429 `insufficient_quota`,
 * as OpenAI answers an account without credit).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Schedule =
  | { mode: 'ok' }
  | { mode: 'fail'; status?: number }
  | { mode: 'failN'; n: number; status?: number }
  | { mode: 'flaky'; every: number; status?: number }
  | { mode: 'slow'; delayMs: number }
  | { mode: 'hold'; until: Promise<unknown> }
  | { mode: 'rate'; retryAfter: number }
  | { mode: 'auth' }
  | { mode: 'quota' };

export interface FaultRequest {
  key: string;
  at: number;
  status: number;
}

export interface FaultUpstream {
  url: string;
  requests: FaultRequest[];
  /** Sets the schedule of one key (replaces it and its counters). */
  set(key: string, schedule: Schedule): void;
  /** Requests that carried `key`. */
  count(key: string): number;
  reset(): void;
  close(): Promise<void>;
}

function openaiError(res: http.ServerResponse, status: number, message: string, code: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error: { message, type: code === 'invalid_api_key' ? 'invalid_request_error' : 'server_error', param: null, code } }));
}

export async function startFaultUpstream(): Promise<FaultUpstream> {
  const schedules = new Map<string, { s: Schedule; seen: number }>();
  const sockets = new Set<import('node:net').Socket>();
  const up: FaultUpstream = {
    url: '',
    requests: [],
    set(key, s) {
      schedules.set(key, { s, seen: 0 });
    },
    count: (key) => up.requests.filter((r) => r.key === key).length,
    reset() {
      up.requests.length = 0;
      schedules.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const key = String(req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
    const rec: FaultRequest = { key, at: Date.now(), status: 200 };
    up.requests.push(rec);
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/chat/completions')) {
      rec.status = 404;
      return openaiError(res, 404, 'not found', 'not_found');
    }
    let model = 'm';
    try {
      model = String((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model?: string }).model ?? 'm');
    } catch {
      /* keep the default */
    }
    const entry = schedules.get(key);
    const s: Schedule = entry?.s ?? { mode: 'ok' };
    const seen = entry ? entry.seen++ : 0;
    const fail = (status: number) => {
      rec.status = status;
      openaiError(res, status, `scheduled failure ${status}`, 'server_error');
    };
    switch (s.mode) {
      case 'fail':
        return fail(s.status ?? 500);
      case 'failN':
        if (seen < s.n) return fail(s.status ?? 500);
        break;
      case 'flaky':
        if (seen % s.every === 0) return fail(s.status ?? 500);
        break;
      case 'rate':
        rec.status = 429;
        return openaiError(res, 429, 'Rate limit reached for requests', 'rate_limit_exceeded', { 'retry-after': String(s.retryAfter) });
      case 'auth':
        rec.status = 401;
        return openaiError(res, 401, 'Incorrect API key provided.', 'invalid_api_key');
      case 'quota':
        rec.status = 429;
        res.writeHead(429, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({
            error: {
              message: 'You exceeded your current quota, please check your plan and billing details.',
              type: 'insufficient_quota',
              param: null,
              code: 'insufficient_quota',
            },
          }),
        );
      case 'slow':
        await new Promise((r) => setTimeout(r, s.delayMs));
        break;
      case 'hold':
        await s.until;
        break;
      default:
        break;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-fault',
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      }),
    );
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  up.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return up;
}
