/**
 * Gemini `generateContent` as a client-facing format
 * (`POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`).
 *
 * GenerateContentRequest → canonical (model from the path), canonical response →
 * GenerateContentResponse, canonical chunks → SSE `data:` lines each holding a
 * GenerateContentResponse. Tool calls stream in fragments in the canonical format but Gemini
 * sends whole `functionCall` parts, so they are buffered and sent with the final event.
 * Also Gemini embeddings through OpenAI's (`geminiEmbeddings`); the other Gemini endpoints are in
 * routes.ts. What each conversion carries and drops: docs/formats.md.
 */
import { RelayError } from '../../relay/errors';
import { verbatim } from '../../i18n';
import type {
  ChatChunk,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ContentPart,
  EndpointConversion,
  FinishReason,
  InboundFormat,
  InboundRoute,
  ReasoningDetail,
  ToolCall,
  ToolDef,
  Usage,
} from '../../relay/types';
import { isRecord, newId, setHints, type NativeHints } from '../shared';

/** The request's shape is wrong: protocol-level wording (field paths), English like the protocols' own errors. */
const badRequest = (message: string) => new RelayError(400, verbatim(message), 'invalid_request');

/** Whose reasoning a Gemini thought signature is (ReasoningDetail `format`). */
export const GEMINI_REASONING_FORMAT = 'google-gemini-v1';

/** Tools Gemini runs itself: no other protocol has them, so a conversion drops them (a Gemini-format upstream gets them back). */
const BUILT_IN_TOOLS = [
  'googleSearch',
  'googleSearchRetrieval',
  'codeExecution',
  'urlContext',
  'fileSearch',
  'computerUse',
  'googleMaps',
  'retrieval',
  'enterpriseWebSearch',
] as const;

/** generationConfig fields the canonical request carries; the others travel only as a Gemini hint. */
const MAPPED_GENERATION = new Set([
  'temperature',
  'topP',
  'topK',
  'maxOutputTokens',
  'candidateCount',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'thinkingConfig',
]);

interface GeminiCall {
  name: string;
  args: unknown;
  id?: string;
  signature?: string;
}

function partsToCanonical(parts: unknown[], where: string) {
  const content: ContentPart[] = [];
  const calls: GeminiCall[] = [];
  const responses: Array<{ name: string; response: unknown; id?: string }> = [];
  /** Thought signatures on parts other than function calls (Gemini wants them back on the next turn). */
  const signatures: string[] = [];
  let thoughts = '';
  parts.forEach((p, i) => {
    if (!isRecord(p)) throw badRequest(`${where}.parts[${i}]: must be an object`);
    const signature = typeof p.thoughtSignature === 'string' && p.thoughtSignature ? p.thoughtSignature : undefined;
    if (isRecord(p.functionCall)) {
      calls.push({
        name: String(p.functionCall.name ?? ''),
        args: p.functionCall.args ?? {},
        id: typeof p.functionCall.id === 'string' && p.functionCall.id ? p.functionCall.id : undefined,
        signature,
      });
      return;
    }
    if (signature) signatures.push(signature);
    if (typeof p.text === 'string') {
      if (p.thought === true) thoughts += p.text;
      else if (p.text) content.push({ type: 'text', text: p.text });
    } else if (isRecord(p.inlineData)) {
      const mime = typeof p.inlineData.mimeType === 'string' ? p.inlineData.mimeType : 'application/octet-stream';
      const data = typeof p.inlineData.data === 'string' ? p.inlineData.data : '';
      if (mime.startsWith('audio/')) content.push({ type: 'input_audio', input_audio: { data, format: mime.slice(6) } });
      else if (mime.startsWith('image/')) content.push({ type: 'image_url', image_url: { url: `data:${mime};base64,${data}` } });
      else {
        // OpenAI wants a file name with inline file data
        const name =
          typeof p.inlineData.displayName === 'string' && p.inlineData.displayName ? p.inlineData.displayName : `file.${mime.split('/')[1] ?? 'bin'}`;
        content.push({ type: 'file', file: { filename: name, file_data: `data:${mime};base64,${data}` } });
      }
    } else if (isRecord(p.fileData) && typeof p.fileData.fileUri === 'string') {
      const mime = typeof p.fileData.mimeType === 'string' ? p.fileData.mimeType : '';
      // only images have a canonical URL form; other files (PDF, video…) are named in the text
      if (!mime || mime.startsWith('image/')) content.push({ type: 'image_url', image_url: { url: p.fileData.fileUri } });
      else content.push({ type: 'text', text: `[${mime}: ${p.fileData.fileUri}]` });
    } else if (isRecord(p.functionResponse)) {
      responses.push({
        name: String(p.functionResponse.name ?? ''),
        response: p.functionResponse.response ?? {},
        id: typeof p.functionResponse.id === 'string' && p.functionResponse.id ? p.functionResponse.id : undefined,
      });
    } else if (isRecord(p.executableCode) && typeof p.executableCode.code === 'string') {
      // code Gemini ran itself (codeExecution): kept as text so the history still reads right
      const lang = typeof p.executableCode.language === 'string' ? p.executableCode.language.toLowerCase() : '';
      content.push({ type: 'text', text: `\n\`\`\`${lang === 'language_unspecified' ? '' : lang}\n${p.executableCode.code}\n\`\`\`\n` });
    } else if (isRecord(p.codeExecutionResult) && typeof p.codeExecutionResult.output === 'string') {
      content.push({ type: 'text', text: `\n\`\`\`\n${p.codeExecutionResult.output}\n\`\`\`\n` });
    }
  });
  return { content, calls, responses, thoughts, signatures };
}

