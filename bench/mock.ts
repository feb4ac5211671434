/**
 * Mock OpenAI and Claude upstream on raw node:http, as cheap as possible so it is never the bottleneck:
 *   POST …/chat/completions  → a precomputed JSON buffer; with `"stream":true` an SSE stream:
 *                              a role chunk at once, `chunks` deltas every `intervalMs`, a usage
 *                              chunk, `data: [DONE]`.
 *   POST …/v1/messages       → the same as a Claude Messages answer; with `"stream":true`
 *                              Anthropic's event sequence: message_start and content_block_start at
 *                              once, `chunks` content_block_delta every `intervalMs` (the same texts
 *                              as the OpenAI deltas), content_block_stop, message_delta with usage,
 *                              message_stop.
 *   GET  …/models            → a model list.
 *   POST /__config {chunks, intervalMs} → changes the stream shape (the harness, between phases).
 *   GET  /__stats            → {requests, streams, cpuUs, rss}: the mock reports its own cost, so
 *                              the harness can compute its ceiling.
 * Run as a child: `node --import tsx bench/mock.ts --port N`.
 */
import http from 'node:http';
import { createGatewayServer, listenGateway } from '../server/src/lib/httpServer';

export const MOCK_MODEL = 'gpt-4o-mini';
/** The model the gateway's Claude channel serves (the conversion benchmark's Responses client asks for it). */
export const MOCK_CLAUDE_MODEL = 'claude-mock';
/** Text of the non-streaming answers, in both protocols: the harness's sanity check looks for it. */
export const MOCK_ANSWER = 'Hello from the mock upstream.';

export interface MockShape {
  chunks: number;
  intervalMs: number;
}

/** Content of delta i: the client checks the concatenation to detect lost or reordered frames. */
export const deltaText = (i: number) => `t${i} `;
export const expectedContent = (chunks: number) => Array.from({ length: chunks }, (_, i) => deltaText(i)).join('');

const COMPLETION = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: MOCK_MODEL,
    choices: [{ index: 0, message: { role: 'assistant', content: MOCK_ANSWER }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
  }),
);
const COMPLETION_HEADERS = { 'content-type': 'application/json', 'content-length': String(COMPLETION.length) };
const CLAUDE_MESSAGE = Buffer.from(
  JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model: MOCK_CLAUDE_MODEL,
    content: [{ type: 'text', text: MOCK_ANSWER }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: 7 },
  }),
);
const CLAUDE_MESSAGE_HEADERS = { 'content-type': 'application/json', 'content-length': String(CLAUDE_MESSAGE.length) };
const MODELS = Buffer.from(JSON.stringify({ object: 'list', data: [{ id: MOCK_MODEL, object: 'model', created: 0, owned_by: 'mock' }] }));
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' };

const frame = (o: unknown) => Buffer.from(`data: ${JSON.stringify(o)}\n\n`);
const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: MOCK_MODEL };
const ROLE_FRAME = frame({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
const DONE_FRAME = Buffer.from('data: [DONE]\n\n');

/** Anthropic names every event twice: in the `event:` line and in the data's `type`. */
const claudeFrame = (o: { type: string; [field: string]: unknown }) => Buffer.from(`event: ${o.type}\ndata: ${JSON.stringify(o)}\n\n`);
const CLAUDE_START = [
  claudeFrame({
    type: 'message_start',
    message: {
      id: 'msg_bench',
      type: 'message',
      role: 'assistant',
      model: MOCK_CLAUDE_MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 1 },
    },
  }),
  claudeFrame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
];

/**
 * The stream frames of both protocols for a shape, built once per shape. A stream is `head` at
 * once, then `deltas` one per interval, then `tail`; one write per event, as a provider sends them
 * (a target's stream path may treat a chunk of several events differently).
 */
export function buildFrames(chunks: number) {
  const texts = Array.from({ length: chunks }, (_, i) => deltaText(i));
  const openai = {
    head: [ROLE_FRAME],
    deltas: texts.map((t) => frame({ ...base, choices: [{ index: 0, delta: { content: t }, finish_reason: null }] })),
    tail: [
      frame({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      frame({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: chunks, total_tokens: 12 + chunks } }),
      DONE_FRAME,
    ],
  };
  const claude = {
    head: CLAUDE_START,
    deltas: texts.map((t) => claudeFrame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } })),
    tail: [
      claudeFrame({ type: 'content_block_stop', index: 0 }),
      claudeFrame({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: chunks } }),
      claudeFrame({ type: 'message_stop' }),
    ],
  };
  return { openai, claude };
}
type StreamFrames = ReturnType<typeof buildFrames>['openai'];

