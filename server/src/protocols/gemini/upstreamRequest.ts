/**
 * Canonical request → Gemini `generateContent` body (upstream side): contents, parts, schemas,
 * safety settings, thinking config.
 */
import type { AdaptorContext, ChatMessage, ChatRequest, ContentPart } from '../../relay/types';
import { contentText, getHints, isRecord, parseArgs, parseDataUrl, parseJsonOption, toolResultObject } from '../shared';
import { own } from '../../lib/own';

export const GEMINI_THINKING_BUDGET_CAP = 24576;
export const SAFETY_CATEGORIES = [
  'HARM_CATEGORY_HARASSMENT',
  'HARM_CATEGORY_HATE_SPEECH',
  'HARM_CATEGORY_SEXUALLY_EXPLICIT',
  'HARM_CATEGORY_DANGEROUS_CONTENT',
  'HARM_CATEGORY_CIVIC_INTEGRITY',
] as const;

type Part = Record<string, unknown>;
interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

const MIME_BY_EXT: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  mp4: 'video/mp4',
  txt: 'text/plain',
};
function guessMime(url: string): string {
  const m = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(url);
  return (m && MIME_BY_EXT[m[1]!.toLowerCase()]) || 'image/jpeg';
}

function mediaPart(url: string): Part {
  const d = parseDataUrl(url);
  if (d) return { inlineData: { mimeType: d.mimeType, data: d.data } };
  return { fileData: { mimeType: guessMime(url), fileUri: url } };
}

function partsOf(content: ChatMessage['content']): Part[] {
  if (content == null) return [];
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  const out: Part[] = [];
  for (const p of content as ContentPart[]) {
    if (p.type === 'text') {
      const text = (p as { text?: unknown }).text;
      if (typeof text === 'string' && text) out.push({ text });
    } else if (p.type === 'image_url') {
      const iu = (p as { image_url?: { url?: unknown } | string }).image_url;
      const url = typeof iu === 'string' ? iu : iu?.url;
      if (typeof url === 'string' && url) out.push(mediaPart(url));
    } else if (p.type === 'input_audio') {
      const a = (p as { input_audio?: { data?: unknown; format?: unknown } }).input_audio;
      if (a && typeof a.data === 'string') out.push({ inlineData: { mimeType: `audio/${typeof a.format === 'string' ? a.format : 'wav'}`, data: a.data } });
    } else if (p.type === 'file') {
      const f = (p as { file?: { file_data?: unknown } }).file;
      if (typeof f?.file_data === 'string') out.push(mediaPart(f.file_data));
    }
  }
  return out;
}

/** Keys of an OpenAPI schema object Gemini accepts. */
const SCHEMA_KEYS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);

const isNullType = (s: unknown) => isRecord(s) && s.type === 'null' && Object.keys(s).length === 1;

/** Reduces a JSON schema to what Gemini's `Schema` accepts (drops $schema, additionalProperties, …; null enum values and types become `nullable`). */
export function cleanSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(cleanSchema);
  if (!isRecord(schema)) return schema;
  const out: Record<string, unknown> = {};
  const mainType = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  for (const [k, v] of Object.entries(schema)) {
    if (!SCHEMA_KEYS.has(k)) continue;
    if (k === 'properties' && isRecord(v)) {
      out.properties = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, cleanSchema(s)]));
    } else if (k === 'anyOf' && Array.isArray(v) && v.some(isNullType)) {
      // a `{type: "null"}` branch is Gemini's nullable
      out.anyOf = cleanSchema(v.filter((s) => !isNullType(s)));
      out.nullable = true;
    } else if (k === 'items' || k === 'anyOf') out[k] = cleanSchema(v);
    else if (k === 'type' && Array.isArray(v)) {
      // ["string","null"] → type string + nullable
      const types = v.filter((t) => t !== 'null');
      out.type = types[0] ?? 'string';
      if (types.length !== v.length) out.nullable = true;
    } else if (k === 'format' && mainType === 'string' && v !== 'enum' && v !== 'date-time') continue;
    else if (k === 'enum' && Array.isArray(v) && v.includes(null)) {
      // Gemini takes string enums only: a null value is the schema's nullable
      out.enum = v.filter((e) => e !== null);
      out.nullable = true;
    } else out[k] = v;
  }
  return out;
}

