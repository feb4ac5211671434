/**
 * The conversion pipeline of the relay, run without HTTP: the same calls, in the same order, as
 * call/request.ts (client request → upstream request), call/bufferedBody.ts (whole answer),
 * call/streamBody.ts (stream: splitter → parse → translator → client writer, and its end and
 * error tails) and call/attempt.ts + relay/index.ts (upstream error → client error body).
 */
import { BadStreamFrame, jsonShaped, parseBlockChecked, SSESplitter } from '../../../server/src/relay/sse';
import { verbatim } from '../../../server/src/i18n';
import { streamCutTail } from '../../../server/src/relay/call/streamBody';
import { unpackReasoning } from '../../../server/src/protocols/responses/shared';
import { RelayError, scrubSecrets, UpstreamError } from '../../../server/src/relay/errors';
import type { ChatChunk, ChatRequest, ChatResponse, InboundFormat, SSEEvent, Usage } from '../../../server/src/relay/types';
import { adaptorContext, CHANNEL_KEY, routeOf, type Protocol } from './protocols';
import type { AnswerFacts } from './invariants';

export interface ClientRequestFixture {
  /** The path the client calls (Gemini: model and action; query kept for the record). */
  path: string;
  /** Headers the client sends (recorded for realism; conversions do not read them today). */
  headers?: Record<string, string>;
  body: unknown;
}

export interface ErrorGolden {
  error: { status: number; body: unknown };
}

