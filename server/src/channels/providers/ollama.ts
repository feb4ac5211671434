/**
 * Ollama (channel type 4). Chat, completions and embeddings go to Ollama's OpenAI-compatible
 * endpoints (`{base}/v1/chat/completions`, `/v1/completions`, `/v1/embeddings`: Ollama ≥ 0.3 serves
 * them, with usage), so the OpenAI hot path is reused unchanged. Only the model list is native:
 * `GET {base}/api/tags` (`{models:[{name, model}]}`), which every Ollama version answers.
 */
import type { ProviderAdaptor } from '../../relay/types';
import { baseUrlOf, openaiAdaptor, openaiHeaders } from '../../protocols/openai/adaptor';
import { isRecord } from '../../protocols/shared';
import { typesServedBy } from '../catalogue';

export const ollamaAdaptor: ProviderAdaptor = {
  ...openaiAdaptor,
  name: 'ollama',
  channelTypes: typesServedBy('ollama'),
  endpoints: ['chat', 'completions', 'embeddings'],
  modelsRequest(channel) {
    const headers = channel.key ? openaiHeaders(channel, '') : {};
    return { url: `${baseUrlOf(channel)}/api/tags`, method: 'GET', headers };
  },
  parseModels(body) {
    const models = isRecord(body) && Array.isArray(body.models) ? body.models : [];
    return models.map((m) => (isRecord(m) ? String(m.name ?? m.model ?? '') : '')).filter(Boolean);
  },
};
