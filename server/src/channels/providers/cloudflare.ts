/**
 * Cloudflare Workers AI (channel type 39): the OpenAI-compatible endpoints of an account,
 * `https://api.cloudflare.com/client/v4/accounts/{account}/ai/v1/{chat/completions|embeddings}`,
 * Bearer API token. The account id comes from the channel `other`; a channel base_url replaces
 * `https://api.cloudflare.com` (AI Gateway, tests). fetch_models: the account's text-generation
 * models (`/ai/models/search`).
 */
import type { ChannelInfo, Endpoint, ProviderAdaptor, UpstreamRequest } from '../../relay/types';
import { msg } from '../../i18n';
import { UpstreamError } from '../../relay/errors';
import { ENDPOINT_PATH, openaiAdaptor, openaiHeaders } from '../../protocols/openai/adaptor';
import { typesServedBy } from '../catalogue';

const CF_BASE = 'https://api.cloudflare.com';

export function cloudflareUrl(channel: ChannelInfo, endpoint: Endpoint): string {
  const account = channel.other.trim();
  if (!account || !/^[A-Za-z0-9_-]+$/.test(account)) throw new UpstreamError(400, msg('adaptor.cloudflare_account'), '', 'invalid_channel_config');
  const base = (channel.baseUrl || CF_BASE).replace(/\/+$/, '');
  return `${base}/client/v4/accounts/${account}/ai/v1${ENDPOINT_PATH[endpoint]}`;
}

export const cloudflareAdaptor: ProviderAdaptor = {
  ...openaiAdaptor,
  name: 'cloudflare',
  channelTypes: typesServedBy('cloudflare'),
  // Workers AI's account-scoped URLs are not relayed to a Responses API.
  responsesSide: 'none',
  endpoints: ['chat', 'embeddings'],
  chatRequest(req, ctx): UpstreamRequest {
    return { ...openaiAdaptor.chatRequest(req, ctx), url: cloudflareUrl(ctx.channel, 'chat') };
  },
  rawRequest(body, ctx) {
    return { url: cloudflareUrl(ctx.channel, ctx.endpoint), method: 'POST', headers: openaiHeaders(ctx.channel), body: JSON.stringify(body ?? {}) };
  },
  /** `GET /client/v4/accounts/{account}/ai/models/search?task=Text Generation` → `result[].name`. */
  modelsRequest(channel) {
    const url = cloudflareUrl(channel, 'chat').replace(/\/ai\/v1\/chat\/completions$/, '/ai/models/search?per_page=1000&task=Text%20Generation');
    return { url, method: 'GET', headers: openaiHeaders(channel, '') };
  },
  parseModels(body) {
    const result = body && typeof body === 'object' ? (body as { result?: unknown }).result : undefined;
    return Array.isArray(result) ? result.map((m) => String((m as { name?: unknown })?.name ?? '')).filter(Boolean) : [];
  },
};
