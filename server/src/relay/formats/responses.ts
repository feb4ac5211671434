/**
 * OpenAI Responses API as a client-facing format (`POST /v1/responses`), for calls converted to
 * a channel that does not speak it (Claude, Gemini, Chat-only OpenAI-compatible kinds …). A channel
 * that speaks Responses gets the client's body as sent (passthrough), so nothing here runs then.
 *
 * Responses request → canonical request, canonical response → Response object, canonical chunks →
 * the Responses event sequence (response.created … response.completed) as the official `openai`
 * SDK's stream accumulator expects it. Also the shared vocabulary of the Responses adaptor
 * (adaptors/responses.ts): usage both ways and the reasoning carried in `encrypted_content`.
 *
 * Reasoning another provider wants back verbatim (Claude thinking signatures, Gemini thought
 * signatures on tool calls) has no field of its own in a Responses client's history. It travels in
 * the one field clients send back untouched, a reasoning item's `encrypted_content`, packed as
 * `gwr1.<base64url JSON>` (see `packReasoning`); a reasoning item packed so is stripped before a
 * body reaches a real Responses upstream, which could not decrypt it.
 */
import { RelayError } from '../errors';
import { verbatim } from '../../i18n';
import type {
  ChatChunk,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ContentPart,
  FinishReason,
  InboundFormat,
  ReasoningDetail,
  StreamWriterOptions,
  ToolCall,
  ToolDef,
  Usage,
} from '../types';
import { fileNameFor, isRecord, newId, parseDataUrl } from '../adaptors/shared';
import { hasExactly, jsonName, jsonNumber, jsonOrNull } from '../../lib/json';
import { openaiError } from './openai';

/** The request's shape is wrong: protocol-level wording (field paths), English like the protocols' own errors. */
const badRequest = (message: string) => new RelayError(400, verbatim(message), 'invalid_request');

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

// ---------------------------------------------------------------------------------------------
// Reasoning carried in encrypted_content

/** Prefix of reasoning the gateway packed itself (never a real OpenAI encrypted_content). */
export const PACKED_REASONING_PREFIX = 'gwr1.';

export interface PackedReasoning {
  /** reasoning_details of other providers (Claude signatures, redacted thinking, Gemini …). */
  d?: ReasoningDetail[];
  /** Gemini thought signatures of tool calls, by call id. */
  s?: Record<string, string>;
}

export function packReasoning(p: PackedReasoning): string {
  return PACKED_REASONING_PREFIX + Buffer.from(JSON.stringify(p), 'utf8').toString('base64url');
}

export function unpackReasoning(data: string): PackedReasoning | undefined {
  if (!data.startsWith(PACKED_REASONING_PREFIX)) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(data.slice(PACKED_REASONING_PREFIX.length), 'base64url').toString('utf8'));
    if (!isRecord(v)) return undefined;
    const out: PackedReasoning = {};
    if (Array.isArray(v.d)) out.d = v.d.filter((x): x is ReasoningDetail => isRecord(x) && typeof x.type === 'string');
    if (isRecord(v.s)) out.s = Object.fromEntries(Object.entries(v.s).filter((e): e is [string, string] => typeof e[1] === 'string'));
    return out;
  } catch {
    return undefined;
  }
}

/** The `encrypted_content` for one reasoning item: OpenAI's own data as is, anything else packed. */
function encryptedContentFor(details: ReasoningDetail[], signatures?: Record<string, string>): string | undefined {
  const own = details.filter((d) => d.type === 'reasoning.encrypted' && d.format === 'openai-responses-v1');
  const others = details.filter((d) => d.format !== 'openai-responses-v1');
  if (own.length === 1 && !others.length && !signatures) return (own[0] as { data: string }).data;
  if (!others.length && !signatures) return undefined;
  const p: PackedReasoning = {};
  if (others.length) p.d = others;
  if (signatures) p.s = signatures;
  return packReasoning(p);
}

// ---------------------------------------------------------------------------------------------
// Usage

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** Canonical usage → Responses usage (`input_tokens` includes cached tokens, as OpenAI counts). */
export function chatUsageToResponses(u: Usage | undefined): ResponsesUsage {
  const input = u?.prompt_tokens ?? 0;
  const output = u?.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u?.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: u?.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: input + output,
  };
}

/** Responses usage → canonical usage; undefined when there is none. */
export function responsesUsageToChat(u: unknown): Usage | undefined {
  if (!isRecord(u)) return undefined;
  const prompt = Number(u.input_tokens ?? 0) || 0;
  const completion = Number(u.output_tokens ?? 0) || 0;
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: Number(u.total_tokens ?? 0) || prompt + completion };
  const cached = isRecord(u.input_tokens_details) ? Number(u.input_tokens_details.cached_tokens ?? 0) || 0 : 0;
  const reasoning = isRecord(u.output_tokens_details) ? Number(u.output_tokens_details.reasoning_tokens ?? 0) || 0 : 0;
  if (cached) usage.prompt_tokens_details = { cached_tokens: cached };
  if (reasoning) usage.completion_tokens_details = { reasoning_tokens: reasoning };
  return usage;
}

