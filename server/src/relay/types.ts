/**
 * The relay's shared vocabulary. The canonical request/response is the OpenAI Chat Completions
 * wire format: every inbound format (OpenAI, Claude, Gemini) converts to it, and every provider
 * adaptor converts from it. When the client's format equals the upstream's (`format`), the relay
 * may forward bodies untouched and only *observe* the stream for usage.
 */

import type { Dispatcher } from 'undici';
import type { AppContext } from '../context';
import type { RelayHttp } from './httpContext';

/**
 * The four wire protocols clients speak and upstreams answer in: OpenAI Chat Completions
 * (`openai`), OpenAI Responses (`responses`), Claude Messages (`claude`), Gemini (`gemini`).
 */
export type WireFormat = 'openai' | 'responses' | 'claude' | 'gemini';

export type Role = 'system' | 'user' | 'assistant' | 'tool' | 'developer';

export interface TextPart {
  type: 'text';
  text: string;
}
export interface ImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: string };
}
export interface AudioPart {
  type: 'input_audio';
  input_audio: { data: string; format: string };
}
export type ContentPart = TextPart | ImagePart | AudioPart | { type: string; [k: string]: unknown };

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  /** Provider data that must come back with the call (Gemini's `thoughtSignature`), as Google's OpenAI-compatible API carries it. */
  extra_content?: { google?: { thought_signature?: string } };
}

/**
 * Reasoning that a provider wants back verbatim on the next turn (OpenRouter's `reasoning_details`
 * convention): Claude thinking with its signature, Claude redacted thinking, OpenAI Responses
 * encrypted reasoning and summaries. Carried through the canonical format so a target of the same
 * family can receive it; a target that cannot accept a `format` drops the entry.
 */
export type ReasoningDetail =
  | { type: 'reasoning.text'; text: string; signature?: string; format?: ReasoningFormat }
  | { type: 'reasoning.encrypted'; data: string; id?: string; format?: ReasoningFormat }
  | { type: 'reasoning.summary'; summary: string; id?: string; format?: ReasoningFormat };
/** Whose reasoning it is: only that family accepts the signature or the encrypted data. */
export type ReasoningFormat = 'anthropic-claude-v1' | 'openai-responses-v1' | 'google-gemini-v1';

export interface ChatMessage {
  role: Role;
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  reasoning_content?: string;
  reasoning_details?: ReasoningDetail[];
  /**
   * Canonical only: a tool result that reports a failure (Claude `is_error`, a Gemini
   * `functionResponse.response` with an `error` key). OpenAI's protocols have no such flag; their
   * writers leave it out and the result's text says what happened.
   */
  is_error?: boolean;
}

export interface ToolDef {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop?: string | string[];
  n?: number;
  tools?: ToolDef[];
  tool_choice?: 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };
  response_format?: { type: string; [k: string]: unknown };
  /** minimal | low | medium | high (OpenAI); Claude's `output_config.effort` and thinking budgets map onto it. */
  reasoning_effort?: string;
  /**
   * Canonical-only fields (never sent to an OpenAI Chat upstream): an explicit thinking budget in
   * tokens (Claude `thinking.budget_tokens`, Gemini `thinkingBudget`; 0 = thinking off) and whether
   * the client wants reasoning summaries / thoughts back (Responses `reasoning.summary`, Gemini
   * `includeThoughts`).
   */
  thinking_budget?: number;
  reasoning_summary?: 'auto' | 'concise' | 'detailed';
  /**
   * Canonical-only: tools the client offered that only its own provider runs (OpenAI's web search,
   * Claude's server tools, Gemini's googleSearch …). A conversion to another protocol leaves them
   * out and says so in the answer's `X-Gateway-Unconverted` header and the log row.
   */
  unconverted?: string[];
  user?: string;
  [k: string]: unknown;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_creation_tokens?: number; audio_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number; audio_tokens?: number };
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | null;

export interface ChatResponse {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: {
      role: 'assistant';
      content: string | null;
      /** OpenAI's refusal text (the model declined; `content` is then null). */
      refusal?: string | null;
      tool_calls?: ToolCall[];
      reasoning_content?: string;
      reasoning_details?: ReasoningDetail[];
    };
    finish_reason: FinishReason;
  }>;
  usage?: Usage;
}

export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: {
      role?: 'assistant';
      content?: string | null;
      refusal?: string | null;
      reasoning_content?: string;
      /** Signature / encrypted reasoning, usually one entry at the end of a reasoning block. */
      reasoning_details?: ReasoningDetail[];
      tool_calls?: Array<{
        index: number;
        id?: string;
        type?: 'function';
        function?: { name?: string; arguments?: string };
        extra_content?: ToolCall['extra_content'];
      }>;
    };
    finish_reason: FinishReason;
  }>;
  usage?: Usage | null;
}

/** One server-sent event as parsed off the wire. */
export interface SSEEvent {
  event?: string;
  data: string;
}