export interface UpstreamGolden {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A relay error answered to the client, in its format (relay/index.ts respondError). */
export function clientErrorBody(inbound: InboundFormat, err: unknown): ErrorGolden {
  if (err instanceof RelayError) {
    const body = inbound.error(err.status, err.message, err.code) as { error?: { type?: string } };
    if (inbound.name === 'openai' && body?.error && typeof body.error === 'object') body.error.type = err.type;
    return { error: { status: err.status, body } };
  }
  throw err;
}

/** The client's request needs what only an upstream of its own protocol can do: refused before routing. */
export interface RefusedGolden {
  refused: { status: 400; reason: string };
}

export interface RequestRun {
  chat?: ChatRequest;
  stream: boolean;
  golden: UpstreamGolden | ErrorGolden | RefusedGolden;
}

/** Client request → canonical → upstream request (call/request.ts, conversion branch). */
export function convertRequest(client: Protocol, upstream: Protocol, fx: ClientRequestFixture): RequestRun {
  const route = routeOf(client, fx.path);
  const body = fx.body as Record<string, unknown>;
  const stream = route.stream ?? body?.stream === true;
  // call/plan.ts: a body only an upstream of the client's protocol can honour is never converted
  const nativeOnly = (client.inbound as { nativeOnly?(b: unknown): string | undefined }).nativeOnly?.(fx.body);
  if (nativeOnly) return { stream, golden: { refused: { status: 400, reason: nativeOnly } } };
  // …and files stored at OpenAI go only to upstreams speaking one of OpenAI's protocols
  const openaiFiles = client.inbound!.openaiFiles?.(fx.body);
  if (openaiFiles && upstream.adaptor!.format !== 'openai' && upstream.adaptor!.format !== 'responses') {
    return { stream, golden: { refused: { status: 400, reason: openaiFiles } } };
  }
  let chat: ChatRequest;
  try {
    chat = client.inbound!.toChat(fx.body, route.modelFromPath);
  } catch (err) {
    return { stream, golden: clientErrorBody(client.inbound!, err) };
  }
  const requestedModel = (client.inbound!.modelOf?.(fx.body, route.modelFromPath) ?? chat.model ?? '').trim();
  const ctx = adaptorContext(upstream, { stream, requestedModel });
  const c: ChatRequest = { ...chat, model: ctx.upstreamModel, stream };
  let req;
  try {
    req = upstream.adaptor!.chatRequest(c, ctx);
  } catch (err) {
    return { chat, stream, golden: clientErrorBody(client.inbound!, err) };
  }
  const headers: Record<string, string> = {};
  for (const k of Object.keys(req.headers).sort()) headers[k.toLowerCase()] = req.headers[k]!;
  const raw = typeof req.body === 'string' ? req.body : (req.body?.toString('utf8') ?? '');
  return { chat, stream, golden: { method: req.method, url: req.url, headers, body: raw ? JSON.parse(raw) : undefined } };
}

export interface AnswerRun {
  canonical: ChatResponse;
  client: unknown;
}

/** Upstream answer → canonical → client answer (call/bufferedBody.ts, conversion branch). */
export function convertAnswer(upstream: Protocol, client: Protocol, body: unknown): AnswerRun {
  const ctx = adaptorContext(upstream, { stream: false, requestedModel: client.clientModel });
  const canonical = upstream.adaptor!.chatResponse(body, ctx);
  return { canonical, client: JSON.parse(client.inbound!.answerJson(canonical, client.clientModel)) as unknown };
}

/** An upstream error answer → the client's error body (call/attempt.ts, then relay/index.ts). */
export function convertError(upstream: Protocol, client: Protocol, fx: { status: number; body: unknown }): ErrorGolden {
  const text = typeof fx.body === 'string' ? fx.body : JSON.stringify(fx.body);
  const message = scrubSecrets(upstream.adaptor!.errorMessage(fx.status, text), [CHANNEL_KEY]);
  return clientErrorBody(client.inbound!, new RelayError(fx.status || 502, verbatim(message), 'upstream_error', 'upstream_error'));
}

export interface StreamRun {
  /** The client's bytes (SSE text), or the error answered when nothing reached the client. */
  text: string;
  error?: ErrorGolden;
  /** Canonical chunks the upstream translator produced, in order. */
  chunks: ChatChunk[];
  /** The usage the relay passes to the writer's end (the translator's). */
  usage: Usage | undefined;
}

/**
 * An upstream stream, delivered in `chunks`, through the relay's converted-stream path
 * (call/streamBody.ts): the adaptor's splitter (or the SSE splitter), block parsing with the same
 * checks, the translator, the client's writer; at the end what the splitter and the translator
 * still hold, then the writer's end with the translator's usage. A failure before anything
 * reached the client becomes the client's error answer; after, the stream's error tail.
 */
export function convertStream(upstream: Protocol, client: Protocol, chunks: Uint8Array[], includeUsage = true): StreamRun {
  const ctx = adaptorContext(upstream, { stream: true, requestedModel: client.clientModel });
  const adaptor = upstream.adaptor!;
  const splitter = adaptor.streamSplitter?.('text/event-stream') ?? new SSESplitter();
  const translator = adaptor.chatStream(ctx);
  const inbound = client.inbound! as InboundFormat & { streamWriter(m: string, o?: { includeUsage?: boolean }): ReturnType<InboundFormat['streamWriter']> };
  const writer = inbound.streamWriter(client.clientModel, { includeUsage });
  const all: ChatChunk[] = [];
  /** What reached the client: a chunk's output, or what its blocks made before one failed. */
  let out = '';
  let converted = 0;
  const handle = (blocks: string[]): string => {
    let s = '';
    try {
      for (const block of blocks) {
        const ev = parseBlockChecked(block);
        if (ev === false || (ev && !jsonShaped(ev.data))) throw new BadStreamFrame();
        if (!ev) continue;
        for (const c of translator.push(ev)) {
          converted++;
          all.push(c);
          s += writer.chunk(c);
        }
      }
    } catch (err) {
      out += s;
      throw err;
    }
    return s;
  };
  let cut: unknown;
  try {
    for (const chunk of chunks) out += handle(splitter.push(Buffer.from(chunk)));
    // flushEnd: the splitter's tail and the translator's held chunks, written together
    let tail = handle(splitter.end());
    for (const c of translator.end()) {
      all.push(c);
      tail += writer.chunk(c);
    }
    if (!converted && !out) throw new BadStreamFrame();
    out += tail;
  } catch (err) {
    cut = err;
  }
  if (cut !== undefined && !out) {
    // Nothing reached the client: the call fails (or is retried) with the upstream's error.
    const status = cut instanceof UpstreamError ? cut.status || 502 : 502;
    const message = cut instanceof Error ? cut.message : String(cut);
    const code = cut instanceof UpstreamError ? cut.upstreamCode || 'upstream_error' : ((cut as { code?: string }).code ?? 'upstream_error');
    return {
      text: '',
      error: clientErrorBody(client.inbound!, new RelayError(status, verbatim(message), code, 'upstream_error')),
      chunks: all,
      usage: translator.usage(),
    };
  }
  const usage = translator.usage();
  if (cut !== undefined) {
    out += streamCutTail(client.inbound!, cut as Error, writer);
    return { text: out, chunks: all, usage };
  }
  // The relay bills the translator's usage when it has figures; the tokenizer fallback is not modelled.
  const billed = usage && (usage.prompt_tokens > 0 || usage.completion_tokens > 0) ? usage : { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  out += writer.end(billed);
  return { text: out, chunks: all, usage };
}

/** SSE text → events (data parsed as JSON when it is; comments dropped). */
export function parseSse(text: string): Array<{ event?: string; data: unknown }> {
  const out: Array<{ event?: string; data: unknown }> = [];
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    if (!block.trim()) continue;
    const ev = parseBlockChecked(`${block}\n\n`);
    if (ev === false) throw new Error(`not SSE: ${JSON.stringify(block)}`);
    if (!ev) continue;
    let data: unknown = ev.data;
    try {
      data = JSON.parse(ev.data);
    } catch {
      /* [DONE] and other plain text stay strings */
    }
    out.push(ev.event ? { event: ev.event, data } : { data });
  }
  return out;
}

/** The upstream's events as the relay's splitter and parser see them, for a given chunking. */
export function splitEvents(upstream: Protocol, chunks: Uint8Array[]): SSEEvent[] {
  const splitter = upstream.adaptor!.streamSplitter?.('text/event-stream') ?? new SSESplitter();
  const out: SSEEvent[] = [];
  const take = (blocks: string[]) => {
    for (const b of blocks) {
      const ev = parseBlockChecked(b);
      if (ev) out.push(ev);
    }
  };
  for (const c of chunks) take(splitter.push(Buffer.from(c)));
  take(splitter.end());
  return out;
}

// ---------------------------------------------------------------------------------------------
// Awkward chunkings of a byte stream

export interface Chunking {
  name: string;
  chunks: Uint8Array[];
}

function cutAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const c of [...new Set(cuts)].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b)) {
    out.push(bytes.subarray(prev, c));
    prev = c;
  }
  out.push(bytes.subarray(prev));
  return out;
}

