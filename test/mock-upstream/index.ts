/**
 * A real HTTP server that speaks the OpenAI API (JSON and SSE) for relay tests, with fault modes
 * chosen per request. Fault = `x-mock-fault` header, or `fault-<mode>` inside the model name, or
 * inside the upstream key (Authorization / api-key), so a channel can be made faulty by its key.
 *
 * Modes: 500, 502, 401, 403, 429, 400 (error status), keyword (403 with an auto-disable keyword),
 * slow (1.5 s before answering), hang (never answers), nousage (no usage in stream or body),
 * cut (stream stops mid-way: socket destroyed), nonjson (200 with HTML), drip (stream of 200
 * chunks, 20 ms apart: for client-abort tests), cutearly (stream headers, then the socket dies),
 * pause (stream headers, 2 s of silence, then the answer), midstream (an in-band `{"error": …}`
 * event after the first text chunk, then the end of the stream, as OpenAI sends it).
 *
 * Other providers add routes with `mock.route(method, pathRegex, handler)` (checked first).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerToolCall } from './toolCalls';

export interface MockRequest {
  method: string;
  path: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  json?: any;
  fault: string;
}

export type MockHandler = (req: MockRequest, res: http.ServerResponse, mock: MockUpstream) => void | Promise<void>;

export interface MockOptions {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /** Content pieces of a streamed (and, joined, a non-streamed) answer. */
  chunks: string[];
  /** Answer with a call of this tool when the request offers it (every protocol; args `{"city":"Paris"}`). */
  toolCall?: string;
  /** The `pause` fault's silence lasts until this settles (instead of 2 s): the test decides when. */
  pauseUntil?: Promise<unknown>;
}

export interface MockUpstream {
  url: string;
  port: number;
  requests: MockRequest[];
  options: MockOptions;
  route(method: string, path: RegExp, handler: MockHandler): void;
  /** Clears recorded requests and restores default options. */
  reset(): void;
  /** Requests whose path matches. */
  received(path: string | RegExp): MockRequest[];
  close(): Promise<void>;
}

export const DEFAULT_MOCK_OPTIONS: MockOptions = { promptTokens: 11, completionTokens: 7, cachedTokens: 0, chunks: ['Hello', ' from', ' the', ' mock'] };

const FAULT_RE = /fault-([a-z0-9]+)/;

