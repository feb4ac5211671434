/**
 * Wire checks for relay tests: read a client-side answer (stream or body) in each protocol and
 * fail on anything a real client would choke on, and check that a request an upstream received is
 * one its API accepts (known fields only, roles, tool call/result pairing, schema dialects).
 *
 * Readers throw an Error naming the problem; request checks return a list of problems (empty when
 * the request is valid), so a test can show them all at once.
 */
import { GEMINI_GENERATION_CONFIG_FIELDS, GEMINI_SCHEMA_FIELDS, OPENAI_CHAT_REQUEST_FIELDS } from './protocolFields';

export interface SseEvent {
  event?: string;
  data: string;
}

/** SSE blocks of a whole stream (LF or CRLF; `data:` lines of one event joined). */
export function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    if (!block.trim()) continue;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (event !== undefined || data.length) out.push({ event, data: data.join('\n') });
  }
  return out;
}

export interface ToolCallSeen {
  name: string;
  /** Parsed JSON arguments, or the raw input of a freeform (custom) tool call. */
  args: unknown;
}

/** What a client gets out of one answer. */
export interface Answer {
  text: string;
  toolCalls: ToolCallSeen[];
  stop?: string;
  usage?: Record<string, unknown>;
}

const isObj = (v: unknown): v is Record<string, any> => !!v && typeof v === 'object' && !Array.isArray(v);

function json(data: string, where: string): any {
  try {
    return JSON.parse(data);
  } catch {
    throw new Error(`${where}: data is not JSON: ${data.slice(0, 200)}`);
  }
}

function jsonObjectArgs(text: string, where: string): Record<string, unknown> {
  const v = json(text === '' ? '{}' : text, where);
  if (!isObj(v)) throw new Error(`${where}: tool arguments are not a JSON object: ${text}`);
  return v;
}

// ------------------------------------------------------------------------------ Claude Messages

/** A Claude Messages stream as the Anthropic SDK reads it: message_start … message_stop, blocks opened, filled and closed in order. */
export function readClaudeStream(text: string): Answer {
  const events = parseSse(text).filter((e) => e.event !== 'ping');
  if (!events.length) throw new Error('claude stream: no events');
  const blocks: Array<{ type: string; open: boolean; text: string; json: string; name?: string }> = [];
  const answer: Answer = { text: '', toolCalls: [] };
  let started = false;
  let stopped = false;
  let delta = false;
  for (const [i, e] of events.entries()) {
    const d = json(e.data, `claude stream event ${i}`);
    if (d.type !== e.event) throw new Error(`claude stream event ${i}: event "${e.event}" carries data of type "${d.type}"`);
    if (stopped) throw new Error(`claude stream: "${e.event}" after message_stop`);
    if (!started && e.event !== 'message_start') throw new Error(`claude stream: first event is "${e.event}", not message_start`);
    switch (e.event) {
      case 'message_start':
        if (started) throw new Error('claude stream: second message_start');
        if (d.message?.type !== 'message' || d.message?.role !== 'assistant' || !Array.isArray(d.message?.content))
          throw new Error('claude stream: message_start without an assistant message');
        started = true;
        break;
      case 'content_block_start': {
        if (d.index !== blocks.length) throw new Error(`claude stream: block ${d.index} started, ${blocks.length} expected`);
        const b = d.content_block;
        if (!isObj(b) || typeof b.type !== 'string') throw new Error('claude stream: content_block_start without a block');
        if (b.type === 'tool_use' && (typeof b.id !== 'string' || typeof b.name !== 'string')) throw new Error('claude stream: tool_use block without id/name');
        blocks.push({ type: b.type, open: true, text: '', json: '', name: b.name });
        break;
      }
      case 'content_block_delta': {
        const b = blocks[d.index];
        if (!b?.open) throw new Error(`claude stream: delta for block ${d.index}, which is not open`);
        const want: Record<string, string> = {
          text_delta: 'text',
          input_json_delta: 'tool_use',
          thinking_delta: 'thinking',
          signature_delta: 'thinking',
          citations_delta: 'text',
        };
        if (want[d.delta?.type] !== b.type) throw new Error(`claude stream: ${d.delta?.type} inside a ${b.type} block`);
        if (d.delta.type === 'text_delta') b.text += String(d.delta.text);
        if (d.delta.type === 'input_json_delta') b.json += String(d.delta.partial_json);
        break;
      }
      case 'content_block_stop': {
        const b = blocks[d.index];
        if (!b?.open) throw new Error(`claude stream: stop of block ${d.index}, which is not open`);
        b.open = false;
        if (b.type === 'text') answer.text += b.text;
        if (b.type === 'tool_use') answer.toolCalls.push({ name: b.name!, args: jsonObjectArgs(b.json, `claude stream tool_use ${b.name}`) });
        break;
      }
      case 'message_delta':
        if (typeof d.delta?.stop_reason !== 'string') throw new Error('claude stream: message_delta without stop_reason');
        if (typeof d.usage?.output_tokens !== 'number') throw new Error('claude stream: message_delta without usage.output_tokens');
        answer.stop = d.delta.stop_reason;
        answer.usage = d.usage;
        delta = true;
        break;
      case 'message_stop':
        stopped = true;
        break;
      case 'error':
        throw new Error(`claude stream: error event ${e.data}`);
      default:
        throw new Error(`claude stream: unknown event "${e.event}"`);
    }
  }
  if (!stopped) throw new Error('claude stream: no message_stop');
  if (!delta) throw new Error('claude stream: no message_delta');
  if (blocks.some((b) => b.open)) throw new Error('claude stream: a block was never stopped');
  return answer;
}