/**
 * Gemini 3 refuses a function call of the current turn without its thought signature. A history
 * from another model has none: Google documents this value for that case (validation skipped).
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';
export const GEMINI_REASONING_FORMAT = 'google-gemini-v1';

/** Thought signatures a Gemini upstream gave on an answer's non-call parts (reasoning details of Gemini's format). */
function textSignatures(m: ChatMessage): string[] {
  const out: string[] = [];
  for (const d of m.reasoning_details ?? []) {
    if (d.format !== GEMINI_REASONING_FORMAT) continue;
    if (d.type === 'reasoning.encrypted' && d.data) out.push(d.data);
    else if (d.type === 'reasoning.text' && d.signature) out.push(d.signature);
  }
  return out;
}

/**
 * Canonical messages → Gemini `systemInstruction` + `contents`. Thought signatures go back where
 * Gemini put them: on each function call (`extra_content.google.thought_signature`) and on the
 * last text part; `requireSignatures` (Gemini 3) gives a turn's first call the documented
 * skip value when the history came from elsewhere.
 */
export function toGeminiContents(messages: ChatMessage[], requireSignatures = false): { systemInstruction?: { parts: Part[] }; contents: Content[] } {
  const system: Part[] = [];
  const contents: Content[] = [];
  const nameById = new Map<string, string>();
  const push = (role: 'user' | 'model', parts: Part[]) => {
    if (!parts.length) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const m of messages) {
    switch (m.role) {
      case 'system':
      case 'developer': {
        const text = contentText(m.content);
        if (text) system.push({ text });
        break;
      }
      case 'assistant': {
        const parts = partsOf(m.content).filter((p) => 'text' in p);
        const sigs = textSignatures(m);
        const calls: Part[] = [];
        for (const tc of m.tool_calls ?? []) {
          if (tc.id) nameById.set(tc.id, tc.function.name);
          const part: Part = { functionCall: { name: tc.function.name, args: parseArgs(tc.function.arguments) } };
          const sig = tc.extra_content?.google?.thought_signature;
          if (typeof sig === 'string' && sig) part.thoughtSignature = sig;
          calls.push(part);
        }
        if (sigs.length) {
          // never an empty text part: Vertex AI refuses them
          const target = parts[parts.length - 1] ?? calls.find((p) => !p.thoughtSignature);
          if (target) target.thoughtSignature = sigs[sigs.length - 1];
        }
        if (requireSignatures && calls.length && !calls.some((p) => p.thoughtSignature)) calls[0]!.thoughtSignature = SKIP_SIGNATURE;
        push('model', [...parts, ...calls]);
        break;
      }
      case 'tool': {
        const name = (m.tool_call_id && nameById.get(m.tool_call_id)) || m.name || 'function';
        push('user', [{ functionResponse: { name, response: toolResultObject(contentText(m.content), m.is_error) } }]);
        break;
      }
      default:
        push('user', partsOf(m.content));
    }
  }
  return { ...(system.length ? { systemInstruction: { parts: system } } : {}), contents };
}

/** Thresholds from `gemini.safety_settings`: per category, else per model, else `default`. */
export function safetySettings(raw: string, model: string): Array<{ category: string; threshold: string }> {
  const map = parseJsonOption(raw);
  const m = isRecord(map) ? map : {};
  const pick = (cat: string) => {
    for (const k of [cat, model, 'default']) {
      const v = own(m, k);
      if (typeof v === 'string' && v) return v;
    }
    return 'OFF';
  };
  return SAFETY_CATEGORIES.map((category) => ({ category, threshold: pick(category) }));
}

export function geminiVersion(raw: string, model: string): string {
  const map = parseJsonOption(raw);
  if (isRecord(map)) {
    const v = own(map, model) ?? own(map, 'default');
    if (typeof v === 'string' && /^v[0-9a-z.]+$/i.test(v)) return v;
  }
  return 'v1beta';
}

/** Gemini 2.5 and later think; 1.x / 2.0 reject a thinkingConfig. */
export function geminiThinks(model: string): boolean {
  const m = /gemini-(\d+)(?:\.(\d+))?/.exec(model);
  if (!m) return false;
  const major = Number(m[1]);
  const minor = Number(m[2] ?? 0);
  return major > 2 || (major === 2 && minor >= 5);
}

