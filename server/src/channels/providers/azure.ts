import type { AdaptorContext, ChannelInfo, ChatRequest, Endpoint, ProviderAdaptor, UpstreamRequest } from '../../relay/types';
import { ENDPOINT_PATH, openaiAdaptor } from '../../protocols/openai/adaptor';
import { AZURE_DEFAULT_API_VERSION, typesServedBy } from '../catalogue';
import { withOpenAIBeta } from '../../protocols/shared';
import { makeResponsesAdaptor } from '../../protocols/responses/adaptor';

/** `{base}/openai/deployments/{model without dots}{path}?api-version=…` with an `api-key` header. */
export function azureUrl(channel: ChannelInfo, endpoint: Endpoint, model: string): string {
  const base = channel.baseUrl.replace(/\/+$/, '');
  const deployment = encodeURIComponent(model.replace(/\./g, ''));
  const version = encodeURIComponent(channel.other.trim() || AZURE_DEFAULT_API_VERSION);
  return `${base}/openai/deployments/${deployment}${ENDPOINT_PATH[endpoint]}?api-version=${version}`;
}

function headers(channel: ChannelInfo, contentType = 'application/json'): Record<string, string> {
  const h: Record<string, string> = { 'api-key': channel.key };
  if (contentType) h['content-type'] = contentType;
  return h;
}

export const azureAdaptor: ProviderAdaptor = {
  ...openaiAdaptor,
  name: 'azure',
  channelTypes: typesServedBy('azure'),
  responsesSide: 'azure',
  chatRequest(req: ChatRequest, ctx: AdaptorContext): UpstreamRequest {
    const base = openaiAdaptor.chatRequest(req, ctx);
    return { ...base, url: azureUrl(ctx.channel, 'chat', ctx.upstreamModel), headers: headers(ctx.channel) };
  },
  rawRequest(body, ctx, raw) {
    const url = azureUrl(ctx.channel, ctx.endpoint, ctx.upstreamModel);
    if (raw) return { url, method: 'POST', headers: withOpenAIBeta(headers(ctx.channel, raw.contentType), ctx), body: raw.body };
    return { url, method: 'POST', headers: withOpenAIBeta(headers(ctx.channel), ctx), body: JSON.stringify(body ?? {}) };
  },
  modelsRequest(channel: ChannelInfo): UpstreamRequest {
    const version = encodeURIComponent(channel.other.trim() || AZURE_DEFAULT_API_VERSION);
    return { url: `${channel.baseUrl.replace(/\/+$/, '')}/openai/models?api-version=${version}`, method: 'GET', headers: headers(channel, '') };
  },
};

/**
 * Azure OpenAI: the Responses API is only on the v1 surface, `{endpoint}/openai/v1/responses`,
 * with the deployment as `model` (named as the chat route names it: without dots).
 */
export const azureResponsesAdaptor: ProviderAdaptor = {
  ...makeResponsesAdaptor(
    'azure-responses',
    (ctx) => `${ctx.channel.baseUrl.replace(/\/+$/, '')}/openai/v1/responses`,
    (ctx) => ({ 'api-key': ctx.channel.key, 'content-type': 'application/json' }),
    (ctx) => ctx.upstreamModel.replace(/\./g, ''),
  ),
  modelsRequest: azureAdaptor.modelsRequest,
};
