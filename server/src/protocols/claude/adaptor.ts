/**
 * Claude (Anthropic Messages API) upstream adaptor: channel type 14.
 *
 * canonical (OpenAI chat) request → `POST {base_url}/v1/messages`, and the Messages response /
 * SSE event stream back to canonical. Decisions where Anthropic and OpenAI differ are listed in
 * docs/formats.md; the important ones:
 * - every system/developer message goes to the top-level `system` (text blocks, in order);
 * - consecutive messages of the same Claude role are merged (tool results become `tool_result`
 *   blocks of one user turn, as the API requires);
 * - image URLs are sent as `{source:{type:'url'}}` (never fetched by the gateway), data URLs as base64;
 * - usage: `prompt_tokens = input_tokens + cache_read_input_tokens + cache_creation_input_tokens`
 *   (new-api's convention, and OpenAI's, where `prompt_tokens` includes cached tokens), with
 *   `prompt_tokens_details.cached_tokens` / `cache_creation_tokens` carrying the cache parts;
 * - thinking keeps its signature both ways as `reasoning_details` (`anthropic-claude-v1`);
 * - the same-format passthrough forwards the client's body and beta/version headers, rewriting
 *   only what the upstream model would refuse (system turns, unsigned thinking).
 */
import type { AdaptorContext, ProviderAdaptor, UpstreamRequest } from '../../relay/types';
import { typesServedBy } from '../../channels/catalogue';
import { isRecord, tolerantObserver, upstreamErrorMessage } from '../shared';
import { memoByString } from '../../lib/memo';
import { optionBool, optionNum, extraHeaders, claudeMaxTokens, toClaudeRequest } from './upstreamRequest';
import { type ClaudeUsage, claudeUsageToCanonical, fromClaudeResponse, ClaudeStreamTranslator } from './upstreamAnswer';

export const CLAUDE_API_VERSION = '2023-06-01';
const DEFAULT_BASE = 'https://api.anthropic.com';

const trimSlashes = memoByString((url) => url.replace(/\/+$/, ''));

function claudeUpstream(ctx: AdaptorContext, body: Record<string, unknown>, headers: Record<string, string>, path = '/v1/messages'): UpstreamRequest {
  // Built field by field (no spreads): the same fields in the same order as
  // `{content-type, accept?, anthropic-version, ...headers, x-api-key}`.
  const h: Record<string, string> = { 'content-type': 'application/json' };
  if (ctx.stream) h.accept = 'text/event-stream';
  h['anthropic-version'] = CLAUDE_API_VERSION;
  for (const k in headers) h[k] = headers[k]!;
  h['x-api-key'] = ctx.channel.key;
  return { url: `${trimSlashes(ctx.channel.baseUrl || DEFAULT_BASE)}${path}`, method: 'POST', headers: h, body: JSON.stringify(body) };
}

/** Comma-separated header values, each once, in order. */
function mergeList(...values: Array<string | undefined>): string {
  const seen = new Set<string>();
  for (const v of values) for (const x of (v ?? '').split(',')) if (x.trim()) seen.add(x.trim());
  return [...seen].join(',');
}

/** The client's `anthropic-beta` betas (header, comma-separated), as a list. */
export function clientBetas(ctx: AdaptorContext): string[] {
  const v = mergeList(ctx.clientHeader?.('anthropic-beta'));
  return v ? v.split(',') : [];
}

/**
 * Headers of a passthrough: the model's `claude.model_headers_settings`, plus the client's
 * `anthropic-beta` (merged with the option's betas) and `anthropic-version` (the channel's version
 * is only the default when the client sent none).
 */
function passthroughHeaders(ctx: AdaptorContext, models: string[]): Record<string, string> {
  const headers = extraHeaders(ctx, models);
  const betas = mergeList(headers['anthropic-beta'], ctx.clientHeader?.('anthropic-beta'));
  if (betas) headers['anthropic-beta'] = betas;
  const version = ctx.clientHeader?.('anthropic-version')?.trim();
  if (version) headers['anthropic-version'] = version;
  return headers;
}

/**
 * Whether a model takes `role: "system"` turns inside `messages` (Anthropic's mid-conversation
 * system messages, which Claude Code sends): Claude Opus 4.8 and later Opus models, and Fable.
 * Earlier models, Bedrock and Vertex answer 400, and so would other upstreams speaking the Claude
 * format; unknown names are treated as not taking them, since hoisting is accepted everywhere.
 */
