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
import type {
  AdaptorContext,
  ChatChunk,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ContentPart,
  FinishReason,
  ProviderAdaptor,
  ReasoningDetail,
  SSEEvent,
  StreamTranslator,
  ToolCall,
  UpstreamRequest,
  Usage,
} from '../types';
import { UpstreamError } from '../errors';
import { typesServedBy } from '../../channels/catalogue';
import {
  contentText,
  getHints,
  isRecord,
  newId,
  parseArgs,
  parseDataUrl,
  parseJsonOption,
  streamError,
  tolerantObserver,
  upstreamErrorMessage,
} from './shared';
import { memoByString } from '../../lib/memo';
import { hasOwn, own } from '../../lib/own';

export const CLAUDE_API_VERSION = '2023-06-01';
const DEFAULT_BASE = 'https://api.anthropic.com';
const FALLBACK_MAX_TOKENS = 8192;

// ---------------------------------------------------------------------------------------------
// Option helpers

/** Per-model lookup in a JSON option map: exact model, then `default`. */
function modelSetting(ctx: AdaptorContext, key: string, model: string): unknown {
  const map = parseJsonOption(ctx.option(key));
  if (!isRecord(map)) return undefined;
  if (hasOwn(map, model)) return map[model];
  return own(map, 'default');
}

function optionBool(ctx: AdaptorContext, key: string): boolean {
  return ctx.option(key) === 'true';
}

function optionNum(ctx: AdaptorContext, key: string, dflt: number): number {
  const n = Number(ctx.option(key));
  return Number.isFinite(n) && n > 0 ? n : dflt;
}

// ---------------------------------------------------------------------------------------------
// Request

type ClaudeBlock = Record<string, unknown> & { type: string };
interface ClaudeMessage {
  role: 'user' | 'assistant';
  content: ClaudeBlock[];
}

function imageBlock(url: string): ClaudeBlock {
  const data = parseDataUrl(url);
  if (data) {
    if (data.mimeType === 'application/pdf') {
      return { type: 'document', source: { type: 'base64', media_type: data.mimeType, data: data.data } };
    }
    return { type: 'image', source: { type: 'base64', media_type: data.mimeType, data: data.data } };
  }
  return { type: 'image', source: { type: 'url', url } };
}

function partsToBlocks(content: ChatMessage['content']): ClaudeBlock[] {
  if (content == null) return [];
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  const out: ClaudeBlock[] = [];
  for (const p of content as ContentPart[]) {
    if (p.type === 'text') {
      const text = (p as { text?: unknown }).text;
      if (typeof text === 'string' && text) out.push({ type: 'text', text });
    } else if (p.type === 'image_url') {
      const iu = (p as { image_url?: { url?: unknown } | string }).image_url;
      const url = typeof iu === 'string' ? iu : iu?.url;
      if (typeof url === 'string' && url) out.push(imageBlock(url));
    } else if (p.type === 'file') {
      const f = (p as { file?: { file_data?: unknown } }).file;
      const d = typeof f?.file_data === 'string' ? parseDataUrl(f.file_data) : undefined;
      if (d?.mimeType === 'text/plain') {
        // Claude takes plain text documents as text sources, not base64
        out.push({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(d.data, 'base64').toString('utf8') } });
      } else if (d) out.push({ type: 'document', source: { type: 'base64', media_type: d.mimeType, data: d.data } });
    }
  }
  return out;
}

function toolResultContent(content: ChatMessage['content']): string | ClaudeBlock[] {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  const blocks = partsToBlocks(content);
  return blocks.length ? blocks : '';
}

/** Whose signatures Claude accepts back. */
export const CLAUDE_REASONING_FORMAT = 'anthropic-claude-v1' as const;

/** Claude's own reasoning of an assistant turn → thinking / redacted_thinking blocks; other families' is dropped (Claude would reject it). */
export function thinkingBlocksOf(details: ReasoningDetail[] | undefined): ClaudeBlock[] {
  const out: ClaudeBlock[] = [];
  for (const d of details ?? []) {
    if (d.format !== CLAUDE_REASONING_FORMAT) continue;
    if (d.type === 'reasoning.text' && d.signature) out.push({ type: 'thinking', thinking: d.text ?? '', signature: d.signature });
    else if (d.type === 'reasoning.encrypted' && d.data) out.push({ type: 'redacted_thinking', data: d.data });
  }
  return out;
}