export function readClaudeMessage(body: any): Answer {
  if (body?.type !== 'message' || body.role !== 'assistant' || !Array.isArray(body.content))
    throw new Error(`claude message: not a message: ${JSON.stringify(body).slice(0, 200)}`);
  const answer: Answer = { text: '', toolCalls: [], stop: body.stop_reason, usage: body.usage };
  for (const b of body.content) {
    if (b?.type === 'text') answer.text += b.text;
    if (b?.type === 'tool_use') {
      if (!isObj(b.input)) throw new Error('claude message: tool_use input is not an object');
      answer.toolCalls.push({ name: b.name, args: b.input });
    }
  }
  if (typeof body.usage?.input_tokens !== 'number' || typeof body.usage?.output_tokens !== 'number') throw new Error('claude message: no usage');
  return answer;
}

// ----------------------------------------------------------------------------- OpenAI Responses

/**
 * A Responses stream: response.created first, response.completed (with usage) last, each output
 * item added → (deltas) → done. `strict` also asks every text delta to belong to an added
 * message item, as OpenAI streams them (a passthrough answer is only what the upstream sent).
 */
export function readResponsesStream(text: string, strict = true): Answer {
  const events = parseSse(text);
  if (!events.length) throw new Error('responses stream: no events');
  const items = new Map<number, { item: any; done: boolean; args: string; text: string }>();
  const answer: Answer = { text: '', toolCalls: [] };
  let deltaText = '';
  let completed: any;
  for (const [i, e] of events.entries()) {
    if (e.data === '[DONE]') continue;
    const d = json(e.data, `responses stream event ${i}`);
    if (e.event !== undefined && d.type !== e.event) throw new Error(`responses stream event ${i}: event "${e.event}" carries data of type "${d.type}"`);
    if (i === 0 && d.type !== 'response.created') throw new Error(`responses stream: first event is "${d.type}", not response.created`);
    if (completed) throw new Error(`responses stream: "${d.type}" after response.completed`);
    const at = (what: string) => {
      const it = items.get(d.output_index);
      if (!it || it.done) throw new Error(`responses stream: ${what} for output ${d.output_index}, which is not open`);
      if (d.item_id !== undefined && it.item.id !== undefined && d.item_id !== it.item.id)
        throw new Error(`responses stream: ${what} names item ${d.item_id}, open is ${it.item.id}`);
      return it;
    };
    switch (d.type) {
      case 'response.created':
      case 'response.in_progress':
        if (!isObj(d.response) || typeof d.response.id !== 'string') throw new Error(`responses stream: ${d.type} without a response id`);
        break;
      case 'response.output_item.added':
        if (typeof d.output_index !== 'number' || items.has(d.output_index))
          throw new Error(`responses stream: output_item.added with a bad index ${d.output_index}`);
        if (d.output_index !== items.size) throw new Error(`responses stream: output ${d.output_index} added, ${items.size} expected`);
        if (!isObj(d.item) || typeof d.item.type !== 'string') throw new Error('responses stream: output_item.added without an item');
        items.set(d.output_index, { item: d.item, done: false, args: '', text: '' });
        break;
      case 'response.output_text.delta':
        if (strict || d.output_index !== undefined) at('output_text.delta').text += String(d.delta);
        deltaText += String(d.delta);
        break;
      case 'response.function_call_arguments.delta':
        at('function_call_arguments.delta').args += String(d.delta);
        break;
      case 'response.function_call_arguments.done': {
        const it = at('function_call_arguments.done');
        if (typeof d.arguments === 'string' && d.arguments !== it.args)
          throw new Error(`responses stream: arguments done "${d.arguments}" ≠ deltas "${it.args}"`);
        break;
      }
      case 'response.custom_tool_call_input.delta':
        at('custom_tool_call_input.delta').args += String(d.delta);
        break;
      case 'response.output_item.done': {
        const it = at('output_item.done');
        it.done = true;
        const item = d.item;
        if (!isObj(item) || item.type !== it.item.type) throw new Error('responses stream: output_item.done changes the item type');
        if (item.type === 'function_call') {
          if (typeof item.name !== 'string' || typeof item.call_id !== 'string' || typeof item.arguments !== 'string')
            throw new Error('responses stream: function_call without name/call_id/arguments');
          if (it.args && it.args !== item.arguments) throw new Error(`responses stream: function_call arguments "${item.arguments}" ≠ deltas "${it.args}"`);
          answer.toolCalls.push({ name: item.name, args: jsonObjectArgs(item.arguments, `responses function_call ${item.name}`) });
        } else if (item.type === 'custom_tool_call') {
          if (typeof item.name !== 'string' || typeof item.call_id !== 'string' || typeof item.input !== 'string')
            throw new Error('responses stream: custom_tool_call without name/call_id/input');
          answer.toolCalls.push({ name: item.name, args: item.input });
        } else if (item.type === 'message') {
          const t = (item.content ?? []).map((c: any) => (c?.type === 'output_text' ? String(c.text) : '')).join('');
          if (strict && t !== it.text) throw new Error(`responses stream: message text "${t}" ≠ deltas "${it.text}"`);
          answer.text += t;
        }
        break;
      }
      case 'response.completed':
        completed = d.response;
        break;
      case 'response.failed':
      case 'response.incomplete':
      case 'error':
        throw new Error(`responses stream: ${d.type} ${e.data.slice(0, 300)}`);
      default:
        if (!/^response\.[a-z_.]+$/.test(String(d.type))) throw new Error(`responses stream: unknown event type "${d.type}"`);
    }
  }
  if (!completed) throw new Error('responses stream: no response.completed');
  if (completed.status !== 'completed') throw new Error(`responses stream: completed with status ${completed.status}`);
  if (typeof completed.usage?.input_tokens !== 'number' || typeof completed.usage?.output_tokens !== 'number')
    throw new Error('responses stream: no usage in response.completed');
  if ([...items.values()].some((it) => !it.done)) throw new Error('responses stream: an output item was never done');
  if (!answer.text && deltaText && !strict) answer.text = deltaText;
  answer.usage = completed.usage;
  answer.stop = completed.status;
  return answer;
}