/** The channel as an adaptor sees it (parsed JSON columns included). */
export interface ChannelInfo {
  id: number;
  type: number;
  name: string;
  key: string;
  baseUrl: string;
  organization: string;
  /** `other` column: api version (Azure), region, account id (Cloudflare), … */
  other: string;
  /** Parsed `setting` JSON. */
  setting: Record<string, unknown>;
}

export interface UpstreamRequest {
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string | Buffer;
  /**
   * An upstream that is not HTTP (iFlytek's WebSocket): the request is sent through this instead
   * of the HTTP client, which answers as an HTTP response would (relay calls and channel tests).
   */
  dispatcher?: Dispatcher;
}

/** What the client called (the relay routes each to channels whose adaptor serves it). */
export type Endpoint =
  'chat' | 'completions' | 'embeddings' | 'moderations' | 'images' | 'speech' | 'transcriptions' | 'translations' | 'responses' | 'image_edits' | 'rerank';

export interface AdaptorContext {
  channel: ChannelInfo;
  /** The model name sent upstream (after the channel's model_mapping). */
  upstreamModel: string;
  /** The model the client asked for (billing and logs use this one). */
  requestedModel: string;
  stream: boolean;
  endpoint: Endpoint;
  /** Read-only option lookups (gemini.*, claude.* …). */
  option(key: string): string;
  /**
   * A header of the client's request ('' when absent), for provider headers a passthrough forwards
   * (`anthropic-beta`, `anthropic-version`). Absent outside a client call (channel tests).
   */
  clientHeader?(name: string): string;
  /** The channel's param_override: a converting adaptor that keeps only its protocol's fields applies it after that filter. */
  paramOverride?: Record<string, unknown> | null;
}

/**
 * Watches an upstream stream that is forwarded to the client unchanged (same wire format on both
 * sides), to learn the usage and the delivered text. Must be cheap: it runs on the hot path.
 */
export interface StreamObserver {
  push(event: SSEEvent): void;
  /**
   * Whole SSE blocks forwarded as bytes without being split (OpenAI pass-through: none of them
   * carries a usage object or `[DONE]`). Optional: observers without it see every event via `push`.
   */
  pushRaw?(blocks: Uint8Array): void;
  usage(): Usage | undefined;
  /** Text delivered so far (for the tokenizer fallback when upstream reports no usage). */
  text(): string;
}

/** Turns an upstream stream into canonical chunks, event by event. */
export interface StreamTranslator {
  push(event: SSEEvent): ChatChunk[];
  /** Called at end of stream; may flush buffered chunks. */
  end(): ChatChunk[];
  /** Usage seen so far (upstream's figures), if any. */
  usage(): Usage | undefined;
}

/** One per provider kind (OpenAI-compatible, Azure, Claude, Gemini, …). */
export interface ProviderAdaptor {
  readonly name: string;
  /** Channel types this adaptor serves. */
  readonly channelTypes: readonly number[];
  /** The upstream's native wire format. */
  readonly format: WireFormat;
  /**
   * OpenAI-protocol upstreams only: where the same upstream has OpenAI's Responses API, by URL
   * shape — `openai`: `{base}{prefix}/responses`; `azure`: Azure's v1 surface; `none`: it has none.
   * Whether a channel uses it is the catalogue's `responsesApi` fact or the channel's
   * `upstream_protocol` setting. Adaptors built by spreading the OpenAI one inherit `openai`.
   */
  readonly responsesSide?: 'openai' | 'azure' | 'none';
  chatRequest(req: ChatRequest, ctx: AdaptorContext): UpstreamRequest;
  chatResponse(body: unknown, ctx: AdaptorContext): ChatResponse;
  chatStream(ctx: AdaptorContext): StreamTranslator;
  /** Best human message from an upstream error body. */
  errorMessage(status: number, body: string): string;
  /**
   * Same-format passthrough (client format === `format`): the client's parsed body (model already
   * mapped, param_override applied) → upstream request. When absent, the relay converts through the
   * canonical chat format. `raw` is set for non-JSON bodies (multipart audio) and must be sent as is.
   */
  rawRequest?(body: Record<string, unknown> | undefined, ctx: AdaptorContext, raw?: { body: Buffer; contentType: string }): UpstreamRequest;
  /** Usage from a native (non-stream) response body in passthrough mode. */
  usageFromBody?(body: unknown, ctx: AdaptorContext): Usage | undefined;
  /** Observer for passthrough streams; default: one built from `chatStream`. */
  observer?(ctx: AdaptorContext): StreamObserver;
  /** Endpoints besides `chat` this adaptor serves (passthrough only). Default: chat only. */
  readonly endpoints?: readonly Endpoint[];
  /** GET {models list} on the upstream, for fetch_models; absent → not supported. */
  modelsRequest?(channel: ChannelInfo): UpstreamRequest;
  /** Parses the models list answer into ids. */
  parseModels?(body: unknown): string[];
  /**
   * Async last step before sending (OAuth tokens minted and cached per channel: Vertex AI). Runs
   * after chatRequest/rawRequest/endpointRequest; throws UpstreamError on failure.
   */
  authorize?(req: UpstreamRequest, ctx: AdaptorContext, app: AppContext): Promise<UpstreamRequest>;
  /** Non-chat endpoints served by conversion for OpenAI-format clients (Cohere rerank …). */
  readonly convertedEndpoints?: readonly Endpoint[];
  /** OpenAI-style body of a converted endpoint (model mapped) → native upstream request. */
  endpointRequest?(body: Record<string, unknown>, ctx: AdaptorContext): UpstreamRequest;
  /** Native answer of a converted endpoint (+ the client's body) → OpenAI-style body + usage. */
  endpointResponse?(body: unknown, ctx: AdaptorContext, request: Record<string, unknown>): { body: unknown; usage?: Usage };
  /**
   * Streams that are not SSE (AWS event-stream): when the upstream content type matches, the
   * relay splits the bytes with this instead of the SSE splitter; blocks must be SSE text.
   */
  streamSplitter?(contentType: string, maxEventBytes?: number): { push(chunk: Uint8Array): string[]; end(): string[] } | undefined;
}