/** Canonical messages → Claude `system` + `messages`. */
export function toClaudeMessages(messages: ChatMessage[]): { system: ClaudeBlock[]; messages: ClaudeMessage[] } {
  const system: ClaudeBlock[] = [];
  const out: ClaudeMessage[] = [];
  const push = (role: 'user' | 'assistant', blocks: ClaudeBlock[]) => {
    if (!blocks.length) return;
    const last = out[out.length - 1];
    if (last && last.role === role) {
      // tool results must come first in a user turn
      if (role === 'user' && blocks.some((b) => b.type === 'tool_result')) {
        const results = last.content.filter((b) => b.type === 'tool_result');
        const rest = last.content.filter((b) => b.type !== 'tool_result');
        last.content = [...results, ...blocks.filter((b) => b.type === 'tool_result'), ...rest, ...blocks.filter((b) => b.type !== 'tool_result')];
      } else last.content.push(...blocks);
    } else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    switch (m.role) {
      case 'system':
      case 'developer': {
        const text = contentText(m.content);
        if (text) system.push({ type: 'text', text });
        break;
      }
      case 'user':
        push('user', partsToBlocks(m.content));
        break;
      case 'assistant': {
        // thinking first: Claude wants a turn's thinking before its text and tool calls
        const blocks = [...thinkingBlocksOf(m.reasoning_details), ...partsToBlocks(m.content).filter((b) => b.type === 'text')];
        for (const tc of m.tool_calls ?? []) {
          blocks.push({ type: 'tool_use', id: tc.id || newId('toolu_'), name: tc.function.name, input: parseArgs(tc.function.arguments) });
        }
        push('assistant', blocks);
        break;
      }
      case 'tool':
        push('user', [
          { type: 'tool_result', tool_use_id: m.tool_call_id ?? '', content: toolResultContent(m.content), ...(m.is_error ? { is_error: true } : {}) },
        ]);
        break;
      default:
        push('user', partsToBlocks(m.content));
    }
  }
  return { system, messages: out };
}

/** Output headers of `claude.model_headers_settings` for a model (values string or string[]). */
function extraHeaders(ctx: AdaptorContext, models: string[]): Record<string, string> {
  const map = parseJsonOption(ctx.option('claude.model_headers_settings'));
  if (!isRecord(map)) return {};
  const found = models.map((m) => own(map, m)).find((v) => isRecord(v));
  const out: Record<string, string> = {};
  if (!isRecord(found)) return out;
  for (const [k, v] of Object.entries(found)) {
    if (!/^[A-Za-z0-9-]+$/.test(k)) continue;
    const lower = k.toLowerCase();
    if (lower === 'x-api-key' || lower === 'authorization' || lower === 'host' || lower === 'content-length') continue;
    if (typeof v === 'string') out[lower] = v;
    else if (Array.isArray(v)) out[lower] = v.filter((x) => typeof x === 'string').join(',');
  }
  return out;
}

export function claudeMaxTokens(ctx: AdaptorContext, model: string): number {
  const v = modelSetting(ctx, 'claude.default_max_tokens', model);
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : FALLBACK_MAX_TOKENS;
}

/** Share of max_tokens given to thinking for a canonical reasoning_effort (no Claude client config). */
const EFFORT_SHARE: Record<string, number> = { minimal: 0.1, low: 0.2, medium: 0.5, high: 0.8, xhigh: 0.9 };

type ThinkingConfig = { type: string; budget_tokens?: number; display?: string };

/**
 * The thinking config for a canonical request, by precedence: a Claude client's own `thinking`
 * (native hint, sent as it came: adaptive, enabled, disabled …); an explicit `thinking_budget`
 * (0 = off); a Gemini client's thinkingBudget; the `-thinking` model suffix adapter; a
 * `reasoning_effort` as a share of max_tokens (`none` = off).
 */