export function readResponsesBody(body: any): Answer {
  if (body?.object !== 'response' || !Array.isArray(body.output)) throw new Error(`responses body: not a response: ${JSON.stringify(body).slice(0, 200)}`);
  const answer: Answer = { text: '', toolCalls: [], stop: body.status, usage: body.usage };
  for (const item of body.output) {
    if (item?.type === 'message') answer.text += (item.content ?? []).map((c: any) => (c?.type === 'output_text' ? String(c.text) : '')).join('');
    if (item?.type === 'function_call') answer.toolCalls.push({ name: item.name, args: jsonObjectArgs(item.arguments, 'responses function_call') });
    if (item?.type === 'custom_tool_call') answer.toolCalls.push({ name: item.name, args: item.input });
  }
  return answer;
}

// ----------------------------------------------------------------------------------------- Gemini

function readGeminiChunk(c: any, where: string, answer: Answer): void {
  if (!isObj(c)) throw new Error(`${where}: not an object`);
  if (c.error) throw new Error(`${where}: error ${JSON.stringify(c.error)}`);
  if (!Array.isArray(c.candidates) && !c.usageMetadata) throw new Error(`${where}: neither candidates nor usageMetadata`);
  for (const cand of c.candidates ?? []) {
    if (cand.finishReason) answer.stop = cand.finishReason;
    const parts = cand.content?.parts;
    if (parts === undefined) continue;
    if (!Array.isArray(parts)) throw new Error(`${where}: content.parts is not an array`);
    if (cand.content.role !== undefined && cand.content.role !== 'model') throw new Error(`${where}: candidate role "${cand.content.role}"`);
    for (const p of parts) {
      if (typeof p?.text === 'string' && !p.thought) answer.text += p.text;
      if (p?.functionCall !== undefined) {
        if (typeof p.functionCall.name !== 'string' || (p.functionCall.args !== undefined && !isObj(p.functionCall.args)))
          throw new Error(`${where}: functionCall without a name or with non-object args`);
        answer.toolCalls.push({ name: p.functionCall.name, args: p.functionCall.args ?? {} });
      }
    }
  }
  if (c.usageMetadata) answer.usage = c.usageMetadata;
}

