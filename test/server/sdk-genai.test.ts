/**
 * The official Google Gen AI SDK (`@google/genai`) against the gateway, with each upstream kind
 * behind it: an OpenAI channel, a Claude channel and a Gemini channel (the mock upstream's three
 * modes). Whole answers, streams, and a function-call round trip (the call comes back as the SDK's
 * `functionCalls`, the function's response goes up in the upstream's own tool-result shape);
 * every call billed and logged.
 */
import { createPartFromFunctionResponse, GoogleGenAI, Type, type Content, type FunctionCall, type GenerateContentResponse } from '@google/genai';
import { ALL_TARGETS, describeEach, makeUser, type TestApp } from '../helpers/app';
import { startMockUpstream, type MockRequest, type MockUpstream } from '../mock-upstream';
import { installClaudeMock } from '../mock-upstream/claude';
import { installGeminiMock } from '../mock-upstream/gemini';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { checkChatRequest, checkClaudeRequest, checkGeminiRequest } from '../helpers/wire';

interface Upstream {
  kind: 'openai' | 'claude' | 'gemini';
  type: number;
  /** The model name the SDK asks for; the channel maps it to `upstreamModel`. */
  model: string;
  upstreamModel: string;
  path: RegExp;
  check(body: unknown): string[];
}
const UPSTREAMS: Upstream[] = [
  { kind: 'openai', type: 1, model: 'genai-via-openai', upstreamModel: 'gpt-upstream', path: /^\/v1\/chat\/completions$/, check: checkChatRequest },
  { kind: 'claude', type: 14, model: 'genai-via-claude', upstreamModel: 'claude-upstream', path: /^\/v1\/messages$/, check: checkClaudeRequest },
  {
    kind: 'gemini',
    type: 24,
    model: 'genai-via-gemini',
    upstreamModel: 'gemini-upstream',
    path: /^\/v1beta\/models\/gemini-upstream:(generateContent|streamGenerateContent)$/,
    check: checkGeminiRequest,
  },
];

const WEATHER_TOOL = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'Current weather of a city',
      parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING, description: 'City name' } }, required: ['city'] },
    },
  ],
};

