/**
 * `POST /v1/messages/count_tokens` (Claude clients; Claude Code calls it to size its context).
 *
 * Answered by a Claude channel serving the model when the key's group has one (the client's body
 * passed through as for a message: model mapped, same headers), else counted locally with the
 * tokenizer on the canonical request (system, messages, tools). Never billed, never logged. An
 * upstream 400 (the request itself is wrong) reaches the client; any other upstream failure
 * (a Claude-compatible upstream without the endpoint, a bad channel key, a timeout) falls back to
 * the local count, since a count is only advisory.
 */
import type { AppContext } from '../../context';
import { msg, verbatim } from '../../i18n';
import { checkModelAllowed } from '../../relay/auth';
import { adaptorFor } from '../../channels/providers';
import { claudeAdaptor, claudeCountTokensRequest } from './adaptor';
import { isRecord } from '../shared';
import { RelayError, scrubSecrets } from '../../relay/errors';
import type { RelayHttp } from '../../relay/httpContext';
import { pickChannel, pickKey, routeTable, tiersFor, type ChannelEntry, type Tier } from '../../channels/routeTable';
import { countPromptWithTools } from '../../relay/tokenizer';
import type { AdaptorContext, InboundKit, InboundRoute } from '../../relay/types';
import { authenticateKey, type Principal } from '../../relay/auth';
import { extractKey } from '../../relay/keys';
import { UpstreamExchange } from '../../relay/upstreamExchange';
import { isPriced } from '../../services/billing';
import { own } from '../../lib/own';
import { claudeFormat } from './format';
import { claudeToChat } from './request';

/** Largest count answer read from an upstream. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** The tiers that may answer for the model (an admin's pinned channel only), or the client's 404/503. */
function candidateTiers(app: AppContext, table: Awaited<ReturnType<typeof routeTable>>, call: CountCall, model: string): Tier[] {
  const { principal } = call;
  if (principal.pinnedChannel !== undefined) {
    const pinned = table.channels.get(principal.pinnedChannel);
    if (!pinned) throw new RelayError(503, msg('relay.pinned_unavailable', { id: principal.pinnedChannel }), 'channel_not_available');
    return [{ priority: pinned.priority, channels: [pinned], weights: [1], total: 1 }];
  }
  const tiers = tiersFor(table, principal.group, model);
  if (tiers?.length) return tiers;
  if (!table.knownModels.has(model) && !isPriced(app, model)) throw new RelayError(404, msg('relay.model_not_found', { model }), 'model_not_found');
  throw new RelayError(503, msg('relay.no_channel', { group: principal.group, model }), 'model_not_available');
}

/** The count from a Claude channel; undefined when the local count should answer instead. */
async function upstreamCount(app: AppContext, ctx: RelayHttp, ch: ChannelEntry, body: Record<string, unknown>, model: string): Promise<unknown> {
  const m = own(ch.modelMapping, model);
  const mapped = (typeof m === 'string' && m.trim()) || model;
  const channel = ch.keys.length > 1 ? { ...ch.info, key: pickKey(ch) } : ch.info;
  const actx: AdaptorContext = {
    channel,
    upstreamModel: mapped,
    requestedModel: model,
    stream: false,
    endpoint: 'chat',
    option: (k) => app.options.get(k),
    clientHeader: (k) => ctx.get(k),
  };
  const req = claudeCountTokensRequest(ch.paramOverride ? { ...body, ...ch.paramOverride } : body, actx);
  const up = UpstreamExchange.open(app, req, typeof channel.setting.proxy === 'string' ? channel.setting.proxy : undefined);
  const abort = () => up.abort();
  ctx.res.once('close', abort);
  let status: number;
  let text: string;
  try {
    await up.ready;
    status = up.statusCode;
    text = (await up.collect(MAX_ANSWER_BYTES)).toString('utf8');
  } catch (err) {
    app.log.warn({ channel: ch.info.id, err: (err as Error).message }, 'count_tokens upstream failed; counting locally');
    return undefined;
  } finally {
    ctx.res.off('close', abort);
  }
  if (status === 400) throw new RelayError(400, verbatim(scrubSecrets(claudeAdaptor.errorMessage(status, text), ch.keys)), 'invalid_request');
  if (status >= 300) {
    app.log.warn({ channel: ch.info.id, status }, 'count_tokens upstream failed; counting locally');
    return undefined;
  }
  try {
    const json: unknown = JSON.parse(text);
    if (isRecord(json) && typeof json.input_tokens === 'number') return json;
  } catch {
    /* not JSON: counted locally */
  }
  return undefined;
}

/** The authenticated count call. */
interface CountCall {
  app: AppContext;
  ctx: RelayHttp;
  principal: Principal;
}

async function countTokens(app: AppContext, ctx: RelayHttp, _m: unknown, kit: InboundKit): Promise<void> {
  const call: CountCall = { app, ctx, principal: await authenticateKey(app, extractKey(ctx, 'claude'), kit.ip) };
  const { body } = await kit.readJson();
  const chat = claudeToChat(body); // validates like a message (400 in Claude's shape)
  const model = chat.model.trim();
  checkModelAllowed(call.principal, model);
  const table = await routeTable(app);
  const tiers = candidateTiers(app, table, call, model);
  const ch = pickChannel(tiers, 0, new Set(), (c) => adaptorFor(c.info.type).name === 'claude');
  const counted = ch ? await upstreamCount(app, ctx, ch, body, model) : undefined;
  // Else the tokenizer's count: messages (system included) and the tool definitions.
  ctx.body = counted ?? { input_tokens: countPromptWithTools(chat.messages, body.tools, chat.model) };
}

/** `POST /v1/messages/count_tokens`, keys as `/v1/messages`. */
export const claudeCountTokensRoute: InboundRoute = {
  method: 'POST',
  match: (path) => (path === '/v1/messages/count_tokens' || path === '/v1/messages/count_tokens/' ? {} : null),
  format: claudeFormat,
  keyStyle: 'claude',
  handle: countTokens,
};
