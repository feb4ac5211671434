/**
 * A converted request carries only fields its target protocol defines. Pure (no DB): a Gemini
 * CLI-shaped request (topK, thinkingConfig, tools, a function call with its thought signature and
 * its response) through the inbound conversion, then into every OpenAI-format adaptor and into
 * Claude's; the strict mock's own check (what OpenAI refuses) is the judge.
 */
import { DEFAULT_OPTIONS } from '../../seeds/defaultOptions';
import { geminiToChat } from '../../server/src/protocols/gemini/format';
import { budgetToEffort, openaiAdaptor, takesReasoningEffort, toOpenAIChatBody } from '../../server/src/protocols/openai/adaptor';
import { azureAdaptor } from '../../server/src/channels/providers/azure';
import { cloudflareAdaptor } from '../../server/src/channels/providers/cloudflare';
import { ollamaAdaptor } from '../../server/src/channels/providers/ollama';
import { xinferenceAdaptor } from '../../server/src/channels/providers/xinference';
import { toCohereRequest } from '../../server/src/channels/providers/cohere';
import { toClaudeRequest } from '../../server/src/protocols/claude/upstreamRequest';
import { CHANNEL_TYPE } from '../../server/src/channels/kinds';
import { strictChatProblem } from '../mock-upstream/openaiStrict';
import type { AdaptorContext, ChannelInfo, ChatRequest, ProviderAdaptor } from '../../server/src/relay/types';

function ctxOf(channel: Partial<ChannelInfo> = {}, over: Partial<AdaptorContext> = {}): AdaptorContext {
  return {
    channel: {
      id: 1,
      type: CHANNEL_TYPE.OpenAI,
      name: 'c',
      key: 'sk-up',
      baseUrl: 'https://api.example',
      organization: '',
      other: '',
      setting: {},
      ...channel,
    },
    upstreamModel: 'gpt-4o',
    requestedModel: 'gemini-2.5-pro',
    stream: false,
    endpoint: 'chat',
    option: (k: string) => DEFAULT_OPTIONS[k] ?? '',
    ...over,
  };
}

/** A Gemini CLI chat turn as it goes on the wire: its chat-base config, a tool call with its signature, the tool's answer. */
const CLI_TURN = {
  systemInstruction: { role: 'user', parts: [{ text: 'You are Gemini CLI.' }] },
  contents: [
    { role: 'user', parts: [{ text: 'List the files' }] },
    {
      role: 'model',
      parts: [
        { text: 'Listing the directory first.', thought: true },
        { text: 'Let me look.' },
        { functionCall: { id: 'ls-1', name: 'list_directory', args: { path: '.' } }, thoughtSignature: 'c2ln' },
      ],
    },
    { role: 'user', parts: [{ functionResponse: { id: 'ls-1', name: 'list_directory', response: { output: 'a.ts\nb.ts' } } }] },
  ],
  generationConfig: { temperature: 1, topP: 0.95, topK: 64, maxOutputTokens: 8192, thinkingConfig: { includeThoughts: true, thinkingBudget: 4096 } },
  tools: [
    {
      functionDeclarations: [
        {
          name: 'list_directory',
          description: 'Lists a directory',
          parametersJsonSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        },
      ],
    },
    { googleSearch: {} },
  ],
  toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
  safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
  cachedContent: 'cachedContents/xyz',
  labels: { team: 'a' },
};

const cliChat = (): ChatRequest => geminiToChat(structuredClone(CLI_TURN), 'gemini-2.5-pro');
const bodyOf = (a: ProviderAdaptor, req: ChatRequest, ctx: AdaptorContext) => JSON.parse(String(a.chatRequest(req, ctx).body)) as Record<string, any>;

