import type { RelayHttp } from '../httpContext';
import type { AppContext } from '../../context';
import type { Principal } from '../auth';
import type { ChannelEntry } from '../../channels/routeTable';
import { scrubSecrets } from '../errors';
import { contentText } from '../../protocols/shared';
import { countChatPromptTokens, countInputTokens } from '../tokenizer';
import type { ChatRequest, Endpoint, InboundFormat, WireFormat } from '../types';
import type { RelayTimer } from '../../metrics';

/** One client call being relayed. */
export interface RelayCall {
  app: AppContext;
  ctx: RelayHttp;
  endpoint: Endpoint;
  inbound: InboundFormat;
  principal: Principal;
  /** The model the client asked for (billing, logs, routing). */
  model: string;
  stream: boolean;
  /** Parsed JSON body (undefined for multipart). */
  body?: Record<string, unknown>;
  /** The JSON body bytes as received (forwarded untouched when nothing changes). */
  rawJson?: Buffer;
  /** Multipart body (audio), forwarded as is. */
  raw?: { body: Buffer; contentType: string };
  modelFromPath?: string;
  /** OpenAI: the client asked for `stream_options.include_usage`. */
  includeUsage: boolean;
  ip: string;
  timer: RelayTimer;
  /** Canonical request, built lazily when a conversion is needed. */
  chat?: ChatRequest;
  /** The protocol the answering channel was spoken to in, and whether the body went as the client sent it (set per attempt). */
  upstreamFormat?: WireFormat;
  passthrough?: boolean;
}

/** Relay answers are for any origin (browser chat UIs call the relay with bearer keys): in every head the relay writes itself. */
/** For promises whose failure the call does not wait for (logged or retried elsewhere). */
export const ignore = (): undefined => undefined;

export const RELAY_CORS = ['access-control-allow-origin', '*'] as const;

/** The canonical request of the call, or undefined when the body cannot be converted. */
export function safeChat(call: RelayCall): ChatRequest | undefined {
  try {
    return (call.chat ??= call.inbound.toChat(call.body, call.modelFromPath));
  } catch {
    return undefined;
  }
}

/** The prompt's texts, for the sensitive-words check. */
export function promptTexts(call: RelayCall): string[] {
  const out: string[] = [];
  if (call.inbound.name !== 'openai') {
    // Claude `system`, Gemini `contents`/`systemInstruction`, Responses `instructions`/`input` are all in the canonical messages.
    const chat = safeChat(call);
    if (chat) {
      for (const m of chat.messages) out.push(contentText(m?.content));
      return out;
    }
  }
  const body = endpointBody(call) ?? call.body ?? {};
  if (Array.isArray(body.messages)) for (const m of body.messages as Array<{ content?: unknown }>) out.push(contentText(m?.content));
  for (const k of ['prompt', 'input']) {
    const v = body[k];
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) for (const x of v) if (typeof x === 'string') out.push(x);
  }
  return out;
}

/** A non-OpenAI client's non-chat body in OpenAI's shape (Gemini embeddings → `input`), for counting and checks. */
function endpointBody(call: RelayCall): Record<string, unknown> | undefined {
  if (call.inbound.name === 'openai' || call.endpoint === 'chat' || !call.body) return undefined;
  try {
    return call.inbound.convertEndpoint?.(call.endpoint)?.toOpenAI(call.body);
  } catch {
    return undefined;
  }
}

/** The prompt's size by the tokenizer (channels' max_input_tokens; billing when the upstream reports no usage). */
export function promptFallback(call: RelayCall): number {
  const b = endpointBody(call) ?? call.body ?? {};
  switch (call.endpoint) {
    case 'chat': {
      const messages = call.chat?.messages ?? (call.inbound.name === 'openai' ? b.messages : safeChat(call)?.messages);
      return countChatPromptTokens(messages, call.model);
    }
    case 'responses': {
      const messages = safeChat(call)?.messages;
      return messages ? countChatPromptTokens(messages, call.model) : countInputTokens(b.input, call.model);
    }
    case 'completions':
      return countInputTokens(b.prompt, call.model);
    case 'embeddings':
    case 'moderations':
      return countInputTokens(b.input, call.model);
    case 'rerank':
      return countInputTokens([b.query, ...(Array.isArray(b.documents) ? b.documents : [])], call.model);
    default:
      return 0;
  }
}

/** Upstream messages go to clients: never echo the channel's keys (the one used is one of them), or anything shaped like a secret. */
export function scrubKey(message: string, ch: ChannelEntry | undefined): string {
  return scrubSecrets(message, ch?.keys ?? []);
}

export function isClientGone(ctx: RelayHttp): boolean {
  return ctx.res.destroyed && !ctx.res.writableFinished;
}

export const UNCONVERTED_HEADER = 'x-gateway-unconverted';

/** A tool's name as the note shows it. The names are the client's text, and the note goes into a header (ASCII only) and the log. */
const NOTE_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;
const NOTE_MAX_NAMES = 8;

/**
 * What a converted call left out because only the client's own provider has it (built-in tools),
 * as the `X-Gateway-Unconverted` header value; undefined when nothing was, or the body went as sent.
 * A name that is not a short identifier shows as `unnamed`, and at most 8 names are listed.
 */
export function unconvertedNote(call: RelayCall): string | undefined {
  const list = call.passthrough === false && call.upstreamFormat !== call.inbound.name ? call.chat?.unconverted : undefined;
  if (!list?.length) return undefined;
  const names = [...new Set(list.map((n) => (NOTE_NAME.test(n) ? n : 'unnamed')))];
  return names.length > NOTE_MAX_NAMES ? `${names.slice(0, NOTE_MAX_NAMES).join(', ')}, ... (${names.length} in all)` : names.join(', ');
}
