/**
 * Gemini (Google AI Studio `generativelanguage` API) upstream adaptor: channel type 24.
 *
 * canonical request → `POST {base}/{version}/models/{model}:generateContent`
 * (`:streamGenerateContent?alt=sse` when streaming) with `x-goog-api-key`; every SSE `data:` of
 * the stream, like the plain response, is one GenerateContentResponse. Decisions (docs/formats.md):
 * - image URLs go as `fileData {fileUri}` (the gateway never fetches client URLs: no SSRF, no
 *   bandwidth); data URLs as `inlineData`;
 * - tool results (`role:'tool'`) become `functionResponse` parts of one user turn; the function
 *   name is taken from the assistant tool call with the same id;
 * - JSON schemas (tool parameters, response schema) are reduced to the OpenAPI subset Gemini accepts;
 * - usage: prompt = promptTokenCount (already includes cachedContentTokenCount), completion =
 *   candidatesTokenCount + thoughtsTokenCount (reasoning_tokens = thoughts), cached_tokens =
 *   cachedContentTokenCount.
 */
import type { AdaptorContext, ChannelInfo, ProviderAdaptor, UpstreamRequest } from '../../relay/types';
import { isRecord, tolerantObserver, upstreamErrorMessage } from '../shared';
import { CHANNEL_TYPE } from '../../channels/kinds';
import { defaultBaseUrl, typesServedBy } from '../../channels/catalogue';
import { GEMINI_THINKING_BUDGET_CAP, safetySettings, geminiVersion, toGeminiRequest } from './upstreamRequest';
import { type GeminiUsageMetadata, geminiUsageToCanonical, fromGeminiResponse, GeminiStreamTranslator } from './upstreamAnswer';

const DEFAULT_BASE = defaultBaseUrl(CHANNEL_TYPE.Gemini);
export function geminiUpstreamUrl(ctx: AdaptorContext, model: string): string {
  const base = (ctx.channel.baseUrl || DEFAULT_BASE).replace(/\/+$/, '');
  const version = geminiVersion(ctx.option('gemini.version_settings'), model);
  const action = ctx.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return `${base}/${version}/models/${encodeURIComponent(model)}:${action}`;
}

function geminiBase(channel: ChannelInfo): string {
  return (channel.baseUrl || DEFAULT_BASE).replace(/\/+$/, '');
}

function geminiHeaders(ctx: AdaptorContext): Record<string, string> {
  return { 'content-type': 'application/json', 'x-goog-api-key': ctx.channel.key };
}

/**
 * A Gemini client's `embedContent` / `batchEmbedContents` body, forwarded (the batch form is the
 * one with `requests`); each batch entry names its model, which must be the one in the URL.
 */
export function geminiEmbedRequest(body: Record<string, unknown>, ctx: AdaptorContext): UpstreamRequest {
  const model = ctx.upstreamModel;
  const out: Record<string, unknown> = { ...body };
  const batch = Array.isArray(out.requests);
  if (batch) out.requests = (out.requests as unknown[]).map((r) => (isRecord(r) ? { ...r, model: `models/${model}` } : r));
  else delete out.model;
  const version = geminiVersion(ctx.option('gemini.version_settings'), model);
  return {
    url: `${geminiBase(ctx.channel)}/${version}/models/${encodeURIComponent(model)}:${batch ? 'batchEmbedContents' : 'embedContent'}`,
    method: 'POST',
    headers: geminiHeaders(ctx),
    body: JSON.stringify(out),
  };
}

/** The model a Gemini-format upstream is called with (the thinking adapter's suffixes removed). */
function bareModel(ctx: AdaptorContext): string {
  const model = ctx.upstreamModel;
  if (ctx.option('gemini.thinking_adapter_enabled') !== 'true') return model;
  const m = /-(no)?thinking(?:-(\d+))?$/.exec(model);
  return m ? model.slice(0, m.index) : model;
}

/**
 * A countTokens body for the upstream model: the `generateContentRequest` form names the model
 * inside too. `flat` (Vertex AI) wants contents, systemInstruction and tools at the top instead.
 */
export function countTokensBody(body: Record<string, unknown>, model: string, flat = false): Record<string, unknown> {
  const g = isRecord(body.generateContentRequest) ? body.generateContentRequest : undefined;
  if (!g) return { ...body };
  if (flat) {
    const { contents, systemInstruction, tools, generationConfig } = g;
    return Object.fromEntries(Object.entries({ contents, systemInstruction, tools, generationConfig }).filter(([, v]) => v !== undefined));
  }
  return { ...body, generateContentRequest: { ...g, model: `models/${model}` } };
}