/** `:streamGenerateContent?alt=sse`: every event a GenerateContentResponse; a finish reason and usage by the end. */
export function readGeminiStream(text: string): Answer {
  const events = parseSse(text);
  if (!events.length) throw new Error('gemini stream: no events');
  const answer: Answer = { text: '', toolCalls: [] };
  for (const [i, e] of events.entries()) readGeminiChunk(json(e.data, `gemini stream event ${i}`), `gemini stream event ${i}`, answer);
  if (!answer.stop) throw new Error('gemini stream: no finishReason');
  if (typeof answer.usage?.promptTokenCount !== 'number') throw new Error('gemini stream: no usageMetadata.promptTokenCount');
  return answer;
}

export function readGeminiBody(body: any): Answer {
  const answer: Answer = { text: '', toolCalls: [] };
  readGeminiChunk(body, 'gemini body', answer);
  if (!answer.stop) throw new Error('gemini body: no finishReason');
  return answer;
}

// ------------------------------------------------------------------------- request checks: shared

type Problems = string[];

function onlyKeys(o: Record<string, unknown>, allowed: ReadonlySet<string>, where: string, problems: Problems) {
  for (const k of Object.keys(o)) if (!allowed.has(k)) problems.push(`${where}: unknown field "${k}"`);
}

// -------------------------------------------------------------------------- OpenAI Chat request

const CHAT_KEYS = OPENAI_CHAT_REQUEST_FIELDS;
const CHAT_MESSAGE_KEYS: Record<string, ReadonlySet<string>> = {
  system: new Set(['role', 'content', 'name']),
  developer: new Set(['role', 'content', 'name']),
  user: new Set(['role', 'content', 'name']),
  assistant: new Set(['role', 'content', 'name', 'tool_calls', 'refusal', 'audio', 'function_call']),
  // `name` on a tool result is undocumented but accepted (the legacy function-role attribution).
  tool: new Set(['role', 'content', 'tool_call_id', 'name']),
};
const CHAT_PART_TYPES: Record<string, ReadonlySet<string>> = {
  system: new Set(['text']),
  developer: new Set(['text']),
  user: new Set(['text', 'image_url', 'input_audio', 'file']),
  assistant: new Set(['text', 'refusal']),
  tool: new Set(['text']),
};
const OPENAI_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** A body OpenAI's `POST /v1/chat/completions` accepts: known fields only, message shapes, each tool call answered. */
export function checkChatRequest(body: any): Problems {
  const problems: Problems = [];
  if (!isObj(body)) return ['chat: body is not an object'];
  onlyKeys(body, CHAT_KEYS, 'chat', problems);
  if (typeof body.model !== 'string' || !body.model) problems.push('chat: no model');
  if (!Array.isArray(body.messages) || !body.messages.length) return [...problems, 'chat: no messages'];
  if (body.stream_options !== undefined && body.stream !== true) problems.push('chat: stream_options without stream');
  for (const k of ['max_tokens', 'max_completion_tokens'])
    if (body[k] !== undefined && !(Number.isInteger(body[k]) && body[k] > 0)) problems.push(`chat: ${k} ${body[k]} is not a positive integer`);
  if (body.temperature !== undefined && !(body.temperature >= 0 && body.temperature <= 2)) problems.push(`chat: temperature ${body.temperature}`);
  if (body.reasoning_effort !== undefined && !['none', 'minimal', 'low', 'medium', 'high', 'xhigh'].includes(body.reasoning_effort))
    problems.push(`chat: reasoning_effort "${body.reasoning_effort}"`);
  let pending: string[] = [];
  for (const [i, m] of (body.messages as any[]).entries()) {
    const where = `chat: messages[${i}]`;
    const keys = CHAT_MESSAGE_KEYS[m?.role];
    if (!keys) {
      problems.push(`${where}: role "${m?.role}"`);
      continue;
    }
    onlyKeys(m, keys, where, problems);
    if (m.role === 'tool') {
      if (!pending.includes(m.tool_call_id)) problems.push(`${where}: tool result for "${m.tool_call_id}", which no preceding assistant tool_calls asked for`);
      pending = pending.filter((id) => id !== m.tool_call_id);
    } else if (pending.length) {
      problems.push(`${where}: tool_calls ${pending.join(', ')} not answered before this ${m.role} message`);
      pending = [];
    }
    if (typeof m.content === 'string') {
      /* fine */
    } else if (Array.isArray(m.content)) {
      for (const [j, p] of m.content.entries()) if (!CHAT_PART_TYPES[m.role]!.has(p?.type)) problems.push(`${where}.content[${j}]: part type "${p?.type}"`);
    } else if (
      !(m.content === null && m.role === 'assistant' && m.tool_calls?.length) &&
      !(m.content === undefined && m.role === 'assistant' && m.tool_calls?.length)
    )
      problems.push(`${where}: no content`);
    if (m.role === 'assistant' && m.tool_calls !== undefined) {
      if (!Array.isArray(m.tool_calls) || !m.tool_calls.length) problems.push(`${where}: empty tool_calls`);
      for (const [j, c] of (m.tool_calls ?? []).entries()) {
        const cw = `${where}.tool_calls[${j}]`;
        if (typeof c?.id !== 'string' || !c.id) problems.push(`${cw}: no id`);
        if (c?.type === 'function') {
          if (!OPENAI_TOOL_NAME.test(String(c.function?.name))) problems.push(`${cw}: function name "${c.function?.name}"`);
          if (typeof c.function?.arguments !== 'string') problems.push(`${cw}: arguments are not a string`);
          else
            try {
              JSON.parse(c.function.arguments);
            } catch {
              problems.push(`${cw}: arguments are not JSON`);
            }
        } else if (c?.type === 'custom') {
          if (typeof c.custom?.name !== 'string' || typeof c.custom?.input !== 'string') problems.push(`${cw}: custom call without name/input`);
        } else problems.push(`${cw}: type "${c?.type}"`);
        pending.push(c?.id);
      }
    }
  }
  if (pending.length) problems.push(`chat: tool_calls ${pending.join(', ')} never answered`);
  for (const [i, t] of (Array.isArray(body.tools) ? body.tools : []).entries()) {
    const where = `chat: tools[${i}]`;
    if (t?.type === 'function') {
      onlyKeys(t, new Set(['type', 'function']), where, problems);
      onlyKeys(t.function ?? {}, new Set(['name', 'description', 'parameters', 'strict']), `${where}.function`, problems);
      if (!OPENAI_TOOL_NAME.test(String(t.function?.name))) problems.push(`${where}: name "${t.function?.name}"`);
      if (t.function?.parameters !== undefined && t.function.parameters?.type !== 'object') problems.push(`${where}: parameters are not an object schema`);
    } else if (t?.type === 'custom') {
      onlyKeys(t, new Set(['type', 'custom']), where, problems);
      if (!OPENAI_TOOL_NAME.test(String(t.custom?.name))) problems.push(`${where}: name "${t.custom?.name}"`);
    } else problems.push(`${where}: type "${t?.type}"`);
  }
  if (body.tools !== undefined && !Array.isArray(body.tools)) problems.push('chat: tools is not an array');
  const tc = body.tool_choice;
  if (tc !== undefined && !['none', 'auto', 'required'].includes(tc) && !(isObj(tc) && ['function', 'custom', 'allowed_tools'].includes(tc.type)))
    problems.push(`chat: tool_choice ${JSON.stringify(tc)}`);
  if (tc !== undefined && tc !== 'none' && !(Array.isArray(body.tools) && body.tools.length)) problems.push('chat: tool_choice without tools');
  return problems;
}

