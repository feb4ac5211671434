import type { ProviderAdaptor } from '../types';
import { openaiAdaptor } from './openai';
import { azureAdaptor } from './azure';
import { awsClaudeAdaptor, claudeAdaptor } from './claude';
import { geminiAdaptor } from './gemini';
import { vertexAdaptor } from './vertex';
import { cohereAdaptor } from './cohere';
import { cloudflareAdaptor } from './cloudflare';
import { ollamaAdaptor } from './ollama';
import { xinferenceAdaptor } from './xinference';

/**
 * Channel type → adaptor. Types without an entry use the OpenAI-compatible adaptor.
 * To add a provider: import it and append it to ADAPTORS (its `channelTypes` are registered).
 */
const ADAPTORS: ProviderAdaptor[] = [openaiAdaptor, azureAdaptor, claudeAdaptor, awsClaudeAdaptor, geminiAdaptor];
ADAPTORS.push(vertexAdaptor, cohereAdaptor, cloudflareAdaptor, ollamaAdaptor, xinferenceAdaptor);

const byType = new Map<number, ProviderAdaptor>();
for (const a of ADAPTORS) for (const t of a.channelTypes) byType.set(t, a);

/** Registers an adaptor at run time (tests, plug-ins); later registrations win. */
export function registerAdaptor(a: ProviderAdaptor): void {
  for (const t of a.channelTypes) byType.set(t, a);
}

export function adaptorFor(type: number): ProviderAdaptor {
  return byType.get(type) ?? openaiAdaptor;
}

/** Does a channel of this adaptor serve `endpoint` for a client speaking `format`? */
export function serves(a: ProviderAdaptor, endpoint: string, format: string): boolean {
  if (endpoint === 'chat') return true;
  if (format === 'openai' && a.convertedEndpoints?.includes(endpoint as never)) return true;
  return a.format === format && !!a.rawRequest && (a.endpoints ?? []).includes(endpoint as never);
}