/** Gemini 3 and later: thinking is set by `thinkingLevel`, and function calls need their thought signatures back. */
export function isGemini3(model: string): boolean {
  const m = /gemini-(\d+)/.exec(model);
  return !!m && Number(m[1]) >= 3;
}

const EFFORT_BUDGET: Record<string, number> = { none: 0, minimal: 512, low: 1024, medium: 8192, high: GEMINI_THINKING_BUDGET_CAP, xhigh: 32768 };

/** A token budget within what the 2.5 model takes: Pro 128–32768 (cannot be off), Flash-Lite 512–24576 or 0, Flash 0–24576. */
function budgetFor(model: string, budget: number): number {
  if (budget < 0) return -1;
  if (/-pro/.test(model)) return Math.min(32768, Math.max(128, budget));
  const b = Math.min(GEMINI_THINKING_BUDGET_CAP, budget);
  return b > 0 && /flash-lite/.test(model) ? Math.max(512, b) : b;
}

/** Effort or budget → Gemini 3's level (Pro has low and high only; Flash also minimal and medium). */
function levelFor(model: string, effort: string | undefined, budget: number | undefined): string | undefined {
  const flash = /flash/.test(model);
  let e = effort;
  if (!e && budget !== undefined && budget >= 0) e = budget === 0 ? 'minimal' : budget <= 2048 ? 'low' : budget <= 12288 ? 'medium' : 'high';
  switch (e) {
    case 'none':
    case 'minimal':
      return flash ? 'minimal' : 'low';
    case 'low':
      return 'low';
    case 'medium':
      return flash ? 'medium' : 'high';
    case 'high':
    case 'xhigh':
      return 'high';
    default:
      return undefined;
  }
}

/**
 * The canonical thinking settings as a Gemini `thinkingConfig`, for models that think: an explicit
 * budget (`thinking_budget`, a Claude client's `thinking`) or `reasoning_effort` become a budget on
 * 2.5 and a level on Gemini 3; thoughts are asked for whenever thinking is (the other protocols show
 * their reasoning when asked for it), or when the client wants summaries.
 */
export function thinkingConfigFor(req: ChatRequest, model: string): Record<string, unknown> | undefined {
  if (!geminiThinks(model)) return undefined;
  const hints = getHints(req);
  let budget = typeof req.thinking_budget === 'number' ? req.thinking_budget : undefined;
  if (budget === undefined && hints.claudeThinking?.type === 'enabled') budget = hints.claudeThinking.budget_tokens ?? -1;
  const effort = typeof req.reasoning_effort === 'string' ? req.reasoning_effort : undefined;
  if (effort === undefined && budget === undefined && !req.reasoning_summary) return undefined;
  const off = budget === 0 || effort === 'none';
  const cfg: Record<string, unknown> = {};
  if (!off) cfg.includeThoughts = true;
  if (isGemini3(model)) {
    const level = levelFor(model, effort, budget);
    if (level) cfg.thinkingLevel = level;
  } else if (budget !== undefined) cfg.thinkingBudget = budgetFor(model, budget);
  else if (effort !== undefined && own(EFFORT_BUDGET, effort) !== undefined) cfg.thinkingBudget = budgetFor(model, own(EFFORT_BUDGET, effort)!);
  return cfg;
}

