import type { ProviderAdaptor } from '../types';
import { CHANNEL_TYPES, adaptorIdOf, type AdaptorId } from '../../channels/catalogue';
import { openaiAdaptor } from './openai';
import { azureAdaptor } from './azure';
import { claudeAdaptor } from './claude';
import { awsClaudeAdaptor } from './bedrock';
import { geminiAdaptor } from './gemini';
import { vertexAdaptor } from './vertex';
import { cohereAdaptor } from './cohere';
import { cloudflareAdaptor } from './cloudflare';
import { ollamaAdaptor } from './ollama';
import { xinferenceAdaptor } from './xinference';

/**
 * The built-in adaptors by id. Which channel type each serves is the catalogue's `adaptor` fact
 * (server/src/channels/catalogue.ts); an adaptor's `channelTypes` is derived from it.
 */
export const ADAPTORS: Readonly<Record<AdaptorId, ProviderAdaptor>> = {
  openai: openaiAdaptor,
  azure: azureAdaptor,
  claude: claudeAdaptor,
  'aws-claude': awsClaudeAdaptor,
  gemini: geminiAdaptor,
  vertex: vertexAdaptor,
  cohere: cohereAdaptor,
  cloudflare: cloudflareAdaptor,
  ollama: ollamaAdaptor,
  xinference: xinferenceAdaptor,
};

// Built once: adaptorFor is on the relay's per-call path.
const byType = new Map<number, ProviderAdaptor>();
for (const e of CHANNEL_TYPES) byType.set(e.id, ADAPTORS[adaptorIdOf(e)]);

/** Registers an adaptor at run time (tests, plug-ins) for its `channelTypes`; later registrations win. */
export function registerAdaptor(a: ProviderAdaptor): void {
  for (const t of a.channelTypes) byType.set(t, a);
}

/** The adaptor of a channel type; a type the catalogue does not know is treated as OpenAI-compatible. */
export function adaptorFor(type: number): ProviderAdaptor {
  return byType.get(type) ?? openaiAdaptor;
}

/** Does a channel of this adaptor serve `endpoint` for a client speaking `format`? */
export function serves(a: ProviderAdaptor, endpoint: string, format: string): boolean {
  if (endpoint === 'chat') return true;
  if (format === 'openai' && a.convertedEndpoints?.includes(endpoint as never)) return true;
  // Gemini embedContent converts to OpenAI embeddings (formats/gemini.ts convertEndpoint)
  if (format === 'gemini' && endpoint === 'embeddings' && a.format === 'openai') return serves(a, endpoint, 'openai');
  return a.format === format && !!a.rawRequest && (a.endpoints ?? []).includes(endpoint as never);
}