/** Positions inside a multi-byte UTF-8 character (after its first byte). */
export function insideUtf8(bytes: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 1; i < bytes.length; i++) if ((bytes[i]! & 0xc0) === 0x80) out.push(i);
  return out;
}

/** Positions between a CR and its LF, and between the two line ends of a blank line. */
export function insideLineEnds(bytes: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 1; i < bytes.length; i++) {
    if (bytes[i - 1] === 0x0d && bytes[i] === 0x0a) out.push(i);
    if (bytes[i] === 0x0a && (bytes[i - 1] === 0x0a || (bytes[i - 1] === 0x0d && bytes[i - 2] === 0x0a))) out.push(i);
  }
  return out;
}

/** A small deterministic generator (mulberry32), so a failing random chunking can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The chunkings a stream is run through end to end: whole, one byte at a time, cut inside every
 * multi-byte character, inside every line end, and a few seeded random ones (1–17 bytes).
 */
export function awkwardChunkings(bytes: Uint8Array): Chunking[] {
  const out: Chunking[] = [
    { name: 'whole', chunks: [bytes] },
    { name: 'one byte at a time', chunks: Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)) },
  ];
  const utf8 = insideUtf8(bytes);
  if (utf8.length) out.push({ name: 'inside every multi-byte character', chunks: cutAt(bytes, utf8) });
  const ends = insideLineEnds(bytes);
  if (ends.length) out.push({ name: 'inside every line end', chunks: cutAt(bytes, ends) });
  for (const seed of [1, 2, 3]) {
    const rnd = random(seed);
    const cuts: number[] = [];
    for (let p = 0; p < bytes.length;) cuts.push((p += 1 + Math.floor(rnd() * 17)));
    out.push({ name: `random pieces (seed ${seed})`, chunks: cutAt(bytes, cuts) });
  }
  return out;
}

/** Every two-piece split of a stream (checked at the splitter, which is what sees chunk boundaries). */
export function* everyTwoPieceSplit(bytes: Uint8Array): Generator<{ at: number; chunks: Uint8Array[] }> {
  for (let i = 1; i < bytes.length; i++) yield { at: i, chunks: [bytes.subarray(0, i), bytes.subarray(i)] };
}

/** LF line ends → CRLF (a provider or proxy may send either; the output must not change). */
export function toCrlf(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(/\n/g, '\r\n');
}

// ---------------------------------------------------------------------------------------------
// Volatile fields

const NOW_WINDOW_S = 2 * 24 * 3600;
const TIME_KEYS = new Set(['created', 'created_at', 'completed_at', 'createTime']);
/** Ids the gateway generates: newId() (24 hex digits after a prefix) and UUIDs. */
const GENERATED = /[0-9a-f]{24}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const HAS_GENERATED = new RegExp(GENERATED.source);

/**
 * Replaces what changes from run to run: generated ids become `<id1>`, `<id2>` … by first
 * appearance (the same id keeps the same name, so "this result answers that call" stays
 * visible), and timestamps of the current time become `<now>` (fixed times from the fixtures stay).
 */