function simplify(parts: ContentPart[]): string | ContentPart[] {
  return parts.every((p) => p.type === 'text') ? parts.map((p) => (p as { text: string }).text).join('') : parts;
}

function textOfParts(parts: unknown): string {
  if (!Array.isArray(parts)) return '';
  return parts
    .filter(isRecord)
    .map((p) => (typeof p.text === 'string' ? p.text : ''))
    .filter(Boolean)
    .join('\n');
}

/** A Gemini schema (`parameters`, `responseSchema`: OpenAPI subset, upper-case types) or a JSON schema (`parametersJsonSchema`) → JSON schema. */
function schemaOf(openapi: unknown, jsonSchema: unknown): Record<string, unknown> | undefined {
  if (isRecord(jsonSchema)) return jsonSchema;
  if (isRecord(openapi)) return lowerTypes(openapi) as Record<string, unknown>;
  return undefined;
}

/** GenerateContentRequest → canonical request. */
export function geminiToChat(body: unknown, model: string | undefined): ChatRequest {
  if (!isRecord(body)) throw badRequest('request body must be a JSON object');
  if (!model || !model.trim()) throw badRequest('model is required in the path');
  if (!Array.isArray(body.contents)) throw badRequest('contents is required');
  const messages: ChatMessage[] = [];
  const sys = body.systemInstruction ?? body.system_instruction;
  const sysText = typeof sys === 'string' ? sys : isRecord(sys) ? textOfParts(sys.parts) : '';
  if (sysText) messages.push({ role: 'system', content: sysText });
  // functionResponse parts are matched to their call by id, else to the earliest pending call of the same name
  const pending: Array<{ id: string; name: string }> = [];
  body.contents.forEach((c, i) => {
    if (!isRecord(c)) throw badRequest(`contents[${i}]: must be an object`);
    const role = c.role ?? 'user';
    if (role !== 'user' && role !== 'model' && role !== 'function') throw badRequest(`contents[${i}].role: must be "user" or "model"`);
    if (!Array.isArray(c.parts)) throw badRequest(`contents[${i}].parts is required`);
    const { content, calls, responses, thoughts, signatures } = partsToCanonical(c.parts, `contents[${i}]`);
    if (role === 'model') {
      const toolCalls: ToolCall[] = calls.map((fc) => {
        const id = fc.id ?? newId('call_');
        pending.push({ id, name: fc.name });
        const call: ToolCall = { id, type: 'function', function: { name: fc.name, arguments: JSON.stringify(fc.args) } };
        if (fc.signature) call.extra_content = { google: { thought_signature: fc.signature } };
        return call;
      });
      const text = content
        .filter((p) => p.type === 'text')
        .map((p) => (p as { text: string }).text)
        .join('');
      const msg: ChatMessage = { role: 'assistant', content: text || (toolCalls.length ? null : '') };
      if (toolCalls.length) msg.tool_calls = toolCalls;
      if (thoughts) msg.reasoning_content = thoughts;
      if (signatures.length) msg.reasoning_details = signatures.map((data) => ({ type: 'reasoning.encrypted', data, format: GEMINI_REASONING_FORMAT }));
      messages.push(msg);
      return;
    }
    for (const r of responses) {
      let id = r.id;
      const k = pending.findIndex((p) => (id ? p.id === id : p.name === r.name));
      if (k >= 0) {
        id = pending[k]!.id;
        pending.splice(k, 1);
      }
      // Gemini's convention: `output` for a result, `error` for a failure (a lone error text is
      // the result's text, as a Claude `is_error` result's is)
      const failed = isRecord(r.response) && 'error' in r.response && !('output' in r.response);
      const lone = failed && Object.keys(r.response as object).length === 1 ? (r.response as { error: unknown }).error : undefined;
      const msg: ChatMessage = {
        role: 'tool',
        tool_call_id: id ?? newId('call_'),
        name: r.name,
        content: typeof lone === 'string' ? lone : JSON.stringify(r.response),
      };
      if (failed) msg.is_error = true;
      messages.push(msg);
    }
    if (content.length) messages.push({ role: 'user', content: simplify(content) });
  });

  const req: ChatRequest = { model, messages };
  const hints: NativeHints = {};
  const extras: NonNullable<NativeHints['gemini']> = {};
  const gc = isRecord(body.generationConfig) ? body.generationConfig : isRecord(body.generation_config) ? body.generation_config : {};
  if (typeof gc.temperature === 'number') req.temperature = gc.temperature;
  if (typeof gc.topP === 'number') req.top_p = gc.topP;
  if (typeof gc.topK === 'number') req.top_k = gc.topK;
  if (typeof gc.maxOutputTokens === 'number') req.max_tokens = gc.maxOutputTokens;
  if (typeof gc.candidateCount === 'number' && gc.candidateCount > 1) req.n = gc.candidateCount;
  if (typeof gc.seed === 'number') req.seed = gc.seed;
  if (typeof gc.presencePenalty === 'number') req.presence_penalty = gc.presencePenalty;
  if (typeof gc.frequencyPenalty === 'number') req.frequency_penalty = gc.frequencyPenalty;
  if (Array.isArray(gc.stopSequences)) {
    const stops = gc.stopSequences.filter((s): s is string => typeof s === 'string');
    if (stops.length) req.stop = stops;
  }
  if (gc.responseMimeType === 'application/json') {
    const schema = schemaOf(gc.responseSchema, gc.responseJsonSchema);
    req.response_format = schema ? { type: 'json_schema', json_schema: { name: 'response', schema } } : { type: 'json_object' };
  }
  if (isRecord(gc.thinkingConfig)) {
    const t = gc.thinkingConfig;
    // -1 is "dynamic": the model decides, as without a budget
    if (typeof t.thinkingBudget === 'number' && t.thinkingBudget >= 0) req.thinking_budget = t.thinkingBudget;
    if (typeof t.thinkingLevel === 'string' && /^(minimal|low|medium|high)$/i.test(t.thinkingLevel)) req.reasoning_effort = t.thinkingLevel.toLowerCase();
    if (t.includeThoughts === true) req.reasoning_summary = 'auto';
    // kept exactly for a Gemini-format upstream (thinkingLevel, includeThoughts: false …)
    hints.geminiThinkingConfig = t;
  }
  const restGc = Object.fromEntries(Object.entries(gc).filter(([k]) => !MAPPED_GENERATION.has(k)));
  if (Object.keys(restGc).length) extras.generationConfig = restGc;
  if (Array.isArray(body.tools)) {
    const tools: ToolDef[] = [];
    const builtIn: Array<Record<string, unknown>> = [];
    for (const t of body.tools) {
      if (!isRecord(t)) continue;
      for (const k of BUILT_IN_TOOLS) if (k in t) builtIn.push({ [k]: t[k] });
      const decls = t.functionDeclarations ?? t.function_declarations;
      if (!Array.isArray(decls)) continue;
      for (const d of decls) {
        if (!isRecord(d) || typeof d.name !== 'string') continue;
        tools.push({
          type: 'function',
          function: {
            name: d.name,
            ...(typeof d.description === 'string' ? { description: d.description } : {}),
            parameters: schemaOf(d.parameters, d.parametersJsonSchema) ?? { type: 'object', properties: {} },
          },
        });
      }
    }
    if (tools.length) req.tools = tools;
    if (builtIn.length) {
      extras.tools = builtIn;
      req.unconverted = builtIn.map((t) => Object.keys(t)[0]!);
    }
  }
  const tcfg = isRecord(body.toolConfig) ? body.toolConfig : undefined;
  if (req.tools && tcfg && isRecord(tcfg.functionCallingConfig)) {
    const f = tcfg.functionCallingConfig;
    const names = Array.isArray(f.allowedFunctionNames) ? f.allowedFunctionNames.filter((n): n is string => typeof n === 'string') : [];
    if (f.mode === 'NONE') req.tool_choice = 'none';
    else if (f.mode === 'ANY' && names.length === 1) req.tool_choice = { type: 'function', function: { name: names[0]! } };
    else if (f.mode === 'ANY') {
      req.tool_choice = 'required';
      // several allowed functions: the others are not offered at all (OpenAI and Claude cannot restrict a forced choice to a subset)
      if (names.length) req.tools = req.tools.filter((t) => names.includes(t.function.name));
    } else if (f.mode === 'AUTO' || f.mode === 'VALIDATED') req.tool_choice = 'auto';
  }
  if (tcfg && isRecord(tcfg.retrievalConfig)) extras.toolConfig = { retrievalConfig: tcfg.retrievalConfig };
  if (Array.isArray(body.safetySettings)) extras.safetySettings = body.safetySettings;
  // cachedContent, labels: names of Google-side resources, meaningless to any other upstream (and to Vertex AI)
  if (Object.keys(extras).length) hints.gemini = extras;
  if (Object.keys(hints).length) setHints(req, hints);
  return req;
}

