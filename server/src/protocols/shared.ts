/**
 * Helpers shared by the upstream adaptors and the inbound formats: type guards, ids, message
 * text, data URLs, tool-call arguments, JSON options, the native-hints side channel, and the
 * upstream error plumbing (error-body message, in-band stream error, tolerant passthrough
 * observer). Nothing here is specific to one provider.
 */
import crypto from 'node:crypto';
import type { AdaptorContext, ChatChunk, ChatRequest, SSEEvent, StreamObserver, StreamTranslator, Usage } from '../relay/types';
import { UpstreamError } from '../relay/errors';
import { memoByString } from '../lib/memo';

/**
 * Native hints an inbound format may attach to a canonical request (a symbol key, so it never
 * reaches an upstream in JSON). The Claude inbound format uses it to keep `thinking` exact when
 * the upstream is Claude too; Gemini inbound keeps its `thinkingConfig`.
 */
export const NATIVE_HINTS = Symbol.for('gateway.relay.nativeHints');
export interface NativeHints {
  claudeThinking?: { type: string; budget_tokens?: number; display?: string };
  /** Claude `output_config.effort` as sent (`max` has no canonical equivalent). */
  claudeEffort?: string;
  geminiThinkingConfig?: Record<string, unknown>;
  /**
   * What a Gemini client sent that only a Gemini-format upstream understands (built-in tools such
   * as googleSearch, safetySettings, generationConfig fields without a canonical equivalent): other
   * targets drop it, Vertex AI (which always converts) sends it back.
   */
  gemini?: {
    tools?: Array<Record<string, unknown>>;
    safetySettings?: unknown[];
    generationConfig?: Record<string, unknown>;
    toolConfig?: Record<string, unknown>;
  };
}
export function getHints(req: ChatRequest): NativeHints {
  return ((req as unknown as Record<symbol, unknown>)[NATIVE_HINTS] as NativeHints | undefined) ?? {};
}
export function setHints(req: ChatRequest, hints: NativeHints): ChatRequest {
  Object.defineProperty(req, NATIVE_HINTS, { value: hints, enumerable: true, configurable: true, writable: true });
  return req;
}

/**
 * A JSON option's value (undefined when empty or not JSON). Parsed once per distinct text: the
 * adaptors read these per call. The value is shared between calls, hence frozen.
 */
export function parseJsonOption(raw: string | undefined): unknown {
  return raw ? parsedOption(raw) : undefined;
}

const parsedOption = memoByString((raw: string): unknown => {
  try {
    return deepFreeze(JSON.parse(raw));
  } catch {
    return undefined;
  }
}, 64);

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `data:<mime>;base64,<data>` → parts; undefined for anything else. */
export function parseDataUrl(url: string): { mimeType: string; data: string } | undefined {
  const m = /^data:([^;,]+)?((?:;[^;,]+)*?);base64,(.*)$/s.exec(url);
  if (!m) return undefined;
  return { mimeType: m[1] || 'application/octet-stream', data: m[3]! };
}

/** File name extensions of the document types models read (others: the media subtype, else `bin`). */
const EXTENSION: Record<string, string> = {
  'application/pdf': 'pdf',
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/csv': 'csv',
  'text/html': 'html',
  'application/json': 'json',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
};

/**
 * A file name for inline file data (OpenAI refuses `file_data` without `filename`): the title the
 * client gave, with an extension from the media type when it has none, else `document.<ext>`.
 */
export function fileNameFor(mimeType: string, title?: string): string {
  const mime = mimeType.toLowerCase();
  const sub = /^[\w.+-]+\/([a-z0-9]+)$/.exec(mime)?.[1];
  const ext = EXTENSION[mime] ?? (sub && sub.length <= 5 ? sub : 'bin');
  const name = title?.trim();
  if (!name) return `document.${ext}`;
  return /\.[A-Za-z0-9]{1,5}$/.test(name) ? name : `${name}.${ext}`;
}

/**
 * Text of a message's content (parts joined without separator, like OpenAI's own rendering). Takes
 * any value: the tokenizer reads it from request bodies not yet checked.
 */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let s = '';
  for (const p of content as Array<{ type?: unknown; text?: unknown } | null>) if (p && p.type === 'text' && typeof p.text === 'string') s += p.text;
  return s;
}

/**
 * A tool result's text as an object, Gemini's convention for `functionResponse.response`: JSON
 * text as itself (an object) or `{content}`, plain text as `{content}`; a failure (`failed`) under
 * `error`, unless it already is an object with an `error` key. The protocols without an error flag
 * (OpenAI Chat, Responses) get a failure's object as text: the failure said in the text.
 */
export function toolResultObject(text: string, failed = false): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    v = text;
  }
  if (!failed) return isRecord(v) ? v : { content: v };
  return isRecord(v) && 'error' in v ? v : { error: v };
}

