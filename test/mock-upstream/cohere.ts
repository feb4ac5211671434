/**
 * Cohere API v2 on the mock upstream: `POST /v2/chat` (JSON and SSE events) and `POST /v2/rerank`.
 *
 * Behaviour: Bearer key required (401 `{message}`); `messages` required (400). Chat usage:
 * billed_units input = options.promptTokens, output = options.completionTokens; `tokens` figures
 * are larger (+5 each) so a test can tell which one was billed. With `tools` and a last user message
 * mentioning "weather", answers a tool call `{city:"Paris"}` with a tool plan. Rerank: scores
 * 1/(i+1), `meta.billed_units: {search_units: 1, input_tokens: options.promptTokens}` (no
 * input_tokens with fault `nousage`).
 */
import type http from 'node:http';
import type { MockRequest, MockUpstream } from './index';

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function lastUser(messages: Array<{ role?: string; content?: unknown }>): string {
  for (let i = messages.length - 1; i >= 0; i--)
    if (messages[i]?.role === 'user') return typeof messages[i]!.content === 'string' ? (messages[i]!.content as string) : JSON.stringify(messages[i]!.content);
  return '';
}

export function installCohereMock(mock: MockUpstream): void {
  mock.route('POST', /^\/v2\/chat$/, (req: MockRequest, res) => {
    if (!String(req.headers.authorization ?? '').startsWith('Bearer ')) return send(res, 401, { message: 'no api key supplied' });
    const body = req.json ?? {};
    if (!Array.isArray(body.messages) || !body.messages.length) return send(res, 400, { message: 'invalid request: messages must not be empty' });
    const o = mock.options;
    const usage = {
      billed_units: { input_tokens: o.promptTokens, output_tokens: o.completionTokens },
      tokens: { input_tokens: o.promptTokens + 5, output_tokens: o.completionTokens + 5 },
    };
    const wantsTool = Array.isArray(body.tools) && body.tools.length > 0 && /weather/i.test(lastUser(body.messages));
    const toolName = wantsTool ? String(body.tools[0].function?.name ?? 'tool') : '';
    if (!body.stream) {
      const message: Record<string, unknown> = { role: 'assistant' };
      if (wantsTool) {
        message.tool_plan = 'I will look up the weather.';
        message.tool_calls = [{ id: 'call_cohere1', type: 'function', function: { name: toolName, arguments: '{"city":"Paris"}' } }];
      } else message.content = [{ type: 'text', text: o.chunks.join('') }];
      return send(res, 200, { id: 'cohere-chat-1', finish_reason: wantsTool ? 'TOOL_CALL' : 'COMPLETE', message, usage });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const ev = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    ev('message-start', { id: 'cohere-chat-2', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } });
    if (wantsTool) {
      ev('tool-plan-delta', { delta: { message: { tool_plan: 'I will look up the weather.' } } });
      ev('tool-call-start', {
        index: 0,
        delta: { message: { tool_calls: { id: 'call_cohere1', type: 'function', function: { name: toolName, arguments: '' } } } },
      });
      ev('tool-call-delta', { index: 0, delta: { message: { tool_calls: { function: { arguments: '{"city":' } } } } });
      ev('tool-call-delta', { index: 0, delta: { message: { tool_calls: { function: { arguments: '"Paris"}' } } } } });
      ev('tool-call-end', { index: 0 });
    } else {
      ev('content-start', { index: 0, delta: { message: { content: { type: 'text', text: '' } } } });
      for (const c of o.chunks) ev('content-delta', { index: 0, delta: { message: { content: { text: c } } } });
      ev('content-end', { index: 0 });
    }
    ev('message-end', { delta: { finish_reason: wantsTool ? 'TOOL_CALL' : 'COMPLETE', usage } });
    res.end();
  });
  mock.route('POST', /^\/v2\/embed$/, (req, res) => {
    if (!String(req.headers.authorization ?? '').startsWith('Bearer ')) return send(res, 401, { message: 'no api key supplied' });
    const body = req.json ?? {};
    if (!Array.isArray(body.texts) || !body.texts.every((t: unknown) => typeof t === 'string') || typeof body.input_type !== 'string') {
      return send(res, 400, { message: 'invalid request: texts (strings) and input_type are required' });
    }
    const vec = (i: number) => [i + 0.5, 0.25, -0.125];
    send(res, 200, {
      id: 'embed-1',
      texts: body.texts,
      embeddings: { float: body.texts.map((_: string, i: number) => vec(i)) },
      meta: { billed_units: { input_tokens: mock.options.promptTokens } },
    });
  });
  mock.route('POST', /^\/v2\/rerank$/, (req, res) => {
    if (!String(req.headers.authorization ?? '').startsWith('Bearer ')) return send(res, 401, { message: 'no api key supplied' });
    const body = req.json ?? {};
    const docs: unknown[] = Array.isArray(body.documents) ? body.documents : [];
    if (typeof body.query !== 'string' || !docs.every((d) => typeof d === 'string'))
      return send(res, 400, { message: 'invalid request: query and string documents required' });
    const results = docs.map((_, index) => ({ index, relevance_score: 1 / (index + 1) })).slice(0, typeof body.top_n === 'number' ? body.top_n : docs.length);
    const billed: Record<string, number> = { search_units: 1 };
    if (req.fault !== 'nousage') billed.input_tokens = mock.options.promptTokens;
    send(res, 200, { id: 'rerank-1', results, meta: { api_version: { version: '2' }, billed_units: billed } });
  });
}