/**
 * A Gemini schema (OpenAPI 3.0 subset) → JSON Schema: upper-case types (`OBJECT`, `STRING`) in
 * lower case, and `nullable: true` (not JSON Schema) as a `null` type — with `null` among the
 * values of an enum, which JSON Schema would otherwise refuse.
 */
function lowerTypes(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lowerTypes);
  if (!isRecord(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'type' && typeof v === 'string') out.type = v.toLowerCase();
    else if (k === 'properties' && isRecord(v)) out.properties = Object.fromEntries(Object.entries(v).map(([n, s]) => [n, lowerTypes(s)]));
    else if (k === 'items' || k === 'anyOf') out[k] = lowerTypes(v);
    else if (k !== 'nullable') out[k] = v;
  }
  if (schema.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.anyOf)) out.anyOf = [...(out.anyOf as unknown[]), { type: 'null' }];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...(out.enum as unknown[]), null];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Response

export function finishToGemini(reason: FinishReason | undefined): string | undefined {
  switch (reason) {
    case 'stop':
    case 'tool_calls':
      return 'STOP';
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
      return 'SAFETY';
    default:
      return undefined;
  }
}

export function canonicalToGeminiUsage(u: Usage | undefined): Record<string, number> {
  const prompt = u?.prompt_tokens ?? 0;
  const completion = u?.completion_tokens ?? 0;
  const thoughts = u?.completion_tokens_details?.reasoning_tokens ?? 0;
  const cached = u?.prompt_tokens_details?.cached_tokens ?? 0;
  const out: Record<string, number> = {
    promptTokenCount: prompt,
    candidatesTokenCount: Math.max(0, completion - thoughts),
    totalTokenCount: u?.total_tokens ?? prompt + completion,
  };
  if (thoughts) out.thoughtsTokenCount = thoughts;
  if (cached) out.cachedContentTokenCount = cached;
  return out;
}

