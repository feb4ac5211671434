/**
 * Canonical response → Responses object (client side), the JSON written by template where it can.
 */
import type { ChatResponse, FinishReason, ReasoningDetail, ToolCall } from '../../relay/types';
import { isRecord, newId } from '../shared';
import { hasExactly, jsonName, jsonNumber, jsonOrNull } from '../../lib/json';
import { str, encryptedContentFor, type ResponsesUsage, chatUsageToResponses } from './shared';
import { CUSTOM_INPUT, customToolNames } from './request';

// ---------------------------------------------------------------------------------------------
// Response

export type Item = Record<string, unknown>;

const ID_UNSAFE = /[^A-Za-z0-9_-]/;
const ID_UNSAFE_ALL = /[^A-Za-z0-9_-]/g;

export function responseId(id: string | undefined): string {
  if (id?.startsWith('resp_')) return id;
  if (!id) return newId('resp_');
  const bare = id.startsWith('chatcmpl-') ? id.slice('chatcmpl-'.length) : id;
  // Most upstream ids are already safe: tested before a global replace builds a new string.
  return `resp_${ID_UNSAFE.test(bare) ? bare.replace(ID_UNSAFE_ALL, '') : bare}`;
}

export function messageItem(id: string, text: string, status: string, refusal = false): Item {
  return { id, type: 'message', status, role: 'assistant', content: [contentPart(text, refusal)] };
}