/**
 * Random bytes for ids, drawn from the CSPRNG 3 KiB at a time: one `randomBytes` call per id (a
 * buffer, a native call) was a measurable share of a converted call, which makes up to three.
 */
const ID_BYTES = 12;
const idPool = Buffer.alloc(ID_BYTES * 256);
let idAt = idPool.length;

/** `prefix` + 24 random hex digits (96 bits). */
export function newId(prefix: string): string {
  if (idAt === idPool.length) {
    crypto.randomFillSync(idPool);
    idAt = 0;
  }
  const id = idPool.toString('hex', idAt, idAt + ID_BYTES);
  idAt += ID_BYTES;
  return prefix + id;
}

/** Parses tool-call arguments; Claude and Gemini need an object. */
export function parseArgs(args: string | undefined): Record<string, unknown> {
  if (!args || !args.trim()) return {};
  try {
    const v = JSON.parse(args);
    return isRecord(v) ? v : { value: v };
  } catch {
    return {};
  }
}

/** An in-band stream error event → UpstreamError (Claude `overloaded_error` → 529, else 500). */
export function streamError(message: string, type: string, body: string): UpstreamError {
  const status = type === 'overloaded_error' ? 529 : type === 'UNAVAILABLE' ? 503 : type === 'rate_limit_error' || type === 'RESOURCE_EXHAUSTED' ? 429 : 500;
  return new UpstreamError(status, message, body, type);
}

/**
 * Passthrough observer (same format on both sides) built on a translator: learns usage and text
 * but never throws, so an upstream in-band `error` event is forwarded to the client verbatim
 * (already in the client's format) instead of being replaced by a generic tail.
 */
export function tolerantObserver(t: StreamTranslator): StreamObserver {
  let text = '';
  let failed = false;
  return {
    push(ev) {
      if (failed) return;
      try {
        for (const c of t.push(ev)) {
          for (const ch of c.choices) {
            const d = ch.delta;
            text += (d.content ?? '') + (d.reasoning_content ?? '');
            for (const tc of d.tool_calls ?? []) text += `${tc.function?.name ?? ''}${tc.function?.arguments ?? ''}`;
          }
        }
      } catch {
        failed = true;
      }
    },
    usage: () => t.usage(),
    text: () => text,
  };
}

/** Best message from an error body: Claude `{type:'error', error:{type,message}}`, OpenAI-like, or text. */
export function upstreamErrorMessage(status: number, body: string): string {
  const text = (body ?? '').trim();
  if (text) {
    try {
      const j = JSON.parse(text);
      if (isRecord(j)) {
        const e = j.error;
        if (isRecord(e) && typeof e.message === 'string' && e.message) return e.message;
        if (typeof e === 'string' && e) return e;
        if (typeof j.message === 'string' && j.message) return j.message;
        if (typeof j.detail === 'string' && j.detail) return j.detail;
      }
      if (Array.isArray(j) && isRecord(j[0]) && isRecord(j[0].error) && typeof j[0].error.message === 'string') return j[0].error.message;
    } catch {
      /* not JSON */
    }
    return text.length > 500 ? `${text.slice(0, 500)}…` : text;
  }
  return `upstream returned status ${status}`;
}

/**
 * `headers` plus OpenAI's beta header as the client sent it, for a passthrough (the client's body
 * and its opt-ins go together; Claude's betas are merged in its own adaptor).
 */
export function withOpenAIBeta(headers: Record<string, string>, ctx: AdaptorContext): Record<string, string> {
  const beta = ctx.clientHeader?.('openai-beta');
  return beta ? { ...headers, 'openai-beta': beta } : headers;
}

/**
 * What the stream translators of providers sending one JSON object per event share (Baidu, Dify,
 * iFlytek, the AI Proxy library): one id and clock per stream (a provider's own may replace them
 * on the first event), the chunks built from them, the upstream's usage, and the event's object.
 */
export abstract class JsonEventTranslator implements StreamTranslator {
  protected id = newId('chatcmpl-');
  protected created = Math.floor(Date.now() / 1000);
  protected started = false;
  protected u: Usage | undefined;

  constructor(protected readonly model: string) {}

  abstract push(ev: SSEEvent): ChatChunk[];

  protected chunk(delta: ChatChunk['choices'][number]['delta'], finish: ChatChunk['choices'][number]['finish_reason'] = null): ChatChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, finish_reason: finish }] };
  }

  /** The chunk carrying only the usage (after the finish chunk). */
  protected usageChunk(usage: Usage): ChatChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage };
  }

  /** The event's data as a JSON object; undefined for anything else (keep-alives, partial lines). */
  protected json(ev: SSEEvent): Record<string, unknown> | undefined {
    try {
      const p: unknown = JSON.parse(ev.data);
      return p !== null && typeof p === 'object' && !Array.isArray(p) ? (p as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }

  end(): ChatChunk[] {
    return [];
  }

  usage(): Usage | undefined {
    return this.u;
  }
}