export function normalise<T>(value: T, names = new Map<string, string>()): T {
  const nowS = Date.now() / 1000;
  const walk = (v: unknown, key?: string): unknown => {
    if (typeof v === 'string') {
      // Reasoning the gateway packed for a Responses client holds generated call ids too: shown unpacked.
      const packed = unpackReasoning(v);
      if (packed) return { packedReasoning: walk(packed) };
      return v.replace(GENERATED, (m) => names.get(m) ?? (names.set(m, `<id${names.size + 1}>`), names.get(m)!));
    }
    if (typeof v === 'number' && key && TIME_KEYS.has(key)) {
      if (Math.abs(v - nowS) < NOW_WINDOW_S || Math.abs(v / 1000 - nowS) < NOW_WINDOW_S) return '<now>';
      return v;
    }
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object') {
      const o: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) o[HAS_GENERATED.test(k) ? (walk(k) as string) : k] = walk(x, k);
      return o;
    }
    return v;
  };
  return walk(value) as T;
}

// ---------------------------------------------------------------------------------------------
// Facts of an answer, for the round-trip invariants

function argsOf(s: string | undefined): unknown {
  if (!s) return {};
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

function usageFacts(u: Usage | undefined): AnswerFacts['usage'] {
  if (!u) return undefined;
  return {
    prompt: u.prompt_tokens ?? 0,
    completion: u.completion_tokens ?? 0,
    cached: u.prompt_tokens_details?.cached_tokens ?? 0,
    creation: u.prompt_tokens_details?.cache_creation_tokens ?? 0,
    reasoning: u.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

function refusalOf(m: unknown): string {
  const r = (m as { refusal?: unknown } | undefined)?.refusal;
  return typeof r === 'string' ? r : '';
}

/** Facts of a canonical whole answer (first choice). */
export function responseFacts(r: ChatResponse): AnswerFacts {
  const c = r.choices?.[0];
  const m = c?.message;
  return {
    // a refusal (OpenAI `message.refusal`) is what the model said instead of content
    text: (typeof m?.content === 'string' ? m.content : '') + refusalOf(m),
    refused: refusalOf(m) !== '',
    reasoning: m?.reasoning_content ?? '',
    toolCalls: (m?.tool_calls ?? []).map((t) => ({ id: t.id, name: t.function.name, args: argsOf(t.function.arguments) })),
    finish: c?.finish_reason ?? null,
    usage: usageFacts(r.usage),
  };
}

/** Facts of a canonical chunk sequence (choice 0) and the usage the translator reported. */
export function chunkFacts(chunks: ChatChunk[], usage: Usage | undefined): AnswerFacts {
  let text = '';
  let refused = false;
  let reasoning = '';
  let finish: string | null = null;
  const calls = new Map<number, { id?: string; name: string; args: string }>();
  for (const c of chunks) {
    for (const ch of c.choices ?? []) {
      if (ch.index !== 0) continue;
      const d = ch.delta ?? {};
      if (typeof d.content === 'string') text += d.content;
      if (typeof d.refusal === 'string' && d.refusal) {
        text += d.refusal;
        refused = true;
      }
      if (typeof d.reasoning_content === 'string') reasoning += d.reasoning_content;
      for (const tc of d.tool_calls ?? []) {
        const t = calls.get(tc.index) ?? { name: '', args: '' };
        if (tc.id && !t.id) t.id = tc.id;
        if (tc.function?.name) t.name += tc.function.name;
        if (tc.function?.arguments) t.args += tc.function.arguments;
        calls.set(tc.index, t);
      }
      if (ch.finish_reason) finish = ch.finish_reason;
    }
  }
  const toolCalls = [...calls.entries()].sort((a, b) => a[0] - b[0]).map(([, t]) => ({ id: t.id, name: t.name, args: argsOf(t.args) }));
  return { text, refused, reasoning, toolCalls, finish, usage: usageFacts(usage) };
}

/** Events of a client stream → the canonical chunks of the client's own protocol (its adaptor's translator). */
export function readBack(p: Protocol, events: SSEEvent[]): { chunks: ChatChunk[]; usage: Usage | undefined; error?: string } {
  const t = p.adaptor!.chatStream(adaptorContext(p, { stream: true, requestedModel: p.clientModel }));
  const chunks: ChatChunk[] = [];
  try {
    for (const ev of events) chunks.push(...t.push(ev));
    chunks.push(...t.end());
  } catch (err) {
    return { chunks, usage: t.usage(), error: (err as Error).message };
  }
  return { chunks, usage: t.usage() };
}