function outputText(text: string): Item {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

/** A message's content part: its text, or the model's refusal (OpenAI Chat `refusal`). */
export function contentPart(text: string, refusal: boolean): Item {
  return refusal ? { type: 'refusal', refusal: text } : outputText(text);
}

export function reasoningItem(id: string, text: string, details: ReasoningDetail[], signatures?: Record<string, string>): Item {
  const item: Item = { id, type: 'reasoning', summary: text ? [{ type: 'summary_text', text }] : [] };
  const enc = encryptedContentFor(details, signatures);
  if (enc) item.encrypted_content = enc;
  return item;
}

export function toolItem(id: string, callId: string, name: string, args: string, custom: boolean, status: string): Item {
  if (!custom) return { id, type: 'function_call', status, call_id: callId, name, arguments: args };
  return { id, type: 'custom_tool_call', status, call_id: callId, name, input: customInput(args) };
}

/** A custom tool's call went out as a function with `{input}`: its raw text back. */
function customInput(args: string): string {
  try {
    const v: unknown = JSON.parse(args);
    if (isRecord(v) && typeof v[CUSTOM_INPUT] === 'string') return v[CUSTOM_INPUT];
  } catch {
    /* not JSON: the text as it came */
  }
  return args;
}

/** How the response ended: status and incomplete_details from the finish reason. */
export function ending(finish: FinishReason | undefined): { status: string; incomplete_details: { reason: string } | null } {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** What a response is made of besides what it echoes of the request. */
interface ResponseCore {
  id: string;
  created: number;
  model: string;
  status: string;
  output: Item[];
  usage?: ResponsesUsage | null;
  incomplete?: { reason: string } | null;
  error?: unknown;
}

/** The fields of a response that echo what the client asked for (or their defaults). */
function echoed(body: Record<string, unknown> | undefined) {
  const b = body ?? {};
  const reasoning = isRecord(b.reasoning) ? b.reasoning : {};
  return {
    instructions: typeof b.instructions === 'string' ? b.instructions : null,
    max_output_tokens: typeof b.max_output_tokens === 'number' ? b.max_output_tokens : null,
    parallel_tool_calls: b.parallel_tool_calls !== false,
    reasoning: { effort: str(reasoning.effort) ?? null, summary: str(reasoning.summary) ?? null },
    temperature: typeof b.temperature === 'number' ? b.temperature : null,
    text: isRecord(b.text) ? b.text : { format: { type: 'text' } },
    tool_choice: b.tool_choice ?? 'auto',
    tools: Array.isArray(b.tools) ? b.tools : [],
    top_p: typeof b.top_p === 'number' ? b.top_p : null,
    truncation: str(b.truncation) ?? 'disabled',
    user: str(b.user) ?? null,
    metadata: isRecord(b.metadata) ? b.metadata : {},
  };
}

/** The Response object around `output`, echoing what the client asked for. */
export function responseObject(r: ResponseCore, body: Record<string, unknown> | undefined): Item {
  const e = echoed(body);
  return {
    id: r.id,
    object: 'response',
    created_at: r.created,
    status: r.status,
    background: false,
    error: r.error ?? null,
    incomplete_details: r.incomplete ?? null,
    instructions: e.instructions,
    max_output_tokens: e.max_output_tokens,
    model: r.model,
    output: r.output,
    parallel_tool_calls: e.parallel_tool_calls,
    previous_response_id: null,
    reasoning: e.reasoning,
    // Nothing is stored: a converted response cannot be named by previous_response_id later.
    store: false,
    temperature: e.temperature,
    text: e.text,
    tool_choice: e.tool_choice,
    tools: e.tools,
    top_p: e.top_p,
    truncation: e.truncation,
    usage: r.usage ?? null,
    user: e.user,
    metadata: e.metadata,
  };
}

/** responseObject's echoed fields as JSON, in three runs (between them: model and output, then usage). */
export interface EchoJson {
  beforeModel: string;
  afterOutput: string;
  afterUsage: string;
}

/**
 * The echoed fields' JSON when the client left them out, and of the usual strings: each
 * `JSON.stringify` call costs ≈ 1.3 k instructions however small its value, and a converted call
 * made four of them for these defaults alone.
 */
const DEFAULT_TEXT_JSON = '{"format":{"type":"text"}}';
const KNOWN_ECHO_STRINGS: Record<string, string> = { auto: '"auto"', none: '"none"', required: '"required"', disabled: '"disabled"' };
const echoString = (v: unknown) => (typeof v === 'string' && Object.hasOwn(KNOWN_ECHO_STRINGS, v) ? KNOWN_ECHO_STRINGS[v]! : JSON.stringify(v));

export function echoJson(body: Record<string, unknown> | undefined): EchoJson {
  const e = echoed(body);
  return {
    beforeModel: `"instructions":${jsonOrNull(e.instructions)},"max_output_tokens":${jsonOrNull(e.max_output_tokens)}`,
    afterOutput:
      `"parallel_tool_calls":${e.parallel_tool_calls},"previous_response_id":null,` +
      `"reasoning":{"effort":${jsonOrNull(e.reasoning.effort)},"summary":${jsonOrNull(e.reasoning.summary)}},"store":false,` +
      `"temperature":${jsonOrNull(e.temperature)},"text":${isRecord(body?.text) ? JSON.stringify(e.text) : DEFAULT_TEXT_JSON},` +
      `"tool_choice":${echoString(e.tool_choice)},` +
      `"tools":${e.tools.length ? JSON.stringify(e.tools) : '[]'},"top_p":${jsonOrNull(e.top_p)},"truncation":${echoString(e.truncation)}`,
    afterUsage: `"user":${jsonOrNull(e.user)},"metadata":${isRecord(body?.metadata) ? JSON.stringify(e.metadata) : '{}'}`,
  };
}

const MESSAGE_KEYS = ['id', 'type', 'status', 'role', 'content'] as const;
const OUTPUT_TEXT_KEYS = ['type', 'text', 'annotations', 'logprobs'] as const;
const USAGE_KEYS = ['input_tokens', 'input_tokens_details', 'output_tokens', 'output_tokens_details', 'total_tokens'] as const;
const CACHED_KEYS = ['cached_tokens'] as const;
const REASONING_KEYS = ['reasoning_tokens'] as const;
const emptyArray = (v: unknown) => Array.isArray(v) && v.length === 0;

/** A content part that itemJson writes by template: output text without annotations or logprobs. */
function plainText(p: unknown): p is { text: string } {
  return (
    isRecord(p) &&
    p.type === 'output_text' &&
    typeof p.text === 'string' &&
    hasExactly(p, OUTPUT_TEXT_KEYS) &&
    emptyArray(p.annotations) &&
    emptyArray(p.logprobs)
  );
}

/** An output item as JSON: assistant messages of plain text by template, anything else by JSON.stringify. */
function itemJson(it: Item): string {
  const content = it.content;
  if (
    it.type !== 'message' ||
    !hasExactly(it, MESSAGE_KEYS) ||
    typeof it.id !== 'string' ||
    typeof it.status !== 'string' ||
    typeof it.role !== 'string' ||
    !Array.isArray(content) ||
    !content.every(plainText)
  ) {
    return JSON.stringify(it);
  }
  let parts = '';
  for (let i = 0; i < content.length; i++) {
    parts += `${i ? ',' : ''}{"type":"output_text","text":${JSON.stringify((content[i] as { text: string }).text)},"annotations":[],"logprobs":[]}`;
  }
  return `{"id":${JSON.stringify(it.id)},"type":"message","status":${jsonName(it.status)},"role":${jsonName(it.role)},"content":[${parts}]}`;
}

const isNum = (v: unknown): v is number => typeof v === 'number';

function usageJson(u: ResponsesUsage | null | undefined): string {
  if (u == null) return 'null';
  const i: unknown = u.input_tokens_details;
  const o: unknown = u.output_tokens_details;
  const plain =
    hasExactly(u, USAGE_KEYS) &&
    isRecord(i) &&
    hasExactly(i, CACHED_KEYS) &&
    isRecord(o) &&
    hasExactly(o, REASONING_KEYS) &&
    isNum(u.input_tokens) &&
    isNum(u.output_tokens) &&
    isNum(u.total_tokens) &&
    isNum(i.cached_tokens) &&
    isNum(o.reasoning_tokens);
  if (!plain) return JSON.stringify(u);
  return (
    `{"input_tokens":${jsonNumber(u.input_tokens)},"input_tokens_details":{"cached_tokens":${jsonNumber(i.cached_tokens as number)}},` +
    `"output_tokens":${jsonNumber(u.output_tokens)},"output_tokens_details":{"reasoning_tokens":${jsonNumber(o.reasoning_tokens as number)}},` +
    `"total_tokens":${jsonNumber(u.total_tokens)}}`
  );
}

/**
 * `JSON.stringify(responseObject(r, body))`, written by template (lib/json.ts says why); `echo`
 * is echoJson(body), which a stream computes once for its three snapshots.
 */
export function responseJson(r: ResponseCore, body: Record<string, unknown> | undefined, echo = echoJson(body)): string {
  return responseHead(r.id, r.created) + responseTail(r, echo);
}

/** A response's JSON up to its `created_at` (responseJson = head + tail). */
export const responseHead = (id: string, created: number) => `{"id":${JSON.stringify(id)},"object":"response","created_at":${jsonNumber(created)}`;

/** A response's JSON from its `status` on: all a stream's opening snapshot needs before the upstream answers. */
export function responseTail(r: Omit<ResponseCore, 'id' | 'created'>, echo: EchoJson): string {
  let output = '';
  for (let i = 0; i < r.output.length; i++) output += (i ? ',' : '') + itemJson(r.output[i]!);
  return (
    `,"status":${jsonName(r.status)},` +
    `"background":false,"error":${jsonOrNull(r.error)},"incomplete_details":${jsonOrNull(r.incomplete)},${echo.beforeModel},` +
    `"model":${JSON.stringify(r.model)},"output":[${output}],${echo.afterOutput},"usage":${usageJson(r.usage)},${echo.afterUsage}}`
  );
}

/** Thought signatures of tool calls (Gemini), by call id; undefined when none. */
function signaturesOf(calls: Array<Pick<ToolCall, 'id' | 'extra_content'>>): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const c of calls) {
    const sig = c.extra_content?.google?.thought_signature;
    if (sig) (out ??= {})[c.id] = sig;
  }
  return out;
}

