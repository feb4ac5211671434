/**
 * Responses request → canonical request (client side): input items, tools, what only OpenAI can serve.
 */
import type { ChatMessage, ChatRequest, ContentPart, ToolDef } from '../../relay/types';
import { fileNameFor, isRecord, parseDataUrl } from '../shared';
import { badRequest, str, unpackReasoning } from './shared';

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
export const CUSTOM_INPUT = 'input';

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
