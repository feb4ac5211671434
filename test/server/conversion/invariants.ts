/**
 * Protocol rules that need no golden review: what each protocol's published API defines (field
 * lists taken from the API references, as the official SDKs installed here declare them), what a
 * well-formed stream of each protocol looks like, and conversions that must not lose what the
 * target can carry (usage, text, tool calls, finish reasons).
 *
 * Each check returns human-readable violations (empty = fine); the suite compares them with the
 * reviewed list in test/fixtures/conversion/known-violations.json.
 */
import type { WireFormat } from '../../../server/src/relay/types';
import { GEMINI_GENERATION_CONFIG_FIELDS, GEMINI_SCHEMA_FIELDS, OPENAI_CHAT_REQUEST_FIELDS } from '../../helpers/protocolFields';

const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
const set = (...xs: string[]) => new Set(xs);

// ---------------------------------------------------------------------------------------------
// Fields each protocol defines

/** OpenAI Chat Completions: `ChatCompletionCreateParams` (API reference; openai SDK 6.x). */
const OPENAI_CHAT_FIELDS = OPENAI_CHAT_REQUEST_FIELDS;
/** Message keys per role (`ChatCompletionMessageParam`). */
const OPENAI_MESSAGE_FIELDS: Record<string, Set<string>> = {
  system: set('role', 'content', 'name'),
  developer: set('role', 'content', 'name'),
  user: set('role', 'content', 'name'),
  assistant: set('role', 'content', 'name', 'audio', 'function_call', 'refusal', 'tool_calls'),
  tool: set('role', 'content', 'tool_call_id'),
  function: set('role', 'content', 'name'),
};
const OPENAI_PART_TYPES: Record<string, Set<string>> = {
  system: set('text'),
  developer: set('text'),
  user: set('text', 'image_url', 'input_audio', 'file'),
  assistant: set('text', 'refusal'),
  tool: set('text'),
};
const OPENAI_TOOL_CALL_FIELDS = set('id', 'type', 'function');

/** OpenAI Responses: `ResponseCreateParams`. */
const RESPONSES_FIELDS = set(
  'background',
  'context_management',
  'conversation',
  'include',
  'input',
  'instructions',
  'max_output_tokens',
  'max_tool_calls',
  'metadata',
  'model',
  'moderation',
  'parallel_tool_calls',
  'previous_response_id',
  'prompt',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'reasoning',
  'safety_identifier',
  'service_tier',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'text',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'truncation',
  'user',
);
const RESPONSES_ITEM_TYPES = set(
  'message',
  'function_call',
  'function_call_output',
  'reasoning',
  'file_search_call',
  'computer_call',
  'computer_call_output',
  'web_search_call',
  'image_generation_call',
  'code_interpreter_call',
  'local_shell_call',
  'local_shell_call_output',
  'shell_call',
  'shell_call_output',
  'apply_patch_call',
  'apply_patch_call_output',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
  'mcp_call',
  'custom_tool_call',
  'custom_tool_call_output',
  'item_reference',
  'compaction',
);
const RESPONSES_CONTENT_TYPES = set('input_text', 'input_image', 'input_file', 'input_audio', 'output_text', 'refusal');

/**
 * Claude Messages: `MessageCreateParams` with the beta fields (`context_management`,
 * `output_format`, `mcp_servers` …). `temperature`, `top_p` and `top_k` are accepted under
 * `anthropic-version: 2023-06-01`, the version the Claude adaptor sends (API version 2026-10-21
 * rejects them; the SDK of that version no longer declares them).
 */
const CLAUDE_FIELDS = set(
  'model',
  'messages',
  'max_tokens',
  'cache_control',
  'container',
  'context_management',
  'inference_geo',
  'mcp_servers',
  'metadata',
  'output_config',
  'output_format',
  'service_tier',
  'speed',
  'stop_sequences',
  'stream',
  'system',
  'thinking',
  'tool_choice',
  'tools',
  'temperature',
  'top_p',
  'top_k',
);
const CLAUDE_BLOCKS: Record<string, Set<string>> = {
  user: set('text', 'image', 'document', 'search_result', 'tool_result', 'container_upload'),
  assistant: set('text', 'thinking', 'redacted_thinking', 'tool_use', 'server_tool_use', 'web_search_tool_result', 'web_fetch_tool_result'),
};

/** Gemini `generateContent` body (Gemini API, as @google/genai sends it). */
const GEMINI_FIELDS = set(
  'contents',
  'tools',
  'toolConfig',
  'safetySettings',
  'systemInstruction',
  'generationConfig',
  'cachedContent',
  'labels',
  'serviceTier',
);
const GEMINI_GENERATION_FIELDS = GEMINI_GENERATION_CONFIG_FIELDS;
const GEMINI_THINKING_FIELDS = set('includeThoughts', 'thinkingBudget', 'thinkingLevel');
/** `Part`. */
const GEMINI_PART_FIELDS = set(
  'text',
  'inlineData',
  'fileData',
  'functionCall',
  'functionResponse',
  'thought',
  'thoughtSignature',
  'executableCode',
  'codeExecutionResult',
  'videoMetadata',
  'partMetadata',
  'mediaResolution',
);
const GEMINI_DECLARATION_FIELDS = set('name', 'description', 'parameters', 'parametersJsonSchema', 'response', 'responseJsonSchema', 'behavior');

function unknownKeys(o: Record<string, unknown>, allowed: ReadonlySet<string>): string[] {
  return Object.keys(o).filter((k) => !allowed.has(k));
}

