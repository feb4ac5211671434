/**
 * Gemini conversions, pure (no DB): canonical ⇄ GenerateContent in both directions, the upstream
 * SSE translator and the inbound SSE writer.
 */
import { DEFAULT_OPTIONS } from '../../../seeds/defaultOptions';
import { cleanSchema, safetySettings, SAFETY_CATEGORIES, toGeminiRequest } from '../../../server/src/protocols/gemini/upstreamRequest';
import { countTokensBody, geminiAdaptor, geminiCountTokensRequest, geminiEmbedRequest } from '../../../server/src/protocols/gemini/adaptor';
import { fromGeminiResponse, GeminiStreamTranslator, geminiUsageToCanonical } from '../../../server/src/protocols/gemini/upstreamAnswer';
import { toClaudeRequest } from '../../../server/src/protocols/claude/upstreamRequest';
import { getHints, setHints } from '../../../server/src/protocols/shared';
import { vertexAdaptor } from '../../../server/src/channels/providers/vertex';
import { chatToGemini, geminiEmbeddings, geminiFormat, geminiRoute, geminiToChat } from '../../../server/src/protocols/gemini/format';
import { geminiCountTokensRoute, geminiEmbedRoute, geminiModelsRoute, localTokenCount } from '../../../server/src/protocols/gemini/routes';
import { UpstreamError } from '../../../server/src/relay/errors';
import type { AdaptorContext, ChatChunk, ChatRequest, ChatResponse } from '../../../server/src/relay/types';

function ctxOf(opts: Record<string, string> = {}, over: Partial<AdaptorContext> = {}): AdaptorContext {
  return {
    channel: { id: 2, type: 24, name: 'gemini', key: 'AIza-upstream', baseUrl: 'https://gem.example/', organization: '', other: '', setting: {} },
    upstreamModel: 'gemini-2.0-flash',
    requestedModel: 'gemini-2.0-flash',
    stream: false,
    endpoint: 'chat',
    option: (k: string) => opts[k] ?? DEFAULT_OPTIONS[k] ?? '',
    ...over,
  } as AdaptorContext;
}

const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

function dataLines(text: string): Array<Record<string, any>> {
  return text
    .split('\n\n')
    .filter((b) => b.trim())
    .map((b) => {
      expect(b.startsWith('data: ')).toBe(true);
      return JSON.parse(b.slice(6));
    });
}