// ---------------------------------------------------------------------------------------------
// Request

/** Tool types that run on OpenAI's side (or need its tool protocol): no other upstream has them. */
function isBuiltinTool(type: string): boolean {
  return type !== 'function' && type !== 'custom';
}

function itemType(item: Record<string, unknown>): string {
  return typeof item.type === 'string' ? item.type : typeof item.role === 'string' ? 'message' : '';
}

/** Some part (of `type`, when given) names a file stored at OpenAI. */
function hasFileId(content: unknown, type?: string): boolean {
  return Array.isArray(content) && content.some((p) => isRecord(p) && (!type || p.type === type) && typeof p.file_id === 'string' && p.file_id !== '');
}

/**
 * Why a Responses body can only go to an upstream that speaks Responses: it names state that
 * upstream keeps (a stored response, conversation, prompt template, file or item), asks to run in
 * the background, or requires a tool only OpenAI runs. Undefined when it can be converted.
 */
/** A Responses body's message parts naming files stored at OpenAI (Chat Completions reads them too). */
export function responsesOpenAIFiles(body: unknown): string | undefined {
  if (!isRecord(body) || !Array.isArray(body.input)) return undefined;
  for (let i = 0; i < body.input.length; i++) {
    const item = body.input[i];
    if (isRecord(item) && itemType(item) === 'message' && hasFileId(item.content)) return `input[${i}].content (file_id)`;
  }
  return undefined;
}

export function responsesNativeOnly(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  if (typeof body.previous_response_id === 'string' && body.previous_response_id) return 'previous_response_id';
  if (body.conversation != null && body.conversation !== '') return 'conversation';
  if (body.background === true) return 'background';
  if (isRecord(body.prompt)) return 'prompt';
  if (Array.isArray(body.input)) {
    for (let i = 0; i < body.input.length; i++) {
      const item = body.input[i];
      if (!isRecord(item)) continue;
      const type = itemType(item);
      if (type === 'item_reference' || type === 'compaction') return `input[${i}] (${type})`;
      // Chat Completions takes files by id but images by URL only: an image by id stays on Responses
      if (type === 'message' && hasFileId(item.content, 'input_image')) return `input[${i}].content (input_image file_id)`;
      if ((type === 'function_call_output' || type === 'custom_tool_call_output') && hasFileId(item.output)) return `input[${i}].output (file_id)`;
    }
  }
  const tc = body.tool_choice;
  if (isRecord(tc) && typeof tc.type === 'string' && tc.type !== 'allowed_tools' && isBuiltinTool(tc.type)) return `tool_choice (${tc.type})`;
  if (tc === 'required' && Array.isArray(body.tools) && body.tools.length && body.tools.every((t) => isRecord(t) && isBuiltinTool(String(t.type)))) {
    return 'tool_choice: required (built-in tools only)';
  }
  return undefined;
}

/** A message's content → canonical content. */
function toContent(content: unknown, where: string): string | ContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw badRequest(`${where}: content must be a string or an array of content parts`);
  return toParts(content, where);
}

function toParts(content: unknown[], where: string): ContentPart[] {
  const parts: ContentPart[] = [];
  content.forEach((p, j) => {
    if (!isRecord(p) || typeof p.type !== 'string') throw badRequest(`${where}[${j}]: invalid content part`);
    switch (p.type) {
      case 'input_text':
      case 'output_text':
      case 'text':
        parts.push({ type: 'text', text: str(p.text) ?? '' });
        break;
      case 'refusal':
        parts.push({ type: 'text', text: str(p.refusal) ?? '' });
        break;
      case 'input_image': {
        // An image by file_id names OpenAI's file store: such a body is passed through only (responsesNativeOnly).
        const url = str(p.image_url);
        if (url) parts.push({ type: 'image_url', image_url: { url, ...(typeof p.detail === 'string' && p.detail !== 'auto' ? { detail: p.detail } : {}) } });
        break;
      }
      case 'input_file': {
        const data = str(p.file_data);
        const filename = str(p.filename);
        if (data) {
          // Bare base64 is taken as a PDF unless the file name says otherwise (PDFs are what models read).
          const mime = !filename || filename.toLowerCase().endsWith('.pdf') ? 'application/pdf' : 'application/octet-stream';
          const url = data.startsWith('data:') ? data : `data:${mime};base64,${data}`;
          parts.push({ type: 'file', file: { file_data: url, filename: filename ?? fileNameFor(parseDataUrl(url)?.mimeType ?? mime) } });
        } else if (str(p.file_id)) {
          // An uploaded file: OpenAI Chat and Responses upstreams take its id (other targets cannot)
          parts.push({ type: 'file', file: { file_id: str(p.file_id)!, ...(filename ? { filename } : {}) } });
        } else if (typeof p.file_url === 'string') {
          // The canonical (Chat) format has no file URLs; the gateway does not fetch client URLs.
          parts.push({ type: 'text', text: `[file: ${p.file_url}]` });
        }
        break;
      }
      case 'input_audio':
        if (isRecord(p.input_audio)) parts.push({ type: 'input_audio', input_audio: p.input_audio as { data: string; format: string } });
        break;
      default:
        break;
    }
  });
  return parts;
}