const JSON_TYPES = set('object', 'string', 'number', 'integer', 'boolean', 'array', 'null');
/**
 * A schema in the dialect its target reads: JSON Schema (OpenAI, Claude, Gemini's
 * `parametersJsonSchema`) has lower-case types and no `nullable`; Gemini's `Schema` takes only
 * its own keys, one type, and string enums.
 */
export function schemaViolations(schema: unknown, dialect: 'json' | 'gemini', where: string): string[] {
  const v: string[] = [];
  const walk = (s: unknown, at: string) => {
    if (!isObj(s)) return;
    if (dialect === 'json') {
      const types = Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type];
      for (const t of types) if (!JSON_TYPES.has(t)) v.push(`${at}: type ${JSON.stringify(t)} is not a JSON Schema type`);
      if ('nullable' in s) v.push(`${at}: nullable is not JSON Schema (type [x, "null"] is)`);
    } else {
      for (const k of unknownKeys(s, GEMINI_SCHEMA_FIELDS)) v.push(`${at}: ${k} is not a Gemini Schema field`);
      if (Array.isArray(s.type)) v.push(`${at}: type is a list`);
      if (Array.isArray(s.enum) && s.enum.some((x: unknown) => typeof x !== 'string')) v.push(`${at}: enum has a value that is not a string`);
    }
    if (isObj(s.properties)) for (const [k, x] of Object.entries(s.properties)) walk(x, `${at}.${k}`);
    if (s.items) walk(s.items, `${at}[]`);
    for (const key of ['anyOf', 'oneOf', 'allOf']) if (Array.isArray(s[key])) s[key].forEach((x: unknown, i: number) => walk(x, `${at}.${key}[${i}]`));
  };
  walk(schema, where);
  return v;
}

/** Fields of a converted upstream request body its protocol does not define (and structural rules). */
export function requestViolations(protocol: WireFormat, body: unknown): string[] {
  if (!isObj(body)) return ['body is not a JSON object'];
  switch (protocol) {
    case 'openai':
      return openaiRequestViolations(body);
    case 'responses':
      return responsesRequestViolations(body);
    case 'claude':
      return claudeRequestViolations(body);
    case 'gemini':
      return geminiRequestViolations(body);
  }
}

function openaiRequestViolations(b: Record<string, any>): string[] {
  const v = unknownKeys(b, OPENAI_CHAT_FIELDS).map((k) => `top-level field ${k} is not an OpenAI Chat field`);
  const callIds = new Set<string>();
  (Array.isArray(b.messages) ? b.messages : []).forEach((m: any, i: number) => {
    const allowed = OPENAI_MESSAGE_FIELDS[m?.role];
    if (!allowed) return v.push(`messages[${i}] has role ${m?.role}`);
    for (const k of unknownKeys(m, allowed)) v.push(`messages[${i}] (${m.role}) has field ${k}`);
    if (Array.isArray(m.content)) {
      m.content.forEach((p: any, j: number) => {
        if (!OPENAI_PART_TYPES[m.role]?.has(p?.type)) v.push(`messages[${i}].content[${j}] has part type ${p?.type} (not allowed for ${m.role})`);
        // OpenAI answers 400 "Missing required parameter: …file.file_id" for file_data without a filename
        if (p?.type === 'file' && p.file?.file_data && !p.file.filename) v.push(`messages[${i}].content[${j}] is a file_data part without filename`);
      });
    }
    for (const tc of m.tool_calls ?? []) {
      for (const k of unknownKeys(tc, OPENAI_TOOL_CALL_FIELDS)) v.push(`messages[${i}].tool_calls has field ${k}`);
      callIds.add(tc.id);
    }
    if (m.role === 'tool' && !callIds.has(m.tool_call_id))
      v.push(`messages[${i}] answers tool call ${m.tool_call_id}, which no earlier assistant message made`);
  });
  if (b.stream !== true && b.stream_options !== undefined) v.push('stream_options without stream');
  for (const t of b.tools ?? []) v.push(...schemaViolations(t?.function?.parameters, 'json', `tool ${t?.function?.name}`));
  if (b.response_format?.json_schema) v.push(...schemaViolations(b.response_format.json_schema.schema, 'json', 'response_format schema'));
  return v;
}

function responsesRequestViolations(b: Record<string, any>): string[] {
  const v = unknownKeys(b, RESPONSES_FIELDS).map((k) => `top-level field ${k} is not a Responses field`);
  const callIds = new Set<string>();
  if (Array.isArray(b.input)) {
    b.input.forEach((it: any, i: number) => {
      const type = it?.type ?? (it?.role ? 'message' : undefined);
      if (!RESPONSES_ITEM_TYPES.has(type)) v.push(`input[${i}] has item type ${type}`);
      if (type === 'message' && Array.isArray(it.content)) {
        it.content.forEach((c: any, j: number) => {
          if (!RESPONSES_CONTENT_TYPES.has(c?.type)) v.push(`input[${i}].content[${j}] has content type ${c?.type}`);
        });
      }
      if (type === 'function_call') callIds.add(it.call_id);
      if (type === 'function_call_output' && !callIds.has(it.call_id)) v.push(`input[${i}] answers call ${it.call_id}, which no earlier function_call made`);
    });
  }
  return v;
}