describe('canonical → OpenAI Chat: only OpenAI fields', () => {
  it('a Gemini CLI turn becomes a body OpenAI accepts: no top_k, no canonical-only fields, role fields only', () => {
    const chat = cliChat();
    expect(chat).toMatchObject({ top_k: 64, thinking_budget: 4096, reasoning_summary: 'auto' });
    const body = bodyOf(openaiAdaptor, chat, ctxOf());
    expect(strictChatProblem(body)).toBeUndefined();
    expect(body).toEqual({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'You are Gemini CLI.' },
        { role: 'user', content: 'List the files' },
        {
          role: 'assistant',
          content: 'Let me look.',
          tool_calls: [{ id: 'ls-1', type: 'function', function: { name: 'list_directory', arguments: '{"path":"."}' } }],
        },
        { role: 'tool', tool_call_id: 'ls-1', content: '{"output":"a.ts\\nb.ts"}' },
      ],
      temperature: 1,
      top_p: 0.95,
      max_tokens: 8192,
      tools: [
        {
          type: 'function',
          function: { name: 'list_directory', description: 'Lists a directory', parameters: CLI_TURN.tools[0]!.functionDeclarations![0]!.parametersJsonSchema },
        },
      ],
      tool_choice: 'auto',
    });
  });

  it('every OpenAI-format adaptor filters the same way (Azure, Cloudflare, Ollama, Xinference)', () => {
    const chat = cliChat();
    const cases: Array<[ProviderAdaptor, Partial<ChannelInfo>]> = [
      [azureAdaptor, { type: CHANNEL_TYPE.Azure, other: '2024-10-21' }],
      [cloudflareAdaptor, { type: CHANNEL_TYPE.Cloudflare, other: 'acct1' }],
      [ollamaAdaptor, { type: CHANNEL_TYPE.Ollama }],
      [xinferenceAdaptor, { type: CHANNEL_TYPE.Xinference }],
    ];
    for (const [adaptor, channel] of cases) {
      const body = bodyOf(adaptor, chat, ctxOf(channel, { stream: true }));
      expect(strictChatProblem(body)).toBeUndefined();
      for (const k of ['top_k', 'thinking_budget', 'reasoning_summary', 'reasoning_effort']) expect(body[k]).toBeUndefined();
      expect(body.stream_options).toEqual({ include_usage: true });
    }
    // Cohere has its own body: topK is its `k`, the canonical-only fields never appear
    const cohere = toCohereRequest(chat, 'command-r', false);
    expect(cohere.k).toBe(64);
    for (const k of ['top_k', 'thinking_budget', 'reasoning_summary']) expect(cohere[k]).toBeUndefined();
  });

  it('the OpenAI passthrough forwards unknown fields untouched (only conversions are filtered)', () => {
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'x', reasoning_content: 'r' }], top_k: 5, vendor_flag: { a: 1 } };
    const up = openaiAdaptor.rawRequest!(body, ctxOf());
    expect(JSON.parse(String(up.body))).toEqual(body);
  });

  it("the channel's param_override is applied after the filter (an operator may send a field of their own)", () => {
    const body = bodyOf(openaiAdaptor, cliChat(), ctxOf({}, { paramOverride: { top_k: 20, enable_thinking: false } }));
    expect(body.top_k).toBe(20);
    expect(body.enable_thinking).toBe(false);
  });

  it('thinking budget → reasoning_effort, only for models that take one', () => {
    expect(budgetToEffort(-1)).toBeUndefined();
    expect([0, 1024, 2048, 4096, 12288, 24576].map(budgetToEffort)).toEqual(['low', 'low', 'low', 'medium', 'medium', 'high']);
    expect(
      ['o3', 'o4-mini', 'gpt-5', 'gpt-5.1-codex', 'openai/gpt-5-mini', 'gpt-oss-120b', 'gemini-2.5-flash', 'grok-3-mini'].every(takesReasoningEffort),
    ).toBe(true);
    expect(['gpt-4o', 'gpt-4.1', 'o1-mini', 'deepseek-chat', 'claude-sonnet-4', 'qwen3-32b'].some(takesReasoningEffort)).toBe(false);
    const req: ChatRequest = { model: 'x', messages: [{ role: 'user', content: 'hi' }], thinking_budget: 16000 };
    expect(toOpenAIChatBody(req, ctxOf({}, { upstreamModel: 'o4-mini' })).reasoning_effort).toBe('high');
    expect(toOpenAIChatBody(req, ctxOf({}, { upstreamModel: 'gpt-4o' })).reasoning_effort).toBeUndefined();
    // an explicit effort wins over the budget; a model that takes none loses it
    expect(toOpenAIChatBody({ ...req, reasoning_effort: 'low' }, ctxOf({}, { upstreamModel: 'gpt-5' })).reasoning_effort).toBe('low');
    expect(toOpenAIChatBody({ ...req, reasoning_effort: 'low' }, ctxOf({}, { upstreamModel: 'gpt-4o-mini' })).reasoning_effort).toBeUndefined();
  });

  it('reasoning models: max_completion_tokens, no sampling parameters but the defaults', () => {
    const req: ChatRequest = {
      model: 'x',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
      temperature: 0.2,
      top_p: 1,
      presence_penalty: 0.5,
      stop: ['END'],
      logprobs: true,
    };
    expect(toOpenAIChatBody(req, ctxOf({}, { upstreamModel: 'o3' }))).toEqual({
      model: 'o3',
      messages: [{ role: 'user', content: 'hi' }],
      max_completion_tokens: 100,
      top_p: 1,
    });
    // gpt-5-chat-latest is not a reasoning model: everything stays
    expect(toOpenAIChatBody(req, ctxOf({}, { upstreamModel: 'gpt-5-chat-latest' }))).toMatchObject({ max_tokens: 100, temperature: 0.2, stop: ['END'] });
  });

  it('thought signatures reach only Google’s OpenAI-compatible API, reasoning details only OpenRouter', () => {
    const chat = cliChat();
    chat.messages[2]!.reasoning_details = [{ type: 'reasoning.text', text: 't', signature: 's', format: 'anthropic-claude-v1' }];
    const google = bodyOf(openaiAdaptor, chat, ctxOf({ baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai' }));
    expect(google.messages[2].tool_calls[0].extra_content).toEqual({ google: { thought_signature: 'c2ln' } });
    expect(google.messages[2].reasoning_details).toBeUndefined();
    const openrouter = bodyOf(openaiAdaptor, chat, ctxOf({ type: CHANNEL_TYPE.OpenRouter, baseUrl: 'https://openrouter.ai/api' }));
    expect(openrouter.messages[2].reasoning_details).toEqual(chat.messages[2]!.reasoning_details);
    expect(openrouter.messages[2].tool_calls[0].extra_content).toBeUndefined();
    const plain = bodyOf(openaiAdaptor, chat, ctxOf({ baseUrl: 'https://googleapis.com.evil.example' }));
    expect(strictChatProblem(plain)).toBeUndefined();
  });

  it('reasoning_content goes back only to DeepSeek and Moonshot, which want it during a tool loop', () => {
    const chat = cliChat();
    expect(chat.messages[2]!.reasoning_content).toBe('Listing the directory first.');
    const deepseek = bodyOf(
      openaiAdaptor,
      chat,
      ctxOf({ type: CHANNEL_TYPE.DeepSeek, baseUrl: 'https://api.deepseek.com' }, { upstreamModel: 'deepseek-reasoner' }),
    );
    expect(deepseek.messages[2].reasoning_content).toBe('Listing the directory first.');
    const viaCustom = bodyOf(openaiAdaptor, chat, ctxOf({ type: CHANNEL_TYPE.Custom, baseUrl: 'https://api.moonshot.ai' }));
    expect(viaCustom.messages[2].reasoning_content).toBe('Listing the directory first.');
    expect(bodyOf(openaiAdaptor, chat, ctxOf()).messages[2].reasoning_content).toBeUndefined();
  });

  it('content parts keep only their own member', () => {
    const body = toOpenAIChatBody(
      {
        model: 'x',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look', cache_control: { type: 'ephemeral' } },
              { type: 'image_url', image_url: { url: 'https://x/y.png' }, extra: 1 },
            ],
          },
        ],
      },
      ctxOf(),
    );
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'https://x/y.png' } },
        ],
      },
    ]);
  });

  it('OpenRouter-style `reasoning` in answers becomes reasoning_content', () => {
    const res = openaiAdaptor.chatResponse(
      {
        id: 'x',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'a', reasoning: 'why' }, finish_reason: 'stop' }],
      },
      ctxOf(),
    );
    expect(res.choices[0]!.message.reasoning_content).toBe('why');
    const t = openaiAdaptor.chatStream(ctxOf());
    const [chunk] = t.push({
      data: JSON.stringify({
        id: 'x',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index: 0, delta: { reasoning: 'hm' }, finish_reason: null }],
      }),
    });
    expect(chunk!.choices[0]!.delta.reasoning_content).toBe('hm');
  });
});