function textOf(content: string | ContentPart[]): string {
  if (typeof content === 'string') return content;
  return content.map((p) => (p.type === 'text' ? String((p as { text?: unknown }).text ?? '') : '')).join('');
}

function simplify(content: string | ContentPart[]): string | ContentPart[] {
  return typeof content !== 'string' && content.every((p) => p.type === 'text') ? textOf(content) : content;
}

/** Text of a custom tool's single string input, as the function it becomes takes it. */
const CUSTOM_INPUT = 'input';

/** Reads `input` items in order into canonical messages, merging one assistant turn's items. */
class InputReader {
  readonly messages: ChatMessage[] = [];
  private assistant: ChatMessage | undefined;
  /** Images and files of tool outputs: a tool message carries text only, so they follow as a user message. */
  private media: ContentPart[] = [];
  private signatures: Record<string, string> = {};

  read(items: unknown[]): void {
    items.forEach((raw, i) => this.item(raw, `input[${i}]`));
    this.endAssistant();
    this.flushMedia();
  }

  private item(raw: unknown, where: string): void {
    if (!isRecord(raw)) throw badRequest(`${where}: must be an object`);
    const type = itemType(raw);
    switch (type) {
      case 'message':
        return this.message(raw, where);
      case 'function_call':
      case 'custom_tool_call': {
        const callId = str(raw.call_id);
        const name = str(raw.name);
        if (!callId) throw badRequest(`${where}.call_id: required`);
        if (!name) throw badRequest(`${where}.name: required`);
        const args = type === 'function_call' ? (str(raw.arguments) ?? '') : JSON.stringify({ [CUSTOM_INPUT]: str(raw.input) ?? '' });
        const a = this.openAssistant();
        (a.tool_calls ??= []).push({ id: callId, type: 'function', function: { name, arguments: args } });
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const callId = str(raw.call_id);
        if (!callId) throw badRequest(`${where}.call_id: required`);
        this.endAssistant();
        const out = raw.output;
        let text: string;
        if (typeof out === 'string') text = out;
        else if (Array.isArray(out)) {
          const parts = toParts(out, `${where}.output`);
          text = textOf(parts);
          for (const p of parts) if (p.type !== 'text') this.media.push(p);
        } else if (out == null) text = '';
        else text = JSON.stringify(out);
        this.messages.push({ role: 'tool', tool_call_id: callId, content: text });
        return;
      }
      case 'reasoning':
        return this.reasoning(raw);
      case 'additional_tools':
        return; // tools, read with the request's own (offeredTools)
      default:
        // Built-in tool calls and their outputs (web_search_call, computer_call(_output),
        // local_shell_call, mcp_call …) and item types this gateway does not know cannot be
        // replayed to another provider: left out of the converted history.
        return;
    }
  }

  private message(raw: Record<string, unknown>, where: string): void {
    const role = raw.role;
    if (role === 'assistant') {
      const text = textOf(toContent(raw.content ?? '', `${where}.content`));
      const a = this.openAssistant();
      if (text) a.content = (typeof a.content === 'string' ? a.content : '') + text;
      return;
    }
    if (role !== 'user' && role !== 'system' && role !== 'developer') throw badRequest(`${where}.role: must be one of user, assistant, system, developer`);
    this.endAssistant();
    this.flushMedia();
    const content = simplify(toContent(raw.content ?? '', `${where}.content`));
    // developer and system instructions are one thing to every target; `system` is what all accept.
    this.messages.push({ role: role === 'user' ? 'user' : 'system', content });
  }

  private reasoning(raw: Record<string, unknown>): void {
    const a = this.openAssistant();
    const id = str(raw.id);
    const summaries = (Array.isArray(raw.summary) ? raw.summary : []).map((s) => (isRecord(s) ? (str(s.text) ?? '') : '')).filter(Boolean);
    const contents = (Array.isArray(raw.content) ? raw.content : []).map((s) => (isRecord(s) ? (str(s.text) ?? '') : '')).filter(Boolean);
    const text = (summaries.length ? summaries : contents).join('\n\n');
    if (text) a.reasoning_content = a.reasoning_content ? `${a.reasoning_content}\n\n${text}` : text;
    const enc = str(raw.encrypted_content);
    if (!enc) return;
    const packed = unpackReasoning(enc);
    const details = (a.reasoning_details ??= []);
    if (packed) {
      details.push(...(packed.d ?? []));
      Object.assign(this.signatures, packed.s ?? {});
    } else {
      for (const s of summaries) details.push({ type: 'reasoning.summary', summary: s, ...(id ? { id } : {}), format: 'openai-responses-v1' });
      details.push({ type: 'reasoning.encrypted', data: enc, ...(id ? { id } : {}), format: 'openai-responses-v1' });
    }
  }