function claudeRequestViolations(b: Record<string, any>): string[] {
  const v = unknownKeys(b, CLAUDE_FIELDS).map((k) => `top-level field ${k} is not a Claude Messages field`);
  if (typeof b.max_tokens !== 'number') v.push('max_tokens is missing');
  const t = b.thinking;
  if (isObj(t) && t.type === 'enabled') {
    if (!(t.budget_tokens >= 1024)) v.push(`thinking.budget_tokens ${t.budget_tokens} is below 1024`);
    if (!(t.budget_tokens < b.max_tokens)) v.push(`thinking.budget_tokens ${t.budget_tokens} is not below max_tokens ${b.max_tokens}`);
  }
  if (isObj(t) && t.type !== 'disabled') {
    if (b.temperature !== undefined && b.temperature !== 1) v.push('temperature other than 1 with thinking');
    if (b.top_k !== undefined) v.push('top_k with thinking');
  }
  let pendingToolUse = new Set<string>();
  (Array.isArray(b.messages) ? b.messages : []).forEach((m: any, i: number) => {
    const blocks = CLAUDE_BLOCKS[m?.role];
    if (!blocks) return v.push(`messages[${i}] has role ${m?.role}`);
    const content = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : [];
    if (!content.length) v.push(`messages[${i}] has no content`);
    let seenOther = false;
    content.forEach((blk: any, j: number) => {
      if (!blocks.has(blk?.type)) v.push(`messages[${i}].content[${j}] has block type ${blk?.type} (not allowed for ${m.role})`);
      if (blk?.type === 'text' && !blk.text) v.push(`messages[${i}].content[${j}] is an empty text block`);
      if (blk?.type === 'thinking' && typeof blk.signature !== 'string') v.push(`messages[${i}].content[${j}] is a thinking block without signature`);
      if (blk?.type === 'tool_result') {
        if (seenOther) v.push(`messages[${i}].content[${j}] is a tool_result after other content`);
        if (!pendingToolUse.has(blk.tool_use_id))
          v.push(`messages[${i}].content[${j}] answers ${blk.tool_use_id}, not a tool_use of the previous assistant turn`);
        pendingToolUse.delete(blk.tool_use_id);
      } else seenOther = true;
    });
    if (m.role === 'assistant') pendingToolUse = new Set(content.filter((x: any) => x?.type === 'tool_use').map((x: any) => x.id));
    else {
      if (pendingToolUse.size) v.push(`messages[${i}] leaves tool_use ${[...pendingToolUse].join(', ')} without a tool_result`);
      pendingToolUse = new Set();
    }
  });
  for (let i = 1; i < (b.messages?.length ?? 0); i++)
    if (b.messages[i].role === b.messages[i - 1].role) v.push(`messages[${i}] repeats role ${b.messages[i].role}`);
  // Claude models from Opus 4.1 / Sonnet 4.5 on refuse `temperature` and `top_p` together.
  if (b.temperature !== undefined && b.top_p !== undefined && /-4-[1-9]|-4\.[1-9]|-[5-9]-|-[5-9]$/.test(String(b.model)))
    v.push(`temperature and top_p together (${b.model} accepts only one)`);
  for (const t of b.tools ?? []) if (t?.input_schema) v.push(...schemaViolations(t.input_schema, 'json', `tool ${t.name}`));
  if (b.messages?.[0] && b.messages[0].role !== 'user') v.push('first message is not from the user');
  return v;
}

function geminiRequestViolations(b: Record<string, any>): string[] {
  const v = unknownKeys(b, GEMINI_FIELDS).map((k) => `top-level field ${k} is not a Gemini field`);
  if (isObj(b.generationConfig)) {
    for (const k of unknownKeys(b.generationConfig, GEMINI_GENERATION_FIELDS)) v.push(`generationConfig.${k} is not a Gemini field`);
    const tc = b.generationConfig.thinkingConfig;
    if (isObj(tc)) for (const k of unknownKeys(tc, GEMINI_THINKING_FIELDS)) v.push(`thinkingConfig.${k} is not a Gemini field`);
  }
  let calls = 0;
  (Array.isArray(b.contents) ? b.contents : []).forEach((c: any, i: number) => {
    if (c?.role !== 'user' && c?.role !== 'model') v.push(`contents[${i}] has role ${c?.role}`);
    const parts = Array.isArray(c?.parts) ? c.parts : [];
    if (!parts.length) v.push(`contents[${i}] has no parts`);
    parts.forEach((p: any, j: number) => {
      for (const k of unknownKeys(p, GEMINI_PART_FIELDS)) v.push(`contents[${i}].parts[${j}] has field ${k}`);
      if (isObj(p.functionCall) && !isObj(p.functionCall.args ?? {})) v.push(`contents[${i}].parts[${j}].functionCall.args is not an object`);
      if (isObj(p.functionResponse) && !isObj(p.functionResponse.response)) v.push(`contents[${i}].parts[${j}].functionResponse.response is not an object`);
    });
    const responses = parts.filter((p: any) => isObj(p.functionResponse)).length;
    if (responses && responses !== calls) v.push(`contents[${i}] answers ${responses} function calls, the previous model turn made ${calls}`);
    calls = c?.role === 'model' ? parts.filter((p: any) => isObj(p.functionCall)).length : 0;
  });
  for (const t of Array.isArray(b.tools) ? b.tools : []) {
    for (const d of t?.functionDeclarations ?? []) {
      for (const k of unknownKeys(d, GEMINI_DECLARATION_FIELDS)) v.push(`functionDeclarations ${d.name} has field ${k}`);
      if (d.parameters) v.push(...schemaViolations(d.parameters, 'gemini', `function ${d.name}`));
      if (d.parametersJsonSchema) v.push(...schemaViolations(d.parametersJsonSchema, 'json', `function ${d.name}`));
    }
  }
  if (b.generationConfig?.responseSchema) v.push(...schemaViolations(b.generationConfig.responseSchema, 'gemini', 'responseSchema'));
  return v;
}

