import type { Tiktoken } from 'js-tiktoken/lite';
import type { ChatMessage } from './types';
import { contentText } from './adaptors/shared';

/**
 * Token counting with js-tiktoken, used only when an upstream reports no usage. Encoders load
 * lazily on first use and are shared by the process (they are immutable tables).
 */
const encoders = new Map<string, Tiktoken>();

function encoderFor(model: string): Tiktoken {
  const name = /gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|(^|\/)o[134]|chatgpt/.test(model) ? 'o200k_base' : 'cl100k_base';
  let enc = encoders.get(name);
  if (!enc) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the ranks are megabytes: loaded on first use, one encoding at a time
    const { Tiktoken: T } = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
    const ranks = name === 'o200k_base' ? require('js-tiktoken/ranks/o200k_base') : require('js-tiktoken/ranks/cl100k_base');
    enc = new T((ranks as { default?: unknown }).default ?? ranks);
    encoders.set(name, enc);
  }
  return enc;
}

/**
 * The encoder's byte-pair merge is quadratic in the length of one piece (a word, a run of
 * punctuation or of spaces): a 4 000-letter word takes seconds, and the text is the client's. So
 * a run of 16 or more characters of one such class counts by its length, one token per 4
 * characters (what such runs come to: identifiers, base64, repeated characters), and only the
 * text between runs is encoded. One count (a call's prompt, `TokenBudget`) encodes at most
 * 16 000 characters, each call of the encoder counting as 32 or more; a text's rest counts at the
 * rate its encoded part came to (within ≈ 6 % on this repository's long docs). Text under that
 * size counts as the encoder counts it, but for its rare words of 16 letters or more.
 */
const LONG_RUN = /[\p{L}\p{M}]{16,}|[^\s\p{L}\p{M}\p{N}]{16,}|\s{16,}/gu;
const BUDGET_CHARS = 16_000;
const ENCODE_CALL_CHARS = 32;
const byLength = (chars: number) => Math.ceil(chars / 4);

/** Characters one count may still encode (shared by the texts of one call's prompt). */
export interface TokenBudget {
  chars: number;
}
const tokenBudget = (): TokenBudget => ({ chars: BUDGET_CHARS });

export function countTextTokens(text: string, model: string, budget: TokenBudget = tokenBudget()): number {
  if (!text) return 0;
  try {
    const enc = encoderFor(model);
    let runs = 0; // tokens of the long runs, by length
    let encodedTokens = 0;
    let encoded = 0; // characters encoded
    let left = 0; // characters past the budget
    const encode = (part: string) => {
      if (!part) return;
      const take = Math.max(0, Math.min(part.length, budget.chars));
      if (take > 0) {
        encodedTokens += enc.encode(take === part.length ? part : part.slice(0, take), 'all').length;
        encoded += take;
        // An encoder call has a cost of its own: it is charged at least ENCODE_CALL_CHARS.
        budget.chars -= Math.max(take, ENCODE_CALL_CHARS);
      }
      left += part.length - take;
    };
    let last = 0;
    for (const run of text.matchAll(LONG_RUN)) {
      encode(text.slice(last, run.index));
      runs += byLength(run[0].length);
      last = run.index + run[0].length;
    }
    encode(text.slice(last));
    const rest = left === 0 ? 0 : encoded ? Math.ceil((left * encodedTokens) / encoded) : byLength(left);
    return encodedTokens + runs + rest;
  } catch {
    return byLength(text.length);
  }
}

/** Tokens of a chat prompt, OpenAI's accounting: 3 per message, 1 per name, 3 for the reply primer. */
export function countChatPromptTokens(messages: unknown, model: string, budget: TokenBudget = tokenBudget()): number {
  if (!Array.isArray(messages)) return 0;
  let n = 3;
  for (const m of messages as ChatMessage[]) {
    n += 3;
    if (!m || typeof m !== 'object') continue;
    n += countTextTokens(contentText(m.content), model, budget);
    n += imageCount(m.content) * 85;
    if (m.name) n += 1 + countTextTokens(String(m.name), model, budget);
    if (Array.isArray(m.tool_calls))
      for (const t of m.tool_calls) n += countTextTokens(`${t.function?.name ?? ''}${t.function?.arguments ?? ''}`, model, budget);
  }
  return n;
}

/** A prompt counted locally (count_tokens without a native channel): its messages and its tool declarations, in one budget. */
export function countPromptWithTools(messages: unknown, tools: unknown, model: string): number {
  const budget = tokenBudget();
  const n = countChatPromptTokens(messages, model, budget);
  return Array.isArray(tools) && tools.length ? n + countTextTokens(JSON.stringify(tools), model, budget) : n;
}

function imageCount(content: unknown): number {
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const p of content as Array<{ type?: string }>) if (p && (p.type === 'image_url' || p.type === 'input_audio')) n++;
  return n;
}

/** Text of an `input`/`prompt` field (string, list of strings; token arrays count their length). */
export function countInputTokens(input: unknown, model: string, budget: TokenBudget = tokenBudget()): number {
  if (typeof input === 'string') return countTextTokens(input, model, budget);
  if (Array.isArray(input)) {
    let n = 0;
    for (const x of input) {
      if (typeof x === 'string') n += countTextTokens(x, model, budget);
      else if (typeof x === 'number') n += 1;
      else if (Array.isArray(x)) n += x.length;
      else if (x && typeof x === 'object') n += countTextTokens(contentText([x]), model, budget);
    }
    return n;
  }
  return 0;
}

/**
 * A cheap upper-ish estimate of prompt tokens for the pre-consume reservation (no tokenizer on
 * the hot path): UTF-8 bytes / 2 of the text, 4 per message, 1000 per image/audio part.
 */
export function estimateTokens(body: Record<string, unknown> | undefined): number {
  if (!body) return 0;
  let bytes = 0;
  let extra = 0;
  const visit = (v: unknown, depth = 0) => {
    if (typeof v === 'string') bytes += Buffer.byteLength(v);
    else if (Array.isArray(v)) for (const x of v) visit(x, depth);
    else if (v && typeof v === 'object' && depth < 3) {
      const o = v as Record<string, unknown>;
      if (typeof o.type === 'string' && /image|audio|file/.test(o.type)) extra += 1000;
      else {
        visit(o.text, depth + 1);
        visit(o.content, depth + 1);
      }
    }
  };
  if (Array.isArray(body.messages)) {
    for (const m of body.messages as ChatMessage[]) {
      extra += 4;
      if (!m) continue;
      if (typeof m.content === 'string') bytes += Buffer.byteLength(m.content);
      else if (Array.isArray(m.content)) {
        for (const p of m.content as Array<{ type?: string; text?: unknown }>) {
          if (p?.type === 'text' && typeof p.text === 'string') bytes += Buffer.byteLength(p.text);
          else extra += 1000;
        }
      }
    }
  }
  visit(body.prompt);
  visit(body.input);
  if (typeof body.system === 'string') bytes += Buffer.byteLength(body.system);
  if (typeof body.instructions === 'string') bytes += Buffer.byteLength(body.instructions);
  return Math.ceil(bytes / 2) + extra;
}
