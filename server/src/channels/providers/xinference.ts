/**
 * Xinference (channel type 47): OpenAI-compatible (`{base}/v1/...`, rerank at `{base}/v1/rerank`
 * with the Jina/Cohere body, forwarded untouched). Its rerank answer reports usage as
 * `meta.tokens.input_tokens` (or `meta.billed_units`), not `usage`: read both.
 */
import type { ProviderAdaptor, Usage } from '../../relay/types';
import { normaliseUsage, openaiAdaptor } from '../../protocols/openai/adaptor';
import { isRecord } from '../../protocols/shared';
import { typesServedBy } from '../catalogue';

export function xinferenceUsage(body: unknown): Usage | undefined {
  if (!isRecord(body)) return undefined;
  const u = normaliseUsage(body.usage);
  if (u) return u;
  const meta = isRecord(body.meta) ? body.meta : undefined;
  const src = meta && [meta.tokens, meta.billed_units].find((o) => isRecord(o) && typeof o.input_tokens === 'number');
  if (!isRecord(src)) return undefined;
  const prompt = Number(src.input_tokens) || 0;
  const completion = Number(src.output_tokens ?? 0) || 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

export const xinferenceAdaptor: ProviderAdaptor = {
  ...openaiAdaptor,
  name: 'xinference',
  channelTypes: typesServedBy('xinference'),
  usageFromBody: xinferenceUsage,
};