/** The client request fixture itself only uses what its protocol defines (keeps the fixtures honest). */
export function clientRequestViolations(protocol: WireFormat, body: unknown): string[] {
  if (!isObj(body)) return ['body is not a JSON object'];
  const top: Record<WireFormat, ReadonlySet<string>> = {
    openai: OPENAI_CHAT_FIELDS,
    responses: RESPONSES_FIELDS,
    claude: CLAUDE_FIELDS,
    gemini: GEMINI_FIELDS,
  };
  return unknownKeys(body, top[protocol]).map((k) => `fixture field ${k} is not a ${protocol} field`);
}

// ---------------------------------------------------------------------------------------------
// Well-formed streams

export interface StreamEvent {
  event?: string;
  data: unknown;
}

/** Whether a stream of `protocol` is a well-formed event sequence (client output or upstream fixture). */
export function streamViolations(protocol: WireFormat, events: StreamEvent[]): string[] {
  if (!events.length) return ['stream is empty'];
  switch (protocol) {
    case 'openai':
      return openaiStreamViolations(events);
    case 'responses':
      return responsesStreamViolations(events);
    case 'claude':
      return claudeStreamViolations(events);
    case 'gemini':
      return geminiStreamViolations(events);
  }
}

function openaiStreamViolations(events: StreamEvent[]): string[] {
  const v: string[] = [];
  const last = events[events.length - 1]!;
  const endsWithError = isObj(last.data) && isObj(last.data.error);
  if (last.data !== '[DONE]' && !endsWithError) v.push('does not end with [DONE] (nor an error)');
  const ids = new Set<string>();
  const toolStarted = new Map<string, boolean>();
  const toolArgs = new Map<string, string>();
  const finished = new Set<number>();
  let usageChunks = 0;
  events.forEach((e, i) => {
    if (e.event) v.push(`event ${i} has an event name (${e.event})`);
    if (e.data === '[DONE]') {
      if (i !== events.length - 1) v.push(`[DONE] at ${i} is not last`);
      return;
    }
    const d = e.data;
    if (!isObj(d)) return v.push(`event ${i} is not JSON`);
    if (isObj(d.error)) {
      if (i !== events.length - 1) v.push(`error at ${i} is not last`);
      return;
    }
    if (d.object !== 'chat.completion.chunk') v.push(`event ${i} object is ${d.object}`);
    ids.add(d.id);
    if (!Array.isArray(d.choices)) return v.push(`event ${i} has no choices`);
    if (!d.choices.length) {
      if (!isObj(d.usage)) v.push(`event ${i} has neither choices nor usage`);
      usageChunks++;
      return;
    }
    for (const c of d.choices) {
      if (finished.has(c.index) && (c.delta?.content || c.delta?.tool_calls || c.delta?.reasoning_content))
        v.push(`event ${i} has content after choice ${c.index} finished`);
      for (const tc of c.delta?.tool_calls ?? []) {
        const key = `${c.index}/${tc.index}`;
        if (!toolStarted.has(key)) {
          if (!tc.id || !tc.function?.name || tc.type !== 'function') v.push(`event ${i}: tool call ${key} starts without id, name and type`);
          toolStarted.set(key, true);
        }
        toolArgs.set(key, (toolArgs.get(key) ?? '') + (tc.function?.arguments ?? ''));
      }
      if (c.finish_reason) {
        if (finished.has(c.index)) v.push(`event ${i}: choice ${c.index} finishes twice`);
        if (!['stop', 'length', 'tool_calls', 'content_filter', 'function_call'].includes(c.finish_reason))
          v.push(`event ${i}: finish_reason ${c.finish_reason}`);
        finished.add(c.index);
      }
    }
  });
  if (!endsWithError) {
    for (const [key, args] of toolArgs) {
      try {
        if (!isObj(JSON.parse(args))) v.push(`tool call ${key}: arguments are not a JSON object`);
      } catch {
        v.push(`tool call ${key}: arguments ${JSON.stringify(args)} are not JSON`);
      }
    }
  }
  if (ids.size > 1) v.push(`chunks carry ${ids.size} different ids`);
  if (usageChunks > 1) v.push(`${usageChunks} usage chunks`);
  if (!endsWithError && !finished.size) v.push('no choice finishes');
  return v;
}

const CLAUDE_STOPS = ['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded'];
const CLAUDE_DELTAS: Record<string, string[]> = {
  text: ['text_delta', 'citations_delta'],
  thinking: ['thinking_delta', 'signature_delta'],
  redacted_thinking: [],
  tool_use: ['input_json_delta'],
  server_tool_use: ['input_json_delta'],
};

