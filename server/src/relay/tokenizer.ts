import type { ChatMessage } from './types';
import { contentText } from '../protocols/shared';

/**
 * Token counting, used when an upstream reports no usage, for count_tokens without a native
 * channel and for channels' max_input_tokens. It counts as tiktoken encodes (the rank files of
 * js-tiktoken, cl100k_base or o200k_base), with a merge of our own: js-tiktoken's re-joins every
 * pair of a word into a string key on each of its rounds, so one random 15-letter word took
 * ≈ 0.1 ms and a long word seconds, on the client's text, in the gateway's one thread.
 */
interface RankFile {
  pat_str: string;
  special_tokens: Record<string, number>;
  bpe_ranks: string;
}

/**
 * A piece (one match of the encoding's split pattern) longer than this many bytes is merged in
 * windows of it: the merge is quadratic in a piece's length, and a window boundary costs at most
 * a token or so (long pieces are rare: identifiers, base64, CJK without punctuation).
 */
const WINDOW_BYTES = 128;
/** Bytes one count (a call's prompt, `TokenBudget`) merges; a text's rest counts at the rate its counted part came to. */
const BUDGET_BYTES = 32 * 1024;
const NO_RANK = Number.MAX_SAFE_INTEGER;

class BpeCounter {
  /** Token bytes (as Latin-1 text, one character per byte) → rank. */
  private readonly ranks = new Map<string, number>();
  private readonly split: RegExp;
  private readonly special: RegExp;

  constructor(file: RankFile) {
    for (const line of file.bpe_ranks.split('\n')) {
      const [, offset, ...tokens] = line.split(' ');
      if (offset === undefined) continue;
      const first = Number.parseInt(offset, 10);
      for (let i = 0; i < tokens.length; i++) this.ranks.set(Buffer.from(tokens[i]!, 'base64').toString('latin1'), first + i);
    }
    this.split = new RegExp(file.pat_str, 'gu');
    const escape = (t: string) => t.replace(/[\\^$*+?.()|[\]{}]/g, '\\$&');
    this.special = new RegExp(Object.keys(file.special_tokens).map(escape).join('|'), 'g');
  }

  /**
   * Tokens of `text` (special tokens count one each) and how many of its characters they cover:
   * at most `budget.bytes` are merged (a special token spends its length), and only the part of
   * the text those bytes can reach is scanned at all.
   */
  count(text: string, budget: TokenBudget): { tokens: number; chars: number } {
    const scanned = withinBudget(text, budget);
    let tokens = 0;
    let chars = 0; // characters counted
    let from = 0;
    for (const sp of scanned.matchAll(this.special)) {
      const part = this.countPlain(scanned.slice(from, sp.index), budget);
      tokens += part.tokens;
      chars += part.chars;
      if (part.chars < sp.index - from || budget.bytes <= 0) return { tokens, chars };
      tokens++;
      chars += sp[0].length;
      budget.bytes = Math.max(0, budget.bytes - sp[0].length);
      from = sp.index + sp[0].length;
    }
    const part = this.countPlain(from ? scanned.slice(from) : scanned, budget);
    return { tokens: tokens + part.tokens, chars: chars + part.chars };
  }

  private countPlain(text: string, budget: TokenBudget): { tokens: number; chars: number } {
    let tokens = 0;
    let chars = 0;
    for (const m of text.matchAll(this.split)) {
      if (budget.bytes <= 0) break;
      const s = m[0];
      // The piece's UTF-8 bytes as Latin-1 text, the ranks' keys (an ASCII piece is its own).
      const bytes = ASCII.test(s) ? s : Buffer.from(s, 'utf8').toString('latin1');
      // A piece past the budget (one huge word) is merged as far as the budget goes.
      const take = Math.min(bytes.length, budget.bytes);
      budget.bytes -= take;
      if (take < bytes.length) chars += Math.floor((s.length * take) / bytes.length);
      else {
        chars += s.length;
        if (this.ranks.has(bytes)) {
          tokens++;
          continue;
        }
      }
      for (let at = 0; at < take; at += WINDOW_BYTES) tokens += this.merge(bytes, at, Math.min(take, at + WINDOW_BYTES));
    }
    return { tokens, chars };
  }

