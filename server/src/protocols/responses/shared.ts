/**
 * The Responses protocol's shared vocabulary: its request errors, reasoning carried in a reasoning item's
 * `encrypted_content` (packed by the gateway when it is not OpenAI's own), and usage both ways.
 */
import { RelayError } from '../../relay/errors';
import { verbatim } from '../../i18n';
import type { ReasoningDetail, Usage } from '../../relay/types';
import { isRecord } from '../shared';

/** The request's shape is wrong: protocol-level wording (field paths), English like the protocols' own errors. */
export const badRequest = (message: string) => new RelayError(400, verbatim(message), 'invalid_request');

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

// ---------------------------------------------------------------------------------------------
// Reasoning carried in encrypted_content

/** Prefix of reasoning the gateway packed itself (never a real OpenAI encrypted_content). */
export const PACKED_REASONING_PREFIX = 'gwr1.';

export interface PackedReasoning {
  /** reasoning_details of other providers (Claude signatures, redacted thinking, Gemini …). */
  d?: ReasoningDetail[];
  /** Gemini thought signatures of tool calls, by call id. */
  s?: Record<string, string>;
}

export function packReasoning(p: PackedReasoning): string {
  return PACKED_REASONING_PREFIX + Buffer.from(JSON.stringify(p), 'utf8').toString('base64url');
}

export function unpackReasoning(data: string): PackedReasoning | undefined {
  if (!data.startsWith(PACKED_REASONING_PREFIX)) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(data.slice(PACKED_REASONING_PREFIX.length), 'base64url').toString('utf8'));
    if (!isRecord(v)) return undefined;
    const out: PackedReasoning = {};
    if (Array.isArray(v.d)) out.d = v.d.filter((x): x is ReasoningDetail => isRecord(x) && typeof x.type === 'string');
    if (isRecord(v.s)) out.s = Object.fromEntries(Object.entries(v.s).filter((e): e is [string, string] => typeof e[1] === 'string'));
    return out;
  } catch {
    return undefined;
  }
}

/** The `encrypted_content` for one reasoning item: OpenAI's own data as is, anything else packed. */
export function encryptedContentFor(details: ReasoningDetail[], signatures?: Record<string, string>): string | undefined {
  const own = details.filter((d) => d.type === 'reasoning.encrypted' && d.format === 'openai-responses-v1');
  const others = details.filter((d) => d.format !== 'openai-responses-v1');
  if (own.length === 1 && !others.length && !signatures) return (own[0] as { data: string }).data;
  if (!others.length && !signatures) return undefined;
  const p: PackedReasoning = {};
  if (others.length) p.d = others;
  if (signatures) p.s = signatures;
  return packReasoning(p);
}

// ---------------------------------------------------------------------------------------------
// Usage

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** Canonical usage → Responses usage (`input_tokens` includes cached tokens, as OpenAI counts). */
export function chatUsageToResponses(u: Usage | undefined): ResponsesUsage {
  const input = u?.prompt_tokens ?? 0;
  const output = u?.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u?.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: u?.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: input + output,
  };
}

/** Responses usage → canonical usage; undefined when there is none. */
export function responsesUsageToChat(u: unknown): Usage | undefined {
  if (!isRecord(u)) return undefined;
  const prompt = Number(u.input_tokens ?? 0) || 0;
  const completion = Number(u.output_tokens ?? 0) || 0;
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: Number(u.total_tokens ?? 0) || prompt + completion };
  const cached = isRecord(u.input_tokens_details) ? Number(u.input_tokens_details.cached_tokens ?? 0) || 0 : 0;
  const reasoning = isRecord(u.output_tokens_details) ? Number(u.output_tokens_details.reasoning_tokens ?? 0) || 0 : 0;
  if (cached) usage.prompt_tokens_details = { cached_tokens: cached };
  if (reasoning) usage.completion_tokens_details = { reasoning_tokens: reasoning };
  return usage;
}