function claudeStreamViolations(events: StreamEvent[]): string[] {
  const v: string[] = [];
  const types = events.map((e) => (isObj(e.data) ? e.data.type : undefined));
  events.forEach((e, i) => {
    if (!isObj(e.data)) v.push(`event ${i} is not JSON`);
    else if (e.event !== e.data.type) v.push(`event ${i}: event name ${e.event} ≠ data.type ${e.data.type}`);
  });
  if (types[0] !== 'message_start') v.push(`first event is ${types[0]}, not message_start`);
  const last = types[types.length - 1];
  if (last !== 'message_stop' && last !== 'error') v.push(`last event is ${last}, not message_stop (nor error)`);
  let open: { index: number; type: string; json: string } | undefined;
  let next = 0;
  let deltas = 0;
  events.forEach((e, i) => {
    const d = e.data as Record<string, any>;
    switch (d?.type) {
      case 'message_start':
        if (i !== 0) v.push(`message_start at ${i}`);
        if (d.message?.role !== 'assistant' || !Array.isArray(d.message?.content) || !isObj(d.message?.usage)) v.push('message_start message is incomplete');
        break;
      case 'content_block_start':
        if (open) v.push(`event ${i}: block ${d.index} starts while ${open.index} is open`);
        if (d.index !== next) v.push(`event ${i}: block index ${d.index}, expected ${next}`);
        open = { index: d.index, type: d.content_block?.type, json: '' };
        if (!(open.type in CLAUDE_DELTAS)) v.push(`event ${i}: block type ${open.type}`);
        if (open.type === 'tool_use' && (!d.content_block.id || !d.content_block.name)) v.push(`event ${i}: tool_use block without id or name`);
        next++;
        break;
      case 'content_block_delta':
        if (!open || open.index !== d.index) v.push(`event ${i}: delta for block ${d.index}, which is not open`);
        else if (!CLAUDE_DELTAS[open.type]?.includes(d.delta?.type)) v.push(`event ${i}: ${d.delta?.type} in a ${open.type} block`);
        else if (d.delta.type === 'input_json_delta') open.json += d.delta.partial_json ?? '';
        break;
      case 'content_block_stop':
        if (!open || open.index !== d.index) v.push(`event ${i}: stop of block ${d.index}, which is not open`);
        else if (open.type === 'tool_use' && open.json) {
          try {
            if (!isObj(JSON.parse(open.json))) v.push(`block ${open.index}: tool input is not an object`);
          } catch {
            v.push(`block ${open.index}: tool input is not JSON`);
          }
        }
        open = undefined;
        break;
      case 'message_delta':
        deltas++;
        if (open) v.push(`event ${i}: message_delta while block ${open.index} is open`);
        if (!CLAUDE_STOPS.includes(d.delta?.stop_reason)) v.push(`event ${i}: stop_reason ${d.delta?.stop_reason}`);
        if (!isObj(d.usage) || typeof d.usage.output_tokens !== 'number') v.push(`event ${i}: message_delta without usage.output_tokens`);
        break;
      case 'message_stop':
        if (i !== events.length - 1) v.push(`message_stop at ${i} is not last`);
        break;
      case 'error':
        if (i !== events.length - 1) v.push(`error at ${i} is not last`);
        if (!isObj(d.error) || typeof d.error.type !== 'string' || typeof d.error.message !== 'string') v.push(`event ${i}: error without type and message`);
        break;
      case 'ping':
        break;
      default:
        v.push(`event ${i}: unknown type ${d?.type}`);
    }
  });
  if (last === 'message_stop' && deltas !== 1) v.push(`${deltas} message_delta events (expected 1)`);
  return v;
}

const GEMINI_FINISH = [
  'STOP',
  'MAX_TOKENS',
  'SAFETY',
  'RECITATION',
  'LANGUAGE',
  'OTHER',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'MALFORMED_FUNCTION_CALL',
  'IMAGE_SAFETY',
  'UNEXPECTED_TOOL_CALL',
];

function geminiStreamViolations(events: StreamEvent[]): string[] {
  const v: string[] = [];
  let finishedAt = -1;
  events.forEach((e, i) => {
    if (e.event) v.push(`event ${i} has an event name (${e.event})`);
    const d = e.data;
    if (!isObj(d)) return v.push(`event ${i} is not JSON`);
    if (isObj(d.error)) {
      if (i !== events.length - 1) v.push(`error at ${i} is not last`);
      return;
    }
    if (!Array.isArray(d.candidates) && !isObj(d.promptFeedback)) v.push(`event ${i} has no candidates`);
    for (const c of d.candidates ?? []) {
      for (const p of c.content?.parts ?? []) {
        for (const k of unknownKeys(p, GEMINI_PART_FIELDS)) v.push(`event ${i}: part field ${k}`);
        if (isObj(p.functionCall) && !isObj(p.functionCall.args ?? {})) v.push(`event ${i}: functionCall.args is not an object`);
      }
      if (c.content && c.content.role !== 'model') v.push(`event ${i}: content role ${c.content.role}`);
      if (c.finishReason !== undefined) {
        if (!GEMINI_FINISH.includes(c.finishReason)) v.push(`event ${i}: finishReason ${c.finishReason}`);
        if (finishedAt >= 0) v.push(`event ${i}: a second finishReason`);
        finishedAt = i;
      }
    }
  });
  const last = events[events.length - 1]!;
  const endsWithError = isObj(last.data) && isObj(last.data.error);
  if (!endsWithError) {
    if (finishedAt < 0 && !(isObj(last.data) && isObj(last.data.promptFeedback))) v.push('no finishReason');
    else if (finishedAt >= 0 && finishedAt !== events.length - 1) v.push(`finishReason at ${finishedAt} is not in the last event`);
    if (!isObj((last.data as Record<string, unknown>)?.usageMetadata)) v.push('last event has no usageMetadata');
  }
  return v;
}

