/**
 * Gemini API on the mock upstream: `POST /{v1beta|v1}/models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse` (without `alt=sse`: a JSON array, as Google does), and
 * `GET /v1beta/models` (the model list, Google's shape). Installed
 * with `installGeminiMock(mock)` through the mock's `route` hook.
 *
 * Behaviour:
 * - key from `x-goog-api-key` or `?key=`; none → 403 PERMISSION_DENIED in Gemini's error shape;
 * - no `contents` array → 400 INVALID_ARGUMENT;
 * - with functionDeclarations, when toolConfig mode is ANY or the last user text mentions
 *   "weather", answers a functionCall (first/allowed function, args `{city:"Paris"}`); also when
 *   `options.toolCall` names a declared function (that one);
 * - `thinkingConfig.includeThoughts` adds a thought part and `thoughtsTokenCount` (= state.thoughtsTokens);
 * - usage: prompt = options.promptTokens, candidates = options.completionTokens, cached =
 *   options.cachedTokens;
 * - `state.thoughtSignature`: function calls (and the last text part) carry it, as Gemini 3 does;
 * - `:countTokens` answers `state.countTokens`; `:embedContent` / `:batchEmbedContents` answer
 *   three-number vectors (a batch entry naming another model than the URL's → 400, as Google does).
 */
import type http from 'node:http';
import type { MockRequest, MockUpstream } from './index';

export interface GeminiMockState {
  thoughtsTokens: number;
  /** When set, function calls carry this `thoughtSignature` (and a text answer its last part), as Gemini 3 does. */
  thoughtSignature?: string;
  /** What `:countTokens` answers. */
  countTokens: number;
}

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 403: 'PERMISSION_DENIED', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL' };
function geminiErr(res: http.ServerResponse, code: number, message: string) {
  send(res, code, { error: { code, message, status: STATUS[code] ?? 'UNKNOWN' } });
}

function lastUserText(contents: unknown[]): string {
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i] as { role?: string; parts?: Array<{ text?: string }> };
    if ((c?.role ?? 'user') !== 'user' || !Array.isArray(c.parts)) continue;
    const t = c.parts.map((p) => p?.text ?? '').join('');
    if (t) return t;
  }
  return '';
}

