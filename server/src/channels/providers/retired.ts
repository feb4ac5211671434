/**
 * Kinds the provider shut down (PaLM2): a stored channel of such a kind is never relayed as
 * something else. Every call and channel test through it fails with the catalogue's message (a
 * 503 like an unavailable upstream, so a call still goes on to the model's other channels).
 */
import type { ProviderAdaptor } from '../../relay/types';
import { msg } from '../../i18n';
import { UpstreamError } from '../../relay/errors';
import { channelType, typesServedBy } from '../catalogue';
import { upstreamErrorMessage } from '../../protocols/shared';

function refuse(type: number): never {
  const note = channelType(type)?.retired;
  throw new UpstreamError(503, msg(note ?? 'channel.type_stopped'), '', 'channel_type_retired');
}

export const retiredAdaptor: ProviderAdaptor = {
  name: 'retired',
  channelTypes: typesServedBy('retired'),
  format: 'openai',
  chatRequest: (_req, ctx) => refuse(ctx.channel.type),
  chatResponse: (_body, ctx) => refuse(ctx.channel.type),
  chatStream: (ctx) => refuse(ctx.channel.type),
  errorMessage: upstreamErrorMessage,
};