  private openAssistant(): ChatMessage {
    if (this.assistant) return this.assistant;
    this.flushMedia();
    this.assistant = { role: 'assistant', content: null };
    this.messages.push(this.assistant);
    return this.assistant;
  }

  private endAssistant(): void {
    const a = this.assistant;
    if (!a) return;
    this.assistant = undefined;
    for (const tc of a.tool_calls ?? []) {
      const sig = this.signatures[tc.id];
      if (sig) tc.extra_content = { google: { thought_signature: sig } };
    }
    if (a.content === null && !a.tool_calls?.length) a.content = '';
    if (a.reasoning_details && !a.reasoning_details.length) delete a.reasoning_details;
  }

  private flushMedia(): void {
    if (!this.media.length) return;
    this.messages.push({ role: 'user', content: this.media });
    this.media = [];
  }
}

/** A custom (free-form) tool becomes a function taking one string; its grammar goes in the description. */
function customToolDef(t: Record<string, unknown>, name: string): ToolDef {
  let description = str(t.description) ?? '';
  const f = isRecord(t.format) ? t.format : undefined;
  if (f?.type === 'grammar' && typeof f.definition === 'string') {
    description += `${description ? '\n\n' : ''}The "${CUSTOM_INPUT}" argument must follow this ${str(f.syntax) ?? ''} grammar:\n${f.definition}`;
  }
  return {
    type: 'function',
    function: {
      name,
      ...(description ? { description } : {}),
      parameters: { type: 'object', properties: { [CUSTOM_INPUT]: { type: 'string', description: 'The raw input of the tool.' } }, required: [CUSTOM_INPUT] },
    },
  };
}

/**
 * Every tool the request offers, flat: `tools`, plus those of `additional_tools` input items
 * (Codex sends its tools there, as the developer's), with the tools of a `namespace` group listed
 * by their own names (a call names the tool, not its group). Undefined `tools` and no items: [].
 */
function offeredTools(body: Record<string, unknown>): unknown[] {
  if (body.tools != null && !Array.isArray(body.tools)) throw badRequest('tools: must be an array');
  const out: unknown[] = [];
  const add = (list: unknown[]) => {
    for (const t of list) {
      if (isRecord(t) && t.type === 'namespace' && Array.isArray(t.tools)) add(t.tools);
      else out.push(t);
    }
  };
  if (Array.isArray(body.tools)) add(body.tools);
  if (Array.isArray(body.input))
    for (const item of body.input) if (isRecord(item) && item.type === 'additional_tools' && Array.isArray(item.tools)) add(item.tools);
  return out;
}

function toTools(tools: unknown[], unconverted: string[]): ToolDef[] {
  const out: ToolDef[] = [];
  const seen = new Set<string>();
  tools.forEach((t, i) => {
    if (!isRecord(t) || typeof t.type !== 'string') throw badRequest(`tools[${i}]: invalid tool`);
    if (t.type !== 'function' && t.type !== 'custom') {
      unconverted.push(t.type); // built-in tools: only OpenAI runs them
      return;
    }
    const name = str(t.name);
    if (!name) throw badRequest(`tools[${i}].name: required`);
    if (seen.has(name)) return; // the same name in two groups: a call could not say which
    seen.add(name);
    if (t.type === 'custom') {
      out.push(customToolDef(t, name));
      return;
    }
    const fn: ToolDef['function'] & { strict?: boolean } = {
      name,
      ...(typeof t.description === 'string' ? { description: t.description } : {}),
      parameters: isRecord(t.parameters) ? t.parameters : { type: 'object', properties: {} },
    };
    if (t.strict === true) fn.strict = true;
    out.push({ type: 'function', function: fn });
  });
  return out;
}

/** Names of the request's custom tools (their calls go back as custom_tool_call items). */
export function customToolNames(body: Record<string, unknown> | undefined): Set<string> {
  const names = new Set<string>();
  // no tools and no input items (which may carry `additional_tools`): nothing to walk
  if (!body || (!Array.isArray(body.tools) && !Array.isArray(body.input))) return names;
  let tools: unknown[];
  try {
    tools = offeredTools(body);
  } catch {
    return names;
  }
  for (const t of tools) if (isRecord(t) && t.type === 'custom' && typeof t.name === 'string') names.add(t.name);
  return names;
}

