import { RelayError } from '../errors';
import { checkModelAllowed } from '../auth';
import { adaptorFor, serves } from '../adaptors';
import { tiersFor, type ChannelEntry, type RouteTable, type Tier } from '../routing';
import { estimateTokens } from '../tokenizer';
import { estimateQuota, isPriced, priceFor, type PriceInfo } from '../../services/billing';
import type { Payer } from '../../ledger/balances';
import { checkPromptSensitive } from '../../services/sensitive';
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

  constructor(
    readonly call: RelayCall,
    readonly tiers: Tier[],
  ) {}

  serves(c: ChannelEntry): boolean {
    return serves(adaptorFor(c.info.type), this.call.endpoint, this.call.inbound.name);
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
    if (!pinned) throw new RelayError(503, `渠道 #${principal.pinnedChannel} 不存在或已禁用`, 'channel_not_available');
    tiers = [{ priority: pinned.priority, channels: [pinned], weights: [1], total: 1 }];
  }
  const plan = new CallPlan(call, tiers ?? []);
  if (!tiers || !anyChannel(plan, false)) {
    if (!table.knownModels.has(model) && !isPriced(app, model)) {
      throw new RelayError(404, `模型 ${model} 不存在`, 'model_not_found');
    }
    throw noChannel(call);
  }
  if (!anyChannel(plan, true)) {
    throw new RelayError(400, `输入 token 数 ${plan.promptTokens ?? 0} 超过了可用渠道的上限`, 'context_length_exceeded');
  }
  const acceptUnset = principal.user.setting.accept_unset_model_ratio_model === true;
  plan.price = priceFor(app, model, principal.group, acceptUnset);
  // Claude/Gemini bodies are estimated from the canonical request (system prompt, contents,
  // generationConfig.maxOutputTokens live elsewhere in their own shapes).
  const body =
    (call.inbound.name !== 'openai' && call.endpoint === 'chat' ? (safeChat(call) as Record<string, unknown> | undefined) : undefined) ?? call.body ?? {};
  const maxTokens = Number(body.max_tokens ?? body.max_completion_tokens ?? body.max_output_tokens ?? 0) || 0;
  plan.calls = call.endpoint === 'images' || call.endpoint === 'image_edits' ? Math.max(1, Number(body.n ?? 1) || 1) : 1;
  plan.reserved = estimateQuota(app, plan.price, estimateTokens(body), maxTokens, plan.calls);
  plan.payer = { userId: principal.user.id, limitedTokenId: principal.token && !principal.token.unlimited ? principal.token.id : undefined };
  return plan;
}

/** Some tier has a channel serving the call (and, with `fitting`, one the prompt fits). */
function anyChannel(plan: CallPlan, fitting: boolean): boolean {
  for (const t of plan.tiers) {
    for (const c of t.channels) if (fitting ? plan.accepts(c) : plan.serves(c)) return true;
  }
  return false;
}

export function noChannel(call: RelayCall): RelayError {
  return new RelayError(503, `当前分组 ${call.principal.group} 下对于模型 ${call.model} 无可用渠道`, 'model_not_available');
}