function responsesStreamViolations(events: StreamEvent[]): string[] {
  const v: string[] = [];
  const type = (e: StreamEvent) => (isObj(e.data) ? e.data.type : undefined);
  events.forEach((e, i) => {
    if (!isObj(e.data)) return v.push(`event ${i} is not JSON`);
    if (e.event !== undefined && e.event !== e.data.type) v.push(`event ${i}: event name ${e.event} ≠ data.type ${e.data.type}`);
    if (e.data.sequence_number !== undefined && e.data.sequence_number !== i) v.push(`event ${i}: sequence_number ${e.data.sequence_number}`);
  });
  if (type(events[0]!) !== 'response.created') v.push(`first event is ${type(events[0]!)}, not response.created`);
  const lastType = type(events[events.length - 1]!);
  const terminal = ['response.completed', 'response.incomplete', 'response.failed', 'error'];
  if (!terminal.includes(lastType)) v.push(`last event is ${lastType}, not a terminal event`);
  const items = new Map<number, { id: string; type: string; done: boolean; parts: Map<number, boolean> }>();
  const doneItems: unknown[] = [];
  let nextIndex = 0;
  events.forEach((e, i) => {
    const d = e.data as Record<string, any>;
    const t: string = d?.type ?? '';
    if (terminal.includes(t) && i !== events.length - 1) v.push(`${t} at ${i} is not last`);
    if (t === 'response.output_item.added') {
      if (d.output_index !== nextIndex) v.push(`event ${i}: output_index ${d.output_index}, expected ${nextIndex}`);
      nextIndex++;
      items.set(d.output_index, { id: d.item?.id, type: d.item?.type, done: false, parts: new Map() });
    } else if (t === 'response.output_item.done') {
      const it = items.get(d.output_index);
      if (!it || it.done) v.push(`event ${i}: output_item.done for item ${d.output_index}, which is not open`);
      else {
        it.done = true;
        if (d.item?.id !== it.id) v.push(`event ${i}: item id ${d.item?.id} ≠ ${it.id}`);
        for (const [k, open] of it.parts) if (open) v.push(`event ${i}: item ${d.output_index} done with content part ${k} open`);
      }
      doneItems.push(d.item);
    } else if (t === 'response.content_part.added' || t === 'response.content_part.done') {
      const it = items.get(d.output_index);
      if (!it || it.done || it.id !== d.item_id) v.push(`event ${i}: ${t} for an item that is not open`);
      else if (t.endsWith('added')) it.parts.set(d.content_index, true);
      else if (!it.parts.get(d.content_index)) v.push(`event ${i}: content part ${d.content_index} done but not open`);
      else it.parts.set(d.content_index, false);
    } else if (/\.delta$|\.done$/.test(t) && t.startsWith('response.') && typeof d.item_id === 'string') {
      const it = items.get(d.output_index);
      if (!it || it.done || it.id !== d.item_id) v.push(`event ${i}: ${t} for an item that is not open`);
      else {
        const want =
          t.startsWith('response.output_text') || t.startsWith('response.refusal')
            ? 'message'
            : t.startsWith('response.function_call_arguments')
              ? 'function_call'
              : t.startsWith('response.reasoning')
                ? 'reasoning'
                : undefined;
        if (want && it.type !== want) v.push(`event ${i}: ${t} in a ${it.type} item`);
      }
    }
  });
  for (const [k, it] of items) if (!it.done && lastType !== 'error' && lastType !== 'response.failed') v.push(`item ${k} never done`);
  const final = events[events.length - 1]!.data as Record<string, any>;
  if (lastType === 'response.completed' || lastType === 'response.incomplete') {
    const out = final.response?.output;
    if (!Array.isArray(out) || out.length !== doneItems.length) v.push('final response.output does not hold the items streamed');
    if (!isObj(final.response?.usage)) v.push('final response has no usage');
    const status = lastType === 'response.completed' ? 'completed' : 'incomplete';
    if (final.response?.status !== status) v.push(`final status ${final.response?.status}, expected ${status}`);
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// What a conversion must carry

/** Canonical facts of one answer, for comparing an answer before and after conversion. */
export interface AnswerFacts {
  text: string;
  /** The text is (or holds) an OpenAI refusal. */
  refused?: boolean;
  reasoning: string;
  toolCalls: Array<{ id?: string; name: string; args: unknown }>;
  finish: string | null;
  usage?: { prompt: number; completion: number; cached: number; creation: number; reasoning: number };
}

/** Which facts a protocol can carry to its client (what the comparison may ask for). */
export const CARRIES: Record<WireFormat, { reasoning: boolean; toolCallIds: boolean; creation: boolean; reasoningTokens: boolean }> = {
  openai: { reasoning: true, toolCallIds: true, creation: false, reasoningTokens: true },
  responses: { reasoning: true, toolCallIds: true, creation: false, reasoningTokens: true },
  claude: { reasoning: true, toolCallIds: true, creation: true, reasoningTokens: false },
  gemini: { reasoning: true, toolCallIds: false, creation: false, reasoningTokens: true },
};

/** Differences between the facts of the upstream's answer and those the client got (what `client` can carry). */
export function factDifferences(client: WireFormat, upstream: AnswerFacts, got: AnswerFacts): string[] {
  const c = CARRIES[client];
  const v: string[] = [];
  if (upstream.text !== got.text) v.push(`text ${JSON.stringify(upstream.text)} became ${JSON.stringify(got.text)}`);
  if (c.reasoning && upstream.reasoning !== got.reasoning) v.push(`reasoning ${JSON.stringify(upstream.reasoning)} became ${JSON.stringify(got.reasoning)}`);
  const tc = (f: AnswerFacts) => JSON.stringify(f.toolCalls.map((t) => ({ ...(c.toolCallIds ? { id: t.id } : {}), name: t.name, args: t.args })));
  if (tc(upstream) !== tc(got)) v.push(`tool calls ${tc(upstream)} became ${tc(got)}`);
  // A refusal may be told with a stop reason of its own (Claude `refusal`, read back as content_filter).
  const refusalStop = upstream.refused && upstream.finish === 'stop' && got.finish === 'content_filter';
  if (upstream.finish !== got.finish && !refusalStop) v.push(`finish ${upstream.finish} became ${got.finish}`);
  const u = upstream.usage;
  const g = got.usage;
  if (u && !g) v.push('usage lost');
  if (u && g) {
    const keys: Array<keyof NonNullable<AnswerFacts['usage']>> = ['prompt', 'completion', 'cached'];
    if (c.creation) keys.push('creation');
    if (c.reasoningTokens) keys.push('reasoning');
    for (const k of keys) if (u[k] !== g[k]) v.push(`usage ${k} ${u[k]} became ${g[k]}`);
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// What a converted request must still say

interface CanonicalMessage {
  role: string;
  content: unknown;
  tool_calls?: Array<{ function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  reasoning_content?: string;
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isObj(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

function resultText(content: unknown): string {
  const text =
    typeof content === 'string' ? content : Array.isArray(content) ? content.map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('') : '';
  try {
    let v = JSON.parse(text);
    // a target that needs an object wraps plain results ({content}, {result}; a failure {error}): the same result
    if (isObj(v) && Object.keys(v).length === 1 && ('content' in v || 'result' in v || 'error' in v)) v = v.content ?? v.result ?? v.error;
    return typeof v === 'string' ? v : canonicalJson(v);
  } catch {
    return text;
  }
}

function mediaName(url: string): string {
  const m = /^data:([^;,]+)?[^,]*,(.*)$/s.exec(url);
  return m ? `data:${m[1] ?? '?'} (${m[2]!.length} chars)` : url;
}

/**
 * A canonical request reduced to what a conversion must keep: the instructions, the conversation
 * as an ordered list of atoms (adjacent texts of one role joined, as every target merges them),
 * the tools, the tool choice and the sampling limits.
 */
export function requestDigest(req: { messages?: CanonicalMessage[]; [k: string]: unknown }): Record<string, unknown> {
  const system: string[] = [];
  const atoms: string[] = [];
  let textRole = '';
  let text = '';
  const flush = () => {
    if (text) atoms.push(`${textRole}: ${JSON.stringify(text)}`);
    text = '';
  };
  const addText = (role: string, t: string) => {
    if (!t) return;
    if (role !== textRole) flush();
    textRole = role;
    text += t;
  };
  for (const m of req.messages ?? []) {
    if (m.role === 'system' || m.role === 'developer') {
      system.push(typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? m.content.map((p: any) => p?.text ?? '').join('') : '');
      continue;
    }
    if (m.role === 'tool') {
      flush();
      atoms.push(`tool result${(m as { is_error?: boolean }).is_error ? ' (error)' : ''}: ${JSON.stringify(resultText(m.content))}`);
      continue;
    }
    if (m.reasoning_content) {
      flush();
      atoms.push(`${m.role} reasoning: ${JSON.stringify(m.reasoning_content)}`);
    }
    if (typeof m.content === 'string') addText(m.role, m.content);
    else if (Array.isArray(m.content)) {
      for (const p of m.content as any[]) {
        if (p?.type === 'text') addText(m.role, p.text ?? '');
        else {
          flush();
          if (p?.type === 'image_url') atoms.push(`${m.role} image: ${mediaName(typeof p.image_url === 'string' ? p.image_url : p.image_url?.url)}`);
          else if (p?.type === 'file') atoms.push(`${m.role} file: ${p.file?.file_data ? mediaName(p.file.file_data) : (p.file?.file_id ?? '?')}`);
          else if (p?.type === 'input_audio') atoms.push(`${m.role} audio: ${p.input_audio?.format}`);
          else atoms.push(`${m.role} ${p?.type}`);
        }
      }
    }
    for (const tc of m.tool_calls ?? []) {
      flush();
      let args: unknown = tc.function.arguments;
      try {
        args = JSON.parse(tc.function.arguments || '{}');
      } catch {
        /* kept as text */
      }
      atoms.push(`${m.role} call: ${tc.function.name}(${canonicalJson(args)})`);
    }
  }
  flush();
  const tools = ((req.tools as Array<{ function?: { name?: string } }> | undefined) ?? []).map((t) => t.function?.name);
  const stop = req.stop === undefined ? undefined : Array.isArray(req.stop) ? req.stop : [req.stop];
  return {
    system: system.filter(Boolean).join('\n'),
    conversation: atoms,
    tools,
    tool_choice: req.tool_choice === undefined ? undefined : canonicalJson(req.tool_choice),
    temperature: req.temperature,
    top_p: req.top_p,
    max_tokens: req.max_tokens ?? req.max_completion_tokens,
    stop,
  };
}

/**
 * What changed between two request digests (before → after a conversion and its reading back),
 * leaving out what the target requires by design: Claude needs `max_tokens` (a default is added),
 * takes `temperature` only in 0–1 and only 1 with thinking, and `top_p` only without `temperature`
 * (newer models refuse both); the Responses API has no stop
 * sequences; no target accepts another provider's
 * reasoning text back (OpenAI Chat has no input field for it, Claude wants its own signature,
 * Gemini its thought signature), so reasoning text dropped on the way is not a loss.
 */
export function digestDifferences(before: Record<string, unknown>, after: Record<string, unknown>, target: WireFormat, upstreamBody: unknown): string[] {
  const v: string[] = [];
  const body = isObj(upstreamBody) ? upstreamBody : {};
  for (const k of Object.keys(before)) {
    const a = before[k];
    const b = after[k];
    if (target === 'claude' && k === 'max_tokens' && a === undefined) continue;
    if (target === 'responses' && k === 'stop') continue; // the Responses API has no stop sequences
    if (target === 'claude' && k === 'top_p' && b === undefined && body.temperature !== undefined) continue;
    if (target === 'claude' && k === 'temperature') {
      const thinking = isObj(body.thinking) && body.thinking.type === 'enabled';
      if (thinking && b === 1) continue;
      if (typeof a === 'number' && b === Math.min(1, Math.max(0, a))) continue;
    }
    if (k === 'conversation') {
      // OpenAI's protocols have no error flag on a tool result: towards them only the text is kept
      const flagless = target === 'openai' || target === 'responses';
      const x = (a as string[]).filter((s) => !/^\w+ reasoning: /.test(s)).map((s) => (flagless ? s.replace(/^tool result \(error\): /, 'tool result: ') : s));
      const y = (b as string[]).filter((s) => !/^\w+ reasoning: /.test(s));
      const missing = x.filter((s) => !y.includes(s));
      const added = y.filter((s) => !x.includes(s));
      for (const s of missing) v.push(`conversation lost ${s}`);
      for (const s of added) v.push(`conversation gained ${s}`);
      if (!missing.length && !added.length && JSON.stringify(x) !== JSON.stringify(y)) v.push('conversation order changed');
    } else if (JSON.stringify(a) !== JSON.stringify(b)) v.push(`${k} ${JSON.stringify(a)} became ${JSON.stringify(b)}`);
  }
  return v;
}

/** The message of a stream's final error event, whatever the protocol. */
export function streamErrorMessage(events: StreamEvent[]): string | undefined {
  const d = events[events.length - 1]?.data;
  if (!isObj(d)) return undefined;
  const m = d.error?.message ?? d.response?.error?.message ?? d.message;
  return typeof m === 'string' ? m : undefined;
}

/** The error body a client of `protocol` expects, and whether the upstream's message survived. */
export function errorViolations(protocol: WireFormat, status: number, body: unknown, upstreamStatus: number, upstreamMessage: string): string[] {
  const v: string[] = [];
  const b = body as Record<string, any>;
  if (status !== upstreamStatus) v.push(`status ${upstreamStatus} became ${status}`);
  let message: unknown;
  if (protocol === 'claude') {
    if (b?.type !== 'error' || !isObj(b.error) || typeof b.error.type !== 'string') v.push('not a Claude error body');
    message = b?.error?.message;
  } else if (protocol === 'gemini') {
    if (!isObj(b?.error) || b.error.code !== status || typeof b.error.status !== 'string') v.push('not a Gemini error body');
    message = b?.error?.message;
  } else {
    if (!isObj(b?.error) || typeof b.error.type !== 'string') v.push('not an OpenAI error body');
    message = b?.error?.message;
  }
  if (typeof message !== 'string' || !message) v.push('error without message');
  else if (upstreamMessage && !message.includes(upstreamMessage))
    v.push(`upstream message ${JSON.stringify(upstreamMessage)} lost (got ${JSON.stringify(message)})`);
  return v;
}

/** The stream ends with an error event of its protocol (OpenAI/Gemini `{error}`, Claude `error`, Responses `error`/`response.failed`). */
export function endsInError(events: StreamEvent[]): boolean {
  const d = events[events.length - 1]?.data;
  if (!isObj(d)) return false;
  return isObj(d.error) || d.type === 'error' || d.type === 'response.failed';
}

/**
 * Whether a request asks for reasoning: 'on' (an effort, a budget, a level, adaptive thinking),
 * 'off' (effort none, thinking disabled, budget 0) or undefined (nothing said; Gemini's
 * `includeThoughts` alone only asks to see thoughts).
 */
export function reasoningAsked(protocol: WireFormat, body: unknown): 'on' | 'off' | undefined {
  if (!isObj(body)) return undefined;
  switch (protocol) {
    case 'openai':
      return body.reasoning_effort === undefined ? undefined : body.reasoning_effort === 'none' ? 'off' : 'on';
    case 'responses': {
      const e = body.reasoning?.effort;
      return e === undefined || e === null ? undefined : e === 'none' ? 'off' : 'on';
    }
    case 'claude': {
      const t = body.thinking?.type;
      if (t === 'disabled') return 'off';
      if (t === 'enabled' || t === 'adaptive' || body.output_config?.effort) return 'on';
      return undefined;
    }
    case 'gemini': {
      const tc = body.generationConfig?.thinkingConfig;
      if (!isObj(tc)) return undefined;
      if (tc.thinkingBudget === 0) return 'off';
      if ((typeof tc.thinkingBudget === 'number' && tc.thinkingBudget !== 0) || tc.thinkingLevel) return 'on';
      return undefined;
    }
  }
}

/** A converted request that drops the client's wish for reasoning (or turns it on when asked off). */
export function reasoningViolations(client: WireFormat, clientBody: unknown, target: WireFormat, upstreamBody: unknown): string[] {
  const asked = reasoningAsked(client, clientBody);
  if (!asked) return [];
  const sent = reasoningAsked(target, upstreamBody);
  if (asked === 'on' && sent !== 'on') return [`reasoning was asked for and is not passed on`];
  if (asked === 'off' && sent === 'on') return [`reasoning was turned off and is turned on`];
  return [];
}