/** Responses request body → canonical request. Throws a 400 RelayError on malformed input. */
export function responsesToChat(body: unknown): ChatRequest {
  if (!isRecord(body)) throw badRequest('request body must be a JSON object');
  const model = body.model;
  if (typeof model !== 'string' || !model.trim()) throw badRequest("Missing required parameter: 'model'.");
  const messages: ChatMessage[] = [];
  if (typeof body.instructions === 'string' && body.instructions) messages.push({ role: 'system', content: body.instructions });
  const input = body.input;
  if (typeof input === 'string') messages.push({ role: 'user', content: input });
  else if (Array.isArray(input)) {
    const reader = new InputReader();
    reader.read(input);
    messages.push(...reader.messages);
  } else if (input != null) throw badRequest("Invalid type for 'input': expected a string or an array of input items.");

  const req: ChatRequest = { model, messages };
  if (body.stream === true) req.stream = true;
  const num = (k: string) => (typeof body[k] === 'number' && Number.isFinite(body[k]) ? (body[k] as number) : undefined);
  const maxOut = num('max_output_tokens');
  if (maxOut !== undefined && maxOut > 0) req.max_tokens = Math.floor(maxOut);
  if (num('temperature') !== undefined) req.temperature = num('temperature');
  if (num('top_p') !== undefined) req.top_p = num('top_p');
  if (typeof body.parallel_tool_calls === 'boolean') req.parallel_tool_calls = body.parallel_tool_calls;
  const user = str(body.user) || str(body.safety_identifier);
  if (user) req.user = user;
  if (typeof body.prompt_cache_key === 'string') req.prompt_cache_key = body.prompt_cache_key;
  if (typeof body.service_tier === 'string') req.service_tier = body.service_tier;

  const unconverted: string[] = [];
  let tools = toTools(offeredTools(body), unconverted);
  if (unconverted.length) req.unconverted = unconverted;
  const tc = body.tool_choice;
  if (tc === 'auto' || tc === 'none' || tc === 'required') req.tool_choice = tc;
  else if (isRecord(tc)) {
    if ((tc.type === 'function' || tc.type === 'custom') && typeof tc.name === 'string') req.tool_choice = { type: 'function', function: { name: tc.name } };
    else if (tc.type === 'allowed_tools' && Array.isArray(tc.tools)) {
      const allowed = new Set(tc.tools.map((t) => (isRecord(t) ? str(t.name) : undefined)).filter((n): n is string => !!n));
      tools = tools.filter((t) => allowed.has(t.function.name));
      req.tool_choice = tc.mode === 'required' ? 'required' : 'auto';
    }
  }
  if (tools.length) req.tools = tools;
  else {
    // Nothing left to call (only built-in tools, or none): Chat upstreams refuse these without tools.
    delete req.tool_choice;
    delete req.parallel_tool_calls;
  }

  if (isRecord(body.reasoning)) {
    const r = body.reasoning;
    if (typeof r.effort === 'string') req.reasoning_effort = r.effort;
    const summary = r.summary ?? r.generate_summary;
    if (summary === 'auto' || summary === 'concise' || summary === 'detailed') req.reasoning_summary = summary;
  }
  if (isRecord(body.text)) {
    const f = body.text.format;
    if (isRecord(f) && f.type === 'json_schema') {
      req.response_format = {
        type: 'json_schema',
        json_schema: {
          name: str(f.name) ?? 'response',
          ...(isRecord(f.schema) ? { schema: f.schema } : {}),
          ...(typeof f.strict === 'boolean' ? { strict: f.strict } : {}),
          ...(typeof f.description === 'string' ? { description: f.description } : {}),
        },
      };
    } else if (isRecord(f) && f.type === 'json_object') req.response_format = { type: 'json_object' };
    if (typeof body.text.verbosity === 'string') req.verbosity = body.text.verbosity;
  }
  return req;
}

// ---------------------------------------------------------------------------------------------
// Response

type Item = Record<string, unknown>;

const ID_UNSAFE = /[^A-Za-z0-9_-]/;
const ID_UNSAFE_ALL = /[^A-Za-z0-9_-]/g;

function responseId(id: string | undefined): string {
  if (id?.startsWith('resp_')) return id;
  if (!id) return newId('resp_');
  const bare = id.startsWith('chatcmpl-') ? id.slice('chatcmpl-'.length) : id;
  // Most upstream ids are already safe: tested before a global replace builds a new string.
  return `resp_${ID_UNSAFE.test(bare) ? bare.replace(ID_UNSAFE_ALL, '') : bare}`;
}

function messageItem(id: string, text: string, status: string, refusal = false): Item {
  return { id, type: 'message', status, role: 'assistant', content: [contentPart(text, refusal)] };
}

