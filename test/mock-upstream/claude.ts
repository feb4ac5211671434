/**
 * Claude Messages API on the mock upstream: `POST /v1/messages`, JSON and SSE, installed with
 * `installClaudeMock(mock)` (uses the mock's `route` hook; the generic faults still apply first).
 * Also AWS Bedrock's `POST /model/{modelId}/invoke` (SigV4 header present, `anthropic_version`
 * bedrock-2023-05-31, no model in the body) answering the same Claude message JSON.
 *
 * Behaviour:
 * - no `x-api-key` or no `anthropic-version` → 401 / 400 in Claude's error shape;
 * - missing model / max_tokens / messages → 400 invalid_request_error;
 * - with tools, when tool_choice is any/tool or the last user text mentions "weather", answers a
 *   tool_use (`get_weather`-style: first tool, input `{city:"Paris"}`) after a short text; also
 *   when `options.toolCall` names an offered tool (that one);
 * - `role: "system"` turns inside `messages` → 400 unless the model is an Opus 4.8 (the models that
 *   take mid-conversation system messages; Bedrock never), any other role → 400;
 * - `thinking: {type:'enabled'|'adaptive'}` adds a signed thinking block first (`sig-mock`);
 * - `POST /v1/messages/count_tokens` answers `{input_tokens: state.countTokens}` (400 when the body
 *   has `max_tokens` or `stream`, as Anthropic refuses message-only fields there);
 * - usage: input = options.promptTokens, output = options.completionTokens, cache read =
 *   options.cachedTokens, cache creation = `claude.cacheCreationTokens` (per install).
 * Claude-specific faults (model, key or `x-mock-fault`): `overloaded` (529 overloaded_error),
 * `midstream` (an `error` event after the first text delta).
 */
import type http from 'node:http';
import type { MockRequest, MockUpstream } from './index';

export interface ClaudeMockState {
  cacheCreationTokens: number;
  /** What count_tokens answers. */
  countTokens: number;
  /** Text of the tool_use preamble. */
  toolPreamble: string;
}

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function claudeErr(res: http.ServerResponse, status: number, type: string, message: string) {
  send(res, status, { type: 'error', error: { type, message } });
}

function lastUserText(messages: unknown[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: string; content?: unknown };
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) return m.content.map((b: { type?: string; text?: string }) => (b?.type === 'text' ? (b.text ?? '') : '')).join('');
  }
  return '';
}

/** Anthropic's role rule: user/assistant, and system turns only on models that take them (never on Bedrock). */
function roleError(messages: unknown[], model: string, anthropic: boolean): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    const role = (messages[i] as { role?: unknown })?.role;
    if (role === 'user' || role === 'assistant') continue;
    if (role === 'system' && anthropic && /opus-4-8/.test(model)) continue;
    return role === 'system' ? `messages.${i}.role: 'system' is not supported on this model` : `messages.${i}.role: must be "user" or "assistant"`;
  }
  return undefined;
}