function argsObject(args: string | undefined): unknown {
  if (!args) return {};
  try {
    return JSON.parse(args);
  } catch {
    return {};
  }
}

function responseId(id: string | undefined): string {
  return (id ?? newId('')).replace(/^chatcmpl-/, '');
}

/** Gemini thought signatures among reasoning details (other families' reasoning means nothing to a Gemini client). */
function geminiSignatures(details: ReasoningDetail[] | undefined): string[] {
  const out: string[] = [];
  for (const d of details ?? []) {
    if (d.format !== GEMINI_REASONING_FORMAT) continue;
    if (d.type === 'reasoning.encrypted' && d.data) out.push(d.data);
    else if (d.type === 'reasoning.text' && d.signature) out.push(d.signature);
  }
  return out;
}

function functionCallPart(tc: { id?: string; name: string; args: string | undefined; extra?: ToolCall['extra_content'] }): Record<string, unknown> {
  const part: Record<string, unknown> = { functionCall: { ...(tc.id ? { id: tc.id } : {}), name: tc.name, args: argsObject(tc.args) } };
  const sig = tc.extra?.google?.thought_signature;
  if (typeof sig === 'string' && sig) part.thoughtSignature = sig;
  return part;
}

/**
 * A message's thought signatures (not those of its function calls) go where Gemini puts them: on
 * the last text or thought part, else on the first function call without one.
 */
