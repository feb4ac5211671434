/**
 * Default model lists per channel type (the catalogue's `models`), answered by GET /api/models
 * and used by the console to prefill a channel's models. Static on purpose: it is a suggestion
 * list, not a routing table (routing uses the abilities table).
 */
import { CHANNEL_TYPES } from '../channels/catalogue';

export const CHANNEL_MODELS: Readonly<Record<number, readonly string[]>> = Object.fromEntries(
  CHANNEL_TYPES.filter((e) => e.models).map((e) => [e.id, e.models!]),
);

/** The map as the console wants it: channel type (as a string key) → model names. */
export function channelModelMap(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [type, models] of Object.entries(CHANNEL_MODELS)) out[type] = [...models];
  return out;
}