describe('canonical → Gemini request', () => {
  it('builds URL (version per model), key header, systemInstruction, roles and generationConfig', () => {
    const req: ChatRequest = {
      model: 'gemini-2.0-flash',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: 'Tell me more' },
      ],
      temperature: 0.4,
      top_p: 0.8,
      top_k: 20,
      max_tokens: 256,
      stop: ['END'],
      response_format: { type: 'json_object' },
    };
    const up = geminiAdaptor.chatRequest(req, ctxOf());
    expect(up.url).toBe('https://gem.example/v1beta/models/gemini-2.0-flash:generateContent');
    expect(up.headers['x-goog-api-key']).toBe('AIza-upstream');
    expect(up.url).not.toContain('key=');
    const body = JSON.parse(String(up.body));
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ text: 'Hello!' }] },
      { role: 'user', parts: [{ text: 'Tell me more' }] },
    ]);
    expect(body.generationConfig).toEqual({
      temperature: 0.4,
      topP: 0.8,
      topK: 20,
      maxOutputTokens: 256,
      stopSequences: ['END'],
      responseMimeType: 'application/json',
    });
    expect(body.safetySettings).toEqual(SAFETY_CATEGORIES.map((category) => ({ category, threshold: 'OFF' })));

    const stream = geminiAdaptor.chatRequest(
      req,
      ctxOf({ 'gemini.version_settings': JSON.stringify({ default: 'v1beta', 'gemini-2.0-flash': 'v1' }) }, { stream: true }),
    );
    expect(stream.url).toBe('https://gem.example/v1/models/gemini-2.0-flash:streamGenerateContent?alt=sse');
  });

  it('safety settings: per category, then per model, then default', () => {
    const raw = JSON.stringify({ default: 'BLOCK_NONE', 'gemini-x': 'BLOCK_ONLY_HIGH', HARM_CATEGORY_HATE_SPEECH: 'BLOCK_LOW_AND_ABOVE' });
    const byCat = (model: string) => Object.fromEntries(safetySettings(raw, model).map((s) => [s.category, s.threshold]));
    expect(byCat('gemini-y').HARM_CATEGORY_HARASSMENT).toBe('BLOCK_NONE');
    expect(byCat('gemini-x').HARM_CATEGORY_HARASSMENT).toBe('BLOCK_ONLY_HIGH');
    expect(byCat('gemini-x').HARM_CATEGORY_HATE_SPEECH).toBe('BLOCK_LOW_AND_ABOVE');
    expect(byCat('gemini-y').HARM_CATEGORY_CIVIC_INTEGRITY).toBe('BLOCK_NONE');
    expect(safetySettings('not json', 'm')[0]!.threshold).toBe('OFF');
  });

  it('images: data URLs → inlineData, URLs → fileData; audio → inlineData', () => {
    const { body } = toGeminiRequest(
      {
        model: 'm',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Describe' },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B64}` } },
              { type: 'image_url', image_url: { url: 'https://img.example/photo.webp?x=1' } },
              { type: 'input_audio', input_audio: { data: 'AAAA', format: 'mp3' } },
            ],
          },
        ],
      },
      ctxOf(),
    );
    expect((body.contents as Array<{ parts: unknown[] }>)[0]!.parts).toEqual([
      { text: 'Describe' },
      { inlineData: { mimeType: 'image/png', data: PNG_B64 } },
      { fileData: { mimeType: 'image/webp', fileUri: 'https://img.example/photo.webp?x=1' } },
      { inlineData: { mimeType: 'audio/mp3', data: 'AAAA' } },
    ]);
  });

  it('tools → functionDeclarations (schema cleaned), tool_choice → toolConfig, tool calls/results', () => {
    const req: ChatRequest = {
      model: 'm',
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":18}' },
        { role: 'tool', tool_call_id: 'call_2', content: 'noon' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather',
            parameters: {
              $schema: 'http://json-schema.org/draft-07/schema#',
              type: 'object',
              additionalProperties: false,
              properties: { city: { type: ['string', 'null'], format: 'uri' } },
              required: ['city'],
            },
          },
        },
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
      ],
      tool_choice: 'required',
    };
    const { body } = toGeminiRequest(req, ctxOf());
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Weather',
            parameters: { type: 'object', properties: { city: { type: 'string', nullable: true } }, required: ['city'] },
          },
          { name: 'get_time' },
        ],
      },
    ]);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: {} } }] },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { temp: 18 } } },
          { functionResponse: { name: 'get_time', response: { content: 'noon' } } },
        ],
      },
    ]);
    const named = toGeminiRequest({ ...req, tool_choice: { type: 'function', function: { name: 'get_time' } } }, ctxOf()).body;
    expect(named.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } });
    expect(toGeminiRequest({ ...req, tool_choice: 'none' }, ctxOf()).body.toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(toGeminiRequest({ ...req, tool_choice: 'auto' }, ctxOf()).body.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
  });

  it('json_schema → responseSchema (cleaned)', () => {
    const { body } = toGeminiRequest(
      {
        model: 'm',
        messages: [],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'x', schema: { type: 'object', additionalProperties: false, properties: { a: { type: 'integer' } } } },
        },
      },
      ctxOf(),
    );
    expect(body.generationConfig).toEqual({ responseMimeType: 'application/json', responseSchema: { type: 'object', properties: { a: { type: 'integer' } } } });
    expect(cleanSchema({ type: 'array', items: { type: 'string', format: 'date-time', $id: 'x' } })).toEqual({
      type: 'array',
      items: { type: 'string', format: 'date-time' },
    });
  });

  it('schema dialects: a null in an enum becomes nullable (Gemini takes string enums only)', () => {
    expect(cleanSchema({ type: ['string', 'null'], enum: ['a', 'b', null] })).toEqual({ type: 'string', nullable: true, enum: ['a', 'b'] });
    expect(cleanSchema({ type: 'object', properties: { u: { type: 'string', enum: ['x', null] } } })).toEqual({
      type: 'object',
      properties: { u: { type: 'string', enum: ['x'], nullable: true } },
    });
    expect(cleanSchema({ type: 'string', enum: ['x'] })).toEqual({ type: 'string', enum: ['x'] });
  });

  it('thinking adapter: -thinking budget = max × percentage capped at 24576; -thinking-N; -nothinking', () => {
    const opts = { 'gemini.thinking_adapter_enabled': 'true', 'gemini.thinking_adapter_budget_tokens_percentage': '0.5' };
    const run = (model: string, max?: number) => {
      const up = geminiAdaptor.chatRequest(
        { model, messages: [{ role: 'user', content: 'x' }], ...(max ? { max_tokens: max } : {}) },
        ctxOf(opts, { upstreamModel: model }),
      );
      return { url: up.url, gc: JSON.parse(String(up.body)).generationConfig };
    };
    const a = run('gemini-2.5-flash-thinking', 10000);
    expect(a.url).toContain('/models/gemini-2.5-flash:generateContent');
    expect(a.gc.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 5000 });
    expect(run('gemini-2.5-flash-thinking', 100000).gc.thinkingConfig.thinkingBudget).toBe(24576);
    expect(run('gemini-2.5-flash-thinking').gc.thinkingConfig).toEqual({ includeThoughts: true });
    expect(run('gemini-2.5-flash-thinking-2048').gc.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 2048 });
    const no = run('gemini-2.5-flash-nothinking');
    expect(no.url).toContain('/models/gemini-2.5-flash:');
    expect(no.gc.thinkingConfig).toEqual({ thinkingBudget: 0 });
    // reasoning_effort maps to a budget only on models that think
    const eff = (model: string) =>
      (
        toGeminiRequest({ model, messages: [], reasoning_effort: 'medium' }, ctxOf({}, { upstreamModel: model })).body.generationConfig as
          Record<string, unknown> | undefined
      )?.thinkingConfig;
    expect(eff('gemini-2.5-flash')).toEqual({ includeThoughts: true, thinkingBudget: 8192 });
    // Gemini 3 takes a level (Pro: low or high)
    expect(eff('gemini-3-pro-preview')).toEqual({ includeThoughts: true, thinkingLevel: 'high' });
    expect(eff('gemini-2.0-flash')).toBeUndefined();
    expect(eff('gemini-1.5-pro')).toBeUndefined();
    // adapter disabled: suffix untouched
    const off = geminiAdaptor.chatRequest({ model: 'x', messages: [] }, ctxOf({}, { upstreamModel: 'gemini-2.5-flash-thinking' }));
    expect(off.url).toContain('/models/gemini-2.5-flash-thinking:');
  });
});

describe('Gemini response → canonical', () => {
  it('maps text, thoughts, function calls, finish and usage (thoughts count as completion)', () => {
    const res = fromGeminiResponse(
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [{ text: 'pondering', thought: true }, { text: 'Hello ' }, { text: 'there' }, { functionCall: { name: 'f', args: { a: 1 } } }],
            },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 20, thoughtsTokenCount: 5, cachedContentTokenCount: 40, totalTokenCount: 125 },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'r1',
      },
      'fallback',
    );
    expect(res.id).toBe('chatcmpl-r1');
    expect(res.model).toBe('gemini-2.5-flash');
    const m = res.choices[0]!.message;
    expect(m.content).toBe('Hello there');
    expect(m.reasoning_content).toBe('pondering');
    expect(m.tool_calls).toHaveLength(1);
    expect(m.tool_calls![0]!.function).toEqual({ name: 'f', arguments: '{"a":1}' });
    expect(m.tool_calls![0]!.id).toMatch(/^call_/);
    expect(res.choices[0]!.finish_reason).toBe('tool_calls');
    expect(res.usage).toEqual({
      prompt_tokens: 100,
      completion_tokens: 25,
      total_tokens: 125,
      prompt_tokens_details: { cached_tokens: 40 },
      completion_tokens_details: { reasoning_tokens: 5 },
    });
  });

  it('maps finish reasons', () => {
    const fin = (r: string) => fromGeminiResponse({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: r }] }, 'm').choices[0]!.finish_reason;
    expect(fin('STOP')).toBe('stop');
    expect(fin('MAX_TOKENS')).toBe('length');
    expect(fin('SAFETY')).toBe('content_filter');
    expect(fin('RECITATION')).toBe('content_filter');
    expect(fin('OTHER')).toBe('stop');
  });

  it('blocked prompt → empty content_filter answer', () => {
    const res = fromGeminiResponse({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 4, totalTokenCount: 4 } }, 'm');
    expect(res.choices).toEqual([{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' }]);
    expect(res.usage).toEqual({ prompt_tokens: 4, completion_tokens: 0, total_tokens: 4 });
  });

  it('error messages', () => {
    expect(geminiAdaptor.errorMessage(400, JSON.stringify({ error: { code: 400, message: 'API key not valid', status: 'INVALID_ARGUMENT' } }))).toBe(
      'API key not valid',
    );
    expect(geminiAdaptor.errorMessage(400, JSON.stringify([{ error: { code: 400, message: 'arr', status: 'X' } }]))).toBe('arr');
  });
});