// ---------------------------------------------------------------------- Claude Messages request

const CLAUDE_KEYS = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_k',
  'top_p',
  'tools',
  'tool_choice',
  'thinking',
  'service_tier',
  'container',
  'mcp_servers',
  'context_management',
  'output_config',
]);
const CLAUDE_BLOCKS: Record<string, ReadonlySet<string>> = {
  user: new Set(['text', 'image', 'document', 'tool_result', 'search_result']),
  assistant: new Set(['text', 'tool_use', 'thinking', 'redacted_thinking', 'server_tool_use', 'web_search_tool_result']),
};
const CLAUDE_TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

/** A body Anthropic's `POST /v1/messages` accepts: user/assistant turns only, tool_use answered by tool_result, thinking rules. */
export function checkClaudeRequest(body: any): Problems {
  const problems: Problems = [];
  if (!isObj(body)) return ['claude: body is not an object'];
  onlyKeys(body, CLAUDE_KEYS, 'claude', problems);
  if (typeof body.model !== 'string' || !body.model) problems.push('claude: no model');
  if (!(Number.isInteger(body.max_tokens) && body.max_tokens > 0)) problems.push(`claude: max_tokens ${body.max_tokens}`);
  if (body.system !== undefined && typeof body.system !== 'string') {
    if (!Array.isArray(body.system)) problems.push('claude: system is neither text nor blocks');
    else
      for (const [i, b] of body.system.entries())
        if (b?.type !== 'text' || typeof b.text !== 'string') problems.push(`claude: system[${i}] is not a text block`);
  }
  if (body.metadata !== undefined) onlyKeys(body.metadata, new Set(['user_id']), 'claude: metadata', problems);
  if (body.temperature !== undefined && !(body.temperature >= 0 && body.temperature <= 1)) problems.push(`claude: temperature ${body.temperature}`);
  const th = body.thinking;
  const thinkingOn = th?.type === 'enabled' || th?.type === 'adaptive';
  if (th !== undefined) {
    if (!['enabled', 'disabled', 'adaptive'].includes(th?.type)) problems.push(`claude: thinking type "${th?.type}"`);
    if (th?.type === 'enabled' && !(Number.isInteger(th.budget_tokens) && th.budget_tokens >= 1024 && th.budget_tokens < body.max_tokens))
      problems.push(`claude: thinking budget ${th.budget_tokens} (≥ 1024 and < max_tokens ${body.max_tokens})`);
  }
  if (thinkingOn) {
    if (body.temperature !== undefined && body.temperature !== 1) problems.push(`claude: temperature ${body.temperature} with thinking (only 1)`);
    if (body.top_k !== undefined) problems.push('claude: top_k with thinking');
    if (body.top_p !== undefined && !(body.top_p >= 0.95 && body.top_p <= 1)) problems.push(`claude: top_p ${body.top_p} with thinking (0.95–1)`);
    if (body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool') problems.push('claude: forced tool_choice with thinking');
  }
  if (!Array.isArray(body.messages) || !body.messages.length) return [...problems, 'claude: no messages'];
  let asked: string[] = [];
  for (const [i, m] of (body.messages as any[]).entries()) {
    const where = `claude: messages[${i}]`;
    const allowed = CLAUDE_BLOCKS[m?.role];
    if (!allowed) {
      problems.push(`${where}: role "${m?.role}"`);
      continue;
    }
    onlyKeys(m, new Set(['role', 'content']), where, problems);
    const blocks: any[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : [];
    if (!blocks.length) problems.push(`${where}: no content`);
    const answered: string[] = [];
    for (const [j, b] of blocks.entries()) {
      const bw = `${where}.content[${j}]`;
      if (!allowed.has(b?.type)) {
        problems.push(`${bw}: block type "${b?.type}" in a ${m.role} turn`);
        continue;
      }
      if (b.type === 'text' && typeof b.text !== 'string') problems.push(`${bw}: text block without text`);
      if (b.type === 'text' && b.text === '') problems.push(`${bw}: empty text block`);
      if (b.type === 'tool_use') {
        if (typeof b.id !== 'string' || !CLAUDE_TOOL_NAME.test(String(b.name)) || !isObj(b.input))
          problems.push(`${bw}: tool_use needs id, name and an object input`);
      }
      if (b.type === 'thinking' && (typeof b.signature !== 'string' || !b.signature)) problems.push(`${bw}: thinking block without a signature`);
      if (b.type === 'tool_result') answered.push(b.tool_use_id);
    }
    if (m.role === 'user') {
      for (const id of answered) if (!asked.includes(id)) problems.push(`${where}: tool_result for "${id}", not asked in the turn before`);
      for (const id of asked) if (!answered.includes(id)) problems.push(`${where}: tool_use "${id}" has no tool_result right after it`);
      asked = [];
    } else {
      if (asked.length) problems.push(`${where}: tool_use ${asked.join(', ')} not answered before this assistant turn`);
      asked = blocks.filter((b) => b?.type === 'tool_use').map((b) => String(b.id));
    }
  }
  for (const [i, t] of (Array.isArray(body.tools) ? body.tools : []).entries()) {
    const where = `claude: tools[${i}]`;
    if (t?.type !== undefined && t.type !== 'custom') continue; // server tools (web_search_…) have their own shapes
    onlyKeys(t, new Set(['type', 'name', 'description', 'input_schema', 'cache_control', 'strict', 'defer_loading', 'input_examples']), where, problems);
    if (!CLAUDE_TOOL_NAME.test(String(t?.name))) problems.push(`${where}: name "${t?.name}"`);
    if (t?.input_schema?.type !== 'object') problems.push(`${where}: input_schema is not an object schema`);
  }
  const tc = body.tool_choice;
  if (tc !== undefined && !(isObj(tc) && ['auto', 'any', 'tool', 'none'].includes(tc.type))) problems.push(`claude: tool_choice ${JSON.stringify(tc)}`);
  return problems;
}

// --------------------------------------------------------------------------------- Gemini request

const GEMINI_KEYS = new Set([
  'contents',
  'systemInstruction',
  'system_instruction',
  'tools',
  'toolConfig',
  'tool_config',
  'safetySettings',
  'safety_settings',
  'generationConfig',
  'generation_config',
  'cachedContent',
  'cached_content',
  'labels',
]);
const GEMINI_GENERATION_KEYS = GEMINI_GENERATION_CONFIG_FIELDS;
const GEMINI_PART_DATA = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'];
const GEMINI_PART_KEYS = new Set([...GEMINI_PART_DATA, 'thought', 'thoughtSignature', 'videoMetadata', 'partMetadata', 'mediaResolution']);
/** The OpenAPI subset Gemini's `parameters` (Schema) takes; JSON Schema proper goes in `parametersJsonSchema`. */
const GEMINI_SCHEMA_KEYS = GEMINI_SCHEMA_FIELDS;
const GEMINI_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);
const GEMINI_FUNCTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/;

function checkGeminiSchema(s: any, where: string, problems: Problems) {
  if (!isObj(s)) return;
  onlyKeys(s, GEMINI_SCHEMA_KEYS, where, problems);
  if (s.type !== undefined && !(typeof s.type === 'string' && GEMINI_TYPES.has(s.type.toLowerCase())))
    problems.push(`${where}: type ${JSON.stringify(s.type)}`);
  for (const [k, v] of Object.entries(isObj(s.properties) ? s.properties : {})) checkGeminiSchema(v, `${where}.properties.${k}`, problems);
  if (s.items) checkGeminiSchema(s.items, `${where}.items`, problems);
  for (const [i, v] of (Array.isArray(s.anyOf) ? s.anyOf : []).entries()) checkGeminiSchema(v, `${where}.anyOf[${i}]`, problems);
}

/** A body Gemini's `generateContent` accepts: user/model turns, one datum per part, function calls answered one for one. */
export function checkGeminiRequest(body: any): Problems {
  const problems: Problems = [];
  if (!isObj(body)) return ['gemini: body is not an object'];
  onlyKeys(body, GEMINI_KEYS, 'gemini', problems);
  const gc = body.generationConfig ?? body.generation_config;
  if (gc !== undefined) {
    onlyKeys(gc, GEMINI_GENERATION_KEYS, 'gemini: generationConfig', problems);
    if (gc.thinkingConfig !== undefined)
      onlyKeys(gc.thinkingConfig, new Set(['includeThoughts', 'thinkingBudget', 'thinkingLevel']), 'gemini: thinkingConfig', problems);
    if (gc.maxOutputTokens !== undefined && !(Number.isInteger(gc.maxOutputTokens) && gc.maxOutputTokens > 0))
      problems.push(`gemini: maxOutputTokens ${gc.maxOutputTokens}`);
  }
  const si = body.systemInstruction ?? body.system_instruction;
  if (si !== undefined && !(isObj(si) && Array.isArray(si.parts) && si.parts.every((p: any) => typeof p?.text === 'string')))
    problems.push('gemini: systemInstruction is not {parts:[{text}]}');
  if (!Array.isArray(body.contents) || !body.contents.length) return [...problems, 'gemini: no contents'];
  let calls = 0;
  for (const [i, c] of (body.contents as any[]).entries()) {
    const where = `gemini: contents[${i}]`;
    if (c?.role !== 'user' && c?.role !== 'model') problems.push(`${where}: role "${c?.role}"`);
    if (!Array.isArray(c?.parts) || !c.parts.length) {
      problems.push(`${where}: no parts`);
      continue;
    }
    let responses = 0;
    for (const [j, p] of c.parts.entries()) {
      const pw = `${where}.parts[${j}]`;
      onlyKeys(p ?? {}, GEMINI_PART_KEYS, pw, problems);
      const data = GEMINI_PART_DATA.filter((k) => p?.[k] !== undefined);
      if (data.length !== 1) problems.push(`${pw}: ${data.length} data fields (${data.join(', ')})`);
      if (p?.functionCall !== undefined) {
        if (c.role !== 'model') problems.push(`${pw}: functionCall in a ${c.role} turn`);
        if (!GEMINI_FUNCTION_NAME.test(String(p.functionCall.name)) || (p.functionCall.args !== undefined && !isObj(p.functionCall.args)))
          problems.push(`${pw}: functionCall needs a name and object args`);
      }
      if (p?.functionResponse !== undefined) {
        if (c.role !== 'user') problems.push(`${pw}: functionResponse in a ${c.role} turn`);
        if (typeof p.functionResponse.name !== 'string' || !isObj(p.functionResponse.response))
          problems.push(`${pw}: functionResponse needs a name and an object response`);
        responses++;
      }
    }
    if (calls && responses !== calls) problems.push(`${where}: ${responses} function responses for ${calls} function calls`);
    if (!calls && responses) problems.push(`${where}: function responses without a function call turn before`);
    calls = c.role === 'model' ? c.parts.filter((p: any) => p?.functionCall !== undefined).length : 0;
  }
  for (const [i, t] of (Array.isArray(body.tools) ? body.tools : []).entries()) {
    const where = `gemini: tools[${i}]`;
    onlyKeys(
      t ?? {},
      new Set([
        'functionDeclarations',
        'googleSearch',
        'googleSearchRetrieval',
        'codeExecution',
        'urlContext',
        'retrieval',
        'computerUse',
        'fileSearch',
        'googleMaps',
      ]),
      where,
      problems,
    );
    for (const [j, d] of (Array.isArray(t?.functionDeclarations) ? t.functionDeclarations : []).entries()) {
      const dw = `${where}.functionDeclarations[${j}]`;
      onlyKeys(d ?? {}, new Set(['name', 'description', 'parameters', 'parametersJsonSchema', 'response', 'responseJsonSchema', 'behavior']), dw, problems);
      if (!GEMINI_FUNCTION_NAME.test(String(d?.name))) problems.push(`${dw}: name "${d?.name}"`);
      if (d?.parameters !== undefined && d?.parametersJsonSchema !== undefined) problems.push(`${dw}: both parameters and parametersJsonSchema`);
      checkGeminiSchema(d?.parameters, `${dw}.parameters`, problems);
    }
  }
  const fcc = (body.toolConfig ?? body.tool_config)?.functionCallingConfig;
  if (fcc !== undefined && !['AUTO', 'ANY', 'NONE', 'VALIDATED'].includes(fcc?.mode)) problems.push(`gemini: functionCallingConfig.mode "${fcc?.mode}"`);
  return problems;
}

// ------------------------------------------------------------------------- Responses request

const RESPONSES_KEYS = new Set([
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'reasoning',
  'store',
  'stream',
  'stream_options',
  'include',
  'text',
  'max_output_tokens',
  'max_tool_calls',
  'temperature',
  'top_p',
  'top_logprobs',
  'metadata',
  'previous_response_id',
  'conversation',
  'prompt',
  'prompt_cache_key',
  'prompt_cache_retention',
  'truncation',
  'user',
  'service_tier',
  'background',
  'safety_identifier',
]);
const RESPONSES_ITEMS = new Set([
  'message',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'reasoning',
  'item_reference',
  'web_search_call',
  'file_search_call',
  'computer_call',
  'computer_call_output',
  'local_shell_call',
  'local_shell_call_output',
  'image_generation_call',
  'code_interpreter_call',
  'mcp_call',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
]);

/** A body OpenAI's `POST /v1/responses` accepts: known fields, item types, each call output after its call. */
export function checkResponsesRequest(body: any): Problems {
  const problems: Problems = [];
  if (!isObj(body)) return ['responses: body is not an object'];
  onlyKeys(body, RESPONSES_KEYS, 'responses', problems);
  if (typeof body.model !== 'string' || !body.model) problems.push('responses: no model');
  if (body.max_output_tokens !== undefined && !(Number.isInteger(body.max_output_tokens) && body.max_output_tokens >= 16))
    problems.push(`responses: max_output_tokens ${body.max_output_tokens} (an integer ≥ 16)`);
  if (typeof body.input !== 'string' && !Array.isArray(body.input)) return [...problems, 'responses: no input'];
  const calls = new Set<string>();
  for (const [i, it] of (Array.isArray(body.input) ? body.input : []).entries()) {
    const where = `responses: input[${i}]`;
    const type = it?.type ?? (it?.role ? 'message' : undefined);
    if (!RESPONSES_ITEMS.has(type)) {
      problems.push(`${where}: item type "${it?.type}"`);
      continue;
    }
    if (type === 'message') {
      if (!['user', 'assistant', 'system', 'developer'].includes(it.role)) problems.push(`${where}: role "${it.role}"`);
      const parts: any[] = typeof it.content === 'string' ? [] : Array.isArray(it.content) ? it.content : [null];
      const ok = it.role === 'assistant' ? ['output_text', 'refusal', 'input_text'] : ['input_text', 'input_image', 'input_file', 'input_audio'];
      for (const [j, p] of parts.entries()) if (!ok.includes(p?.type)) problems.push(`${where}.content[${j}]: part type "${p?.type}" in a ${it.role} message`);
    }
    if (type === 'function_call' || type === 'custom_tool_call') {
      if (typeof it.call_id !== 'string' || typeof it.name !== 'string') problems.push(`${where}: ${type} without call_id/name`);
      if (type === 'function_call' && typeof it.arguments !== 'string') problems.push(`${where}: function_call arguments are not a string`);
      calls.add(it.call_id);
    }
    if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      if (!calls.has(it.call_id)) problems.push(`${where}: output for "${it.call_id}", no call before it`);
      if (typeof it.output !== 'string' && !Array.isArray(it.output)) problems.push(`${where}: output is neither text nor content parts`);
    }
    if (type === 'reasoning' && !Array.isArray(it.summary)) problems.push(`${where}: reasoning item without summary`);
  }
  for (const [i, t] of (Array.isArray(body.tools) ? body.tools : []).entries()) {
    const where = `responses: tools[${i}]`;
    if (t?.type === 'function') {
      onlyKeys(t, new Set(['type', 'name', 'description', 'parameters', 'strict']), where, problems);
      if (!OPENAI_TOOL_NAME.test(String(t.name))) problems.push(`${where}: name "${t.name}"`);
    } else if (typeof t?.type !== 'string') problems.push(`${where}: no type`);
  }
  return problems;
}