export function acceptsSystemTurns(model: string): boolean {
  const m = model.toLowerCase();
  if (/claude-fable/.test(m)) return true;
  const opus = /claude-opus-(\d+)(?:-(\d{1,2})(?!\d))?/.exec(m);
  if (!opus) return false;
  const major = Number(opus[1]);
  const minor = Number(opus[2] ?? 0);
  return major > 4 || (major === 4 && minor >= 8);
}

function textBlocks(content: unknown): Array<Record<string, unknown>> {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.filter((b): b is Record<string, unknown> => isRecord(b) && b.type === 'text' && typeof b.text === 'string');
}

/**
 * Where Claude takes a system turn: right after a user turn (or an assistant turn ending in a
 * server tool call), and either last or followed by an assistant turn.
 */
function systemTurnFits(prev: unknown, next: unknown): boolean {
  if (!isRecord(prev)) return false;
  const lastBlock = Array.isArray(prev.content) ? prev.content[prev.content.length - 1] : undefined;
  const afterUser = prev.role === 'user' || (prev.role === 'assistant' && isRecord(lastBlock) && lastBlock.type === 'server_tool_use');
  return afterUser && (next === undefined || (isRecord(next) && next.role === 'assistant'));
}

/**
 * The passthrough's only rewrites of `messages`, for things the upstream model would refuse:
 * - `role: "system"` turns move (text blocks with their `cache_control`) to the end of the
 *   top-level `system`, in order: all of them for a model that takes none, and on one that does,
 *   those where Claude refuses them (first, not after a user turn, not before an assistant turn);
 *   consecutive ones it takes are merged into one turn (Claude refuses two in a row);
 * - thinking blocks with an empty signature are dropped from assistant turns: the gateway wrote
 *   them when converting another family's reasoning (a model switch mid-conversation), and
 *   Claude rejects a thinking block it did not sign.
 * Returns the body itself when it has neither.
 */
export function adjustClaudeMessages(body: Record<string, unknown>, keepSystemTurns: boolean): Record<string, unknown> {
  if (!Array.isArray(body.messages)) return body;
  const isSystem = (m: unknown) => isRecord(m) && m.role === 'system';
  const unsigned = (b: unknown) => isRecord(b) && b.type === 'thinking' && !b.signature;
  const hasUnsigned = (m: unknown) => isRecord(m) && m.role === 'assistant' && Array.isArray(m.content) && m.content.some(unsigned);
  const original = body.messages as unknown[];
  if (!original.some(isSystem) && !original.some(hasUnsigned)) return body;
  const messages: unknown[] = [];
  for (const m of original) {
    if (!hasUnsigned(m)) messages.push(m);
    else {
      const content = ((m as { content: unknown[] }).content ?? []).filter((b) => !unsigned(b));
      if (content.length) messages.push({ ...(m as Record<string, unknown>), content });
    }
  }
  const hoisted: Array<Record<string, unknown>> = [];
  const kept: unknown[] = [];
  for (let i = 0; i < messages.length;) {
    if (!isSystem(messages[i])) {
      kept.push(messages[i++]);
      continue;
    }
    let j = i;
    while (j < messages.length && isSystem(messages[j])) j++;
    const run = messages.slice(i, j) as Array<Record<string, unknown>>;
    if (keepSystemTurns && systemTurnFits(messages[i - 1], messages[j])) {
      kept.push(run.length === 1 ? run[0] : { role: 'system', content: run.flatMap((m) => textBlocks(m.content)) });
    } else for (const m of run) hoisted.push(...textBlocks(m.content));
    i = j;
  }
  const out: Record<string, unknown> = { ...body, messages: kept };
  if (hoisted.length) out.system = [...textBlocks(body.system), ...hoisted];
  return out;
}

export interface ClaudeRawOptions {
  /** Whether this upstream takes system turns for the model (Anthropic: by model; Bedrock: never). */
  systemTurns?: (model: string) => boolean;
}

/**
 * Same-format passthrough (Claude client → Claude channel): the client's body goes as is, unknown
 * fields included, with the mapped model, a `max_tokens` default when missing, the `-thinking`
 * adapter applied, and `adjustClaudeMessages`.
 */