/** `POST …/models/{model}:countTokens` with a Gemini client's body (not billed). */
export function geminiCountTokensRequest(body: Record<string, unknown>, ctx: AdaptorContext): UpstreamRequest {
  const model = bareModel(ctx);
  const version = geminiVersion(ctx.option('gemini.version_settings'), model);
  return {
    url: `${geminiBase(ctx.channel)}/${version}/models/${encodeURIComponent(model)}:countTokens`,
    method: 'POST',
    headers: geminiHeaders(ctx),
    body: JSON.stringify(countTokensBody(body, model)),
  };
}

export const geminiAdaptor: ProviderAdaptor = {
  name: 'gemini',
  channelTypes: typesServedBy('gemini'),
  format: 'gemini',
  chatRequest(req, ctx) {
    const { body, model } = toGeminiRequest(req, ctx);
    return {
      url: geminiUpstreamUrl(ctx, model),
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': ctx.channel.key, ...(ctx.stream ? { accept: 'text/event-stream' } : {}) },
      body: JSON.stringify(body),
    };
  },
  endpoints: ['chat', 'embeddings'],
  rawRequest(body, ctx) {
    if (ctx.endpoint === 'embeddings') return geminiEmbedRequest(body ?? {}, ctx);
    // same-format passthrough: the client's GenerateContentRequest as is; model from the mapping
    let model = ctx.upstreamModel;
    const out: Record<string, unknown> = { ...(body ?? {}) };
    delete out.model;
    if (ctx.option('gemini.thinking_adapter_enabled') === 'true') {
      const m = /-(no)?thinking(?:-(\d+))?$/.exec(model);
      if (m) {
        model = model.slice(0, m.index);
        const gc: Record<string, unknown> = isRecord(out.generationConfig) ? { ...out.generationConfig } : {};
        if (!isRecord(gc.thinkingConfig)) {
          if (m[1]) gc.thinkingConfig = { thinkingBudget: 0 };
          else {
            const max = typeof gc.maxOutputTokens === 'number' ? gc.maxOutputTokens : undefined;
            const pctRaw = Number(ctx.option('gemini.thinking_adapter_budget_tokens_percentage'));
            const pct = Number.isFinite(pctRaw) && pctRaw > 0 ? pctRaw : 0.6;
            const budget = m[2] ? Number(m[2]) : max ? Math.floor(max * pct) : undefined;
            gc.thinkingConfig =
              budget !== undefined ? { includeThoughts: true, thinkingBudget: Math.min(GEMINI_THINKING_BUDGET_CAP, budget) } : { includeThoughts: true };
          }
        }
        out.generationConfig = gc;
      }
    }
    if (!Array.isArray(out.safetySettings)) out.safetySettings = safetySettings(ctx.option('gemini.safety_settings'), model);
    return {
      url: geminiUpstreamUrl(ctx, model),
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': ctx.channel.key, ...(ctx.stream ? { accept: 'text/event-stream' } : {}) },
      body: JSON.stringify(out),
    };
  },
  usageFromBody(body) {
    return isRecord(body) && isRecord(body.usageMetadata) ? geminiUsageToCanonical(body.usageMetadata as GeminiUsageMetadata) : undefined;
  },
  chatResponse(body, ctx) {
    return fromGeminiResponse(body, ctx.upstreamModel);
  },
  chatStream(ctx) {
    return new GeminiStreamTranslator(ctx.upstreamModel);
  },
  observer(ctx) {
    return tolerantObserver(new GeminiStreamTranslator(ctx.upstreamModel));
  },
  modelsRequest(channel) {
    const base = (channel.baseUrl || DEFAULT_BASE).replace(/\/+$/, '');
    return { url: `${base}/v1beta/models?pageSize=1000`, method: 'GET', headers: { 'x-goog-api-key': channel.key } };
  },
  parseModels(body) {
    const models = isRecord(body) && Array.isArray(body.models) ? body.models : [];
    return models
      .filter((m) => isRecord(m) && (!Array.isArray(m.supportedGenerationMethods) || m.supportedGenerationMethods.includes('generateContent')))
      .map((m) => String((m as Record<string, unknown>).name ?? '').replace(/^models\//, ''))
      .filter(Boolean);
  },
  errorMessage: upstreamErrorMessage,
};