describeEach(ALL_TARGETS, '@google/genai SDK through the gateway to each upstream kind', (getApp) => {
  let app: TestApp;
  let mock: MockUpstream;
  let gw: { url: string; close(): Promise<void> };
  let userId: number;
  let ai: GoogleGenAI;
  const channelIds: Record<string, number> = {};

  beforeAll(async () => {
    app = getApp();
    mock = await startMockUpstream();
    installClaudeMock(mock);
    installGeminiMock(mock);
    gw = await listen(app.callback);
    await setOptions(app, {
      ModelRatio: JSON.stringify(Object.fromEntries(UPSTREAMS.flatMap((u) => [[u.model, 1] as const, [u.upstreamModel, 1] as const]))),
      CompletionRatio: JSON.stringify(Object.fromEntries(UPSTREAMS.map((u) => [u.model, 2]))),
      GroupRatio: JSON.stringify({ default: 1 }),
      PreConsumedQuota: '100',
    });
    userId = (await makeUser(app, { quota: 10_000_000 })).id;
    const { key } = await seedToken(app, userId);
    for (const u of UPSTREAMS) {
      channelIds[u.kind] = await seedChannel(app, {
        name: `genai-${u.kind}`,
        type: u.type,
        key: `upstream-key-${u.kind}`,
        base_url: mock.url,
        models: u.model,
        model_mapping: JSON.stringify({ [u.model]: u.upstreamModel }),
        auto_ban: 0,
      });
    }
    ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url } });
  });
  afterAll(async () => {
    await gw?.close();
    await mock?.close();
  });
  beforeEach(() => mock.reset());

  const quota = async () => Number((await app.knex('users').where({ id: userId }).first()).quota);
  const lastLog = async () => {
    await flushUsage(app);
    return app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc').first();
  };
  /** The one generation call the upstream got, checked against its protocol (a Gemini passthrough too). */
  const upstreamCall = (u: Upstream): MockRequest => {
    const calls = mock.requests.filter((r) => u.path.test(r.path));
    expect(calls).toHaveLength(1);
    expect(u.check(calls[0]!.json)).toEqual([]);
    if (u.kind !== 'gemini') expect(calls[0]!.json.model).toBe(u.upstreamModel);
    return calls[0]!;
  };
  /** Quota went down by exactly what the new log row says, on this upstream's channel. */
  const expectBilled = async (u: Upstream, before: number, stream: boolean) => {
    const spent = before - (await quota());
    expect(spent).toBeGreaterThan(0);
    const log = await lastLog();
    expect(log).toMatchObject({ model_name: u.model, channel_id: channelIds[u.kind] });
    expect(Number(log.quota)).toBe(spent);
    expect(Boolean(log.is_stream)).toBe(stream);
  };

  describe.each(UPSTREAMS.map((u) => [u.kind, u] as const))('%s channel', (_kind, u) => {
    test('generateContent: text, system instruction and settings carried, usage back, billed', async () => {
      const before = await quota();
      const res = await ai.models.generateContent({
        model: u.model,
        contents: 'Say hello.',
        config: { systemInstruction: 'Be brief.', temperature: 0.5, maxOutputTokens: 200 },
      });
      expect(res.text).toBe('Hello from the mock');
      expect(res.candidates?.[0]?.finishReason).toBe('STOP');
      expect(res.usageMetadata).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 7 });
      const up = upstreamCall(u).json;
      if (u.kind === 'openai') {
        expect(up.messages).toEqual([
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Say hello.' },
        ]);
        expect(up).toMatchObject({ temperature: 0.5, max_tokens: 200 });
      } else if (u.kind === 'claude') {
        expect(JSON.stringify(up.system)).toContain('Be brief.');
        expect(up).toMatchObject({ temperature: 0.5, max_tokens: 200, messages: [{ role: 'user' }] });
        expect(JSON.stringify(up.messages)).toContain('Say hello.');
      } else {
        expect(up).toMatchObject({
          contents: [{ role: 'user', parts: [{ text: 'Say hello.' }] }],
          systemInstruction: { parts: [{ text: 'Be brief.' }] },
          generationConfig: { temperature: 0.5, maxOutputTokens: 200 },
        });
      }
      await expectBilled(u, before, false);
    });

    test('generateContentStream: text in pieces, finish reason and usage at the end, billed', async () => {
      const before = await quota();
      const chunks: GenerateContentResponse[] = [];
      for await (const c of await ai.models.generateContentStream({ model: u.model, contents: 'Stream a hello.' })) chunks.push(c);
      expect(chunks.length).toBeGreaterThan(1);
      expect(chunks.map((c) => c.text ?? '').join('')).toBe('Hello from the mock');
      expect(chunks.some((c) => c.candidates?.[0]?.finishReason === 'STOP')).toBe(true);
      expect(chunks[chunks.length - 1]!.usageMetadata).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 7 });
      const up = upstreamCall(u);
      if (u.kind === 'gemini') expect(up.url).toContain(':streamGenerateContent?alt=sse');
      else expect(up.json.stream).toBe(true);
      await expectBilled(u, before, true);
    });

    test('function call round trip: the call as functionCalls, the function response as the upstream’s tool result', async () => {
      const question: Content = { role: 'user', parts: [{ text: 'How is it outside in Paris right now?' }] };
      mock.options.toolCall = 'get_weather';
      const before = await quota();
      const first = await ai.models.generateContent({ model: u.model, contents: [question], config: { tools: [WEATHER_TOOL] } });
      const calls: FunctionCall[] = first.functionCalls ?? [];
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ name: 'get_weather', args: { city: 'Paris' } });
      const up1 = upstreamCall(u).json;
      if (u.kind === 'openai')
        expect(up1.tools).toEqual([expect.objectContaining({ type: 'function', function: expect.objectContaining({ name: 'get_weather' }) })]);
      if (u.kind === 'claude')
        expect(up1.tools).toEqual([expect.objectContaining({ name: 'get_weather', input_schema: expect.objectContaining({ type: 'object' }) })]);
      await expectBilled(u, before, false);

      mock.reset();
      const modelTurn = first.candidates![0]!.content!;
      const answer: Content = { role: 'user', parts: [createPartFromFunctionResponse(calls[0]!.id ?? '', 'get_weather', { temperature: 21, sky: 'clear' })] };
      const before2 = await quota();
      const second = await ai.models.generateContent({ model: u.model, contents: [question, modelTurn, answer], config: { tools: [WEATHER_TOOL] } });
      expect(second.text).toBe('Hello from the mock');
      expect(second.functionCalls).toBeUndefined();
      const up2 = upstreamCall(u).json;
      if (u.kind === 'openai') {
        const call = up2.messages.find((m: any) => m.role === 'assistant')?.tool_calls?.[0];
        expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
        expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
        const result = up2.messages.find((m: any) => m.role === 'tool');
        expect(result.tool_call_id).toBe(call.id);
        expect(JSON.stringify(result.content)).toContain('21');
      } else if (u.kind === 'claude') {
        const use = up2.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).find((b: any) => b.type === 'tool_use');
        expect(use).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
        const result = up2.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).find((b: any) => b.type === 'tool_result');
        expect(result.tool_use_id).toBe(use.id);
        expect(JSON.stringify(result.content)).toContain('21');
      } else {
        expect(up2.contents[1]).toMatchObject({ role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] });
        expect(up2.contents[2]).toMatchObject({
          role: 'user',
          parts: [{ functionResponse: { name: 'get_weather', response: { temperature: 21, sky: 'clear' } } }],
        });
      }
      await expectBilled(u, before2, false);
    });

    test('generateContentStream with tools: the function call arrives whole in the stream', async () => {
      mock.options.toolCall = 'get_weather';
      const before = await quota();
      const chunks: GenerateContentResponse[] = [];
      for await (const c of await ai.models.generateContentStream({
        model: u.model,
        contents: 'How is it outside in Paris right now?',
        config: { tools: [WEATHER_TOOL] },
      }))
        chunks.push(c);
      const calls = chunks.flatMap((c) => c.functionCalls ?? []);
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ name: 'get_weather', args: { city: 'Paris' } });
      upstreamCall(u);
      await expectBilled(u, before, true);
    });
  });
});