describe('canonical → Claude: a Gemini CLI turn', () => {
  const CLAUDE_FIELDS = new Set([
    'model',
    'messages',
    'max_tokens',
    'system',
    'temperature',
    'top_p',
    'top_k',
    'stop_sequences',
    'stream',
    'tools',
    'tool_choice',
    'thinking',
    'metadata',
    'service_tier',
  ]);

  it('is a valid Messages body: Claude fields only, roles alternate, each tool_result answers its tool_use', () => {
    const { body } = toClaudeRequest(cliChat(), ctxOf({ type: CHANNEL_TYPE.Anthropic }, { upstreamModel: 'claude-sonnet-4-5' }));
    for (const k of Object.keys(body)) expect(CLAUDE_FIELDS.has(k)).toBe(true);
    const messages = body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    const toolUse = messages[1]!.content.find((b) => b.type === 'tool_use')!;
    expect(toolUse).toMatchObject({ id: 'ls-1', name: 'list_directory', input: { path: '.' } });
    expect(messages[2]!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'ls-1' });
    expect(body.system).toEqual([{ type: 'text', text: 'You are Gemini CLI.' }]);
    expect(body.tools).toEqual([
      { name: 'list_directory', description: 'Lists a directory', input_schema: CLI_TURN.tools[0]!.functionDeclarations![0]!.parametersJsonSchema },
    ]);
    // The thinking budget would be Claude's extended thinking, but this turn answers tool calls made
    // without signed thinking (another family's history), which Claude refuses with thinking on.
    expect(body.thinking).toBeUndefined();
    expect(body.top_k).toBe(64); // Claude takes top_k when not thinking
    const fresh = cliChat();
    fresh.messages = fresh.messages.filter((m) => m.role !== 'assistant' && m.role !== 'tool');
    const first = toClaudeRequest(fresh, ctxOf({ type: CHANNEL_TYPE.Anthropic }, { upstreamModel: 'claude-sonnet-4-5' })).body;
    expect(first.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
    expect(first.top_p).toBeUndefined();
    expect(first.top_k).toBeUndefined();
    expect(JSON.stringify(body)).not.toContain('googleSearch');
    expect(JSON.stringify(body)).not.toContain('cachedContents');
  });
});