function thinkingFor(req: ChatRequest, ctx: AdaptorContext, adapter: boolean, maxTokens: number): ThinkingConfig | undefined {
  const hints = getHints(req);
  if (hints.claudeThinking) return { ...hints.claudeThinking };
  if (typeof req.thinking_budget === 'number') return req.thinking_budget > 0 ? { type: 'enabled', budget_tokens: Math.floor(req.thinking_budget) } : undefined;
  const gBudget = hints.geminiThinkingConfig?.thinkingBudget;
  if (typeof gBudget === 'number' && gBudget > 0) return { type: 'enabled', budget_tokens: gBudget };
  if (adapter) {
    const pct = optionNum(ctx, 'claude.thinking_adapter_budget_tokens_percentage', 0.8);
    return { type: 'enabled', budget_tokens: Math.floor(maxTokens * pct) };
  }
  const share = typeof req.reasoning_effort === 'string' ? EFFORT_SHARE[req.reasoning_effort] : undefined;
  return share ? { type: 'enabled', budget_tokens: Math.floor(maxTokens * share) } : undefined;
}

/**
 * With thinking on, Claude wants the assistant turn whose tool calls are being answered to start
 * with its (signed) thinking. A conversation that reached that point without it (it came from
 * another family, or a client dropped it) cannot think on this turn.
 */
function toolLoopWithoutThinking(messages: ClaudeMessage[]): boolean {
  const last = messages[messages.length - 1];
  const prev = messages[messages.length - 2];
  if (!last || last.role !== 'user' || last.content[0]?.type !== 'tool_result') return false;
  if (!prev || prev.role !== 'assistant' || !prev.content.some((b) => b.type === 'tool_use')) return false;
  const first = prev.content[0]?.type;
  return first !== 'thinking' && first !== 'redacted_thinking';
}

/** Builds the Claude Messages body (pure; exported for tests). */
/** OpenAI's `response_format: json_schema` → Claude's `output_config.format` (JSON mode has no Claude equivalent). */
function claudeOutputFormat(rf: ChatRequest['response_format']): Record<string, unknown> | undefined {
  if (rf?.type !== 'json_schema' || !isRecord(rf.json_schema) || !isRecord(rf.json_schema.schema)) return undefined;
  return { type: 'json_schema', schema: rf.json_schema.schema };
}