/** Builds the Gemini request (pure; exported for tests). Returns the model actually called. */
export function toGeminiRequest(req: ChatRequest, ctx: AdaptorContext): { body: Record<string, unknown>; model: string } {
  let model = ctx.upstreamModel;
  const maxTokens = req.max_tokens ?? req.max_completion_tokens;
  const hints = getHints(req);
  // a Gemini client's own thinkingConfig goes as sent (thinkingLevel, includeThoughts: false …)
  let thinkingConfig: Record<string, unknown> | undefined = hints.geminiThinkingConfig;
  const adapter = ctx.option('gemini.thinking_adapter_enabled') === 'true';
  if (adapter) {
    const m = /-thinking(?:-(\d+))?$/.exec(model);
    if (m) {
      model = model.slice(0, m.index);
      if (m[1]) thinkingConfig = { includeThoughts: true, thinkingBudget: Math.min(GEMINI_THINKING_BUDGET_CAP, Number(m[1])) };
      else if (maxTokens) {
        const pctRaw = Number(ctx.option('gemini.thinking_adapter_budget_tokens_percentage'));
        const pct = Number.isFinite(pctRaw) && pctRaw > 0 ? pctRaw : 0.6;
        thinkingConfig = { includeThoughts: true, thinkingBudget: Math.min(GEMINI_THINKING_BUDGET_CAP, Math.floor(maxTokens * pct)) };
      } else thinkingConfig = { includeThoughts: true };
    } else if (model.endsWith('-nothinking')) {
      model = model.slice(0, -'-nothinking'.length);
      thinkingConfig = { thinkingBudget: 0 };
    }
  }
  thinkingConfig ??= thinkingConfigFor(req, model);

  const extras = hints.gemini;
  const { systemInstruction, contents } = toGeminiContents(req.messages ?? [], isGemini3(model));
  const body: Record<string, unknown> = { contents };
  if (systemInstruction) body.systemInstruction = systemInstruction;
  body.safetySettings = extras?.safetySettings ?? safetySettings(ctx.option('gemini.safety_settings'), model);

  const gc: Record<string, unknown> = {};
  if (req.temperature != null) gc.temperature = req.temperature;
  if (req.top_p != null) gc.topP = req.top_p;
  if (req.top_k != null) gc.topK = req.top_k;
  if (maxTokens != null) gc.maxOutputTokens = maxTokens;
  if (req.stop != null) {
    const stops = (Array.isArray(req.stop) ? req.stop : [req.stop]).filter((s) => typeof s === 'string' && s);
    if (stops.length) gc.stopSequences = stops.slice(0, 5);
  }
  if (typeof req.n === 'number' && req.n > 1) gc.candidateCount = req.n;
  if (typeof req.seed === 'number') gc.seed = req.seed;
  if (typeof req.presence_penalty === 'number') gc.presencePenalty = req.presence_penalty;
  if (typeof req.frequency_penalty === 'number') gc.frequencyPenalty = req.frequency_penalty;
  const rf = req.response_format;
  if (rf && (rf.type === 'json_object' || rf.type === 'json_schema')) {
    gc.responseMimeType = 'application/json';
    const js = isRecord(rf.json_schema) ? rf.json_schema : undefined;
    if (js && isRecord(js.schema)) gc.responseSchema = cleanSchema(js.schema);
  }
  if (thinkingConfig) gc.thinkingConfig = thinkingConfig;
  const imagine = parseJsonOption(ctx.option('gemini.supported_imagine_models'));
  if (Array.isArray(imagine) && imagine.includes(model)) gc.responseModalities = ['TEXT', 'IMAGE'];
  if (extras?.generationConfig) Object.assign(gc, extras.generationConfig);
  if (Object.keys(gc).length) body.generationConfig = gc;

  if (req.tools?.length) {
    const decls = req.tools
      .filter((t) => t?.function?.name)
      .map((t) => {
        const d: Record<string, unknown> = { name: t.function.name };
        if (t.function.description) d.description = t.function.description;
        const p = t.function.parameters;
        if (isRecord(p) && !(p.type === 'object' && (!isRecord(p.properties) || !Object.keys(p.properties).length))) d.parameters = cleanSchema(p);
        return d;
      });
    if (decls.length) body.tools = [{ functionDeclarations: decls }];
  }
  const tc = req.tool_choice;
  let fcc: Record<string, unknown> | undefined;
  if (tc === 'auto') fcc = { mode: 'AUTO' };
  else if (tc === 'required') fcc = { mode: 'ANY' };
  else if (tc === 'none') fcc = { mode: 'NONE' };
  else if (isRecord(tc) && isRecord(tc.function) && typeof tc.function.name === 'string') fcc = { mode: 'ANY', allowedFunctionNames: [tc.function.name] };
  if (fcc && body.tools) body.toolConfig = { functionCallingConfig: fcc };
  if (extras?.tools?.length) body.tools = [...((body.tools as unknown[] | undefined) ?? []), ...extras.tools];
  if (extras?.toolConfig) body.toolConfig = { ...((body.toolConfig as Record<string, unknown> | undefined) ?? {}), ...extras.toolConfig };
  return { body, model };
}