export function claudeRawBody(
  body: Record<string, unknown>,
  ctx: AdaptorContext,
  opts: ClaudeRawOptions = {},
): { body: Record<string, unknown>; model: string } {
  let model = ctx.upstreamModel;
  const adapter = optionBool(ctx, 'claude.thinking_adapter_enabled') && model.endsWith('-thinking');
  if (adapter) model = model.slice(0, -'-thinking'.length);
  const out: Record<string, unknown> = { ...adjustClaudeMessages(body, (opts.systemTurns ?? acceptsSystemTurns)(model)), model };
  if (typeof out.max_tokens !== 'number') out.max_tokens = claudeMaxTokens(ctx, model);
  if (adapter && !isRecord(out.thinking)) {
    const pct = optionNum(ctx, 'claude.thinking_adapter_budget_tokens_percentage', 0.8);
    const budget = Math.max(1024, Math.floor((out.max_tokens as number) * pct));
    if ((out.max_tokens as number) <= budget) out.max_tokens = budget + 1024;
    out.thinking = { type: 'enabled', budget_tokens: budget };
    out.temperature = 1;
    delete out.top_p;
    delete out.top_k;
  }
  if (ctx.stream) out.stream = true;
  else delete out.stream;
  return { body: out, model };
}

/**
 * `POST /v1/messages/count_tokens` on a Claude channel for a Claude client's body: the same
 * passthrough rules as a message (model mapped, message adjustments, client's beta and version
 * headers), without the message-only defaults (max_tokens, stream).
 */
export function claudeCountTokensRequest(body: Record<string, unknown>, ctx: AdaptorContext): UpstreamRequest {
  let model = ctx.upstreamModel;
  if (optionBool(ctx, 'claude.thinking_adapter_enabled') && model.endsWith('-thinking')) model = model.slice(0, -'-thinking'.length);
  const out = { ...adjustClaudeMessages(body, acceptsSystemTurns(model)), model };
  return claudeUpstream({ ...ctx, stream: false }, out, passthroughHeaders(ctx, [ctx.upstreamModel, model]), '/v1/messages/count_tokens');
}

/** What every adaptor answering in Claude Messages format (Anthropic, Bedrock) does with the answer. */
export type ClaudeResponseSide = Pick<ProviderAdaptor, 'format' | 'usageFromBody' | 'chatResponse' | 'chatStream' | 'observer' | 'errorMessage'>;

/** The response side of a Claude-format adaptor (Anthropic and Bedrock share it). */
export function claudeResponseSide(): ClaudeResponseSide {
  return {
    format: 'claude',
    usageFromBody(body) {
      return isRecord(body) && isRecord(body.usage) ? claudeUsageToCanonical(body.usage as ClaudeUsage) : undefined;
    },
    chatResponse(body, ctx) {
      return fromClaudeResponse(body, ctx.upstreamModel);
    },
    chatStream(ctx) {
      return new ClaudeStreamTranslator(ctx.upstreamModel);
    },
    observer(ctx) {
      return tolerantObserver(new ClaudeStreamTranslator(ctx.upstreamModel));
    },
    errorMessage: upstreamErrorMessage,
  };
}

export const claudeAdaptor: ProviderAdaptor = {
  name: 'claude',
  channelTypes: typesServedBy('claude'),
  ...claudeResponseSide(),
  chatRequest(req, ctx) {
    const { body, headers } = toClaudeRequest(req, ctx);
    return claudeUpstream(ctx, body, headers);
  },
  rawRequest(body, ctx) {
    const { body: out, model } = claudeRawBody(body ?? {}, ctx);
    return claudeUpstream(ctx, out, passthroughHeaders(ctx, [ctx.upstreamModel, model]));
  },
  modelsRequest(channel) {
    const base = (channel.baseUrl || DEFAULT_BASE).replace(/\/+$/, '');
    return { url: `${base}/v1/models?limit=1000`, method: 'GET', headers: { 'x-api-key': channel.key, 'anthropic-version': CLAUDE_API_VERSION } };
  },
  parseModels(body) {
    const data = isRecord(body) && Array.isArray(body.data) ? body.data : [];
    return data.map((m) => (isRecord(m) && typeof m.id === 'string' ? m.id : '')).filter(Boolean);
  },
};