export function toClaudeRequest(req: ChatRequest, ctx: AdaptorContext): { body: Record<string, unknown>; model: string; headers: Record<string, string> } {
  let model = ctx.upstreamModel;
  const originalModel = model;
  const adapter = optionBool(ctx, 'claude.thinking_adapter_enabled') && model.endsWith('-thinking');
  if (adapter) model = model.slice(0, -'-thinking'.length);
  let maxTokens = req.max_tokens ?? req.max_completion_tokens ?? claudeMaxTokens(ctx, model);
  const { system, messages } = toClaudeMessages(req.messages ?? []);
  let thinking = thinkingFor(req, ctx, adapter, maxTokens);
  if (thinking && thinking.type !== 'disabled' && toolLoopWithoutThinking(messages)) thinking = undefined;

  let tools: Array<Record<string, unknown>> | undefined;
  if (req.tools?.length) {
    tools = req.tools
      .filter((t) => t && t.function?.name)
      .map((t) => ({
        name: t.function.name,
        ...(t.function.description ? { description: t.function.description } : {}),
        input_schema: isRecord(t.function.parameters) && Object.keys(t.function.parameters).length ? t.function.parameters : { type: 'object', properties: {} },
      }));
  }
  let toolChoice: Record<string, unknown> | undefined;
  const tc = req.tool_choice;
  if (tc === 'auto') toolChoice = { type: 'auto' };
  else if (tc === 'required') toolChoice = { type: 'any' };
  else if (tc === 'none') toolChoice = { type: 'none' };
  else if (isRecord(tc) && isRecord(tc.function) && typeof tc.function.name === 'string') toolChoice = { type: 'tool', name: tc.function.name };
  if (req.parallel_tool_calls === false && tools) toolChoice = { ...(toolChoice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  // Claude cannot think when the tool is forced
  if (thinking && thinking.type !== 'disabled' && (toolChoice?.type === 'any' || toolChoice?.type === 'tool')) thinking = undefined;
  if (thinking?.type === 'enabled') {
    // Anthropic: budget ≥ 1024 and < max_tokens.
    const budget = Math.max(1024, thinking.budget_tokens ?? 1024);
    thinking = { ...thinking, budget_tokens: budget };
    if (maxTokens <= budget) maxTokens = budget + 1024;
  }

  const body: Record<string, unknown> = { model, max_tokens: maxTokens, messages };
  if (system.length) body.system = system;
  if (thinking) body.thinking = thinking;
  if (thinking && thinking.type !== 'disabled') {
    // with thinking Claude allows no temperature, top_p or top_k changes; extended thinking wants temperature 1
    if (thinking.type === 'enabled') body.temperature = 1;
  } else {
    if (req.temperature != null) body.temperature = Math.min(1, Math.max(0, req.temperature));
    // Claude from Opus 4.1 / Sonnet 4.5 on refuses both together (and Anthropic advises one for all):
    // temperature wins (Gemini CLI always sends temperature 0 with topP 1).
    else if (req.top_p != null) body.top_p = req.top_p;
    if (req.top_k != null) body.top_k = req.top_k;
  }
  // effort: only a Claude client's own (older models reject output_config). format: an OpenAI or
  // Gemini structured output's schema, as Claude's JSON outputs (a model without them says so).
  const effort = getHints(req).claudeEffort;
  const format = claudeOutputFormat(req.response_format);
  if (effort || format) body.output_config = { ...(effort && { effort }), ...(format && { format }) };
  if (req.stop != null) {
    const stops = (Array.isArray(req.stop) ? req.stop : [req.stop]).filter((s) => typeof s === 'string' && s.trim() !== '');
    if (stops.length) body.stop_sequences = stops;
  }
  if (ctx.stream) body.stream = true;
  if (tools) body.tools = tools;
  if (toolChoice && tools) body.tool_choice = toolChoice;
  if (typeof req.user === 'string' && req.user) body.metadata = { user_id: req.user };
  return { body, model, headers: extraHeaders(ctx, [originalModel, model]) };
}

// ---------------------------------------------------------------------------------------------
// Response

export interface ClaudeUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number | null } | null;
}

/** Claude usage → canonical (prompt includes both cache parts; see file header). */
export function claudeUsageToCanonical(u: ClaudeUsage): Usage {
  const input = Number(u.input_tokens ?? 0) || 0;
  const read = Number(u.cache_read_input_tokens ?? 0) || 0;
  const created = Number(u.cache_creation_input_tokens ?? 0) || 0;
  const output = Number(u.output_tokens ?? 0) || 0;
  const thinking = Number(u.output_tokens_details?.thinking_tokens ?? 0) || 0;
  const prompt = input + read + created;
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output };
  if (read || created) usage.prompt_tokens_details = { cached_tokens: read, cache_creation_tokens: created };
  if (thinking) usage.completion_tokens_details = { reasoning_tokens: thinking };
  return usage;
}

export function claudeStopToFinish(reason: unknown): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return reason == null ? null : 'stop';
  }
}

/** Claude Messages response body → canonical. Thinking keeps its signature (and redacted thinking its data) as reasoning_details. */
export function fromClaudeResponse(body: unknown, fallbackModel: string): ChatResponse {
  const b = isRecord(body) ? body : {};
  const blocks = Array.isArray(b.content) ? (b.content as Array<Record<string, unknown>>) : [];
  let text = '';
  let reasoning = '';
  const details: ReasoningDetail[] = [];
  const toolCalls: ToolCall[] = [];
  for (const blk of blocks) {
    if (!isRecord(blk)) continue;
    if (blk.type === 'text' && typeof blk.text === 'string') text += blk.text;
    else if (blk.type === 'thinking' && typeof blk.thinking === 'string') {
      reasoning += blk.thinking;
      if (typeof blk.signature === 'string' && blk.signature) {
        details.push({ type: 'reasoning.text', text: blk.thinking, signature: blk.signature, format: CLAUDE_REASONING_FORMAT });
      }
    } else if (blk.type === 'redacted_thinking' && typeof blk.data === 'string' && blk.data) {
      details.push({ type: 'reasoning.encrypted', data: blk.data, format: CLAUDE_REASONING_FORMAT });
    } else if (blk.type === 'tool_use' || blk.type === 'server_tool_use') {
      toolCalls.push({
        id: typeof blk.id === 'string' ? blk.id : newId('toolu_'),
        type: 'function',
        function: { name: String(blk.name ?? ''), arguments: JSON.stringify(blk.input ?? {}) },
      });
    }
  }
  const message: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: text || (toolCalls.length ? null : '') };
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (reasoning) message.reasoning_content = reasoning;
  if (details.length) message.reasoning_details = details;
  return {
    id: typeof b.id === 'string' ? b.id : newId('msg_'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof b.model === 'string' ? b.model : fallbackModel,
    choices: [{ index: 0, message, finish_reason: claudeStopToFinish(b.stop_reason) ?? 'stop' }],
    usage: claudeUsageToCanonical(isRecord(b.usage) ? (b.usage as ClaudeUsage) : {}),
  };
}