/** A client-facing route of a non-OpenAI format (H7 registers Claude/Gemini ones in protocols/index.ts). */
export interface InboundRoute {
  method: 'POST' | 'GET';
  /** Returns null when the path is not this route's; else what the path says. */
  match(path: string): { modelFromPath?: string; stream?: boolean; action?: string } | null;
  format: InboundFormat;
  /** Which key headers the route accepts (see relay/keys.ts). */
  keyStyle: 'openai' | 'claude' | 'gemini';
  /**
   * A route that is not a chat call (a model list, a token count, embeddings) answers itself;
   * without it the route is a chat call. Errors it throws are answered in `format`.
   */
  handle?(app: AppContext, ctx: RelayHttp, match: { modelFromPath?: string; stream?: boolean; action?: string }, kit: InboundKit): Promise<void>;
}

/** What relay/index.ts lends a route that answers itself. */
export interface InboundKit {
  /** The JSON body (400 in the route's format when it is not a JSON object). */
  readJson(): Promise<{ body: Record<string, unknown>; raw: Buffer }>;
  /** The client's address (TRUST_PROXY applied). */
  ip: string;
}

/**
 * A non-chat endpoint a client format serves through OpenAI's (Gemini `embedContent` →
 * `/v1/embeddings`) when the channel does not speak the client's format.
 */
export interface EndpointConversion {
  /** Client body → OpenAI body (model set by the relay). Throws RelayError for what OpenAI cannot carry. */
  toOpenAI(body: Record<string, unknown>): Record<string, unknown>;
  /** OpenAI answer → client body (`request` is the client's body). */
  fromOpenAI(body: unknown, request: Record<string, unknown>): unknown;
}

export interface StreamWriterOptions {
  /** OpenAI Chat: the client asked for `stream_options.include_usage`. */
  includeUsage?: boolean;
  /** What the client sent (formats that echo request fields or name tools by kind). */
  clientBody?: Record<string, unknown>;
}

/** One per client-facing format. */
export interface InboundFormat {
  readonly name: WireFormat;
  /** Client body (+ model from the URL for Gemini) → canonical request. Throws BadRequestError. */
  toChat(body: unknown, modelFromPath?: string): ChatRequest;
  /** The model named by a client body (+ path) without a full conversion (passthrough). */
  modelOf?(body: unknown, modelFromPath?: string): string | undefined;
  /**
   * Why this body can only be passed through to an upstream speaking this format (state the
   * upstream keeps, such as a Responses `previous_response_id`); undefined when it converts.
   */
  nativeOnly?(body: unknown): string | undefined;
  /**
   * Where this body names files stored at OpenAI (`file_id`): only upstreams speaking one of
   * OpenAI's protocols (Chat Completions, Responses) can read them; undefined when none.
   */
  openaiFiles?(body: unknown): string | undefined;
  /**
   * Canonical response → the client's answer body as JSON text (`clientBody`: what the client
   * sent, for echoed fields). Text rather than an object: formats whose answers have a fixed shape
   * write it by template (lib/json.ts), faster than JSON.stringify.
   */
  answerJson(res: ChatResponse, requestedModel: string, clientBody?: Record<string, unknown>): string;
  /**
   * Canonical chunks → SSE text in the client's format. `fail`, when present, ends a converted
   * stream that broke (instead of `streamError`), so the error can belong to the response it ends.
   */
  streamWriter(
    requestedModel: string,
    opts?: StreamWriterOptions,
  ): { chunk(c: ChatChunk): string; end(usage: Usage | undefined): string; fail?(status: number, message: string, code: string): string };
  /** An error in the client's format. */
  error(status: number, message: string, code: string): unknown;
  /** An error event ending a stream (SSE text); default `data: <error(...)>\n\n`. */
  streamError?(status: number, message: string, code: string): string;
  /** Non-chat endpoints this format converts to OpenAI's for channels of another format. */
  convertEndpoint?(endpoint: Endpoint): EndpointConversion | undefined;
}
