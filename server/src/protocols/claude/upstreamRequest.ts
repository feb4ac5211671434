/**
 * Canonical request → Claude Messages body (upstream side): messages, system, thinking, tools,
 * the per-model options of `claude.*`.
 */
import type { AdaptorContext, ChatMessage, ChatRequest, ContentPart, ReasoningDetail } from '../../relay/types';
import { contentText, getHints, isRecord, newId, parseArgs, parseDataUrl, parseJsonOption } from '../shared';
import { hasOwn, own } from '../../lib/own';

export const FALLBACK_MAX_TOKENS = 8192;

// ---------------------------------------------------------------------------------------------
// Option helpers

/** Per-model lookup in a JSON option map: exact model, then `default`. */
function modelSetting(ctx: AdaptorContext, key: string, model: string): unknown {
  const map = parseJsonOption(ctx.option(key));
  if (!isRecord(map)) return undefined;
  if (hasOwn(map, model)) return map[model];
  return own(map, 'default');
}

export function optionBool(ctx: AdaptorContext, key: string): boolean {
  return ctx.option(key) === 'true';
}

export function optionNum(ctx: AdaptorContext, key: string, dflt: number): number {
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
export function extraHeaders(ctx: AdaptorContext, models: string[]): Record<string, string> {
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