export function startMock(port: number, host = '127.0.0.1'): Promise<http.Server> {
  let shape: MockShape = { chunks: 20, intervalMs: 5 };
  let frames = buildFrames(shape.chunks);
  let requests = 0;
  let streams = 0;
  const cpu0 = process.cpuUsage();

  function stream(res: http.ServerResponse, f: StreamFrames) {
    streams++;
    const { intervalMs } = shape;
    res.writeHead(200, SSE_HEADERS);
    for (const h of f.head) res.write(h);
    let i = 0;
    let closed = false;
    res.on('close', () => {
      closed = true;
    });
    const finish = () => {
      for (let t = 0; t < f.tail.length - 1; t++) res.write(f.tail[t]);
      res.end(f.tail[f.tail.length - 1]);
    };
    if (intervalMs <= 0) {
      for (const d of f.deltas) res.write(d);
      return finish();
    }
    const tick = () => {
      if (closed) return;
      if (i < f.deltas.length) {
        res.write(f.deltas[i++]);
        setTimeout(tick, intervalMs);
      } else finish();
    };
    setTimeout(tick, intervalMs);
  }

  /** Answers a generation request of either protocol once its body is in. */
  function generate(req: http.IncomingMessage, res: http.ServerResponse, claude: boolean) {
    requests++;
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = parts.length === 1 ? parts[0] : Buffer.concat(parts);
      // A substring test, not JSON.parse: the mock must cost far less than what it measures.
      if (/"stream"\s*:\s*true/.test(body.toString('latin1'))) return stream(res, claude ? frames.claude : frames.openai);
      res.writeHead(200, claude ? CLAUDE_MESSAGE_HEADERS : COMPLETION_HEADERS);
      res.end(claude ? CLAUDE_MESSAGE : COMPLETION);
    });
  }

  const server = createGatewayServer((req, res) => {
    const url = req.url ?? '/';
    if (req.method === 'POST') {
      const q = url.indexOf('?');
      const pathname = q < 0 ? url : url.slice(0, q);
      if (pathname.endsWith('/chat/completions')) return generate(req, res, false);
      if (pathname.endsWith('/v1/messages')) return generate(req, res, true);
    }
    if (req.method === 'GET' && url.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(MODELS);
    }
    if (url === '/__stats') {
      const c = process.cpuUsage(cpu0);
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ requests, streams, cpuUs: c.user + c.system, rss: process.memoryUsage().rss, shape }));
    }
    if (req.method === 'POST' && url === '/__config') {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        try {
          const next = JSON.parse(Buffer.concat(parts).toString()) as Partial<MockShape>;
          shape = { chunks: Math.max(1, Number(next.chunks ?? shape.chunks)), intervalMs: Math.max(0, Number(next.intervalMs ?? shape.intervalMs)) };
          frames = buildFrames(shape.chunks);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(shape));
        } catch {
          res.writeHead(400);
          res.end('bad json');
        }
      });
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"not found"}}');
  });
  // A real provider's front end accepts thousands of new connections a second. A Node listener
  // takes one per event-loop round (libuv ≥ 1.45), and the mock shares its core with the load
  // generator: with Node's defaults, a burst of new upstream connections from a target would wait
  // in (or overflow) the mock's accept queue, and the mock, not the target, would be measured. So
  // the mock listens as the gateway does.
  return listenGateway(server, { port, host }).then(() => server);
}

// Run as a program only when started as mock.ts itself (the gateway bundle inlines this module).
if (require.main === module && /(^|[\\/])mock\.[cm]?[jt]s$/.test(process.argv[1] ?? '')) {
  const i = process.argv.indexOf('--port');
  const port = i > 0 ? Number(process.argv[i + 1]) : 0;
  void startMock(port).then((s) => {
    const addr = s.address();
    // eslint-disable-next-line no-console -- a command-line tool's output
    console.log(`mock listening on ${typeof addr === 'object' && addr ? addr.port : port}`);
  });
}