/** Canonical response → Responses object. */
export function chatToResponses(res: ChatResponse, model: string, body?: Record<string, unknown>): Item {
  return responseObject(responseCore(res, model, body), body);
}

/** `JSON.stringify(chatToResponses(res, model, body))`, by template. */
export function chatToResponsesJson(res: ChatResponse, model: string, body?: Record<string, unknown>): string {
  return responseJson(responseCore(res, model, body), body);
}

function responseCore(res: ChatResponse, model: string, body: Record<string, unknown> | undefined): ResponseCore {
  const choice = res.choices?.[0];
  const msg = choice?.message;
  const custom = customToolNames(body);
  const output: Item[] = [];
  const calls = msg?.tool_calls ?? [];
  const signatures = signaturesOf(calls);
  if (msg?.reasoning_content || msg?.reasoning_details?.length || signatures) {
    output.push(reasoningItem(newId('rs_'), msg?.reasoning_content ?? '', msg?.reasoning_details ?? [], signatures));
  }
  const { status, incomplete_details } = ending(choice?.finish_reason ?? 'stop');
  const parts: Item[] = [];
  if (typeof msg?.content === 'string' && msg.content) parts.push(outputText(msg.content));
  if (typeof msg?.refusal === 'string' && msg.refusal) parts.push(contentPart(msg.refusal, true));
  if (parts.length)
    output.push({ id: newId('msg_'), type: 'message', status: status === 'incomplete' ? 'incomplete' : 'completed', role: 'assistant', content: parts });
  for (const tc of calls) {
    const name = tc.function?.name ?? '';
    output.push(toolItem(newId(custom.has(name) ? 'ctc_' : 'fc_'), tc.id || newId('call_'), name, tc.function?.arguments ?? '', custom.has(name), 'completed'));
  }
  return {
    id: responseId(res.id),
    created: res.created || Math.floor(Date.now() / 1000),
    model,
    status,
    output,
    usage: chatUsageToResponses(res.usage),
    incomplete: incomplete_details,
  };
}