function placeSignatures(parts: Array<Record<string, unknown>>, signatures: string[]): void {
  if (!signatures.length) return;
  const sig = signatures[signatures.length - 1]!;
  const texts = parts.filter((p) => typeof p.text === 'string');
  const target = texts[texts.length - 1] ?? parts.find((p) => p.functionCall && !p.thoughtSignature);
  if (target) target.thoughtSignature = sig;
  else parts.push({ text: '', thoughtSignature: sig });
}

/** Canonical response → GenerateContentResponse. */
export function chatToGemini(res: ChatResponse, model: string): Record<string, unknown> {
  const candidates = (res.choices ?? []).map((c) => {
    const parts: Array<Record<string, unknown>> = [];
    if (c.message.reasoning_content) parts.push({ text: c.message.reasoning_content, thought: true });
    if (typeof c.message.content === 'string' && c.message.content) parts.push({ text: c.message.content });
    // Gemini has no refusal part: an OpenAI refusal is the answer's text.
    if (typeof c.message.refusal === 'string' && c.message.refusal) parts.push({ text: c.message.refusal });
    placeSignatures(parts, geminiSignatures(c.message.reasoning_details));
    for (const tc of c.message.tool_calls ?? [])
      parts.push(functionCallPart({ id: tc.id, name: tc.function.name, args: tc.function.arguments, extra: tc.extra_content }));
    if (!parts.length) parts.push({ text: '' });
    return { content: { role: 'model', parts }, finishReason: finishToGemini(c.finish_reason) ?? 'STOP', index: c.index };
  });
  return { candidates, usageMetadata: canonicalToGeminiUsage(res.usage), modelVersion: model, responseId: responseId(res.id) };
}

/**
 * Canonical chunks → `data: <GenerateContentResponse>` lines. Gemini sends whole `functionCall`
 * parts, so tool-call fragments are gathered and sent in the final event with the finish reason
 * and the usage.
 */
export class GeminiStreamWriter {
  private readonly tools = new Map<number, { id?: string; name: string; args: string; extra?: ToolCall['extra_content'] }>();
  private finish: FinishReason = null;
  private id: string | undefined;
  private usage: Usage | undefined;
  private done = false;

  constructor(private readonly model: string) {}

  private line(parts: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): string {
    const body = { candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }], modelVersion: this.model, responseId: responseId(this.id) };
    return `data: ${JSON.stringify(body)}\n\n`;
  }

  chunk(c: ChatChunk): string {
    this.id ??= c.id;
    if (c.usage) this.usage = c.usage;
    const choice = c.choices?.find((ch) => ch.index === 0) ?? c.choices?.[0];
    if (!choice) return '';
    const d = choice.delta ?? {};
    const parts: Array<Record<string, unknown>> = [];
    if (d.reasoning_content) parts.push({ text: d.reasoning_content, thought: true });
    if (typeof d.content === 'string' && d.content) parts.push({ text: d.content });
    if (typeof d.refusal === 'string' && d.refusal) parts.push({ text: d.refusal });
    placeSignatures(parts, geminiSignatures(d.reasoning_details));
    for (const tc of d.tool_calls ?? []) {
      const t = this.tools.get(tc.index) ?? { name: '', args: '' };
      if (tc.id) t.id = tc.id;
      if (tc.function?.name) t.name = tc.function.name;
      if (tc.function?.arguments) t.args += tc.function.arguments;
      if (tc.extra_content) t.extra = tc.extra_content;
      this.tools.set(tc.index, t);
    }
    if (choice.finish_reason) this.finish = choice.finish_reason;
    return parts.length ? this.line(parts) : '';
  }

  end(usage: Usage | undefined): string {
    if (this.done) return '';
    this.done = true;
    const parts: Array<Record<string, unknown>> = [...this.tools.entries()].sort((a, b) => a[0] - b[0]).map(([, t]) => functionCallPart(t));
    if (!parts.length) parts.push({ text: '' });
    const body = {
      candidates: [{ content: { role: 'model', parts }, finishReason: finishToGemini(this.finish) ?? 'STOP', index: 0 }],
      usageMetadata: canonicalToGeminiUsage(usage ?? this.usage),
      modelVersion: this.model,
      responseId: responseId(this.id),
    };
    return `data: ${JSON.stringify(body)}\n\n`;
  }
}

const STATUS_NAME: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  // a gateway or an overloaded upstream (Anthropic's 529): Gemini clients retry UNAVAILABLE
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
  529: 'UNAVAILABLE',
};

