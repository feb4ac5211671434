/**
 * A strict OpenAI Chat Completions upstream on the mock, under a path prefix (`{mock}/strict`):
 * like OpenAI's own API it refuses request fields the API does not define (400 "Unrecognized
 * request argument supplied: top_k") and message fields a role does not take, so conversions that
 * leak canonical-only fields fail here. It answers tool calls too:
 *
 * - with `tools` and a last message from the user: one call per tool whose name appears in the
 *   user's text (the first tool when none does and tool_choice is `required`), args
 *   `{"city":"Paris"}`, finish `tool_calls`;
 * - otherwise text (`mock.options.chunks`), usage from `mock.options`; with tool results in the
 *   conversation the text quotes them (`Tool said: …`).
 * - `POST {prefix}/v1/embeddings`: three-number vectors per input, usage = promptTokens.
 *
 * `installStrictOpenAIMock(mock, '/strict')`; the channel's base_url is `${mock.url}/strict`.
 */
import type http from 'node:http';
import type { MockRequest, MockUpstream } from './index';
import { OPENAI_CHAT_REQUEST_FIELDS } from '../helpers/protocolFields';

const FIELDS = OPENAI_CHAT_REQUEST_FIELDS;
const MESSAGE_FIELDS: Record<string, string[]> = {
  system: ['role', 'content', 'name'],
  developer: ['role', 'content', 'name'],
  user: ['role', 'content', 'name'],
  assistant: ['role', 'content', 'name', 'tool_calls', 'refusal', 'audio', 'function_call'],
  tool: ['role', 'content', 'tool_call_id'],
};
const EMBEDDING_FIELDS = new Set(['model', 'input', 'encoding_format', 'dimensions', 'user']);

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const refuse = (res: http.ServerResponse, message: string, param: string | null = null) =>
  send(res, 400, { error: { message, type: 'invalid_request_error', param, code: null } });

/** OpenAI's refusal of a body it does not define, or undefined when the body is acceptable. */
export function strictChatProblem(body: Record<string, any>): { message: string; param: string } | undefined {
  for (const k of Object.keys(body)) if (!FIELDS.has(k)) return { message: `Unrecognized request argument supplied: ${k}`, param: k };
  if (!Array.isArray(body.messages) || !body.messages.length) return { message: "Invalid 'messages': empty array.", param: 'messages' };
  for (const [i, m] of (body.messages as Array<Record<string, any>>).entries()) {
    const allowed = MESSAGE_FIELDS[m?.role];
    if (!allowed) return { message: `Invalid value: '${m?.role}'. Supported values are: 'system', 'assistant', 'user', 'tool'`, param: `messages[${i}].role` };
    for (const k of Object.keys(m))
      if (!allowed.includes(k)) return { message: `Additional properties are not allowed ('${k}' was unexpected) - 'messages.${i}'`, param: `messages[${i}]` };
    for (const tc of m.tool_calls ?? []) {
      for (const k of Object.keys(tc))
        if (!['id', 'type', 'function'].includes(k))
          return { message: `Additional properties are not allowed ('${k}' was unexpected)`, param: `messages[${i}].tool_calls` };
    }
  }
  return undefined;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p: any) => (p?.type === 'text' ? String(p.text ?? '') : '')).join('');
  return '';
}

export function installStrictOpenAIMock(mock: MockUpstream, prefix = '/strict'): void {
  const esc = prefix.replace(/[/]/g, '\\/');
  mock.route('POST', new RegExp(`^${esc}/v1/chat/completions$`), async (req: MockRequest, res) => {
    const body = (req.json ?? {}) as Record<string, any>;
    const problem = strictChatProblem(body);
    if (problem) return refuse(res, problem.message, problem.param);
    const o = mock.options;
    const messages = body.messages as Array<Record<string, any>>;
    const last = messages[messages.length - 1]!;
    const tools = Array.isArray(body.tools) ? (body.tools as Array<{ function: { name: string } }>) : [];
    const id = `chatcmpl-strict${Date.now()}`;
    const model = String(body.model);
    const usage = { prompt_tokens: o.promptTokens, completion_tokens: o.completionTokens, total_tokens: o.promptTokens + o.completionTokens };
    let calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> = [];
    if (tools.length && last.role === 'user' && body.tool_choice !== 'none') {
      const text = textOf(last.content);
      let chosen = tools.filter((t) => text.includes(t.function.name));
      if (!chosen.length && body.tool_choice === 'required') chosen = tools.slice(0, 1);
      calls = chosen.map((t, k) => ({
        id: `call_strict${k}`,
        type: 'function',
        function: { name: t.function.name, arguments: JSON.stringify({ city: 'Paris' }) },
      }));
    }
    const results = messages.filter((m) => m.role === 'tool').map((m) => textOf(m.content));
    const content = results.length ? `Tool said: ${results.join(' | ')}` : o.chunks.join('');
    if (!body.stream) {
      const message: Record<string, unknown> = { role: 'assistant', content: calls.length ? null : content };
      if (calls.length) message.tool_calls = calls;
      send(res, 200, {
        id,
        object: 'chat.completion',
        created: 1,
        model,
        choices: [{ index: 0, message, finish_reason: calls.length ? 'tool_calls' : 'stop' }],
        usage,
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
      );
    chunk({ role: 'assistant', content: '' });
    if (calls.length) {
      calls.forEach((c, index) => {
        chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] });
        // arguments in two fragments, as OpenAI streams them
        chunk({ tool_calls: [{ index, function: { arguments: c.function.arguments.slice(0, 5) } }] });
        chunk({ tool_calls: [{ index, function: { arguments: c.function.arguments.slice(5) } }] });
      });
    } else if (results.length) chunk({ content });
    else for (const piece of o.chunks) chunk({ content: piece });
    chunk({}, calls.length ? 'tool_calls' : 'stop');
    if (body.stream_options?.include_usage)
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model, choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  });
  mock.route('POST', new RegExp(`^${esc}/v1/embeddings$`), (req, res) => {
    const body = (req.json ?? {}) as Record<string, any>;
    for (const k of Object.keys(body)) if (!EMBEDDING_FIELDS.has(k)) return refuse(res, `Unrecognized request argument supplied: ${k}`, k);
    const inputs: unknown[] = Array.isArray(body.input) ? body.input : [body.input];
    send(res, 200, {
      object: 'list',
      model: body.model,
      // answered out of order on purpose: clients must sort by index
      data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: [index + 0.5, 0.25, -1] })).reverse(),
      usage: { prompt_tokens: mock.options.promptTokens, total_tokens: mock.options.promptTokens },
    });
  });
}