function outputText(text: string): Item {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

/** A message's content part: its text, or the model's refusal (OpenAI Chat `refusal`). */
function contentPart(text: string, refusal: boolean): Item {
  return refusal ? { type: 'refusal', refusal: text } : outputText(text);
}

function reasoningItem(id: string, text: string, details: ReasoningDetail[], signatures?: Record<string, string>): Item {
  const item: Item = { id, type: 'reasoning', summary: text ? [{ type: 'summary_text', text }] : [] };
  const enc = encryptedContentFor(details, signatures);
  if (enc) item.encrypted_content = enc;
  return item;
}

function toolItem(id: string, callId: string, name: string, args: string, custom: boolean, status: string): Item {
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
function ending(finish: FinishReason | undefined): { status: string; incomplete_details: { reason: string } | null } {
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
function responseObject(r: ResponseCore, body: Record<string, unknown> | undefined): Item {
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
interface EchoJson {
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

function echoJson(body: Record<string, unknown> | undefined): EchoJson {
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
function responseJson(r: ResponseCore, body: Record<string, unknown> | undefined, echo = echoJson(body)): string {
  return responseHead(r.id, r.created) + responseTail(r, echo);
}

/** A response's JSON up to its `created_at` (responseJson = head + tail). */
const responseHead = (id: string, created: number) => `{"id":${JSON.stringify(id)},"object":"response","created_at":${jsonNumber(created)}`;

/** A response's JSON from its `status` on: all a stream's opening snapshot needs before the upstream answers. */
function responseTail(r: Omit<ResponseCore, 'id' | 'created'>, echo: EchoJson): string {
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

// ---------------------------------------------------------------------------------------------
// Stream

function sse(type: string, seq: number, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data, sequence_number: seq })}\n\n`;
}

/** sse(type, seq, {response}) for a response already written as JSON. */
function sseResponse(type: string, seq: number, responseJson: string): string {
  return `event: ${type}\ndata: {"type":${jsonName(type)},"response":${responseJson},"sequence_number":${seq}}\n\n`;
}

/**
 * sse(type, seq, {…the item's fields, delta[, logprobs: []]}) by template, for the events that
 * carry one streamed token each (text, refusal, reasoning summary, function arguments); `head` is
 * the item's part of it, written once per item by deltaHead.
 */
function deltaEvent(type: string, seq: number, head: string, delta: string, logprobs = false): string {
  return `event: ${type}\ndata: {"type":${jsonName(type)},${head}${JSON.stringify(delta)}${logprobs ? ',"logprobs":[]' : ''},"sequence_number":${seq}}\n\n`;
}

/** `"item_id":…,"output_index":…,` then `extra` (the fields between it and `delta`), then `"delta":`. */
function deltaHead(id: string, index: number, extra = ''): string {
  return `"item_id":${JSON.stringify(id)},"output_index":${index},${extra}"delta":`;
}

interface OpenText {
  index: number;
  id: string;
  text: string;
  /** Its delta events' head (deltaHead). */
  head: string;
}
interface OpenMessage extends OpenText {
  /** Its one content part is a `refusal` (OpenAI Chat `refusal`), not `output_text`. */
  refusal: boolean;
}
interface OpenReasoning extends OpenText {
  details: ReasoningDetail[];
  /** The summary part was announced (reasoning text came, not only details). */
  part: boolean;
}
interface OpenTool {
  index: number;
  id: string;
  callId: string;
  name: string;
  args: string;
  custom: boolean;
  /** Its argument delta events' head (deltaHead). */
  head: string;
}

/**
 * Canonical chunks → Responses events, one instance per response. Items follow the order content
 * comes in: reasoning, message text and tool calls each open an output item, and a change of kind
 * closes the reasoning/message item before it; tool call items stay open (their arguments may still
 * come, interleaved for parallel calls) until the end. Thought signatures of tool calls go in one
 * reasoning item after the calls.
 */
export class ResponsesStreamWriter {
  private seq = 0;
  private started = false;
  private finished = false;
  private id = newId('resp_');
  private created = Math.floor(Date.now() / 1000);
  private readonly output: Item[] = [];
  private text: OpenMessage | undefined;
  private reasoning: OpenReasoning | undefined;
  private readonly tools = new Map<number, OpenTool>();
  private readonly signatures: Record<string, string> = {};
  private finish: FinishReason = null;
  private usage: Usage | undefined;
  private readonly custom: Set<string>;
  private readonly echo: EchoJson;
  /**
   * The opening snapshot's tail (status in_progress, no output yet; responseTail): written when
   * the writer is made, which is while the upstream works on the request, so the client's first
   * frame costs little more than its head once the upstream answers.
   */
  private readonly openingTail: string;

  constructor(
    private readonly model: string,
    private readonly body?: Record<string, unknown>,
  ) {
    this.custom = customToolNames(body);
    this.echo = echoJson(body);
    this.openingTail = responseTail({ model, status: 'in_progress', output: [] }, this.echo);
  }

  private ev(type: string, data: Record<string, unknown>): string {
    return sse(type, this.seq++, data);
  }

  /** The response as it stands, as JSON (the request's echo written once per stream). */
  private snapshot(status: string, extra: { usage?: ResponsesUsage | null; incomplete?: { reason: string } | null; error?: unknown } = {}): string {
    return responseJson({ id: this.id, created: this.created, model: this.model, status, output: this.output, ...extra }, this.body, this.echo);
  }

  private responseEvent(type: string, response: string): string {
    return sseResponse(type, this.seq++, response);
  }

  private start(c?: ChatChunk): string {
    if (this.started) return '';
    this.started = true;
    if (c?.id) this.id = responseId(c.id);
    if (c?.created) this.created = c.created;
    // = this.snapshot('in_progress'): the output is still empty.
    const r = responseHead(this.id, this.created) + this.openingTail;
    return this.responseEvent('response.created', r) + this.responseEvent('response.in_progress', r);
  }

  private addItem(item: Item): { index: number; out: string } {
    const index = this.output.length;
    this.output.push(item);
    return { index, out: this.ev('response.output_item.added', { output_index: index, item }) };
  }

  private closeText(): string {
    const t = this.text;
    if (!t) return '';
    this.text = undefined;
    const base = { item_id: t.id, output_index: t.index, content_index: 0 };
    const item = messageItem(t.id, t.text, 'completed', t.refusal);
    this.output[t.index] = item;
    return (
      (t.refusal
        ? this.ev('response.refusal.done', { ...base, refusal: t.text })
        : this.ev('response.output_text.done', { ...base, text: t.text, logprobs: [] })) +
      this.ev('response.content_part.done', { ...base, part: contentPart(t.text, t.refusal) }) +
      this.ev('response.output_item.done', { output_index: t.index, item })
    );
  }

  private closeReasoning(): string {
    const r = this.reasoning;
    if (!r) return '';
    this.reasoning = undefined;
    let out = '';
    if (r.part) {
      const base = { item_id: r.id, output_index: r.index, summary_index: 0 };
      out += this.ev('response.reasoning_summary_text.done', { ...base, text: r.text });
      out += this.ev('response.reasoning_summary_part.done', { ...base, part: { type: 'summary_text', text: r.text } });
    }
    const item = reasoningItem(r.id, r.text, r.details);
    this.output[r.index] = item;
    return out + this.ev('response.output_item.done', { output_index: r.index, item });
  }

  private closeTool(t: OpenTool): string {
    const item = toolItem(t.id, t.callId, t.name, t.args, t.custom, 'completed');
    this.output[t.index] = item;
    let out = '';
    if (t.custom) {
      const input = item.input as string;
      if (input) out += this.ev('response.custom_tool_call_input.delta', { item_id: t.id, output_index: t.index, delta: input });
      out += this.ev('response.custom_tool_call_input.done', { item_id: t.id, output_index: t.index, input });
    } else {
      out += this.ev('response.function_call_arguments.done', { item_id: t.id, output_index: t.index, name: t.name, arguments: t.args });
    }
    return out + this.ev('response.output_item.done', { output_index: t.index, item });
  }

  private openReasoning(): string {
    if (this.reasoning) return '';
    let out = this.closeText();
    const id = newId('rs_');
    const added = this.addItem({ id, type: 'reasoning', summary: [] });
    this.reasoning = { index: added.index, id, text: '', details: [], part: false, head: deltaHead(id, added.index, '"summary_index":0,') };
    out += added.out;
    return out;
  }

  /** Text or refusal text: a message item with one part of that kind (a change of kind starts another). */
  private messageDelta(delta: string, refusal: boolean): string {
    let out = this.closeReasoning();
    if (this.text && this.text.refusal !== refusal) out += this.closeText();
    if (!this.text) {
      const id = newId('msg_');
      const added = this.addItem({ id, type: 'message', status: 'in_progress', role: 'assistant', content: [] });
      this.text = { index: added.index, id, text: '', refusal, head: deltaHead(id, added.index, '"content_index":0,') };
      out += added.out;
      out += this.ev('response.content_part.added', { item_id: id, output_index: added.index, content_index: 0, part: contentPart('', refusal) });
    }
    const t = this.text;
    t.text += delta;
    return (
      out +
      (refusal ? deltaEvent('response.refusal.delta', this.seq++, t.head, delta) : deltaEvent('response.output_text.delta', this.seq++, t.head, delta, true))
    );
  }

  chunk(c: ChatChunk): string {
    let out = this.start(c);
    if (c.usage) this.usage = c.usage;
    const choice = c.choices?.find((ch) => ch.index === 0) ?? c.choices?.[0];
    if (!choice) return out;
    const d = choice.delta ?? {};
    if (d.reasoning_content) {
      out += this.openReasoning();
      const r = this.reasoning!;
      if (!r.part) {
        r.part = true;
        out += this.ev('response.reasoning_summary_part.added', {
          item_id: r.id,
          output_index: r.index,
          summary_index: 0,
          part: { type: 'summary_text', text: '' },
        });
      }
      r.text += d.reasoning_content;
      out += deltaEvent('response.reasoning_summary_text.delta', this.seq++, r.head, d.reasoning_content);
    }
    if (d.reasoning_details?.length) {
      out += this.openReasoning();
      this.reasoning!.details.push(...d.reasoning_details);
    }
    if (typeof d.content === 'string' && d.content) out += this.messageDelta(d.content, false);
    if (typeof d.refusal === 'string' && d.refusal) out += this.messageDelta(d.refusal, true);
    for (const tc of d.tool_calls ?? []) {
      let t = this.tools.get(tc.index);
      if (!t) {
        out += this.closeReasoning() + this.closeText();
        const name = tc.function?.name ?? '';
        const custom = this.custom.has(name);
        const id = newId(custom ? 'ctc_' : 'fc_');
        const index = this.output.length;
        t = { index, id, callId: tc.id || newId('call_'), name, args: '', custom, head: deltaHead(id, index) };
        this.tools.set(tc.index, t);
        const item = custom
          ? { id, type: 'custom_tool_call', status: 'in_progress', call_id: t.callId, name, input: '' }
          : { id, type: 'function_call', status: 'in_progress', call_id: t.callId, name, arguments: '' };
        out += this.addItem(item).out;
      } else if (tc.function?.name && !t.name) t.name = tc.function.name;
      const sig = tc.extra_content?.google?.thought_signature;
      if (sig) this.signatures[t.callId] = sig;
      const args = tc.function?.arguments;
      if (args) {
        t.args += args;
        // A custom tool's raw input is known only once its JSON wrapper is complete (at the end).
        if (!t.custom) out += deltaEvent('response.function_call_arguments.delta', this.seq++, t.head, args);
      }
    }
    if (choice.finish_reason) this.finish = choice.finish_reason;
    return out;
  }

  end(usage: Usage | undefined): string {
    if (this.finished) return '';
    this.finished = true;
    let out = this.start();
    out += this.closeReasoning() + this.closeText();
    for (const t of this.tools.values()) out += this.closeTool(t);
    if (Object.keys(this.signatures).length) {
      const id = newId('rs_');
      const added = this.addItem({ id, type: 'reasoning', summary: [] });
      const item = reasoningItem(id, '', [], this.signatures);
      this.output[added.index] = item;
      out += added.out + this.ev('response.output_item.done', { output_index: added.index, item });
    }
    const { status, incomplete_details } = ending(this.finish ?? 'stop');
    const r = this.snapshot(status, { usage: chatUsageToResponses(usage ?? this.usage), incomplete: incomplete_details });
    return out + this.responseEvent(status === 'incomplete' ? 'response.incomplete' : 'response.completed', r);
  }

  /** Ends a stream that broke: `response.failed` for this response, with what it had so far. */
  fail(message: string, code: string): string {
    if (this.finished) return '';
    this.finished = true;
    const out = this.start();
    // Items still open are shown as far as they came.
    if (this.text) this.output[this.text.index] = messageItem(this.text.id, this.text.text, 'incomplete', this.text.refusal);
    if (this.reasoning) this.output[this.reasoning.index] = reasoningItem(this.reasoning.id, this.reasoning.text, this.reasoning.details);
    for (const t of this.tools.values()) this.output[t.index] = toolItem(t.id, t.callId, t.name, t.args, t.custom, 'incomplete');
    const r = this.snapshot('failed', { usage: this.usage ? chatUsageToResponses(this.usage) : null, error: { code, message } });
    return out + this.responseEvent('response.failed', r);
  }
}

// ---------------------------------------------------------------------------------------------
// Errors and the format

/**
 * The end of a passed-through stream that broke after it started: `response.failed` with the
 * error (what the SDK and Codex read as a failed response; a plain `error` event would not end
 * Codex's turn). A converted stream ends through its writer's `fail`, with its own response id.
 */
export function responsesStreamError(status: number, message: string, code: string): string {
  const response = responseObject(
    { id: newId('resp_'), created: Math.floor(Date.now() / 1000), model: '', status: 'failed', output: [], error: { code: code || String(status), message } },
    undefined,
  );
  return `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', response, sequence_number: 0 })}\n\n`;
}

export const responsesFormat: InboundFormat = {
  name: 'responses',
  toChat: (body) => responsesToChat(body),
  nativeOnly: (body) => responsesNativeOnly(body),
  openaiFiles: (body) => responsesOpenAIFiles(body),
  modelOf: (body) => (isRecord(body) && typeof body.model === 'string' ? body.model : undefined),
  answerJson: (res, requestedModel, clientBody) => chatToResponsesJson(res, requestedModel, clientBody),
  streamWriter(requestedModel: string, opts?: StreamWriterOptions) {
    const w = new ResponsesStreamWriter(requestedModel, opts?.clientBody);
    return { chunk: (c) => w.chunk(c), end: (u) => w.end(u), fail: (_status, message, code) => w.fail(message, code || 'upstream_error') };
  },
  error: (status, message, code) => openaiError(status, message, code),
  streamError: (status, message, code) => responsesStreamError(status, message, code),
};