  /**
   * Tokens of bytes [from, to) of a piece: tiktoken's byte-pair merge. Each round merges the
   * adjacent pair of lowest rank (the first of equals); only the ranks next to a merge are looked
   * up again.
   */
  private merge(bytes: string, from: number, to: number): number {
    const n = to - from;
    if (n <= 1) return n;
    const ranks = this.ranks;
    if ((from > 0 || to < bytes.length) && ranks.has(bytes.slice(from, to))) return 1;
    // Part i starts at starts[i]; rank[i] is the rank of part i merged with part i + 1.
    const starts: number[] = [];
    const rank: number[] = [];
    for (let i = from; i <= to; i++) {
      starts.push(i);
      rank.push(i + 2 <= to ? (ranks.get(bytes.slice(i, i + 2)) ?? NO_RANK) : NO_RANK);
    }
    const rankAt = (i: number) => (i + 3 < starts.length ? (ranks.get(bytes.slice(starts[i], starts[i + 3])) ?? NO_RANK) : NO_RANK);
    for (;;) {
      let min = NO_RANK;
      let at = -1;
      for (let i = 0; i < rank.length - 1; i++) {
        if (rank[i]! < min) {
          min = rank[i]!;
          at = i;
        }
      }
      if (at < 0) break;
      if (at > 0) rank[at - 1] = rankAt(at - 1);
      rank[at] = rankAt(at);
      starts.splice(at + 1, 1);
      rank.splice(at + 1, 1);
    }
    return starts.length - 1;
  }
}

/**
 * The part of a text the budget can reach: a character is at least one byte, so its first
 * `budget.bytes` characters hold at least that many ('' once the budget is spent). The rest is
 * never scanned, so a piece of megabytes (one long word) costs neither the split's time nor its
 * backtracking stack. A piece cut at the end is merged only as far as the budget goes, as it would
 * be whole.
 */
function withinBudget(text: string, budget: TokenBudget): string {
  if (text.length <= budget.bytes) return text;
  const end = Math.max(0, budget.bytes);
  // Keep a surrogate pair whole.
  return text.slice(0, end > 0 && /[\uD800-\uDBFF]/.test(text[end - 1]!) ? end + 1 : end);
}

// eslint-disable-next-line no-control-regex -- ASCII is what it tests
const ASCII = /^[\x00-\x7f]*$/;

const counters = new Map<string, BpeCounter>();

/** The encoding a model's tokens are counted in; its tables load on first use and are shared by the process. */
function counterFor(model: string): BpeCounter {
  const name = /gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|(^|\/)o[134]|chatgpt/.test(model) ? 'o200k_base' : 'cl100k_base';
  let c = counters.get(name);
  if (!c) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the ranks are megabytes: loaded on first use, one encoding at a time
    const file = (name === 'o200k_base' ? require('js-tiktoken/ranks/o200k_base') : require('js-tiktoken/ranks/cl100k_base')) as RankFile & {
      default?: RankFile;
    };
    c = new BpeCounter(file.default ?? file);
    counters.set(name, c);
  }
  return c;
}

/**
 * One count's budget, shared by the texts of a call's prompt: the bytes it may still merge, and
 * what it has counted so far (the rate a text past the budget is counted at).
 */
export interface TokenBudget {
  bytes: number;
  tokens?: number;
  chars?: number;
}
const tokenBudget = (): TokenBudget => ({ bytes: BUDGET_BYTES });
const byLength = (chars: number) => Math.ceil(chars / 4);

/**
 * Tokens of a text. Past the count's budget the rest counts at the rate the text's counted part
 * came to, or the count's so far when none of it was counted.
 */
export function countTextTokens(text: string, model: string, budget: TokenBudget = tokenBudget()): number {
  if (!text) return 0;
  try {
    const { tokens, chars } = counterFor(model).count(text, budget);
    budget.tokens = (budget.tokens ?? 0) + tokens;
    budget.chars = (budget.chars ?? 0) + chars;
    const left = text.length - chars;
    if (left <= 0) return tokens;
    if (chars) return tokens + Math.ceil((left * tokens) / chars);
    return budget.chars ? Math.ceil((left * budget.tokens) / budget.chars) : byLength(left);
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