export function geminiError(status: number, message: string): { error: { code: number; message: string; status: string } } {
  return { error: { code: status, message, status: STATUS_NAME[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT') } };
}

// ---------------------------------------------------------------------------------------------
// Embeddings (`:embedContent`, `:batchEmbedContents`) on OpenAI-format channels

function embedText(content: unknown, where: string): string {
  if (!isRecord(content) || !Array.isArray(content.parts)) throw badRequest(`${where}.parts is required`);
  const texts: string[] = [];
  content.parts.forEach((p, i) => {
    if (isRecord(p) && typeof p.text === 'string') texts.push(p.text);
    else throw badRequest(`${where}.parts[${i}]: only text can be embedded by this model's channel`);
  });
  return texts.join('\n');
}

/** The requests of an embedContent (one) or batchEmbedContents (`requests`) body; 400 when there are none. */
export function embedRequests(body: Record<string, unknown>): Array<{ content: unknown; where: string; dims?: number }> {
  const batch = Array.isArray(body.requests);
  const list = batch ? (body.requests as unknown[]) : [body];
  if (!list.length) throw badRequest('requests must not be empty');
  return list.map((r, i) => {
    const where = batch ? `requests[${i}].content` : 'content';
    if (!isRecord(r) || !isRecord(r.content)) throw badRequest(`${where} is required`);
    return { content: r.content, where, ...(typeof r.outputDimensionality === 'number' ? { dims: r.outputDimensionality } : {}) };
  });
}

/** Float32 little-endian base64 (an upstream that answers base64 whatever was asked) → numbers. */
function vectorOf(v: unknown): number[] {
  if (Array.isArray(v)) return v.map(Number);
  if (typeof v !== 'string') return [];
  const buf = Buffer.from(v, 'base64');
  const out: number[] = [];
  for (let i = 0; i + 4 <= buf.length; i += 4) out.push(buf.readFloatLE(i));
  return out;
}

/**
 * Gemini embeddings through OpenAI's `/v1/embeddings`: each request's text parts (joined) are one
 * input, `outputDimensionality` → `dimensions`; `taskType` and `title` have no OpenAI equivalent
 * and are dropped. Non-text parts are refused (400).
 */
export const geminiEmbeddings: EndpointConversion = {
  toOpenAI(body) {
    const reqs = embedRequests(body);
    const dims = reqs.find((r) => r.dims !== undefined)?.dims;
    return { input: reqs.map((r) => embedText(r.content, r.where)), encoding_format: 'float', ...(dims !== undefined ? { dimensions: dims } : {}) };
  },
  fromOpenAI(res, request) {
    const data = isRecord(res) && Array.isArray(res.data) ? res.data.filter(isRecord) : [];
    data.sort((a, b) => (Number(a.index) || 0) - (Number(b.index) || 0));
    const vectors = data.map((d) => ({ values: vectorOf(d.embedding) }));
    return Array.isArray(request.requests) ? { embeddings: vectors } : { embedding: vectors[0] ?? { values: [] } };
  },
};

export const geminiFormat: InboundFormat = {
  name: 'gemini',
  toChat: (body, modelFromPath) => geminiToChat(body, modelFromPath),
  modelOf: (_body, modelFromPath) => (modelFromPath && modelFromPath.trim() ? modelFromPath : undefined),
  answerJson: (res, requestedModel) => JSON.stringify(chatToGemini(res, requestedModel)),
  streamWriter(requestedModel) {
    const w = new GeminiStreamWriter(requestedModel);
    return { chunk: (c) => w.chunk(c), end: (u) => w.end(u) };
  },
  error: (status, message) => geminiError(status, message),
  convertEndpoint: (endpoint) => (endpoint === 'embeddings' ? geminiEmbeddings : undefined),
};

const GEMINI_PATH = /^\/(?:v1beta|v1)\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/** `POST /v1beta/models/{model}:generateContent|streamGenerateContent` (key in `x-goog-api-key` or `?key=`). */
export const geminiRoute: InboundRoute = {
  method: 'POST',
  match(path) {
    const m = GEMINI_PATH.exec(path);
    if (!m) return null;
    let model: string;
    try {
      model = decodeURIComponent(m[1]!);
    } catch {
      model = m[1]!;
    }
    return { modelFromPath: model, stream: m[2] === 'streamGenerateContent' };
  },
  format: geminiFormat,
  keyStyle: 'gemini',
};