export function installClaudeMock(mock: MockUpstream): ClaudeMockState {
  const state: ClaudeMockState = { cacheCreationTokens: 0, countTokens: 321, toolPreamble: 'Let me check.' };
  // AWS Bedrock: POST /model/{modelId}/invoke, SigV4-signed (checked by the tests), no model in the body
  mock.route('POST', /^\/model\/[^/]+\/invoke$/, async (req: MockRequest, res) => {
    const auth = String(req.headers.authorization ?? '');
    if (!auth.startsWith('AWS4-HMAC-SHA256 Credential=') || !req.headers['x-amz-date']) return send(res, 403, { message: 'Missing Authentication Token' });
    const body = req.json as Record<string, any> | undefined;
    if (!body || body.anthropic_version !== 'bedrock-2023-05-31' || 'model' in body) return send(res, 400, { message: 'Malformed input request' });
    const modelId = decodeURIComponent(req.path.split('/')[2]!);
    await answer(req, res, { ...body, model: modelId, stream: false });
  });
  mock.route('POST', /^\/v1\/messages$/, async (req: MockRequest, res) => {
    if (!req.headers['x-api-key']) return claudeErr(res, 401, 'authentication_error', 'x-api-key header is required');
    if (!/^\d{4}-\d{2}-\d{2}$/.test(String(req.headers['anthropic-version'] ?? ''))) {
      return claudeErr(res, 400, 'invalid_request_error', 'anthropic-version header is required');
    }
    await answer(req, res, req.json as Record<string, any> | undefined);
  });
  mock.route('POST', /^\/v1\/messages\/count_tokens$/, (req: MockRequest, res) => {
    if (!req.headers['x-api-key']) return claudeErr(res, 401, 'authentication_error', 'x-api-key header is required');
    const body = req.json as Record<string, any> | undefined;
    if (!body || typeof body.model !== 'string' || !Array.isArray(body.messages))
      return claudeErr(res, 400, 'invalid_request_error', 'messages: Field required');
    for (const k of ['max_tokens', 'stream']) if (k in body) return claudeErr(res, 400, 'invalid_request_error', `${k}: Extra inputs are not permitted`);
    const bad = roleError(body.messages, body.model, true);
    if (bad) return claudeErr(res, 400, 'invalid_request_error', bad);
    send(res, 200, { input_tokens: state.countTokens });
  });

  async function answer(req: MockRequest, res: http.ServerResponse, body: Record<string, any> | undefined) {
    if (!body || typeof body.model !== 'string') return claudeErr(res, 400, 'invalid_request_error', 'model: Field required');
    if (typeof body.max_tokens !== 'number') return claudeErr(res, 400, 'invalid_request_error', 'max_tokens: Field required');
    if (!Array.isArray(body.messages)) return claudeErr(res, 400, 'invalid_request_error', 'messages: Field required');
    const bad = roleError(body.messages, body.model, !req.path.startsWith('/model/'));
    if (bad) return claudeErr(res, 400, 'invalid_request_error', bad);
    if (req.fault === 'overloaded') return claudeErr(res, 529, 'overloaded_error', 'Overloaded');

    const o = mock.options;
    const tools = Array.isArray(body.tools) ? body.tools : [];
    const asked = tools.some((t: { name?: string }) => t?.name === o.toolCall) ? o.toolCall : undefined;
    const forced = body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool' || asked !== undefined;
    const useTool = tools.length > 0 && body.tool_choice?.type !== 'none' && (forced || /weather/i.test(lastUserText(body.messages)));
    const toolName = body.tool_choice?.type === 'tool' ? String(body.tool_choice.name) : (asked ?? String(tools[0]?.name ?? ''));
    const thinking = body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive';
    const id = `msg_mock${Date.now()}`;
    const textPieces = useTool ? [state.toolPreamble] : o.chunks;
    const usage = {
      input_tokens: o.promptTokens,
      output_tokens: o.completionTokens,
      cache_read_input_tokens: o.cachedTokens,
      cache_creation_input_tokens: state.cacheCreationTokens,
    };
    const stopReason = useTool ? 'tool_use' : 'end_turn';

    if (!body.stream) {
      const content: unknown[] = [];
      if (thinking) content.push({ type: 'thinking', thinking: 'Mock thinking.', signature: 'sig-mock' });
      content.push({ type: 'text', text: textPieces.join('') });
      if (useTool) content.push({ type: 'tool_use', id: 'toolu_mock1', name: toolName, input: { city: 'Paris' } });
      send(res, 200, { id, type: 'message', role: 'assistant', model: body.model, content, stop_reason: stopReason, stop_sequence: null, usage });
      return;
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const ev = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    ev('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    ev('ping', {});
    let index = 0;
    if (thinking) {
      ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: 'Mock thinking.' } });
      ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: 'sig-mock' } });
      ev('content_block_stop', { index });
      index++;
    }
    ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
    for (let i = 0; i < textPieces.length; i++) {
      ev('content_block_delta', { index, delta: { type: 'text_delta', text: textPieces[i] } });
      if (req.fault === 'midstream' && i === 0) {
        ev('error', { error: { type: 'overloaded_error', message: 'Overloaded' } });
        res.end();
        return;
      }
    }
    ev('content_block_stop', { index });
    index++;
    if (useTool) {
      ev('content_block_start', { index, content_block: { type: 'tool_use', id: 'toolu_mock1', name: toolName, input: {} } });
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '{"city": "Par' } });
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: 'is"}' } });
      ev('content_block_stop', { index });
    }
    ev('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: o.completionTokens } });
    ev('message_stop', {});
    res.end();
  }
  return state;
}
