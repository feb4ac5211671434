/**
 * Tool-call answers of the mock's OpenAI modes (Chat Completions and Responses), used when
 * `mock.options.toolCall` names a tool the request offers: the answer is a call of that tool with
 * arguments `{"city":"Paris"}` (a custom tool gets that text as its input), as the Claude and
 * Gemini mocks answer theirs. Stream and whole body, usage as the text answers carry it.
 */
import type http from 'node:http';
import type { MockRequest, MockUpstream } from './index';

export interface OfferedTool {
  name: string;
  /** `custom`: a freeform tool (Chat `custom`, Responses `custom`) whose call carries text input. */
  kind: 'function' | 'custom';
}

export const TOOL_ARGUMENTS = '{"city":"Paris"}';

/** The named tool among a Chat request's `tools`. */
export function offeredChatTool(body: any, name: string | undefined): OfferedTool | undefined {
  if (!name) return undefined;
  for (const t of Array.isArray(body?.tools) ? body.tools : []) {
    if (t?.type === 'function' && t.function?.name === name) return { name, kind: 'function' };
    if (t?.type === 'custom' && t.custom?.name === name) return { name, kind: 'custom' };
  }
  return undefined;
}

/** The named tool among a Responses request's `tools` (also inside `namespace` groups and `additional_tools` input items). */
export function offeredResponsesTool(body: any, name: string | undefined): OfferedTool | undefined {
  if (!name) return undefined;
  const find = (list: unknown): OfferedTool | undefined => {
    for (const t of Array.isArray(list) ? (list as any[]) : []) {
      if (t?.type === 'namespace') {
        const inner = find(t.tools);
        if (inner) return inner;
      } else if ((t?.type === 'function' || t?.type === 'custom') && t.name === name) return { name, kind: t.type };
    }
    return undefined;
  };
  const extra = (Array.isArray(body?.input) ? body.input : []).filter((i: any) => i?.type === 'additional_tools').flatMap((i: any) => i.tools ?? []);
  return find(body?.tools) ?? find(extra);
}

function sendJson(res: http.ServerResponse, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function chatToolCall(res: http.ServerResponse, mock: MockUpstream, body: any, tool: OfferedTool): void {
  const o = mock.options;
  const id = `chatcmpl-mocktool${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const model = String(body.model ?? 'unknown');
  const usage = { prompt_tokens: o.promptTokens, completion_tokens: o.completionTokens, total_tokens: o.promptTokens + o.completionTokens };
  const call =
    tool.kind === 'custom'
      ? { id: 'call_mock1', type: 'custom', custom: { name: tool.name, input: TOOL_ARGUMENTS } }
      : { id: 'call_mock1', type: 'function', function: { name: tool.name, arguments: TOOL_ARGUMENTS } };
  if (!body.stream) {
    sendJson(res, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }],
      usage,
    });
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  chunk({ role: 'assistant', content: null }, null);
  if (tool.kind === 'custom') chunk({ tool_calls: [{ index: 0, ...call }] }, null);
  else {
    // The name first, then the arguments in two pieces, as OpenAI streams them.
    chunk({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: tool.name, arguments: '' } }] }, null);
    chunk({ tool_calls: [{ index: 0, function: { arguments: TOOL_ARGUMENTS.slice(0, 7) } }] }, null);
    chunk({ tool_calls: [{ index: 0, function: { arguments: TOOL_ARGUMENTS.slice(7) } }] }, null);
  }
  chunk({}, 'tool_calls');
  if (body.stream_options?.include_usage) res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`);
  res.end('data: [DONE]\n\n');
}

export function responsesToolCall(res: http.ServerResponse, mock: MockUpstream, body: any, tool: OfferedTool): void {
  const o = mock.options;
  const usage = {
    input_tokens: o.promptTokens,
    input_tokens_details: { cached_tokens: o.cachedTokens },
    output_tokens: o.completionTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: o.promptTokens + o.completionTokens,
  };
  const item =
    tool.kind === 'custom'
      ? { id: 'ctc_mock1', type: 'custom_tool_call', status: 'completed', call_id: 'call_mock1', name: tool.name, input: TOOL_ARGUMENTS }
      : { id: 'fc_mock1', type: 'function_call', status: 'completed', call_id: 'call_mock1', name: tool.name, arguments: TOOL_ARGUMENTS };
  const response = (status: string) => ({
    id: 'resp_mocktool',
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    model: body.model,
    output: status === 'completed' ? [item] : [],
    ...(status === 'completed' ? { usage } : {}),
  });
  if (!body.stream) return sendJson(res, response('completed'));
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  ev('response.created', { response: response('in_progress') });
  ev('response.in_progress', { response: response('in_progress') });
  if (item.type === 'custom_tool_call') {
    ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', input: '' } });
    ev('response.custom_tool_call_input.delta', { item_id: item.id, output_index: 0, delta: TOOL_ARGUMENTS });
    ev('response.custom_tool_call_input.done', { item_id: item.id, output_index: 0, input: TOOL_ARGUMENTS });
  } else {
    ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } });
    ev('response.function_call_arguments.delta', { item_id: item.id, output_index: 0, delta: TOOL_ARGUMENTS.slice(0, 7) });
    ev('response.function_call_arguments.delta', { item_id: item.id, output_index: 0, delta: TOOL_ARGUMENTS.slice(7) });
    ev('response.function_call_arguments.done', { item_id: item.id, output_index: 0, arguments: TOOL_ARGUMENTS });
  }
  ev('response.output_item.done', { output_index: 0, item });
  ev('response.completed', { response: response('completed') });
  res.end();
}

/** Answers an OpenAI Chat or Responses call with the tool call `options.toolCall` asks for, when the request offers that tool. */
export function answerToolCall(req: MockRequest, res: http.ServerResponse, mock: MockUpstream): boolean {
  const name = mock.options.toolCall;
  if (!name || req.method !== 'POST') return false;
  if (/\/chat\/completions$/.test(req.path)) {
    const tool = offeredChatTool(req.json, name);
    if (tool) chatToolCall(res, mock, req.json, tool);
    return !!tool;
  }
  if (/\/responses$/.test(req.path)) {
    const tool = offeredResponsesTool(req.json, name);
    if (tool) responsesToolCall(res, mock, req.json, tool);
    return !!tool;
  }
  return false;
}
