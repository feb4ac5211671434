import type { ChannelEntry } from '../../channels/routeTable';
import type { ChannelWay } from '../../channels/providers';
import type { AdaptorContext, ChatRequest, UpstreamRequest } from '../types';
import type { RelayCall } from './relayCall';
import { own } from '../../lib/own';

/** Channel setting `system_prompt`: added when the request has no system/developer message. */
function systemPromptOf(ch: ChannelEntry): string | undefined {
  const p = ch.info.setting.system_prompt;
  return typeof p === 'string' && p.trim() ? p : undefined;
}

/** The model name sent to this channel (its model mapping). */
export function upstreamModelFor(ch: ChannelEntry, model: string): string {
  const m = own(ch.modelMapping, model);
  return typeof m === 'string' && m.trim() ? m.trim() : model;
}

/** Builds the upstream request for one channel, the way the channel takes the call (channelWay). */
export function buildRequest(call: RelayCall, way: ChannelWay, ch: ChannelEntry, actx: AdaptorContext): UpstreamRequest {
  const adaptor = way.adaptor;
  if (way.mode === 'endpoint' || way.mode === 'via-openai') {
    // `via-openai`: the client's own endpoint in OpenAI's shape first (Gemini embedContent → embeddings).
    const conv = way.mode === 'via-openai' ? call.inbound.convertEndpoint?.(call.endpoint) : undefined;
    const b: Record<string, unknown> = { ...(conv ? conv.toOpenAI(call.body ?? {}) : call.body), model: actx.upstreamModel };
    if (ch.paramOverride) Object.assign(b, ch.paramOverride);
    const native = adaptor.endpointRequest && adaptor.convertedEndpoints?.includes(call.endpoint);
    return native ? adaptor.endpointRequest!(b, actx) : adaptor.rawRequest!(b, actx);
  }
  if (way.mode === 'passthrough') {
    if (call.raw) return adaptor.rawRequest!(undefined, actx, call.raw);
    const body = call.body ?? {};
    const mapped = actx.upstreamModel !== call.model;
    // Pass-through mode (global option or channel setting): the body goes upstream untouched.
    const passBody = call.app.options.bool('global.pass_through_request_enabled') || ch.info.setting.pass_through_body_enabled === true;
    const sysPrompt = call.endpoint === 'chat' && call.inbound.name === 'openai' ? systemPromptOf(ch) : undefined;
    if (passBody && call.rawJson && !mapped) {
      return adaptor.rawRequest!(body, actx, { body: call.rawJson, contentType: 'application/json' });
    }
    // Upstream usage is asked for unless the client did already (then its bytes can go as they are).
    const wantsUsageOpt =
      call.stream &&
      !call.includeUsage &&
      call.inbound.name === 'openai' &&
      (call.endpoint === 'chat' || call.endpoint === 'completions') &&
      ch.info.setting.disable_stream_options !== true;
    if (!mapped && !ch.paramOverride && !wantsUsageOpt && !sysPrompt && call.rawJson) {
      return adaptor.rawRequest!(body, actx, { body: call.rawJson, contentType: 'application/json' });
    }
    const b: Record<string, unknown> = { ...body };
    if (mapped && (call.inbound.name === 'openai' || 'model' in b)) b.model = actx.upstreamModel;
    if (ch.paramOverride) Object.assign(b, ch.paramOverride);
    if (wantsUsageOpt) b.stream_options = { ...((b.stream_options as object) ?? {}), include_usage: true };
    if (sysPrompt && Array.isArray(b.messages) && !(b.messages as Array<{ role?: string }>).some((m) => m?.role === 'system' || m?.role === 'developer')) {
      b.messages = [{ role: 'system', content: sysPrompt }, ...(b.messages as unknown[])];
    }
    return adaptor.rawRequest!(b, actx);
  }
  const chat = (call.chat ??= call.inbound.toChat(call.body, call.modelFromPath));
  // A copy the adaptor may change. Not `{...chat, model, stream}`: in optimised code V8 (Node 20)
  // gave that object a new map on every call, so each property read of it in the adaptor missed
  // its inline cache (≈ 14 runtime misses per converted call); Object.assign keeps one map.
  const c: ChatRequest = Object.assign({}, chat);
  c.model = actx.upstreamModel;
  c.stream = call.stream;
  const sys = systemPromptOf(ch);
  if (sys && !c.messages.some((m) => m.role === 'system' || m.role === 'developer')) c.messages = [{ role: 'system', content: sys }, ...c.messages];
  if (ch.paramOverride) Object.assign(c, ch.paramOverride);
  return adaptor.chatRequest(c, actx);
}
