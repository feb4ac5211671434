import { RelayError } from '../errors';
import { msg } from '../../i18n';
import { checkModelAllowed } from '../auth';
import { channelWay } from '../../channels/providers';
import { tiersFor, type ChannelEntry, type RouteTable, type Tier } from '../../channels/routeTable';
import { estimateTokens } from '../tokenizer';
import { estimateQuota, isPriced, priceFor, type PriceInfo } from '../../services/billing';
import type { Payer } from '../../ledger/balances';
import { checkPromptSensitive } from '../../services/sensitive';
import { channelType } from '../../channels/catalogue';
import type { ProviderAdaptor, WireFormat } from '../types';
import { promptFallback, promptTexts, safeChat, type RelayCall } from './relayCall';

/** What a call may use and what it costs up front: its candidate channels, its price, the reservation's amount. */
export class CallPlan {
  /** The prompt's token count, counted only when a candidate channel has max_input_tokens. */
  promptTokens: number | undefined = undefined;
  price!: PriceInfo;
  /** Quota reserved before the upstream answers (the estimate). */
  reserved = 0;
  /** Billed units (images: `n`). */
  calls = 1;
  payer!: Payer;
  /** Candidate filter for routing: serves this endpoint and client format, and the prompt fits. */
  readonly accepts = (c: ChannelEntry): boolean => this.serves(c) && this.fits(c);
  /** What in the client's body only an upstream speaking its protocol can honour (then conversion is no way). */
  readonly nativeOnly: string | undefined;
  /** Where the body names files stored at OpenAI: then only upstreams speaking an OpenAI protocol. */
  readonly openaiFiles: string | undefined;

  constructor(
    readonly call: RelayCall,
    readonly tiers: Tier[],
  ) {
    this.nativeOnly = call.inbound.nativeOnly?.(call.body);
    this.openaiFiles = call.inbound.openaiFiles?.(call.body);
  }

  serves(c: ChannelEntry): boolean {
    const way = channelWay(c.info, this.call.endpoint, this.call.inbound.name);
    if (!way || (way.mode !== 'passthrough' && this.nativeOnly)) return false;
    return !this.openaiFiles || readsOpenAIFiles(way.adaptor);
  }

  fits(c: ChannelEntry): boolean {
    return !c.maxInputTokens || (this.promptTokens ??= promptFallback(this.call)) <= c.maxInputTokens;
  }
}

/** Checks the call (model allowed, prompt words, a channel that can take it) and prices it. Throws the client's error. */
export function planCall(call: RelayCall, table: RouteTable): CallPlan {
  const { app, principal, model } = call;
  checkModelAllowed(principal, model);
  if (call.body && app.options.bool('CheckSensitiveEnabled') && app.options.bool('CheckSensitiveOnPromptEnabled')) {
    checkPromptSensitive(app, promptTexts(call));
  }
  let tiers = tiersFor(table, principal.group, model);
  if (principal.pinnedChannel !== undefined) {
    // Admin pin: that channel only (enabled), whatever its abilities say.
    const pinned = table.channels.get(principal.pinnedChannel);
    if (!pinned) throw new RelayError(503, msg('relay.pinned_unavailable', { id: principal.pinnedChannel }), 'channel_not_available');
    tiers = [{ priority: pinned.priority, channels: [pinned], weights: [1], total: 1 }];
  }
  const plan = new CallPlan(call, tiers ?? []);
  if (!tiers || !anyChannel(plan, false)) {
    if (!table.knownModels.has(model) && !isPriced(app, model)) {
      throw new RelayError(404, msg('relay.model_not_found', { model }), 'model_not_found');
    }
    throw noChannel(call, plan);
  }
  if (!anyChannel(plan, true)) {
    throw new RelayError(400, msg('relay.context_too_long', { tokens: plan.promptTokens ?? 0 }), 'context_length_exceeded');
  }
  const acceptUnset = principal.user.setting.accept_unset_model_ratio_model === true;
  plan.price = priceFor(app, model, principal.group, acceptUnset);
  // Claude/Gemini/Responses bodies are estimated from the canonical request (system prompt,
  // contents, input items and their output limits live elsewhere in their own shapes).
  const body = (call.inbound.name !== 'openai' ? (safeChat(call) as Record<string, unknown> | undefined) : undefined) ?? call.body ?? {};
  const maxTokens = Number(body.max_tokens ?? body.max_completion_tokens ?? body.max_output_tokens ?? 0) || 0;
  plan.calls = call.endpoint === 'images' || call.endpoint === 'image_edits' ? Math.max(1, Number(body.n ?? 1) || 1) : 1;
  plan.reserved = estimateQuota(app, plan.price, estimateTokens(body), maxTokens, plan.calls);
  plan.payer = { userId: principal.user.id, limitedTokenId: principal.token && !principal.token.unlimited ? principal.token.id : undefined };
  return plan;
}

/** An upstream speaking one of OpenAI's protocols reads files stored there (Claude, Gemini … cannot). */
const readsOpenAIFiles = (a: ProviderAdaptor) => a.format === 'openai' || a.format === 'responses';

/** Some tier has a channel serving the call (and, with `fitting`, one the prompt fits). */
function anyChannel(plan: CallPlan, fitting: boolean): boolean {
  for (const t of plan.tiers) {
    for (const c of t.channels) if (fitting ? plan.accepts(c) : plan.serves(c)) return true;
  }
  return false;
}

const PROTOCOL_NAME: Record<WireFormat, string> = {
  openai: 'OpenAI Chat Completions',
  responses: 'OpenAI Responses',
  claude: 'Claude Messages',
  gemini: 'Gemini',
};

/**
 * The call's "no channel" error. No enabled channel for the group and model: 503 as before. Channels
 * for the model that cannot take the call: 400 naming the protocol, the model, the kinds of its
 * channels and why (a body only a native upstream can honour, or an endpoint they lack).
 */
export function noChannel(call: RelayCall, plan?: CallPlan): RelayError {
  const { model } = call;
  const channels = new Map<number, ChannelEntry>();
  for (const t of plan?.tiers ?? []) for (const c of t.channels) channels.set(c.info.id, c);
  if (!plan || !channels.size) return new RelayError(503, msg('relay.no_channel', { group: call.principal.group, model }), 'model_not_available');
  const protocol = PROTOCOL_NAME[call.inbound.name] ?? call.inbound.name;
  const kinds = [...new Set([...channels.values()].map((c) => channelType(c.info.type)?.label ?? `type ${c.info.type}`))].join('、');
  const converted = [...channels.values()].some((c) => channelWay(c.info, call.endpoint, call.inbound.name)?.mode === 'converted');
  if (
    plan.openaiFiles &&
    [...channels.values()].some((c) => {
      const w = channelWay(c.info, call.endpoint, call.inbound.name);
      return w && !readsOpenAIFiles(w.adaptor);
    })
  ) {
    return new RelayError(400, msg('relay.openai_files', { model, kinds, field: plan.openaiFiles }), 'unsupported_by_channel');
  }
  if (plan.nativeOnly && converted) {
    return new RelayError(400, msg('relay.native_only', { model, kinds, protocol, feature: plan.nativeOnly }), 'unsupported_by_channel');
  }
  return new RelayError(
    400,
    msg('relay.endpoint_unsupported', { model, kinds, protocol, method: call.ctx.method, path: call.ctx.path }),
    'endpoint_not_supported',
  );
}