/**
 * Claude SSE events → canonical chunks. Emits a role chunk on message_start, content / reasoning
 * / tool-call deltas, a finish chunk on message_delta and, on message_stop, a usage chunk
 * (`choices: []`, like OpenAI's `include_usage` chunk).
 */
export class ClaudeStreamTranslator implements StreamTranslator {
  private id = newId('msg_');
  private model: string;
  private readonly created = Math.floor(Date.now() / 1000);
  private raw: ClaudeUsage = {};
  private seenUsage = false;
  private readonly toolIndexByBlock = new Map<number, number>();
  /** Tool blocks whose arguments are still empty: a call without input gets `{}` when its block stops (`""` is not JSON). */
  private readonly toolsWithoutArgs = new Set<number>();
  /** Open thinking blocks by index: their text so far and signature, given back as one reasoning detail when the block stops. */
  private readonly thinkingByBlock = new Map<number, { text: string; signature: string }>();
  private nextTool = 0;
  private usageSent = false;

  constructor(model: string) {
    this.model = model;
  }

  private chunk(delta: ChatChunk['choices'][number]['delta'], finish: FinishReason = null): ChatChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, finish_reason: finish }] };
  }

  private mergeUsage(u: unknown) {
    if (!isRecord(u)) return;
    this.seenUsage = true;
    for (const k of ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const) {
      if (typeof u[k] === 'number') this.raw[k] = u[k] as number;
    }
    if (isRecord(u.output_tokens_details) && typeof u.output_tokens_details.thinking_tokens === 'number') {
      this.raw.output_tokens_details = { thinking_tokens: u.output_tokens_details.thinking_tokens };
    }
  }

  private pending: UpstreamError | undefined;

  push(event: SSEEvent): ChatChunk[] {
    if (this.pending) throw this.pending;
    if (!event.data || event.data === '[DONE]') return [];
    let data: Record<string, unknown>;
    try {
      const parsed = JSON.parse(event.data);
      if (!isRecord(parsed)) return [];
      data = parsed;
    } catch {
      return [];
    }
    const type = typeof data.type === 'string' ? data.type : event.event;
    switch (type) {
      case 'message_start': {
        const msg = isRecord(data.message) ? data.message : {};
        if (typeof msg.id === 'string') this.id = msg.id;
        if (typeof msg.model === 'string') this.model = msg.model;
        this.mergeUsage(msg.usage);
        return [this.chunk({ role: 'assistant', content: '' })];
      }
      case 'content_block_start': {
        const idx = Number(data.index ?? 0);
        const blk = isRecord(data.content_block) ? data.content_block : {};
        if (blk.type === 'tool_use' || blk.type === 'server_tool_use') {
          const ti = this.nextTool++;
          this.toolIndexByBlock.set(idx, ti);
          const input = isRecord(blk.input) && Object.keys(blk.input).length ? JSON.stringify(blk.input) : '';
          if (!input) this.toolsWithoutArgs.add(idx);
          return [
            this.chunk({
              tool_calls: [
                { index: ti, id: String(blk.id ?? newId('toolu_')), type: 'function', function: { name: String(blk.name ?? ''), arguments: input } },
              ],
            }),
          ];
        }
        if (blk.type === 'text' && typeof blk.text === 'string' && blk.text) return [this.chunk({ content: blk.text })];
        if (blk.type === 'thinking') {
          const t = typeof blk.thinking === 'string' ? blk.thinking : '';
          this.thinkingByBlock.set(idx, { text: t, signature: typeof blk.signature === 'string' ? blk.signature : '' });
          return t ? [this.chunk({ reasoning_content: t })] : [];
        }
        if (blk.type === 'redacted_thinking' && typeof blk.data === 'string' && blk.data) {
          return [this.chunk({ reasoning_details: [{ type: 'reasoning.encrypted', data: blk.data, format: CLAUDE_REASONING_FORMAT }] })];
        }
        return [];
      }
      case 'content_block_delta': {
        const idx = Number(data.index ?? 0);
        const d = isRecord(data.delta) ? data.delta : {};
        if (d.type === 'text_delta' && typeof d.text === 'string') return [this.chunk({ content: d.text })];
        if (d.type === 'thinking_delta' && typeof d.thinking === 'string') {
          const th = this.thinkingByBlock.get(idx);
          if (th) th.text += d.thinking;
          return [this.chunk({ reasoning_content: d.thinking })];
        }
        if (d.type === 'signature_delta' && typeof d.signature === 'string') {
          const th = this.thinkingByBlock.get(idx);
          if (th) th.signature = d.signature;
          return [];
        }
        if (d.type === 'input_json_delta' && typeof d.partial_json === 'string') {
          const ti = this.toolIndexByBlock.get(idx);
          if (ti === undefined || d.partial_json === '') return [];
          this.toolsWithoutArgs.delete(idx);
          return [this.chunk({ tool_calls: [{ index: ti, function: { arguments: d.partial_json } }] })];
        }
        return [];
      }
      case 'message_delta': {
        this.mergeUsage(data.usage);
        const d = isRecord(data.delta) ? data.delta : {};
        const out = this.emptyArgs([...this.toolsWithoutArgs]);
        if (d.stop_reason != null) out.push(this.chunk({}, claudeStopToFinish(d.stop_reason)));
        return out;
      }
      case 'message_stop':
        return this.usageChunk();
      case 'error': {
        // thrown on the next push()/end(), so the chunks converted before it still reach the client
        const e = isRecord(data.error) ? data.error : {};
        this.pending = streamError(
          typeof e.message === 'string' ? e.message : 'upstream stream error',
          typeof e.type === 'string' ? e.type : 'api_error',
          event.data,
        );
        return [];
      }
      case 'content_block_stop': {
        const idx = Number(data.index ?? 0);
        if (this.toolsWithoutArgs.has(idx)) return this.emptyArgs([idx]);
        const th = this.thinkingByBlock.get(idx);
        if (!th) return [];
        this.thinkingByBlock.delete(idx);
        // the whole block (text already streamed as reasoning_content) with the signature Claude wants back
        if (!th.signature) return [];
        return [this.chunk({ reasoning_details: [{ type: 'reasoning.text', text: th.text, signature: th.signature, format: CLAUDE_REASONING_FORMAT }] })];
      }
      default:
        return []; // ping, unknown
    }
  }

  /** `{}` as the arguments of the tool blocks given, which streamed none. */
  private emptyArgs(blocks: number[]): ChatChunk[] {
    const out: ChatChunk[] = [];
    for (const idx of blocks) {
      this.toolsWithoutArgs.delete(idx);
      const ti = this.toolIndexByBlock.get(idx);
      if (ti !== undefined) out.push(this.chunk({ tool_calls: [{ index: ti, function: { arguments: '{}' } }] }));
    }
    return out;
  }

  private usageChunk(): ChatChunk[] {
    if (this.usageSent || !this.seenUsage) return [];
    this.usageSent = true;
    return [{ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: claudeUsageToCanonical(this.raw) }];
  }

  end(): ChatChunk[] {
    if (this.pending) throw this.pending;
    return this.usageChunk();
  }

  usage(): Usage | undefined {
    return this.seenUsage ? claudeUsageToCanonical(this.raw) : undefined;
  }
}

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