describe('Gemini SSE → canonical chunks', () => {
  it('translates data events (text, thought, functionCall, finish, usage at end)', () => {
    const t = new GeminiStreamTranslator('fallback');
    const evs = [
      {
        candidates: [{ content: { role: 'model', parts: [{ text: 'hmm', thought: true }] }, index: 0 }],
        usageMetadata: { promptTokenCount: 9 },
        modelVersion: 'gemini-2.5-pro',
      },
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] }, index: 0 }] },
      { candidates: [{ content: { role: 'model', parts: [{ text: 'lo' }] }, index: 0 }] },
      {
        candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'f', args: { q: 1 } } }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 6, thoughtsTokenCount: 3, totalTokenCount: 18 },
      },
    ];
    const chunks: ChatChunk[] = [];
    for (const e of evs) chunks.push(...t.push({ data: JSON.stringify(e) }));
    chunks.push(...t.end());
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    const deltas = chunks.flatMap((c) => c.choices.map((ch) => ch.delta));
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('Hello');
    expect(deltas.map((d) => d.reasoning_content ?? '').join('')).toBe('hmm');
    const tcs = deltas.flatMap((d) => d.tool_calls ?? []);
    expect(tcs).toHaveLength(1);
    expect(tcs[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'f', arguments: '{"q":1}' } });
    expect(chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter(Boolean)).toEqual(['tool_calls']);
    const last = chunks[chunks.length - 1]!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 9, completion_tokens: 9, total_tokens: 18, completion_tokens_details: { reasoning_tokens: 3 } });
    expect(chunks.every((c) => c.model === 'gemini-2.5-pro' || c === chunks[0])).toBe(true);
    expect(t.end()).toEqual([]);
  });

  it('an error payload throws UpstreamError', () => {
    const t = new GeminiStreamTranslator('m');
    expect(t.push({ data: JSON.stringify({ error: { code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED' } }) })).toEqual([]);
    expect(() => t.end()).toThrow(UpstreamError);
    try {
      t.end();
    } catch (e) {
      expect((e as UpstreamError).status).toBe(429);
      expect((e as UpstreamError).message).toBe('quota');
    }
  });
});

describe('Gemini inbound format', () => {
  it('request → canonical: model from path, systemInstruction, images, function call/response, config, tools', () => {
    const req = geminiToChat(
      {
        systemInstruction: { parts: [{ text: 'Sys' }] },
        contents: [
          {
            role: 'user',
            parts: [
              { text: 'What is' },
              { inlineData: { mimeType: 'image/png', data: PNG_B64 } },
              { fileData: { mimeType: 'image/jpeg', fileUri: 'https://img.example/a.jpg' } },
            ],
          },
          { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { q: 'cat' } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { result: 'a cat' } } }] },
        ],
        generationConfig: {
          temperature: 0.1,
          topP: 0.2,
          topK: 3,
          maxOutputTokens: 99,
          stopSequences: ['x'],
          responseMimeType: 'application/json',
          thinkingConfig: { thinkingBudget: 2000 },
        },
        tools: [{ functionDeclarations: [{ name: 'lookup', description: 'Look', parameters: { type: 'OBJECT', properties: { q: { type: 'STRING' } } } }] }],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] } },
      },
      'gemini-2.0-flash',
    );
    expect(req.model).toBe('gemini-2.0-flash');
    const callId = req.messages[2]!.tool_calls![0]!.id;
    expect(req.messages).toEqual([
      { role: 'system', content: 'Sys' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B64}` } },
          { type: 'image_url', image_url: { url: 'https://img.example/a.jpg' } },
        ],
      },
      { role: 'assistant', content: null, tool_calls: [{ id: callId, type: 'function', function: { name: 'lookup', arguments: '{"q":"cat"}' } }] },
      { role: 'tool', tool_call_id: callId, name: 'lookup', content: '{"result":"a cat"}' },
    ]);
    expect(req).toMatchObject({ temperature: 0.1, top_p: 0.2, top_k: 3, max_tokens: 99, stop: ['x'], response_format: { type: 'json_object' } });
    expect(req.reasoning_effort).toBeUndefined();
    expect(req.tools).toEqual([
      { type: 'function', function: { name: 'lookup', description: 'Look', parameters: { type: 'object', properties: { q: { type: 'string' } } } } },
    ]);
    expect(req.tool_choice).toEqual({ type: 'function', function: { name: 'lookup' } });
    expect(getHints(req).geminiThinkingConfig).toEqual({ thinkingBudget: 2000 });
    // a Claude upstream gets the same budget as extended thinking (when the turn can think: no forced tool, no unsigned tool loop)
    const claudeBody = toClaudeRequest(
      { ...req, max_tokens: 8000, tool_choice: 'auto', messages: req.messages.slice(0, 2) },
      ctxOf({}, { upstreamModel: 'claude-x' }),
    ).body;
    expect(claudeBody.thinking).toEqual({ type: 'enabled', budget_tokens: 2000 });
  });

  it('non-image fileData is named in the text, not sent as an image', () => {
    const req = geminiToChat(
      { contents: [{ role: 'user', parts: [{ text: 'Summarise' }, { fileData: { mimeType: 'video/mp4', fileUri: 'https://youtu.be/x' } }] }] },
      'm',
    );
    expect(req.messages).toEqual([{ role: 'user', content: 'Summarise[video/mp4: https://youtu.be/x]' }]);
  });

  it('Gemini → canonical → Gemini round trip keeps the request', () => {
    const original = {
      systemInstruction: { parts: [{ text: 'S' }] },
      contents: [
        { role: 'user', parts: [{ text: 'hi' }, { inlineData: { mimeType: 'image/jpeg', data: 'QUJD' } }] },
        { role: 'model', parts: [{ functionCall: { name: 'f', args: { a: 1 } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'f', response: { ok: true } } }] },
      ],
      generationConfig: { thinkingConfig: { thinkingBudget: 0 } },
    };
    const body = toGeminiRequest(geminiToChat(original, 'gemini-2.5-flash'), ctxOf({}, { upstreamModel: 'gemini-2.5-flash' })).body;
    expect(body.systemInstruction).toEqual(original.systemInstruction);
    expect(body.contents).toEqual(original.contents);
    expect(body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
  });

  it('rejects malformed requests with 400', () => {
    const st = (b: unknown, m?: string) => {
      try {
        geminiToChat(b, m);
      } catch (e) {
        return (e as { status: number }).status;
      }
      return 0;
    };
    expect(st({ contents: [] }, undefined)).toBe(400);
    expect(st('x', 'm')).toBe(400);
    expect(st({}, 'm')).toBe(400);
    expect(st({ contents: [{ role: 'bot', parts: [] }] }, 'm')).toBe(400);
    expect(st({ contents: [{ role: 'user' }] }, 'm')).toBe(400);
    expect(st({ contents: [{ parts: [{ text: 'ok' }] }] }, 'm')).toBe(0);
  });

  it('canonical → GenerateContentResponse', () => {
    const res: ChatResponse = {
      id: 'chatcmpl-q1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Answer',
            reasoning_content: 'why',
            tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"z":3}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 8,
        total_tokens: 18,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 2 },
      },
    };
    expect(chatToGemini(res, 'gemini-alias')).toEqual({
      candidates: [
        {
          content: { role: 'model', parts: [{ text: 'why', thought: true }, { text: 'Answer' }, { functionCall: { id: 'c', name: 'f', args: { z: 3 } } }] },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 6, totalTokenCount: 18, thoughtsTokenCount: 2, cachedContentTokenCount: 4 },
      modelVersion: 'gemini-alias',
      responseId: 'q1',
    });
    const fin = (f: ChatResponse['choices'][number]['finish_reason']) =>
      (chatToGemini({ ...res, choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: f }] }, 'm') as any).candidates[0]
        .finishReason;
    expect(fin('length')).toBe('MAX_TOKENS');
    expect(fin('content_filter')).toBe('SAFETY');
    expect(fin('stop')).toBe('STOP');
  });

  it('Gemini usage → canonical → Gemini is lossless', () => {
    const u = { promptTokenCount: 50, candidatesTokenCount: 7, totalTokenCount: 60, thoughtsTokenCount: 3, cachedContentTokenCount: 20 };
    const res = chatToGemini({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [], usage: geminiUsageToCanonical(u) }, 'm') as any;
    expect(res.usageMetadata).toEqual(u);
  });

  it('canonical chunks → SSE data lines; tool calls buffered into the final event with usage', () => {
    const w = geminiFormat.streamWriter('gemini-alias');
    const c = (delta: ChatChunk['choices'][number]['delta'], finish: ChatChunk['choices'][number]['finish_reason'] = null): ChatChunk => ({
      id: 'chatcmpl-s',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    let out = '';
    out += w.chunk(c({ role: 'assistant', content: '' }));
    out += w.chunk(c({ content: 'Hi' }));
    out += w.chunk(c({ content: ' there' }));
    out += w.chunk(c({ tool_calls: [{ index: 0, id: 'x', type: 'function', function: { name: 'f', arguments: '{"a"' } }] }));
    out += w.chunk(c({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }));
    out += w.chunk(c({}, 'tool_calls'));
    out += w.end({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    expect(w.end(undefined)).toBe('');
    const lines = dataLines(out);
    expect(lines).toHaveLength(3);
    expect(lines[0]!.candidates[0].content.parts).toEqual([{ text: 'Hi' }]);
    expect(lines[1]!.candidates[0].content.parts).toEqual([{ text: ' there' }]);
    expect(lines[2]).toEqual({
      candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'x', name: 'f', args: { a: 1 } } }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 3, totalTokenCount: 8 },
      modelVersion: 'gemini-alias',
      responseId: 's',
    });
  });

  it('errors and routes', () => {
    expect(geminiFormat.error(401, 'bad key', 'invalid_api_key')).toEqual({ error: { code: 401, message: 'bad key', status: 'UNAUTHENTICATED' } });
    expect(geminiFormat.error(429, 'slow', 'x')).toEqual({ error: { code: 429, message: 'slow', status: 'RESOURCE_EXHAUSTED' } });
    expect(geminiFormat.error(503, 'none', 'x')).toEqual({ error: { code: 503, message: 'none', status: 'UNAVAILABLE' } });
    expect(geminiRoute.match('/v1beta/models/gemini-2.0-flash:generateContent')).toEqual({ modelFromPath: 'gemini-2.0-flash', stream: false });
    expect(geminiRoute.match('/v1beta/models/gemini-2.0-flash:streamGenerateContent')).toEqual({ modelFromPath: 'gemini-2.0-flash', stream: true });
    expect(geminiRoute.match('/v1beta/models/gemini-2.0-flash:countTokens')).toBeNull();
    expect(geminiRoute.match('/v1/chat/completions')).toBeNull();
  });
});

describe('model list and image models', () => {
  it('parses the Gemini model list (generateContent models only, prefix stripped)', () => {
    const req = geminiAdaptor.modelsRequest!({ id: 0, type: 24, name: '', key: 'k1', baseUrl: '', organization: '', other: '', setting: {} });
    expect(req).toEqual({ url: 'https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000', method: 'GET', headers: { 'x-goog-api-key': 'k1' } });
    expect(
      geminiAdaptor.parseModels!({
        models: [
          { name: 'models/gemini-2.0-flash', supportedGenerationMethods: ['generateContent'] },
          { name: 'models/embedding-001', supportedGenerationMethods: ['embedContent'] },
        ],
      }),
    ).toEqual(['gemini-2.0-flash']);
  });

  it('gemini.supported_imagine_models asks for image output', () => {
    const opts = { 'gemini.supported_imagine_models': JSON.stringify(['gemini-2.0-flash-exp-image-generation']) };
    const img = toGeminiRequest(
      { model: 'x', messages: [{ role: 'user', content: 'draw' }] },
      ctxOf(opts, { upstreamModel: 'gemini-2.0-flash-exp-image-generation' }),
    ).body;
    expect((img.generationConfig as Record<string, unknown>).responseModalities).toEqual(['TEXT', 'IMAGE']);
    const txt = toGeminiRequest({ model: 'x', messages: [{ role: 'user', content: 'draw' }] }, ctxOf(opts)).body;
    expect(txt.generationConfig).toBeUndefined();
    // image parts in the answer come back as markdown data URLs
    const res = fromGeminiResponse(
      { candidates: [{ content: { parts: [{ inlineData: { mimeType: 'image/png', data: 'QUJD' } }] }, finishReason: 'STOP' }] },
      'm',
    );
    expect(res.choices[0]!.message.content).toBe('![image](data:image/png;base64,QUJD)');
  });
});

describe('passthrough helpers', () => {
  it('Gemini rawRequest keeps the client body, adds safety settings, maps model into the URL', () => {
    const up = geminiAdaptor.rawRequest!({ contents: [{ role: 'user', parts: [{ text: 'x' }] }] }, ctxOf({}, { upstreamModel: 'gemini-mapped', stream: true }));
    expect(up.url).toBe('https://gem.example/v1beta/models/gemini-mapped:streamGenerateContent?alt=sse');
    const body = JSON.parse(String(up.body));
    expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'x' }] }]);
    expect(body.safetySettings).toHaveLength(SAFETY_CATEGORIES.length);
    expect(geminiAdaptor.usageFromBody!({ usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 3, totalTokenCount: 5 } }, ctxOf())).toEqual({
      prompt_tokens: 2,
      completion_tokens: 3,
      total_tokens: 5,
    });
  });

  it('Gemini rawRequest: thinking suffixes, client safetySettings kept, model field dropped', () => {
    const opts = { 'gemini.thinking_adapter_enabled': 'true', 'gemini.thinking_adapter_budget_tokens_percentage': '0.5' };
    const raw = (model: string, body: Record<string, unknown>) => {
      const up = geminiAdaptor.rawRequest!(body, ctxOf(opts, { upstreamModel: model }));
      return { url: up.url, body: JSON.parse(String(up.body)) };
    };
    const a = raw('gemini-2.5-flash-thinking', { model: 'x', contents: [], generationConfig: { maxOutputTokens: 1000 } });
    expect(a.url).toBe('https://gem.example/v1beta/models/gemini-2.5-flash:generateContent');
    expect(a.body.model).toBeUndefined();
    expect(a.body.generationConfig).toEqual({ maxOutputTokens: 1000, thinkingConfig: { includeThoughts: true, thinkingBudget: 500 } });
    expect(raw('gemini-2.5-flash-nothinking', { contents: [] }).body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    expect(raw('gemini-2.5-flash-thinking-999999', { contents: [] }).body.generationConfig.thinkingConfig.thinkingBudget).toBe(24576);
    const own = raw('gemini-2.5-flash-thinking', {
      contents: [],
      generationConfig: { thinkingConfig: { thinkingBudget: 77 } },
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_LOW_AND_ABOVE' }],
    });
    expect(own.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 77 });
    expect(own.body.safetySettings).toEqual([{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_LOW_AND_ABOVE' }]);
  });
});

describe('thought signatures and thinking (Gemini 2.5 / 3)', () => {
  const SIG = 'c2lnbmF0dXJl';

  it('Gemini client → canonical: signatures on calls → extra_content, on other parts → reasoning details', () => {
    const req = geminiToChat(
      {
        contents: [
          { role: 'user', parts: [{ text: 'Compare' }] },
          {
            role: 'model',
            parts: [
              { text: 'Thinking it over', thought: true, thoughtSignature: 'sig-thought' },
              { text: 'Calling both.' },
              { functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: SIG },
              { functionCall: { name: 'f', args: { a: 2 } } },
            ],
          },
          {
            role: 'user',
            parts: [{ functionResponse: { name: 'f', response: { r: 1 } } }, { functionResponse: { name: 'f', response: { r: 2 } } }],
          },
          { role: 'model', parts: [{ text: 'Done.' }, { text: '', thoughtSignature: 'sig-end' }] },
        ],
      },
      'gemini-3-pro-preview',
    );
    const assistant = req.messages[1]!;
    expect(assistant.reasoning_content).toBe('Thinking it over');
    expect(assistant.content).toBe('Calling both.');
    expect(assistant.reasoning_details).toEqual([{ type: 'reasoning.encrypted', data: 'sig-thought', format: 'google-gemini-v1' }]);
    expect(assistant.tool_calls!.map((t) => t.extra_content)).toEqual([{ google: { thought_signature: SIG } }, undefined]);
    // parallel calls of one name: answered in order
    const [c1, c2] = assistant.tool_calls!;
    expect(req.messages.slice(2, 4)).toEqual([
      { role: 'tool', tool_call_id: c1!.id, name: 'f', content: '{"r":1}' },
      { role: 'tool', tool_call_id: c2!.id, name: 'f', content: '{"r":2}' },
    ]);
    expect(req.messages[4]).toEqual({
      role: 'assistant',
      content: 'Done.',
      reasoning_details: [{ type: 'reasoning.encrypted', data: 'sig-end', format: 'google-gemini-v1' }],
    });

    // … and back to a Gemini upstream in the same places (Vertex AI, which always converts)
    const back = toGeminiRequest(req, ctxOf({}, { upstreamModel: 'gemini-3-pro-preview' })).body.contents as Array<{ parts: unknown[] }>;
    expect(back[1]!.parts).toEqual([
      { text: 'Calling both.', thoughtSignature: 'sig-thought' },
      { functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: SIG },
      { functionCall: { name: 'f', args: { a: 2 } } },
    ]);
    expect(back[3]!.parts).toEqual([{ text: 'Done.', thoughtSignature: 'sig-end' }]);
  });

  it('Gemini 3 gets the documented skip value on calls from another model; 2.5 does not', () => {
    const req: ChatRequest = {
      model: 'm',
      messages: [
        { role: 'user', content: 'x' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
            { id: 'b', type: 'function', function: { name: 'g', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'a', content: '1' },
        { role: 'tool', tool_call_id: 'b', content: '2' },
      ],
    };
    const g3 = (toGeminiRequest(req, ctxOf({}, { upstreamModel: 'gemini-3-flash-preview' })).body.contents as Array<{ parts: any[] }>)[1]!.parts;
    expect(g3.map((p) => p.thoughtSignature)).toEqual(['skip_thought_signature_validator', undefined]);
    const g25 = (toGeminiRequest(req, ctxOf({}, { upstreamModel: 'gemini-2.5-flash' })).body.contents as Array<{ parts: any[] }>)[1]!.parts;
    expect(g25.some((p) => p.thoughtSignature)).toBe(false);
  });

  it('Gemini client thinking → canonical: budget, level, includeThoughts', () => {
    const chat = (thinkingConfig: Record<string, unknown>) =>
      geminiToChat({ contents: [{ parts: [{ text: 'x' }] }], generationConfig: { thinkingConfig } }, 'm');
    expect(chat({ thinkingBudget: 2048, includeThoughts: true })).toMatchObject({ thinking_budget: 2048, reasoning_summary: 'auto' });
    expect(chat({ thinkingBudget: 0 }).thinking_budget).toBe(0);
    expect(chat({ thinkingBudget: -1 }).thinking_budget).toBeUndefined();
    expect(chat({ thinkingLevel: 'HIGH' }).reasoning_effort).toBe('high');
    expect(chat({ thinkingLevel: 'THINKING_LEVEL_UNSPECIFIED' }).reasoning_effort).toBeUndefined();
    expect(chat({ includeThoughts: false }).reasoning_summary).toBeUndefined();
  });

  it('canonical thinking → thinkingConfig: budgets within each model’s range, levels on Gemini 3', () => {
    const cfg = (model: string, extra: Partial<ChatRequest>) =>
      (toGeminiRequest({ model, messages: [], ...extra }, ctxOf({}, { upstreamModel: model })).body.generationConfig as Record<string, unknown> | undefined)
        ?.thinkingConfig;
    expect(cfg('gemini-2.5-flash', { thinking_budget: 4000 })).toEqual({ includeThoughts: true, thinkingBudget: 4000 });
    expect(cfg('gemini-2.5-flash', { thinking_budget: 0 })).toEqual({ thinkingBudget: 0 });
    expect(cfg('gemini-2.5-pro', { thinking_budget: 0 })).toEqual({ thinkingBudget: 128 }); // Pro cannot switch thinking off
    expect(cfg('gemini-2.5-pro', { thinking_budget: 99999 })).toEqual({ includeThoughts: true, thinkingBudget: 32768 });
    expect(cfg('gemini-2.5-flash', { thinking_budget: 99999 })).toEqual({ includeThoughts: true, thinkingBudget: 24576 });
    expect(cfg('gemini-2.5-flash-lite', { thinking_budget: 100 })).toEqual({ includeThoughts: true, thinkingBudget: 512 });
    expect(cfg('gemini-2.5-flash', { reasoning_summary: 'auto' })).toEqual({ includeThoughts: true });
    expect(cfg('gemini-3-pro-preview', { thinking_budget: 1000 })).toEqual({ includeThoughts: true, thinkingLevel: 'low' });
    expect(cfg('gemini-3-flash-preview', { thinking_budget: 0 })).toEqual({ thinkingLevel: 'minimal' });
    expect(cfg('gemini-3-flash-preview', { reasoning_effort: 'medium' })).toEqual({ includeThoughts: true, thinkingLevel: 'medium' });
    expect(cfg('gemini-3-pro-preview', { reasoning_effort: 'minimal' })).toEqual({ includeThoughts: true, thinkingLevel: 'low' });
    expect(cfg('gemini-2.0-flash', { thinking_budget: 4000 })).toBeUndefined();
    expect(cfg('gemini-2.5-flash', {})).toBeUndefined();
    // a Claude client's enabled thinking still maps as before
    const claudeLike = setHints({ model: 'x', messages: [] } as ChatRequest, { claudeThinking: { type: 'enabled', budget_tokens: 3000 } });
    expect(cfg('gemini-2.5-flash', claudeLike)).toEqual({ includeThoughts: true, thinkingBudget: 3000 });
  });

  it('Gemini answers → canonical keep signatures; canonical → Gemini client puts them back', () => {
    const res = fromGeminiResponse(
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { text: 'hmm', thought: true },
                { text: 'Answer', thoughtSignature: 'sig-text' },
                { functionCall: { name: 'f', args: {} }, thoughtSignature: 'sig-call' },
              ],
            },
            finishReason: 'STOP',
          },
        ],
      },
      'gemini-3-pro-preview',
    );
    const msg = res.choices[0]!.message;
    expect(msg.reasoning_details).toEqual([{ type: 'reasoning.encrypted', data: 'sig-text', format: 'google-gemini-v1' }]);
    expect(msg.tool_calls![0]!.extra_content).toEqual({ google: { thought_signature: 'sig-call' } });
    const out = chatToGemini(res, 'gemini-3-pro-preview') as any;
    expect(out.candidates[0].content.parts).toEqual([
      { text: 'hmm', thought: true },
      { text: 'Answer', thoughtSignature: 'sig-text' },
      { functionCall: { id: msg.tool_calls![0]!.id, name: 'f', args: {} }, thoughtSignature: 'sig-call' },
    ]);
    // another family's reasoning means nothing to a Gemini client
    const claudeSig = chatToGemini(
      {
        ...res,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'x',
              reasoning_details: [{ type: 'reasoning.text', text: 't', signature: 's', format: 'anthropic-claude-v1' }],
            },
            finish_reason: 'stop',
          },
        ],
      },
      'm',
    ) as any;
    expect(claudeSig.candidates[0].content.parts).toEqual([{ text: 'x' }]);
  });

  it('streams: signatures as deltas from Gemini, back on the parts for Gemini clients', () => {
    const t = new GeminiStreamTranslator('gemini-3-pro-preview');
    const chunks = [
      ...t.push({ data: JSON.stringify({ candidates: [{ content: { parts: [{ text: 'Hi', thoughtSignature: 'sig-a' }] } }] }) }),
      ...t.push({
        data: JSON.stringify({
          candidates: [{ content: { parts: [{ functionCall: { name: 'f', args: { x: 1 } }, thoughtSignature: 'sig-b' }] }, finishReason: 'STOP' }],
        }),
      }),
    ];
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Hi' },
      { reasoning_details: [{ type: 'reasoning.encrypted', data: 'sig-a', format: 'google-gemini-v1' }] },
      {
        tool_calls: [
          {
            index: 0,
            id: expect.any(String),
            type: 'function',
            function: { name: 'f', arguments: '{"x":1}' },
            extra_content: { google: { thought_signature: 'sig-b' } },
          },
        ],
      },
      {},
    ]);
    const w = geminiFormat.streamWriter('gemini-3-pro-preview');
    const text = chunks.map((c) => w.chunk(c)).join('') + w.end(undefined);
    const lines = dataLines(text);
    expect(lines.map((l) => l.candidates[0].content.parts)).toEqual([
      [{ text: 'Hi' }],
      [{ text: '', thoughtSignature: 'sig-a' }],
      [{ functionCall: { id: chunks[3]!.choices[0]!.delta.tool_calls![0]!.id, name: 'f', args: { x: 1 } }, thoughtSignature: 'sig-b' }],
    ]);
  });
});

describe('what only Gemini understands', () => {
  const REQUEST = {
    contents: [{ role: 'user', parts: [{ text: 'Search the news' }] }],
    systemInstruction: 'Plain string instruction',
    tools: [
      { googleSearch: {} },
      { codeExecution: {}, functionDeclarations: [{ name: 'a', parameters: { type: 'OBJECT', properties: { n: { type: 'INTEGER', nullable: true } } } }] },
      { functionDeclarations: [{ name: 'b' }, { name: 'c' }] },
    ],
    toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['a', 'c'] }, retrievalConfig: { languageCode: 'en' } },
    generationConfig: {
      responseMimeType: 'application/json',
      responseJsonSchema: { type: 'object', properties: { x: { type: ['string', 'null'] } } },
      responseModalities: ['TEXT'],
      mediaResolution: 'MEDIA_RESOLUTION_LOW',
      thinkingConfig: { thinkingLevel: 'low', includeThoughts: false },
    },
    safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_ONLY_HIGH' }],
    cachedContent: 'cachedContents/c1',
  };

  it('→ canonical: Gemini schemas become JSON Schema (lower-case types, nullable as a null type, in tools and responseSchema)', () => {
    const req = geminiToChat(
      {
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        tools: [
          {
            functionDeclarations: [
              {
                name: 'f',
                parameters: {
                  type: 'OBJECT',
                  properties: {
                    unit: { type: 'STRING', enum: ['c', 'f'], nullable: true },
                    tags: { type: 'ARRAY', items: { type: 'STRING', nullable: true } },
                    any: { anyOf: [{ type: 'STRING' }, { type: 'NUMBER' }], nullable: true },
                  },
                },
              },
            ],
          },
        ],
        generationConfig: { responseMimeType: 'application/json', responseSchema: { type: 'OBJECT', properties: { n: { type: 'INTEGER', nullable: true } } } },
      },
      'm',
    );
    expect(req.tools![0]!.function.parameters).toEqual({
      type: 'object',
      properties: {
        unit: { type: ['string', 'null'], enum: ['c', 'f', null] },
        tags: { type: 'array', items: { type: ['string', 'null'] } },
        any: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] },
      },
    });
    expect(req.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'response', schema: { type: 'object', properties: { n: { type: ['integer', 'null'] } } } },
    });
    // and back to a Gemini upstream as Gemini's own dialect
    expect(cleanSchema(req.tools![0]!.function.parameters)).toEqual({
      type: 'object',
      properties: {
        unit: { type: 'string', nullable: true, enum: ['c', 'f'] },
        tags: { type: 'array', items: { type: 'string', nullable: true } },
        any: { anyOf: [{ type: 'string' }, { type: 'number' }], nullable: true },
      },
    });
  });

  it('→ canonical: built-in tools, safety settings, unmapped config are dropped (kept as a Gemini hint only)', () => {
    const req = geminiToChat(structuredClone(REQUEST), 'gemini-3-pro-preview');
    expect(req.messages[0]).toEqual({ role: 'system', content: 'Plain string instruction' });
    // ANY over a subset: required, with only the allowed functions offered
    expect(req.tool_choice).toBe('required');
    expect(req.tools!.map((t) => t.function.name)).toEqual(['a', 'c']);
    expect(req.tools![0]!.function.parameters).toEqual({ type: 'object', properties: { n: { type: ['integer', 'null'] } } });
    expect(req.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema: REQUEST.generationConfig.responseJsonSchema } });
    expect(req.reasoning_effort).toBe('low');
    // the built-in tools are named for the answer's X-Gateway-Unconverted note, and nowhere else
    expect(req.unconverted).toEqual(['googleSearch', 'codeExecution']);
    const json = JSON.stringify({ ...req, unconverted: undefined });
    for (const word of ['googleSearch', 'codeExecution', 'safetySettings', 'cachedContent', 'responseModalities', 'retrievalConfig'])
      expect(json).not.toContain(word);
    expect(getHints(req).gemini).toEqual({
      tools: [{ googleSearch: {} }, { codeExecution: {} }],
      safetySettings: REQUEST.safetySettings,
      generationConfig: { responseModalities: ['TEXT'], mediaResolution: 'MEDIA_RESOLUTION_LOW' },
      toolConfig: { retrievalConfig: { languageCode: 'en' } },
    });
    const validated = geminiToChat({ ...structuredClone(REQUEST), toolConfig: { functionCallingConfig: { mode: 'VALIDATED' } } }, 'm');
    expect(validated.tool_choice).toBe('auto');
  });

  it('→ Vertex AI (converted): a Gemini upstream gets them back', () => {
    const sa = JSON.stringify({ client_email: 'a@b.iam.gserviceaccount.com', private_key: 'unused', project_id: 'proj' });
    const ctx = ctxOf(
      {},
      {
        upstreamModel: 'gemini-3-pro-preview',
        channel: { id: 9, type: 41, name: 'v', key: sa, baseUrl: 'https://vertex.example', organization: '', other: 'global', setting: {} },
      },
    );
    const up = vertexAdaptor.chatRequest(geminiToChat(structuredClone(REQUEST), 'gemini-3-pro-preview'), ctx);
    expect(up.url).toBe('https://vertex.example/v1/projects/proj/locations/global/publishers/google/models/gemini-3-pro-preview:generateContent');
    const body = JSON.parse(String(up.body));
    expect(body.tools).toEqual([
      { functionDeclarations: [{ name: 'a', parameters: { type: 'object', properties: { n: { type: 'integer', nullable: true } } } }, { name: 'c' }] },
      { googleSearch: {} },
      { codeExecution: {} },
    ]);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' }, retrievalConfig: { languageCode: 'en' } });
    expect(body.safetySettings).toEqual(REQUEST.safetySettings);
    expect(body.generationConfig).toMatchObject({
      responseMimeType: 'application/json',
      responseModalities: ['TEXT'],
      mediaResolution: 'MEDIA_RESOLUTION_LOW',
      thinkingConfig: { thinkingLevel: 'low', includeThoughts: false },
    });
    expect(body.cachedContent).toBeUndefined();
  });

  it('a PDF given inline is a file part with a name, and goes back to Gemini as inlineData', () => {
    const req = geminiToChat(
      { contents: [{ parts: [{ text: 'Summarise' }, { inlineData: { mimeType: 'application/pdf', data: 'JVBE' } }] }] },
      'gemini-2.5-flash',
    );
    expect(req.messages[0]!.content).toEqual([
      { type: 'text', text: 'Summarise' },
      { type: 'file', file: { filename: 'file.pdf', file_data: 'data:application/pdf;base64,JVBE' } },
    ]);
    const back = toGeminiRequest(req, ctxOf({}, { upstreamModel: 'gemini-2.5-flash' })).body.contents;
    expect(back).toEqual([{ role: 'user', parts: [{ text: 'Summarise' }, { inlineData: { mimeType: 'application/pdf', data: 'JVBE' } }] }]);
  });

  it('code execution parts of the history read as text', () => {
    const req = geminiToChat(
      {
        contents: [
          { role: 'user', parts: [{ text: 'sum' }] },
          {
            role: 'model',
            parts: [{ executableCode: { language: 'PYTHON', code: 'print(1+1)' } }, { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '2' } }],
          },
        ],
      },
      'm',
    );
    expect(req.messages[1]!.content).toBe('\n```python\nprint(1+1)\n```\n\n```\n2\n```\n');
  });
});

describe('Gemini embeddings and countTokens', () => {
  it('embedContent / batchEmbedContents ⇄ OpenAI embeddings', () => {
    expect(geminiEmbeddings.toOpenAI({ content: { parts: [{ text: 'a' }, { text: 'b' }] }, outputDimensionality: 8, taskType: 'RETRIEVAL_DOCUMENT' })).toEqual({
      input: ['a\nb'],
      encoding_format: 'float',
      dimensions: 8,
    });
    const batch = {
      requests: [
        { model: 'models/m', content: { parts: [{ text: 'x' }] } },
        { model: 'models/m', content: { parts: [{ text: 'y' }] } },
      ],
    };
    expect(geminiEmbeddings.toOpenAI(batch)).toEqual({ input: ['x', 'y'], encoding_format: 'float' });
    const st = (b: Record<string, unknown>) => {
      try {
        geminiEmbeddings.toOpenAI(b);
      } catch (e) {
        return (e as { status: number }).status;
      }
      return 0;
    };
    expect(st({ content: { parts: [{ inlineData: { mimeType: 'image/png', data: 'AA' } }] } })).toBe(400);
    expect(st({ requests: [] })).toBe(400);
    expect(st({})).toBe(400);
    const f32 = Buffer.from(new Float32Array([0.5, -1]).buffer).toString('base64');
    const openai = {
      data: [
        { index: 1, embedding: f32 },
        { index: 0, embedding: [1, 2] },
      ],
    };
    expect(geminiEmbeddings.fromOpenAI(openai, batch)).toEqual({ embeddings: [{ values: [1, 2] }, { values: [0.5, -1] }] });
    expect(geminiEmbeddings.fromOpenAI(openai, { content: {} })).toEqual({ embedding: { values: [1, 2] } });
  });

  it('upstream requests: batch entries name the upstream model; countTokens bodies', () => {
    const ctx = ctxOf({}, { upstreamModel: 'gemini-embedding-001', endpoint: 'embeddings' });
    const batch = geminiAdaptor.rawRequest!({ requests: [{ model: 'models/alias', content: { parts: [{ text: 'x' }] } }] }, ctx);
    expect(batch.url).toBe('https://gem.example/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(JSON.parse(String(batch.body)).requests[0].model).toBe('models/gemini-embedding-001');
    const single = geminiEmbedRequest({ model: 'models/alias', content: { parts: [{ text: 'x' }] } }, ctx);
    expect(single.url).toBe('https://gem.example/v1beta/models/gemini-embedding-001:embedContent');
    expect(JSON.parse(String(single.body))).toEqual({ content: { parts: [{ text: 'x' }] } });

    const opts = { 'gemini.thinking_adapter_enabled': 'true' };
    const count = geminiCountTokensRequest(
      { generateContentRequest: { model: 'models/a', contents: [] } },
      ctxOf(opts, { upstreamModel: 'gemini-2.5-flash-thinking' }),
    );
    expect(count.url).toBe('https://gem.example/v1beta/models/gemini-2.5-flash:countTokens');
    expect(JSON.parse(String(count.body))).toEqual({ generateContentRequest: { model: 'models/gemini-2.5-flash', contents: [] } });
    expect(countTokensBody({ generateContentRequest: { model: 'x', contents: [1], tools: [2], safetySettings: [] } }, 'm', true)).toEqual({
      contents: [1],
      tools: [2],
    });
  });

  it('local count and routes', () => {
    const small = localTokenCount({ contents: [{ parts: [{ text: 'hello world' }] }] }, 'gemini-x');
    const withTools = localTokenCount(
      {
        generateContentRequest: {
          contents: [{ parts: [{ text: 'hello world' }] }],
          tools: [{ functionDeclarations: [{ name: 'lookup_the_weather', description: 'a long description here' }] }],
        },
      },
      'gemini-x',
    );
    expect(small).toBeGreaterThan(0);
    expect(withTools).toBeGreaterThan(small + 5);
    expect(geminiCountTokensRoute.match('/v1beta/models/gemini-2.5-pro:countTokens')).toEqual({ modelFromPath: 'gemini-2.5-pro', action: 'countTokens' });
    expect(geminiCountTokensRoute.match('/v1beta/models/gemini-2.5-pro:embedContent')).toBeNull();
    expect(geminiEmbedRoute.match('/v1/models/text%2Dembedding:batchEmbedContents')).toEqual({ modelFromPath: 'text-embedding', action: 'batchEmbedContents' });
    expect(geminiModelsRoute.match('/v1beta/models')).toEqual({});
    expect(geminiModelsRoute.match('/v1beta/models/gemini-2.5-pro')).toEqual({ modelFromPath: 'gemini-2.5-pro' });
    expect(geminiModelsRoute.match('/v1/models')).toBeNull();
  });
});