function faultOf(req: http.IncomingMessage, json: { model?: unknown } | undefined): string {
  const h = req.headers['x-mock-fault'];
  if (typeof h === 'string' && h) return h;
  const model = typeof json?.model === 'string' ? json.model : '';
  const fromModel = FAULT_RE.exec(model)?.[1] ?? FAULT_RE.exec(decodeURIComponent(req.url ?? ''))?.[1];
  if (fromModel) return fromModel;
  const key = String(req.headers.authorization ?? req.headers['api-key'] ?? req.headers['x-api-key'] ?? req.headers['x-goog-api-key'] ?? '');
  return FAULT_RE.exec(key)?.[1] ?? '';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function sendJson(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function openaiErr(res: http.ServerResponse, status: number, message: string, code = 'mock_error') {
  sendJson(res, status, { error: { message, type: 'mock_error', code } });
}

/** Applies the generic (status) faults; returns true when the request was answered. */
async function genericFault(req: MockRequest, res: http.ServerResponse): Promise<boolean> {
  switch (req.fault) {
    case '500':
    case '502':
    case '401':
    case '403':
    case '429':
    case '400':
      openaiErr(res, Number(req.fault), `mock failure ${req.fault}`);
      return true;
    case 'keyword':
      openaiErr(res, 403, 'Your credit balance is too low to access the API');
      return true;
    case 'nonjson':
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Bad gateway page</body></html>');
      return true;
    case 'slow':
      await sleep(1500);
      return false;
    case 'hang':
      await new Promise(() => undefined);
      return true;
    default:
      return false;
  }
}

function usageOf(mock: MockUpstream) {
  const o = mock.options;
  const u: Record<string, unknown> = {
    prompt_tokens: o.promptTokens,
    completion_tokens: o.completionTokens,
    total_tokens: o.promptTokens + o.completionTokens,
  };
  if (o.cachedTokens) u.prompt_tokens_details = { cached_tokens: o.cachedTokens };
  return u;
}

async function chat(req: MockRequest, res: http.ServerResponse, mock: MockUpstream, legacy = false) {
  const body = req.json ?? {};
  const model = String(body.model ?? 'unknown');
  const id = `chatcmpl-mock${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const chunks = mock.options.chunks;
  if (!body.stream) {
    const content = chunks.join('');
    const out: Record<string, unknown> = legacy
      ? { id, object: 'text_completion', created, model, choices: [{ index: 0, text: content, finish_reason: 'stop' }] }
      : { id, object: 'chat.completion', created, model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] };
    if (req.fault !== 'nousage') out.usage = usageOf(mock);
    sendJson(res, 200, out);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (req.fault === 'pause') {
    res.flushHeaders();
    await (mock.options.pauseUntil ?? sleep(2000));
  }
  if (req.fault === 'cutearly') {
    res.flushHeaders();
    await sleep(10);
    res.socket?.destroy();
    return;
  }
  const piece = (text: string, finish: string | null) =>
    legacy
      ? { id, object: 'text_completion', created, model, choices: [{ index: 0, text, finish_reason: finish }] }
      : { id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta: text ? { content: text } : {}, finish_reason: finish }] };
  // `ragged`: the whole stream is sent at the end in 7-byte pieces (blocks split anywhere).
  const ragged = req.fault === 'ragged';
  let pending = '';
  const write = (obj: unknown) => {
    const block = `data: ${JSON.stringify(obj)}\n\n`;
    if (ragged) pending += block;
    else res.write(block);
  };
  if (!legacy)
    write({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
  if (req.fault === 'drip') {
    for (let i = 0; i < 200; i++) {
      if (res.destroyed) return;
      write(piece('word ', null));
      await sleep(20);
    }
  } else {
    for (let i = 0; i < chunks.length; i++) {
      write(piece(chunks[i]!, null));
      if (req.fault === 'midstream' && i === 0) {
        res.end(
          `data: ${JSON.stringify({ error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } })}\n\n`,
        );
        return;
      }
      if (req.fault === 'cut' && i === 1) {
        await sleep(20);
        res.socket?.destroy();
        return;
      }
    }
  }
  write(piece('', 'stop'));
  if (body.stream_options?.include_usage && req.fault !== 'nousage') {
    write({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageOf(mock) });
  }
  if (ragged) {
    pending += 'data: [DONE]\n\n';
    for (let i = 0; i < pending.length; i += 7) {
      res.write(pending.slice(i, i + 7));
      await sleep(1);
    }
    res.end();
    return;
  }
  res.end('data: [DONE]\n\n');
}

function inputsOf(input: unknown): unknown[] {
  return Array.isArray(input) && (input.length === 0 || typeof input[0] !== 'number') ? input : [input];
}

/** Text of the last input item when it is a user message ('' for anything else, e.g. a function_call_output). */
function lastUserInput(input: unknown): string {
  if (typeof input === 'string') return input;
  const last = Array.isArray(input) ? input.at(-1) : undefined;
  if (!last || typeof last !== 'object' || (last.type !== undefined && last.type !== 'message') || last.role !== 'user') return '';
  if (typeof last.content === 'string') return last.content;
  return Array.isArray(last.content) ? last.content.map((p: { text?: unknown }) => (typeof p?.text === 'string' ? p.text : '')).join('') : '';
}

/**
 * OpenAI Responses API (`/v1/responses`, Azure `/openai/v1/responses`), JSON and the full event
 * sequence. With function tools, when tool_choice forces one or the last user input mentions
 * "weather", it calls the function tools (each with `{"city":"Paris"}`; only the first when
 * `parallel_tool_calls` is false) after a short text. With `reasoning`, a reasoning item comes
 * first (summary "Mock reasoning.", `encrypted_content` "enc-mock" when included) and 2 reasoning
 * tokens are reported. `max_output_tokens` below 16 → 400, as OpenAI answers.
 */
async function responses(req: MockRequest, res: http.ServerResponse, mock: MockUpstream) {
  const body = req.json ?? {};
  const o = mock.options;
  if (typeof body.max_output_tokens === 'number' && body.max_output_tokens < 16) {
    return openaiErr(res, 400, "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16.", 'integer_below_min_value');
  }
  const tools: Array<{ type?: string; name?: string }> = Array.isArray(body.tools) ? body.tools.filter((t: { type?: string }) => t?.type === 'function') : [];
  const forced = body.tool_choice === 'required' || body.tool_choice?.type === 'function';
  const useTools = tools.length > 0 && body.tool_choice !== 'none' && (forced || /weather/i.test(lastUserInput(body.input)));
  const called = !useTools ? [] : body.tool_choice?.type === 'function' ? [body.tool_choice.name] : tools.map((t) => t.name);
  const calls = body.parallel_tool_calls === false ? called.slice(0, 1) : called.slice(0, 2);
  const reasoning = !!body.reasoning;
  const encrypted = Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content');
  const pieces = useTools ? ['Let me check.'] : o.chunks;
  const usage = {
    input_tokens: o.promptTokens,
    input_tokens_details: { cached_tokens: o.cachedTokens },
    output_tokens: o.completionTokens,
    output_tokens_details: { reasoning_tokens: reasoning ? 2 : 0 },
    total_tokens: o.promptTokens + o.completionTokens,
  };
  const items: Array<Record<string, unknown>> = [];
  if (reasoning) {
    items.push({
      id: 'rs_mock',
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Mock reasoning.' }],
      ...(encrypted ? { encrypted_content: 'enc-mock' } : {}),
    });
  }
  items.push({
    id: 'msg_mock',
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text: pieces.join(''), annotations: [] }],
  });
  calls.forEach((name, i) =>
    items.push({ id: `fc_mock${i}`, type: 'function_call', status: 'completed', call_id: `call_mock${i}`, name, arguments: '{"city":"Paris"}' }),
  );
  const response = (status: string, output: unknown[], withUsage: boolean) => ({
    id: 'resp_mock',
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    model: body.model,
    output,
    ...(withUsage && req.fault !== 'nousage' ? { usage } : { usage: null }),
  });
  if (!body.stream) return sendJson(res, 200, response('completed', items, true));
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data, sequence_number: seq++ })}\n\n`);
  ev('response.created', { response: response('in_progress', [], false) });
  ev('response.in_progress', { response: response('in_progress', [], false) });
  for (let index = 0; index < items.length; index++) {
    const item = items[index]!;
    if (item.type === 'reasoning') {
      ev('response.output_item.added', { output_index: index, item: { id: item.id, type: 'reasoning', summary: [] } });
      const part = { item_id: item.id, output_index: index, summary_index: 0 };
      ev('response.reasoning_summary_part.added', { ...part, part: { type: 'summary_text', text: '' } });
      ev('response.reasoning_summary_text.delta', { ...part, delta: 'Mock reasoning.' });
      ev('response.reasoning_summary_text.done', { ...part, text: 'Mock reasoning.' });
      ev('response.reasoning_summary_part.done', { ...part, part: { type: 'summary_text', text: 'Mock reasoning.' } });
    } else if (item.type === 'message') {
      ev('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } });
      const part = { item_id: item.id, output_index: index, content_index: 0 };
      ev('response.content_part.added', { ...part, part: { type: 'output_text', text: '', annotations: [] } });
      for (let i = 0; i < pieces.length; i++) {
        ev('response.output_text.delta', { ...part, delta: pieces[i], logprobs: [] });
        if (req.fault === 'cut' && i === 1) {
          await sleep(20);
          res.socket?.destroy();
          return;
        }
      }
      ev('response.output_text.done', { ...part, text: pieces.join(''), logprobs: [] });
      ev('response.content_part.done', { ...part, part: { type: 'output_text', text: pieces.join(''), annotations: [] } });
    } else {
      ev('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
      ev('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: '{"city":' });
      ev('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: '"Paris"}' });
      ev('response.function_call_arguments.done', { item_id: item.id, output_index: index, arguments: item.arguments });
    }
    ev('response.output_item.done', { output_index: index, item });
  }
  ev('response.completed', { response: response('completed', items, true) });
  res.end();
}

const BUILTIN: Array<[string, RegExp, MockHandler]> = [
  ['POST', /^(\/v1|\/openai\/v1)\/responses$/, responses],
  [
    'POST',
    /^\/v1\/rerank$/,
    (q, s, m) => {
      const docs: unknown[] = Array.isArray(q.json?.documents) ? q.json.documents : [];
      const out: Record<string, unknown> = { model: q.json?.model, results: docs.map((_, index) => ({ index, relevance_score: 1 / (index + 1) })) };
      if (q.fault !== 'nousage') out.usage = { total_tokens: m.options.promptTokens };
      sendJson(s, 200, out);
    },
  ],
  [
    'POST',
    /^\/v1\/images\/edits$/,
    (q, s) => {
      const m = /name="n"\r\n\r\n(\d+)/.exec(q.body.toString('latin1'));
      const n = Number(m?.[1] ?? 1);
      sendJson(s, 200, { created: Math.floor(Date.now() / 1000), data: Array.from({ length: n }, (_, i) => ({ b64_json: `img${i}` })) });
    },
  ],
  ['POST', /^\/v1\/chat\/completions$/, (q, s, m) => chat(q, s, m)],
  ['POST', /^\/openai\/deployments\/[^/]+\/chat\/completions$/, (q, s, m) => chat(q, s, m)],
  ['POST', /^\/custom\/[^/]+\/chat$/, (q, s, m) => chat(q, s, m)],
  ['POST', /^\/v1\/completions$/, (q, s, m) => chat(q, s, m, true)],
  [
    'POST',
    /^(\/v1|\/openai\/deployments\/[^/]+)\/embeddings$/,
    (q, s, m) => {
      const inputs = inputsOf(q.json?.input);
      const out: Record<string, unknown> = {
        object: 'list',
        model: q.json?.model,
        data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3] })),
      };
      if (q.fault !== 'nousage') out.usage = { prompt_tokens: m.options.promptTokens, total_tokens: m.options.promptTokens };
      sendJson(s, 200, out);
    },
  ],
  [
    'POST',
    /^\/v1\/moderations$/,
    (q, s) => {
      const inputs = inputsOf(q.json?.input);
      sendJson(s, 200, { id: 'modr-mock', model: q.json?.model, results: inputs.map(() => ({ flagged: false, categories: {}, category_scores: {} })) });
    },
  ],
  [
    'POST',
    /^\/v1\/images\/generations$/,
    (q, s) => {
      const n = Number(q.json?.n ?? 1);
      sendJson(s, 200, { created: Math.floor(Date.now() / 1000), data: Array.from({ length: n }, (_, i) => ({ url: `https://example.com/img${i}.png` })) });
    },
  ],
  [
    'POST',
    /^\/v1\/audio\/speech$/,
    (_q, s) => {
      const audio = Buffer.concat([Buffer.from('ID3'), Buffer.alloc(2048, 7)]);
      s.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': audio.length });
      s.end(audio);
    },
  ],
  [
    'POST',
    /^\/v1\/audio\/(transcriptions|translations)$/,
    (q, s) => {
      const text = q.body.includes('name="response_format"\r\n\r\ntext') ? 'text' : 'json';
      if (text === 'text') {
        s.writeHead(200, { 'content-type': 'text/plain' });
        s.end('hello transcription');
      } else sendJson(s, 200, { text: 'hello transcription' });
    },
  ],
  [
    'GET',
    /^\/v1\/models$/,
    (_q, s) =>
      sendJson(s, 200, { object: 'list', data: ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'].map((id) => ({ id, object: 'model', owned_by: 'mock' })) }),
  ],
  [
    'GET',
    /^\/v1\/dashboard\/billing\/credit_grants$/,
    (_q, s) => sendJson(s, 200, { object: 'credit_summary', total_granted: 20, total_used: 7.5, total_available: 12.5 }),
  ],
  ['GET', /^\/v1\/dashboard\/billing\/subscription$/, (_q, s) => sendJson(s, 200, { object: 'billing_subscription', hard_limit_usd: 100 })],
  ['GET', /^\/v1\/dashboard\/billing\/usage$/, (_q, s) => sendJson(s, 200, { object: 'list', total_usage: 2500 })],
];

export async function startMockUpstream(): Promise<MockUpstream> {
  const extra: Array<[string, RegExp, MockHandler]> = [];
  const sockets = new Set<import('node:net').Socket>();
  const mock: MockUpstream = {
    url: '',
    port: 0,
    requests: [],
    options: { ...DEFAULT_MOCK_OPTIONS, chunks: [...DEFAULT_MOCK_OPTIONS.chunks] },
    route(method, path, handler) {
      extra.push([method, path, handler]);
    },
    reset() {
      mock.requests.length = 0;
      mock.options = { ...DEFAULT_MOCK_OPTIONS, chunks: [...DEFAULT_MOCK_OPTIONS.chunks] };
    },
    received(path) {
      return mock.requests.filter((r) => (typeof path === 'string' ? r.path === path : path.test(r.path)));
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
    const body = Buffer.concat(chunks);
    let json: unknown;
    if (String(req.headers['content-type'] ?? '').includes('json') && body.length) {
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        json = undefined;
      }
    }
    const url = req.url ?? '/';
    const path = url.split('?')[0]!;
    const rec: MockRequest = { method: req.method ?? 'GET', path, url, headers: req.headers, body, json, fault: faultOf(req, json as { model?: unknown }) };
    mock.requests.push(rec);
    try {
      for (const [m, re, h] of [...extra, ...BUILTIN]) {
        if (m === rec.method && re.test(path)) {
          if (await genericFault(rec, res)) return;
          if (answerToolCall(rec, res, mock)) return;
          await h(rec, res, mock);
          return;
        }
      }
      openaiErr(res, 404, `mock: no route for ${rec.method} ${path}`, 'not_found');
    } catch (err) {
      if (!res.headersSent) openaiErr(res, 500, `mock crashed: ${(err as Error).message}`);
      else res.destroy();
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  mock.port = port;
  mock.url = `http://127.0.0.1:${port}`;
  return mock;
}