export function installGeminiMock(mock: MockUpstream): GeminiMockState {
  const state: GeminiMockState = { thoughtsTokens: 0, countTokens: 42 };
  mock.route('POST', /^\/(v1beta|v1)\/models\/[^/:]+:countTokens$/, (req, res) => {
    if (!req.headers['x-goog-api-key']) return geminiErr(res, 403, 'API key required');
    const body = req.json as Record<string, any> | undefined;
    const contents = body?.contents ?? body?.generateContentRequest?.contents;
    if (!Array.isArray(contents)) return geminiErr(res, 400, '* CountTokensRequest.contents: contents is not specified');
    send(res, 200, { totalTokens: state.countTokens, promptTokensDetails: [{ modality: 'TEXT', tokenCount: state.countTokens }] });
  });
  mock.route('POST', /^\/(v1beta|v1)\/models\/[^/:]+:(embedContent|batchEmbedContents)$/, (req, res) => {
    if (!req.headers['x-goog-api-key']) return geminiErr(res, 403, 'API key required');
    const m = /models\/([^/:]+):(embedContent|batchEmbedContents)$/.exec(req.path)!;
    const body = (req.json ?? {}) as Record<string, any>;
    const vector = (i: number) => ({ values: [i + 0.5, 0.125, -2] });
    if (m[2] === 'embedContent') {
      if (!body.content?.parts) return geminiErr(res, 400, '* EmbedContentRequest.content: content is not specified');
      return send(res, 200, { embedding: vector(0) });
    }
    const requests = Array.isArray(body.requests) ? body.requests : [];
    for (const [i, r] of requests.entries()) {
      // Google's rule: each request names the model of the URL
      if (r?.model !== `models/${decodeURIComponent(m[1]!)}`)
        return geminiErr(res, 400, `* BatchEmbedContentsRequest.requests[${i}].model: unexpected model name format`);
    }
    send(res, 200, { embeddings: requests.map((_: unknown, i: number) => vector(i)) });
  });
  mock.route('GET', /^\/v1beta\/models$/, (req, res) => {
    if (!req.headers['x-goog-api-key']) return geminiErr(res, 403, 'API key required');
    send(res, 200, {
      models: [
        { name: 'models/gemini-2.0-flash', supportedGenerationMethods: ['generateContent', 'countTokens'] },
        { name: 'models/gemini-2.5-pro', supportedGenerationMethods: ['generateContent'] },
        { name: 'models/text-embedding-004', supportedGenerationMethods: ['embedContent'] },
      ],
    });
  });
  mock.route('POST', /^\/(v1beta|v1)\/models\/[^/:]+:(generateContent|streamGenerateContent)$/, async (req: MockRequest, res) => {
    const url = new URL(req.url, 'http://mock');
    const key = req.headers['x-goog-api-key'] ?? url.searchParams.get('key');
    if (!key) return geminiErr(res, 403, "Method doesn't allow unregistered callers. Please use API Key.");
    const m = /models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(req.path)!;
    const model = decodeURIComponent(m[1]!);
    const stream = m[2] === 'streamGenerateContent';
    const body = req.json as Record<string, any> | undefined;
    if (!body || !Array.isArray(body.contents)) return geminiErr(res, 400, '* GenerateContentRequest.contents: contents is not specified');

    const o = mock.options;
    const decls = (Array.isArray(body.tools) ? body.tools : []).flatMap((t: any) => (Array.isArray(t?.functionDeclarations) ? t.functionDeclarations : []));
    const fcc = body.toolConfig?.functionCallingConfig;
    const asked = decls.some((d: any) => d?.name === o.toolCall) ? o.toolCall : undefined;
    const useTool = decls.length > 0 && fcc?.mode !== 'NONE' && (fcc?.mode === 'ANY' || asked !== undefined || /weather/i.test(lastUserText(body.contents)));
    const fnName =
      Array.isArray(fcc?.allowedFunctionNames) && fcc.allowedFunctionNames.length
        ? String(fcc.allowedFunctionNames[0])
        : (asked ?? String(decls[0]?.name ?? ''));
    const thinking = body.generationConfig?.thinkingConfig?.includeThoughts === true;
    const responseId = `mockresp${Date.now()}`;
    const usage: Record<string, number> = {
      promptTokenCount: o.promptTokens,
      candidatesTokenCount: o.completionTokens,
      totalTokenCount: o.promptTokens + o.completionTokens + (thinking ? state.thoughtsTokens : 0),
    };
    if (o.cachedTokens) usage.cachedContentTokenCount = o.cachedTokens;
    if (thinking && state.thoughtsTokens) usage.thoughtsTokenCount = state.thoughtsTokens;

    const pieces: Array<Record<string, unknown>> = [];
    const sig = state.thoughtSignature;
    if (thinking) pieces.push({ text: 'Mock thought.', thought: true });
    if (useTool) pieces.push({ functionCall: { name: fnName, args: { city: 'Paris' } }, ...(sig ? { thoughtSignature: sig } : {}) });
    else o.chunks.forEach((c, i) => pieces.push({ text: c, ...(sig && i === o.chunks.length - 1 ? { thoughtSignature: sig } : {}) }));

    if (!stream) {
      const parts: Array<Record<string, unknown>> = [];
      for (const p of pieces) {
        const last = parts[parts.length - 1];
        if (last && typeof p.text === 'string' && typeof last.text === 'string' && !p.thought && !last.thought) {
          last.text = `${last.text}${p.text}`;
          if (p.thoughtSignature) last.thoughtSignature = p.thoughtSignature;
        } else parts.push({ ...p });
      }
      send(res, 200, {
        candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0, safetyRatings: [] }],
        usageMetadata: usage,
        modelVersion: model,
        responseId,
      });
      return;
    }
    const events = pieces.map((p, i) => {
      const last = i === pieces.length - 1;
      return {
        candidates: [{ content: { role: 'model', parts: [p] }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
        usageMetadata: last ? usage : { promptTokenCount: o.promptTokens, totalTokenCount: o.promptTokens },
        modelVersion: model,
        responseId,
      };
    });
    if (url.searchParams.get('alt') !== 'sse') {
      send(res, 200, events);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const e of events) res.write(`data: ${JSON.stringify(e)}\r\n\r\n`);
    res.end();
  });
  return state;
}
