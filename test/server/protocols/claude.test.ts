/**
 * Claude conversions, pure (no DB): canonical ⇄ Claude Messages in both directions, the upstream
 * SSE translator, and the inbound SSE writer checked against the official @anthropic-ai/sdk parser.
 */
import Anthropic from '@anthropic-ai/sdk';
import { DEFAULT_OPTIONS } from '../../../seeds/defaultOptions';
import { acceptsSystemTurns, adjustClaudeMessages, claudeCountTokensRequest, claudeRawBody, claudeAdaptor } from '../../../server/src/protocols/claude/adaptor';
import { ClaudeStreamTranslator, claudeUsageToCanonical, fromClaudeResponse } from '../../../server/src/protocols/claude/upstreamAnswer';
import { toClaudeRequest } from '../../../server/src/protocols/claude/upstreamRequest';
import { awsClaudeAdaptor, bedrockModelId, bedrockRequest, signV4 } from '../../../server/src/channels/providers/bedrock';
import { getHints } from '../../../server/src/protocols/shared';
import { chatToClaude } from '../../../server/src/protocols/claude/answer';
import { claudeError, claudeFormat, claudeRoute } from '../../../server/src/protocols/claude/format';
import { claudeToChat } from '../../../server/src/protocols/claude/request';
import { UpstreamError } from '../../../server/src/relay/errors';
import { toGeminiRequest } from '../../../server/src/protocols/gemini/upstreamRequest';
import { openaiAdaptor } from '../../../server/src/protocols/openai/adaptor';
import { CLAUDE_CODE_BODY, CLAUDE_ONLY, OPENAI_CHAT_FIELDS } from '../../helpers/claudeCode';
import type { AdaptorContext, ChatChunk, ChatRequest, ChatResponse, SSEEvent } from '../../../server/src/relay/types';

function ctxOf(opts: Record<string, string> = {}, over: Partial<AdaptorContext> = {}): AdaptorContext {
  return {
    channel: { id: 1, type: 14, name: 'claude', key: 'sk-ant-upstream', baseUrl: 'https://claude.example/', organization: '', other: '', setting: {} },
    upstreamModel: 'claude-3-5-sonnet-20241022',
    requestedModel: 'claude-3-5-sonnet-20241022',
    stream: false,
    endpoint: 'chat',
    option: (k: string) => opts[k] ?? DEFAULT_OPTIONS[k] ?? '',
    ...over,
  } as AdaptorContext;
}

const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

function events(text: string): SSEEvent[] {
  return text
    .split('\n\n')
    .filter((b) => b.trim())
    .map((b) => {
      const ev = /^event: (.*)$/m.exec(b)?.[1];
      const data = /^data: (.*)$/m.exec(b)?.[1] ?? '';
      return ev ? { event: ev, data } : { data };
    });
}

describe('canonical → Claude request', () => {
  it('builds URL, headers, system, text and default max_tokens', () => {
    const req: ChatRequest = {
      model: 'claude-3-5-sonnet-20241022',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
        { role: 'user', content: 'Hello' },
      ],
      temperature: 0.3,
      top_p: 0.9,
      stop: 'END',
    };
    const up = claudeAdaptor.chatRequest(req, ctxOf());
    expect(up.url).toBe('https://claude.example/v1/messages');
    expect(up.method).toBe('POST');
    expect(up.headers['x-api-key']).toBe('sk-ant-upstream');
    expect(up.headers['anthropic-version']).toBe('2023-06-01');
    expect(up.headers.authorization).toBeUndefined();
    const body = JSON.parse(String(up.body));
    expect(body.model).toBe('claude-3-5-sonnet-20241022');
    expect(body.max_tokens).toBe(8192);
    expect(body.system).toEqual([
      { type: 'text', text: 'You are terse.' },
      { type: 'text', text: 'Answer in English.' },
    ]);
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }]);
    expect(body.temperature).toBe(0.3);
    expect(body.top_p).toBeUndefined(); // temperature wins: newer Claude models refuse both
    expect(body.stop_sequences).toEqual(['END']);
    expect(body.stream).toBeUndefined();
  });

  it('sends temperature or top_p, never both (Claude Sonnet 4.5 and later refuse both)', () => {
    const bodyOf = (over: Partial<ChatRequest>) =>
      JSON.parse(
        String(
          claudeAdaptor.chatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...over }, ctxOf({}, { upstreamModel: 'claude-sonnet-4-5' }))
            .body,
        ),
      );
    const both = bodyOf({ temperature: 0, top_p: 1 });
    expect(both.temperature).toBe(0);
    expect(both).not.toHaveProperty('top_p');
    expect(bodyOf({ top_p: 0.8 }).top_p).toBe(0.8);
    expect(bodyOf({ top_p: 0.8 })).not.toHaveProperty('temperature');
    expect(bodyOf({ temperature: 0.4 }).temperature).toBe(0.4);
  });

  it('uses claude.default_max_tokens per model, then default, and keeps an explicit max_tokens', () => {
    const opts = { 'claude.default_max_tokens': JSON.stringify({ default: 1000, 'claude-3-haiku-20240307': 4096 }) };
    const m = (model: string, max?: number) =>
      toClaudeRequest({ model, messages: [{ role: 'user', content: 'x' }], ...(max ? { max_tokens: max } : {}) }, ctxOf(opts, { upstreamModel: model })).body
        .max_tokens;
    expect(m('claude-3-haiku-20240307')).toBe(4096);
    expect(m('claude-opus-4-20250514')).toBe(1000);
    expect(m('claude-opus-4-20250514', 77)).toBe(77);
    expect(toClaudeRequest({ model: 'a', messages: [], max_completion_tokens: 55 }, ctxOf()).body.max_tokens).toBe(55);
  });

  it('adds model headers from claude.model_headers_settings (arrays joined) but never overrides the key', () => {
    const opts = {
      'claude.model_headers_settings': JSON.stringify({
        'claude-3-5-sonnet-20241022': { 'anthropic-beta': ['a-2025', 'b-2025'], 'x-api-key': 'evil', 'X-Custom': 'v' },
      }),
    };
    const up = claudeAdaptor.chatRequest({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }, ctxOf(opts));
    expect(up.headers['anthropic-beta']).toBe('a-2025,b-2025');
    expect(up.headers['x-custom']).toBe('v');
    expect(up.headers['x-api-key']).toBe('sk-ant-upstream');
  });

  it('converts image URLs and base64 data URLs into image blocks, PDFs into documents', () => {
    const { body } = toClaudeRequest(
      {
        model: 'm',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'https://img.example/cat.png' } },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B64}` } },
              { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=' } },
            ],
          },
        ],
      },
      ctxOf(),
    );
    expect((body.messages as Array<{ content: unknown[] }>)[0]!.content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image', source: { type: 'url', url: 'https://img.example/cat.png' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_B64 } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
    ]);
  });

  it('converts tools, tool_choice, tool calls and tool results (merged into one user turn)', () => {
    const req: ChatRequest = {
      model: 'm',
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
        { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: '24C' }] },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
        { type: 'function', function: { name: 'noop' } },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
    };
    const { body } = toClaudeRequest(req, ctxOf());
    expect(body.tools).toEqual([
      { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
      { name: 'noop', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'get_weather', disable_parallel_tool_use: true });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '24C' }] },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
    for (const [choice, expected] of [
      ['auto', { type: 'auto' }],
      ['required', { type: 'any' }],
      ['none', { type: 'none' }],
    ] as const) {
      expect(toClaudeRequest({ ...req, tool_choice: choice, parallel_tool_calls: undefined }, ctxOf()).body.tool_choice).toEqual(expected);
    }
  });

  it('thinking adapter: -thinking suffix enables extended thinking with budget = max_tokens × percentage', () => {
    const opts = { 'claude.thinking_adapter_enabled': 'true', 'claude.thinking_adapter_budget_tokens_percentage': '0.5' };
    const up = claudeAdaptor.chatRequest(
      { model: 'x', messages: [{ role: 'user', content: 'think' }], max_tokens: 10000, temperature: 0.2, top_p: 0.5 },
      ctxOf(opts, { upstreamModel: 'claude-3-7-sonnet-20250219-thinking' }),
    );
    const body = JSON.parse(String(up.body));
    expect(body.model).toBe('claude-3-7-sonnet-20250219');
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 5000 });
    expect(body.temperature).toBe(1);
    expect(body.top_p).toBeUndefined();
    // adapter off: the suffix is left alone, no thinking
    const off = toClaudeRequest({ model: 'x', messages: [] }, ctxOf({ 'claude.thinking_adapter_enabled': 'false' }, { upstreamModel: 'foo-thinking' }));
    expect(off.body.model).toBe('foo-thinking');
    expect(off.body.thinking).toBeUndefined();
    // budget below Anthropic's minimum is raised to 1024 and max_tokens kept above it
    const small = toClaudeRequest({ model: 'x', messages: [], max_tokens: 1000 }, ctxOf(opts, { upstreamModel: 'c-thinking' })).body;
    expect(small.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(small.max_tokens as number).toBeGreaterThan(1024);
  });

  it('stream flag and accept header', () => {
    const up = claudeAdaptor.chatRequest({ model: 'x', messages: [{ role: 'user', content: 'a' }], stream: true }, ctxOf({}, { stream: true }));
    expect(JSON.parse(String(up.body)).stream).toBe(true);
    expect(up.headers.accept).toBe('text/event-stream');
  });
});

describe('Claude response → canonical', () => {
  it('maps text, thinking, tool_use and usage with cache tokens', () => {
    const res = fromClaudeResponse(
      {
        id: 'msg_01',
        type: 'message',
        role: 'assistant',
        model: 'claude-3-5-sonnet-20241022',
        content: [
          { type: 'thinking', thinking: 'Hmm.', signature: 'sig' },
          { type: 'text', text: 'Checking ' },
          { type: 'text', text: 'now.' },
          { type: 'tool_use', id: 'toolu_9', name: 'get_weather', input: { city: 'Paris' } },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 20, cache_read_input_tokens: 30, cache_creation_input_tokens: 5 },
      },
      'fallback',
    );
    expect(res.id).toBe('msg_01');
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe('claude-3-5-sonnet-20241022');
    expect(res.choices[0]!.message).toEqual({
      role: 'assistant',
      content: 'Checking now.',
      reasoning_content: 'Hmm.',
      reasoning_details: [{ type: 'reasoning.text', text: 'Hmm.', signature: 'sig', format: 'anthropic-claude-v1' }],
      tool_calls: [{ id: 'toolu_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
    });
    expect(res.choices[0]!.finish_reason).toBe('tool_calls');
    expect(res.usage).toEqual({
      prompt_tokens: 45,
      completion_tokens: 20,
      total_tokens: 65,
      prompt_tokens_details: { cached_tokens: 30, cache_creation_tokens: 5 },
    });
  });

  it('maps stop reasons', () => {
    const fin = (r: string) => fromClaudeResponse({ content: [{ type: 'text', text: 'x' }], stop_reason: r, usage: {} }, 'm').choices[0]!.finish_reason;
    expect(fin('end_turn')).toBe('stop');
    expect(fin('stop_sequence')).toBe('stop');
    expect(fin('max_tokens')).toBe('length');
    expect(fin('tool_use')).toBe('tool_calls');
    expect(fin('refusal')).toBe('content_filter');
  });

  it('usage without cache has no details; tool-only answer has null content', () => {
    expect(claudeUsageToCanonical({ input_tokens: 3, output_tokens: 4 })).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    const res = fromClaudeResponse({ content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }], stop_reason: 'tool_use', usage: {} }, 'm');
    expect(res.choices[0]!.message.content).toBeNull();
    expect(res.model).toBe('m');
  });

  it('model list request and parsing', () => {
    const req = claudeAdaptor.modelsRequest!({
      id: 0,
      type: 14,
      name: '',
      key: 'sk-a',
      baseUrl: 'https://c.example/',
      organization: '',
      other: '',
      setting: {},
    });
    expect(req).toEqual({ url: 'https://c.example/v1/models?limit=1000', method: 'GET', headers: { 'x-api-key': 'sk-a', 'anthropic-version': '2023-06-01' } });
    expect(claudeAdaptor.parseModels!({ data: [{ id: 'claude-opus-4-20250514', type: 'model' }, { id: 'claude-3-haiku-20240307' }], has_more: false })).toEqual(
      ['claude-opus-4-20250514', 'claude-3-haiku-20240307'],
    );
  });

  it('extracts error messages', () => {
    expect(claudeAdaptor.errorMessage(400, JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: too big' } }))).toBe(
      'max_tokens: too big',
    );
    expect(claudeAdaptor.errorMessage(502, '<html>bad gateway</html>')).toBe('<html>bad gateway</html>');
    expect(claudeAdaptor.errorMessage(503, '')).toContain('503');
  });
});

const CLAUDE_STREAM = [
  {
    event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        id: 'msg_s1',
        type: 'message',
        role: 'assistant',
        model: 'claude-x',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 12, output_tokens: 1, cache_read_input_tokens: 100, cache_creation_input_tokens: 7 },
      },
    },
  },
  { event: 'ping', data: { type: 'ping' } },
  { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me think' } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'abc' } } },
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
  { event: 'content_block_start', data: { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hello' } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: ' world' } } },
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 1 } },
  {
    event: 'content_block_start',
    data: { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_s', name: 'get_weather', input: {} } },
  },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":' } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } } },
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 2 } },
  { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 42 } } },
  { event: 'message_stop', data: { type: 'message_stop' } },
].map((e) => ({ event: e.event, data: JSON.stringify(e.data) }));

describe('Claude SSE → canonical chunks', () => {
  it('translates the full event sequence', () => {
    const t = new ClaudeStreamTranslator('fallback');
    const chunks: ChatChunk[] = [];
    for (const ev of CLAUDE_STREAM) chunks.push(...t.push(ev));
    chunks.push(...t.end());
    expect(chunks.every((c) => c.id === 'msg_s1' && c.object === 'chat.completion.chunk' && c.model === 'claude-x')).toBe(true);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    const deltas = chunks.flatMap((c) => c.choices.map((ch) => ch.delta));
    expect(deltas.map((d) => d.reasoning_content ?? '').join('')).toBe('Let me think');
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('Hello world');
    const tc = deltas.flatMap((d) => d.tool_calls ?? []);
    expect(tc[0]).toEqual({ index: 0, id: 'toolu_s', type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(tc.map((x) => x.function?.arguments ?? '').join('')).toBe('{"city":"Paris"}');
    expect(tc.every((x) => x.index === 0)).toBe(true);
    const finishes = chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter(Boolean);
    expect(finishes).toEqual(['tool_calls']);
    const last = chunks[chunks.length - 1]!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({
      prompt_tokens: 119,
      completion_tokens: 42,
      total_tokens: 161,
      prompt_tokens_details: { cached_tokens: 100, cache_creation_tokens: 7 },
    });
    expect(t.usage()).toEqual(last.usage);
    // exactly one usage chunk even though end() ran after message_stop
    expect(chunks.filter((c) => c.usage).length).toBe(1);
  });

  it('an error event throws an UpstreamError (on the next push or end); overloaded → 529', () => {
    const t = new ClaudeStreamTranslator('m');
    expect(t.push({ event: 'error', data: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }) })).toEqual([]);
    expect(() => t.push({ event: 'ping', data: '{"type":"ping"}' })).toThrow(UpstreamError);
    let err: unknown;
    try {
      t.end();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).status).toBe(529);
    expect((err as UpstreamError).message).toBe('Overloaded');
  });

  it('a tool_use without input gets arguments "{}" when its block stops (not "")', () => {
    const t = new ClaudeStreamTranslator('m');
    const ev = (data: Record<string, unknown>) => ({ event: String(data.type), data: JSON.stringify(data) });
    const chunks: ChatChunk[] = [
      ev({ type: 'message_start', message: { id: 'msg_1', model: 'claude-x', usage: { input_tokens: 1, output_tokens: 0 } } }),
      ev({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_a', name: 'get_time', input: {} } }),
      ev({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } }),
      ev({ type: 'content_block_stop', index: 0 }),
      ev({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_b', name: 'get_weather', input: {} } }),
      ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":"Paris"}' } }),
      ev({ type: 'content_block_stop', index: 1 }),
      ev({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 5 } }),
    ].flatMap((e) => t.push(e));
    const args = new Map<number, string>();
    for (const tc of chunks.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls ?? [])))
      args.set(tc.index, (args.get(tc.index) ?? '') + (tc.function?.arguments ?? ''));
    expect([...args.values()]).toEqual(['{}', '{"city":"Paris"}']);
  });

  it('a tool_use without input whose block never stops still gets "{}" before the finish', () => {
    const t = new ClaudeStreamTranslator('m');
    const ev = (data: Record<string, unknown>) => ({ event: String(data.type), data: JSON.stringify(data) });
    t.push(ev({ type: 'message_start', message: { id: 'msg_1', model: 'claude-x' } }));
    t.push(ev({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_a', name: 'get_time', input: {} } }));
    const out = t.push(ev({ type: 'message_delta', delta: { stop_reason: 'tool_use' } }));
    expect(out.map((c) => c.choices[0]!.delta.tool_calls?.[0]?.function?.arguments ?? c.choices[0]!.finish_reason)).toEqual(['{}', 'tool_calls']);
  });

  it('ignores garbage and unknown events', () => {
    const t = new ClaudeStreamTranslator('m');
    expect(t.push({ data: 'not json' })).toEqual([]);
    expect(t.push({ event: 'whatever', data: '{"type":"whatever"}' })).toEqual([]);
    expect(t.usage()).toBeUndefined();
    expect(t.end()).toEqual([]);
  });
});

describe('Claude inbound format: request → canonical', () => {
  it('converts system blocks, images, documents, tool_use/tool_result, tools, tool_choice, stops, thinking', () => {
    const req = claudeToChat({
      model: 'claude-3-5-sonnet-20241022',
      max_tokens: 2048,
      system: [
        { type: 'text', text: 'Be nice.' },
        { type: 'text', text: 'Be brief.' },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_B64 } },
            { type: 'image', source: { type: 'url', url: 'https://img.example/dog.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 's' },
            { type: 'text', text: 'Calling.' },
            { type: 'tool_use', id: 'toolu_a', name: 'lookup', input: { q: 'dog' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_a', content: [{ type: 'text', text: 'a dog' }] },
            { type: 'text', text: 'and?' },
          ],
        },
      ],
      tools: [
        { name: 'lookup', description: 'Lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } } } },
        { type: 'web_search_20250305', name: 'web_search' },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      stop_sequences: ['###'],
      temperature: 0.5,
      top_k: 40,
      stream: true,
      metadata: { user_id: 'u-1' },
      thinking: { type: 'enabled', budget_tokens: 8000 },
    });
    expect(req.model).toBe('claude-3-5-sonnet-20241022');
    expect(req.max_tokens).toBe(2048);
    expect(req.messages).toEqual([
      { role: 'system', content: 'Be nice.\nBe brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look:' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B64}` } },
          { type: 'image_url', image_url: { url: 'https://img.example/dog.jpg' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Calling.',
        reasoning_content: 'hmm',
        reasoning_details: [{ type: 'reasoning.text', text: 'hmm', signature: 's', format: 'anthropic-claude-v1' }],
        tool_calls: [{ id: 'toolu_a', type: 'function', function: { name: 'lookup', arguments: '{"q":"dog"}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_a', content: 'a dog' },
      { role: 'user', content: 'and?' },
    ]);
    expect(req.tools).toEqual([
      { type: 'function', function: { name: 'lookup', description: 'Lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } },
    ]);
    expect(req.tool_choice).toBe('required');
    expect(req.parallel_tool_calls).toBe(false);
    expect(req.stop).toEqual(['###']);
    expect(req.temperature).toBe(0.5);
    expect(req.top_k).toBe(40);
    expect(req.stream).toBe(true);
    expect(req.user).toBeUndefined();
    expect(req.reasoning_effort).toBeUndefined(); // only an explicit output_config.effort sets it
    expect(req.thinking_budget).toBe(8000);
    expect(req.reasoning_summary).toBe('auto');
    expect(getHints(req).claudeThinking).toEqual({ type: 'enabled', budget_tokens: 8000 });
    // the hint survives a spread (model mapping) but never reaches JSON
    expect(JSON.stringify({ ...req })).not.toContain('budget_tokens');
    expect(JSON.stringify({ ...req })).not.toContain('claudeThinking');
    expect(getHints({ ...req }).claudeThinking?.budget_tokens).toBe(8000);
    // …and the Claude adaptor uses the exact budget
    const body = toClaudeRequest({ ...req, max_tokens: 20000, tool_choice: 'auto' }, ctxOf()).body;
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 8000 });
    // …with the signed thinking first in the assistant turn
    expect((body.messages as Array<{ content: Array<{ type: string }> }>)[1]!.content[0]).toEqual({ type: 'thinking', thinking: 'hmm', signature: 's' });
    // Claude cannot think with a forced tool (tool_choice any): thinking is left out
    expect(toClaudeRequest({ ...req, max_tokens: 20000 }, ctxOf()).body.thinking).toBeUndefined();
    // …and the Gemini adaptor maps it to a thinking budget
    const gem = toGeminiRequest({ ...req }, { ...ctxOf(), upstreamModel: 'gemini-2.5-flash' }).body as { generationConfig: Record<string, unknown> };
    expect(gem.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 8000 });
  });

  it('tool_result images follow the tool message; URL documents become a text mention', () => {
    const req = claudeToChat({
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't1',
              content: [
                { type: 'text', text: 'screenshot:' },
                { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'QUJD' } },
              ],
            },
            { type: 'document', source: { type: 'url', url: 'https://x.example/a.pdf' } },
          ],
        },
      ],
    });
    expect(req.messages).toEqual([
      { role: 'tool', tool_call_id: 't1', content: 'screenshot:' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,QUJD' } },
          { type: 'text', text: '[document: https://x.example/a.pdf]' },
        ],
      },
    ]);
  });

  it('round trip Claude → canonical → Claude keeps text, images and tools', () => {
    const original = {
      model: 'm',
      max_tokens: 100,
      system: 'sys',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'image', source: { type: 'url', url: 'https://x.example/a.png' } },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
      ],
      tool_choice: { type: 'tool', name: 'f' },
      tools: [{ name: 'f', input_schema: { type: 'object', properties: { a: { type: 'number' } } } }],
    };
    const body = toClaudeRequest(claudeToChat(original), ctxOf({}, { upstreamModel: 'm' })).body;
    expect(body.system).toEqual([{ type: 'text', text: 'sys' }]);
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'image', source: { type: 'url', url: 'https://x.example/a.png' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
    ]);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'f' });
  });

  it('rejects malformed requests with 400', () => {
    const bad = (b: unknown) => {
      try {
        claudeToChat(b);
      } catch (e) {
        return (e as { status: number }).status;
      }
      return 0;
    };
    expect(bad(null)).toBe(400);
    expect(bad({ messages: [] })).toBe(400);
    expect(bad({ model: 'm' })).toBe(400);
    expect(bad({ model: 'm', messages: [{ role: 'tool', content: 'x' }] })).toBe(400);
    expect(bad({ model: 'm', messages: [{ role: 'system', content: 5 }] })).toBe(400);
    expect(bad({ model: 'm', messages: [{ role: 'user', content: 5 }] })).toBe(400);
    expect(bad({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file' } }] }] })).toBe(400);
    expect(bad({ model: 'm', max_tokens: -1, messages: [] })).toBe(400);
    expect(bad({ model: 'm', messages: [{ role: 'user', content: 'ok' }] })).toBe(0);
  });

  it('route matches /v1/messages only', () => {
    expect(claudeRoute.match('/v1/messages')).toEqual({});
    expect(claudeRoute.match('/v1/chat/completions')).toBeNull();
    expect(claudeRoute.keyStyle).toBe('claude');
  });
});

describe('Claude inbound format: canonical → Claude response', () => {
  const res: ChatResponse = {
    id: 'chatcmpl-abc',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Sure.',
          reasoning_content: 'thinking...',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"x":2}' } }],
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 100, completion_tokens: 9, total_tokens: 109, prompt_tokens_details: { cached_tokens: 60, cache_creation_tokens: 10 } },
  };

  it('builds the message with blocks, stop reason and usage (input = prompt − cache parts)', () => {
    expect(chatToClaude(res, 'claude-alias')).toEqual({
      id: 'msg_abc',
      type: 'message',
      role: 'assistant',
      model: 'claude-alias',
      content: [
        { type: 'thinking', thinking: 'thinking...', signature: '' },
        { type: 'text', text: 'Sure.' },
        { type: 'tool_use', id: 'call_1', name: 'f', input: { x: 2 } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 30, output_tokens: 9, cache_read_input_tokens: 60, cache_creation_input_tokens: 10 },
    });
  });

  it('maps finish reasons', () => {
    const stop = (f: ChatResponse['choices'][number]['finish_reason']) =>
      (chatToClaude({ ...res, choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: f }] }, 'm') as { stop_reason: string })
        .stop_reason;
    expect(stop('stop')).toBe('end_turn');
    expect(stop('length')).toBe('max_tokens');
    expect(stop('tool_calls')).toBe('tool_use');
    expect(stop('content_filter')).toBe('refusal');
  });

  it('Claude usage → canonical → Claude is lossless', () => {
    const u = { input_tokens: 11, output_tokens: 22, cache_read_input_tokens: 33, cache_creation_input_tokens: 44 };
    const back = chatToClaude({ ...res, usage: claudeUsageToCanonical(u) }, 'm') as { usage: unknown };
    expect(back.usage).toEqual(u);
  });

  it('errors in Claude shape', () => {
    expect(claudeFormat.error(401, '无效的令牌', 'invalid_api_key')).toEqual({ type: 'error', error: { type: 'authentication_error', message: '无效的令牌' } });
    expect(claudeError(403, 'x').error.type).toBe('permission_error');
    expect(claudeError(429, 'x').error.type).toBe('rate_limit_error');
    expect(claudeError(503, 'x').error.type).toBe('overloaded_error');
    expect(claudeError(400, 'x').error.type).toBe('invalid_request_error');
  });
});

/** Runs SSE text through the official SDK stream parser (fetch stubbed, no network). */
async function parseWithSdk(sse: string) {
  const client = new Anthropic({
    apiKey: 'sk-test',
    baseURL: 'http://sdk.invalid',
    maxRetries: 0,
    fetch: async () => new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  });
  const stream = client.messages.stream({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
  const texts: string[] = [];
  stream.on('text', (t) => texts.push(t));
  const final = await stream.finalMessage();
  return { final, texts };
}

function chunk(delta: ChatChunk['choices'][number]['delta'], finish: ChatChunk['choices'][number]['finish_reason'] = null): ChatChunk {
  return { id: 'chatcmpl-xyz', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] };
}

describe('Claude inbound format: canonical chunks → Claude SSE', () => {
  it('emits the event sequence the SDK accepts (thinking, text, two tool calls, usage)', async () => {
    const w = claudeFormat.streamWriter('claude-alias');
    let out = '';
    out += w.chunk(chunk({ role: 'assistant', content: '' }));
    out += w.chunk(chunk({ reasoning_content: 'Think ' }));
    out += w.chunk(chunk({ reasoning_content: 'hard.' }));
    out += w.chunk(chunk({ content: 'Hello' }));
    out += w.chunk(chunk({ content: ', world' }));
    out += w.chunk(chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }));
    out += w.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }));
    out += w.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }));
    out += w.chunk(chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }] }));
    out += w.chunk(chunk({}, 'tool_calls'));
    out += w.chunk({
      ...chunk({}),
      choices: [],
      usage: { prompt_tokens: 50, completion_tokens: 7, total_tokens: 57, prompt_tokens_details: { cached_tokens: 20 } },
    });
    out += w.end({ prompt_tokens: 50, completion_tokens: 7, total_tokens: 57, prompt_tokens_details: { cached_tokens: 20 } });

    const evs = events(out);
    expect(evs.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const e of evs) expect(JSON.parse(e.data).type).toBe(e.event);
    const starts = evs.filter((e) => e.event === 'content_block_start').map((e) => JSON.parse(e.data));
    expect(starts.map((s) => s.index)).toEqual([0, 1, 2, 3]);
    expect(starts.map((s) => s.content_block.type)).toEqual(['thinking', 'text', 'tool_use', 'tool_use']);

    const { final, texts } = await parseWithSdk(out);
    expect(texts.join('')).toBe('Hello, world');
    expect(final.id).toBe('msg_xyz');
    expect(final.model).toBe('claude-alias');
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content).toEqual([
      { type: 'thinking', thinking: 'Think hard.', signature: '' },
      { type: 'text', text: 'Hello, world' },
      { type: 'tool_use', id: 'call_a', name: 'f', input: { a: 1 } },
      { type: 'tool_use', id: 'call_b', name: 'g', input: {} },
    ]);
    expect(final.usage.input_tokens).toBe(30);
    expect(final.usage.output_tokens).toBe(7);
    expect(final.usage.cache_read_input_tokens).toBe(20);
  });

  it('streamError() gives an error event the SDK raises as an API error', async () => {
    const w = claudeFormat.streamWriter('m');
    const out = w.chunk(chunk({ content: 'partial' })) + claudeFormat.streamError(502, '上游连接中断', 'upstream_stream_interrupted');
    await expect(parseWithSdk(out)).rejects.toMatchObject({ error: { type: 'error', error: { type: 'api_error', message: '上游连接中断' } } });
  });

  it('an empty stream still produces a valid message; end() is idempotent', async () => {
    const w = claudeFormat.streamWriter('m');
    const out = w.end(undefined);
    expect(w.end(undefined)).toBe('');
    const { final } = await parseWithSdk(out);
    expect(final.content).toEqual([]);
    expect(final.stop_reason).toBe('end_turn');
  });

  it('Claude upstream → canonical → Claude client reproduces the upstream message', async () => {
    const t = new ClaudeStreamTranslator('m');
    const w = claudeFormat.streamWriter('claude-x');
    let out = '';
    for (const ev of CLAUDE_STREAM) for (const c of t.push(ev)) out += w.chunk(c);
    for (const c of t.end()) out += w.chunk(c);
    out += w.end(t.usage());
    const { final } = await parseWithSdk(out);
    expect(final.id).toBe('msg_s1');
    // the signature survives the trip through the canonical format
    expect(final.content).toEqual([
      { type: 'thinking', thinking: 'Let me think', signature: 'abc' },
      { type: 'text', text: 'Hello world' },
      { type: 'tool_use', id: 'toolu_s', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    expect(final.stop_reason).toBe('tool_use');
    expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 42, cache_read_input_tokens: 100, cache_creation_input_tokens: 7 });
  });
});

describe('Claude passthrough body (Claude client → Claude channel)', () => {
  it('keeps the body, maps the model, defaults max_tokens, sets stream from the call', () => {
    const body = {
      model: 'alias',
      system: [{ type: 'text', text: 's', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
      metadata: { user_id: 'u' },
    };
    const out = claudeRawBody(body, ctxOf({ 'claude.default_max_tokens': '{"default":1234}' }, { upstreamModel: 'claude-real' })).body;
    expect(out).toEqual({ ...body, model: 'claude-real', max_tokens: 1234, stream: undefined });
    expect('stream' in out).toBe(false);
    const streamed = claudeRawBody({ ...body, max_tokens: 50 }, ctxOf({}, { upstreamModel: 'claude-real', stream: true })).body;
    expect(streamed).toMatchObject({ max_tokens: 50, stream: true });
  });

  it('applies the -thinking adapter only when the client sent no thinking', () => {
    const opts = { 'claude.thinking_adapter_enabled': 'true', 'claude.thinking_adapter_budget_tokens_percentage': '0.5' };
    const a = claudeRawBody({ messages: [], max_tokens: 4000, top_p: 0.3 }, ctxOf(opts, { upstreamModel: 'claude-x-thinking' }));
    expect(a.model).toBe('claude-x');
    expect(a.body).toMatchObject({ model: 'claude-x', thinking: { type: 'enabled', budget_tokens: 2000 }, temperature: 1 });
    expect(a.body.top_p).toBeUndefined();
    const b = claudeRawBody(
      { messages: [], max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 1500 } },
      ctxOf(opts, { upstreamModel: 'claude-x-thinking' }),
    );
    expect(b.body.thinking).toEqual({ type: 'enabled', budget_tokens: 1500 });
    const up = claudeAdaptor.rawRequest!(
      { messages: [] },
      ctxOf(
        { ...opts, 'claude.model_headers_settings': '{"claude-x-thinking":{"anthropic-beta":"interleaved-thinking-2025-05-14"}}' },
        { upstreamModel: 'claude-x-thinking' },
      ),
    );
    expect(up.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(up.url).toBe('https://claude.example/v1/messages');
  });

  it('usageFromBody reads Claude usage', () => {
    expect(claudeAdaptor.usageFromBody!({ usage: { input_tokens: 1, output_tokens: 2, cache_read_input_tokens: 3 } }, ctxOf())).toEqual({
      prompt_tokens: 4,
      completion_tokens: 2,
      total_tokens: 6,
      prompt_tokens_details: { cached_tokens: 3, cache_creation_tokens: 0 },
    });
  });
});

describe('AWS Claude (type 33): SigV4 and Bedrock invoke', () => {
  const EXAMPLE = {
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
    region: 'us-east-1',
    service: 'service',
    now: new Date('2015-08-30T12:36:00Z'),
  };

  it('matches the AWS SigV4 test suite (get-vanilla, get-vanilla-query-order-key-case)', () => {
    const vanilla = signV4({ method: 'GET', url: 'https://example.amazonaws.com/', headers: {}, body: '', ...EXAMPLE });
    expect(vanilla.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
    expect(vanilla['x-amz-date']).toBe('20150830T123600Z');
    expect(vanilla.host).toBe('example.amazonaws.com');
    const query = signV4({ method: 'GET', url: 'https://example.amazonaws.com/?Param2=value2&Param1=value1', headers: {}, body: '', ...EXAMPLE });
    expect(query.authorization).toMatch(/Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500$/);
  });

  it('signs a Bedrock invoke exactly like @smithy/signature-v4 (double-encoded model id path)', () => {
    const ctx = ctxOf(
      {},
      {
        channel: {
          id: 3,
          type: 33,
          name: 'aws',
          key: 'AKIDEXAMPLE|wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY|us-west-2',
          baseUrl: '',
          organization: '',
          other: '',
          setting: {},
        },
      },
    );
    const up = bedrockRequest(
      ctx,
      'claude-3-5-sonnet-20241022',
      { model: 'claude-3-5-sonnet-20241022', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      new Date('2024-05-01T10:20:30Z'),
    );
    expect(up.url).toBe('https://bedrock-runtime.us-west-2.amazonaws.com/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke');
    expect(up.body).toBe('{"anthropic_version":"bedrock-2023-05-31","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}');
    // expected value computed once with @smithy/signature-v4 2.3.0 (the AWS SDK's signer) for the same request and clock
    expect(up.headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240501/us-west-2/bedrock/aws4_request, SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date, Signature=1048805d2f5a0d0a38833d6ae3d02dc935eaf98f0dfba781165a0dfc7dbfdeaa',
    );
    expect(up.headers['x-amz-content-sha256']).toBe('b656fa06254d7d3fb2f9a2995f5faaf841ad5f5b5d64bd8365758def3c70eee5');
  });

  it('adaptor: canonical → Bedrock body (no model/stream), session token, streams on invoke-with-response-stream, errors for bad keys', () => {
    const channel = { id: 3, type: 33, name: 'aws', key: 'AK|SK|eu-central-1|SESSION', baseUrl: '', organization: '', other: '', setting: {} };
    const up = awsClaudeAdaptor.chatRequest(
      {
        model: 'x',
        messages: [
          { role: 'system', content: 's' },
          { role: 'user', content: 'hi' },
        ],
      },
      ctxOf({}, { channel, upstreamModel: 'claude-sonnet-4-20250514' }),
    );
    expect(up.url).toBe('https://bedrock-runtime.eu-central-1.amazonaws.com/model/anthropic.claude-sonnet-4-20250514-v1%3A0/invoke');
    const body = JSON.parse(String(up.body));
    expect(body).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 8192,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      system: [{ type: 'text', text: 's' }],
    });
    expect(up.headers['x-amz-security-token']).toBe('SESSION');
    expect(up.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AK\/\d{8}\/eu-central-1\/bedrock\/aws4_request, SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}$/,
    );
    expect(bedrockModelId('us.anthropic.claude-3-7-sonnet-20250219-v1:0')).toBe('us.anthropic.claude-3-7-sonnet-20250219-v1:0');
    const st = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return (e as UpstreamError).status;
      }
      return 0;
    };
    const streamed = awsClaudeAdaptor.chatRequest(
      { model: 'x', messages: [{ role: 'user', content: 'hi' }] },
      ctxOf({}, { channel, stream: true, upstreamModel: 'claude-sonnet-4-20250514' }),
    );
    expect(streamed.url).toBe('https://bedrock-runtime.eu-central-1.amazonaws.com/model/anthropic.claude-sonnet-4-20250514-v1%3A0/invoke-with-response-stream');
    expect(JSON.parse(String(streamed.body)).stream).toBeUndefined();
    expect(st(() => awsClaudeAdaptor.chatRequest({ model: 'x', messages: [] }, ctxOf({}, { channel: { ...channel, key: 'only-one-part' } })))).toBe(401);
    expect(st(() => awsClaudeAdaptor.chatRequest({ model: 'x', messages: [] }, ctxOf({}, { channel: { ...channel, key: 'a|b|../evil' } })))).toBe(400);
  });
});

// ---------------------------------------------------------------------------------------------
// Claude Code's requests and the Claude side of every conversion

describe('Claude Code request → canonical', () => {
  const req = claudeToChat(CLAUDE_CODE_BODY);

  it('keeps the system turn in place as a canonical system message', () => {
    expect(req.messages.map((m) => m.role)).toEqual(['system', 'user', 'system', 'assistant', 'tool']);
    expect(req.messages[0]!.content).toBe("You are Claude Code, Anthropic's official CLI for Claude.\nUse the tools.");
    expect(req.messages[2]).toEqual({ role: 'system', content: 'Skills available: commit, review.' });
  });

  it('maps effort and adaptive thinking, keeps signatures, drops what has no equivalent', () => {
    expect(req.reasoning_effort).toBe('high');
    expect(req.thinking_budget).toBeUndefined(); // adaptive: the target's own dynamic thinking
    expect(req.reasoning_summary).toBe('auto');
    expect(getHints(req)).toEqual({ claudeThinking: { type: 'adaptive' }, claudeEffort: 'high' });
    expect(req.messages[3]).toEqual({
      role: 'assistant',
      content: 'Running ls.',
      reasoning_content: 'I should run ls.',
      reasoning_details: [
        { type: 'reasoning.text', text: 'I should run ls.', signature: 'sig-claude-1', format: 'anthropic-claude-v1' },
        { type: 'reasoning.encrypted', data: 'ENCRYPTED', format: 'anthropic-claude-v1' },
      ],
      tool_calls: [{ id: 'toolu_ls', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } }],
    });
    expect(req.messages[4]).toEqual({ role: 'tool', tool_call_id: 'toolu_ls', content: 'a.ts\nb.ts' });
    expect(req.tools!.map((t) => t.function.name)).toEqual(['Bash']); // the server tool is dropped
    expect(req.tool_choice).toBe('auto');
    expect(req.user).toBeUndefined();
    // the server tool is left out, and named for the answer's X-Gateway-Unconverted note
    expect(req.unconverted).toEqual(['web_search_20250305']);
    const json = JSON.stringify({ ...req, unconverted: undefined });
    expect(json).not.toMatch(/cache_control|context_management|output_config|web_search|some_future_field|user_abc123/);
  });

  it('thinking enabled / disabled / omitted display, effort max, structured output', () => {
    const base = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    const enabled = claudeToChat({ ...base, thinking: { type: 'enabled', budget_tokens: 3000 } });
    expect(enabled).toMatchObject({ thinking_budget: 3000, reasoning_summary: 'auto' });
    expect(enabled.reasoning_effort).toBeUndefined();
    const off = claudeToChat({ ...base, thinking: { type: 'disabled' } });
    expect(off.thinking_budget).toBe(0);
    expect(off.reasoning_summary).toBeUndefined();
    const hidden = claudeToChat({ ...base, thinking: { type: 'adaptive', display: 'omitted' } });
    expect(hidden.reasoning_summary).toBeUndefined();
    expect(claudeToChat({ ...base, output_config: { effort: 'max' } }).reasoning_effort).toBe('xhigh');
    expect(claudeToChat({ ...base, output_config: { effort: 'low' } }).reasoning_effort).toBe('low');
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    expect(claudeToChat({ ...base, output_config: { format: { type: 'json_schema', schema } } }).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'output', schema },
    });
  });

  it('a tool_choice forcing a dropped server tool falls back to auto; no tools → no tool_choice', () => {
    const only = claudeToChat({
      model: 'm',
      messages: [{ role: 'user', content: 'search' }],
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
      tool_choice: { type: 'tool', name: 'web_search' },
    });
    expect(only.tools).toBeUndefined();
    expect(only.tool_choice).toBeUndefined();
    const mixed = claudeToChat({
      model: 'm',
      messages: [{ role: 'user', content: 'search' }],
      tools: [
        { type: 'web_search_20250305', name: 'web_search' },
        { name: 'f', input_schema: { type: 'object' } },
      ],
      tool_choice: { type: 'tool', name: 'web_search', disable_parallel_tool_use: true },
    });
    expect(mixed.tool_choice).toBe('auto');
    expect(mixed.parallel_tool_calls).toBe(false);
  });

  it('thinking the gateway wrote (empty signature) comes back as reasoning text only; documents and search results as text', () => {
    const req2 = claudeToChat({
      model: 'm',
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'from gpt', signature: '' },
            { type: 'text', text: 'a' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'doc body' }] } },
            { type: 'search_result', title: 'T', source: 'https://s.example', content: [{ type: 'text', text: 'found' }] },
          ],
        },
      ],
    });
    expect(req2.messages[1]).toEqual({ role: 'assistant', content: 'a', reasoning_content: 'from gpt' });
    expect(req2.messages[2]).toEqual({ role: 'user', content: 'doc bodyT\nhttps://s.example\nfound' });
  });

  it('→ OpenAI Chat body: system turn in place, no Claude field anywhere', () => {
    const up = openaiAdaptor.chatRequest(
      { ...req, model: 'gpt-test' },
      ctxOf({}, { upstreamModel: 'gpt-test', stream: true, channel: { ...ctxOf().channel, type: 1 } }),
    );
    const body = JSON.parse(String(up.body)) as Record<string, unknown>;
    for (const k of Object.keys(body)) expect(OPENAI_CHAT_FIELDS.has(k)).toBe(true);
    expect(JSON.stringify(body)).not.toMatch(CLAUDE_ONLY);
    expect((body.messages as Array<{ role: string }>).map((m) => m.role)).toEqual(['system', 'user', 'system', 'assistant', 'tool']);
    // gpt-test is not a reasoning model: OpenAI would refuse reasoning_effort; a reasoning model gets it
    expect(body.reasoning_effort).toBeUndefined();
    const reasoning = openaiAdaptor.chatRequest(
      { ...req, model: 'gpt-5' },
      ctxOf({}, { upstreamModel: 'gpt-5', stream: true, channel: { ...ctxOf().channel, type: 1 } }),
    );
    expect(JSON.parse(String(reasoning.body)).reasoning_effort).toBe('high');
  });

  it('→ Gemini body: system text in systemInstruction, no Claude field anywhere', () => {
    const { body } = toGeminiRequest({ ...req }, ctxOf({}, { upstreamModel: 'gemini-2.5-flash' }));
    const json = JSON.stringify(body);
    expect(json).not.toMatch(CLAUDE_ONLY);
    expect(json).toContain('Skills available: commit, review.');
    expect(JSON.stringify((body as { contents: unknown }).contents)).not.toContain('"role":"system"');
  });

  it('→ Claude body (conversion, e.g. Vertex): adaptive thinking and effort as sent, signed thinking first, system hoisted', () => {
    const { body } = toClaudeRequest({ ...req }, ctxOf({}, { upstreamModel: 'claude-opus-4-8' }));
    expect(body.thinking).toEqual({ type: 'adaptive' });
    expect(body.output_config).toEqual({ effort: 'high' });
    expect(body.temperature).toBeUndefined();
    expect(body.system).toEqual([
      { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude.\nUse the tools." },
      { type: 'text', text: 'Skills available: commit, review.' },
    ]);
    const msgs = body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(msgs[1]!.content).toEqual([
      { type: 'thinking', thinking: 'I should run ls.', signature: 'sig-claude-1' },
      { type: 'redacted_thinking', data: 'ENCRYPTED' },
      { type: 'text', text: 'Running ls.' },
      { type: 'tool_use', id: 'toolu_ls', name: 'Bash', input: { command: 'ls' } },
    ]);
  });
});

describe('canonical → Claude request: reasoning and thinking rules', () => {
  const toolTurn: ChatRequest['messages'] = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'done' },
  ];

  it('keeps only Claude-signed reasoning; another family’s is dropped', () => {
    const { body } = toClaudeRequest(
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: 'a',
            reasoning_content: 'r',
            reasoning_details: [
              { type: 'reasoning.encrypted', data: 'gAAAA-openai', format: 'openai-responses-v1' },
              { type: 'reasoning.text', text: 'unsigned', format: 'anthropic-claude-v1' },
              { type: 'reasoning.text', text: 'signed', signature: 'S', format: 'anthropic-claude-v1' },
            ],
          },
          { role: 'user', content: 'more' },
        ],
      },
      ctxOf(),
    );
    expect((body.messages as Array<{ content: unknown[] }>)[1]!.content).toEqual([
      { type: 'thinking', thinking: 'signed', signature: 'S' },
      { type: 'text', text: 'a' },
    ]);
    expect(JSON.stringify(body)).not.toContain('gAAAA');
  });

  it('thinking_budget: enabled with Anthropic’s limits (≥ 1024, < max_tokens); 0 turns thinking off over reasoning_effort', () => {
    const small = toClaudeRequest(
      { model: 'm', messages: [{ role: 'user', content: 'x' }], thinking_budget: 500, max_tokens: 800, temperature: 0.2 },
      ctxOf(),
    ).body;
    expect(small.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(small.max_tokens).toBe(2048);
    expect(small.temperature).toBe(1);
    const fits = toClaudeRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], thinking_budget: 4000, max_tokens: 10000 }, ctxOf()).body;
    expect(fits).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 4000 }, max_tokens: 10000 });
    const off = toClaudeRequest(
      { model: 'm', messages: [{ role: 'user', content: 'x' }], thinking_budget: 0, reasoning_effort: 'high', temperature: 0.3 },
      ctxOf(),
    ).body;
    expect(off.thinking).toBeUndefined();
    expect(off.temperature).toBe(0.3);
    expect(toClaudeRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'none' }, ctxOf()).body.thinking).toBeUndefined();
    const effort = toClaudeRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'medium', max_tokens: 10000 }, ctxOf()).body;
    expect(effort.thinking).toEqual({ type: 'enabled', budget_tokens: 5000 });
  });

  it('a tool loop whose assistant turn has no signed thinking cannot think; one with it can', () => {
    const without = toClaudeRequest({ model: 'm', messages: toolTurn, thinking_budget: 2000, max_tokens: 8000 }, ctxOf()).body;
    expect(without.thinking).toBeUndefined();
    const signed = toolTurn.map((m) =>
      m.role === 'assistant'
        ? { ...m, reasoning_details: [{ type: 'reasoning.text' as const, text: 't', signature: 'S', format: 'anthropic-claude-v1' as const }] }
        : m,
    );
    const withIt = toClaudeRequest({ model: 'm', messages: signed, thinking_budget: 2000, max_tokens: 8000 }, ctxOf()).body;
    expect(withIt.thinking).toEqual({ type: 'enabled', budget_tokens: 2000 });
  });

  it('parallel tool calls, tool results with images, plain-text documents', () => {
    const { body } = toClaudeRequest(
      {
        model: 'm',
        messages: [
          { role: 'user', content: [{ type: 'file', file: { file_data: `data:text/plain;base64,${Buffer.from('notes').toString('base64')}` } }] },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'a', type: 'function', function: { name: 'shot', arguments: '{}' } },
              { id: 'b', type: 'function', function: { name: 'shot', arguments: '{"n":2}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'a', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B64}` } }] },
          { role: 'tool', tool_call_id: 'b', content: 'no image' },
        ],
      },
      ctxOf(),
    );
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'a', name: 'shot', input: {} },
          { type: 'tool_use', id: 'b', name: 'shot', input: { n: 2 } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'a', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_B64 } }] },
          { type: 'tool_result', tool_use_id: 'b', content: 'no image' },
        ],
      },
    ]);
  });
});

describe('Claude answers → canonical: signatures, redacted thinking, thinking tokens', () => {
  it('whole answer', () => {
    const res = fromClaudeResponse(
      {
        content: [
          { type: 'redacted_thinking', data: 'RED' },
          { type: 'thinking', thinking: 'T', signature: 'S' },
          { type: 'text', text: 'ok' },
        ],
        stop_reason: 'end_turn',
        usage: { input_tokens: 5, output_tokens: 9, output_tokens_details: { thinking_tokens: 4 } },
      },
      'm',
    );
    expect(res.choices[0]!.message.reasoning_details).toEqual([
      { type: 'reasoning.encrypted', data: 'RED', format: 'anthropic-claude-v1' },
      { type: 'reasoning.text', text: 'T', signature: 'S', format: 'anthropic-claude-v1' },
    ]);
    expect(res.usage).toEqual({ prompt_tokens: 5, completion_tokens: 9, total_tokens: 14, completion_tokens_details: { reasoning_tokens: 4 } });
    // and back to a Claude client as Claude blocks, thinking tokens included
    const back = chatToClaude(res, 'm') as { content: unknown[]; usage: Record<string, unknown> };
    expect(back.content).toEqual([
      { type: 'redacted_thinking', data: 'RED' },
      { type: 'thinking', thinking: 'T', signature: 'S' },
      { type: 'text', text: 'ok' },
    ]);
    expect(back.usage.output_tokens_details).toEqual({ thinking_tokens: 4 });
  });

  it('stream: a signed block ends with one reasoning detail; redacted thinking is one detail', () => {
    const t = new ClaudeStreamTranslator('m');
    const out: ChatChunk[] = [];
    const push = (data: Record<string, unknown>) => out.push(...t.push({ event: String(data.type), data: JSON.stringify(data) }));
    push({ type: 'message_start', message: { id: 'msg_1', model: 'm', usage: { input_tokens: 3, output_tokens: 1 } } });
    push({ type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'RED' } });
    push({ type: 'content_block_stop', index: 0 });
    push({ type: 'content_block_start', index: 1, content_block: { type: 'thinking', thinking: '', signature: '' } });
    push({ type: 'content_block_delta', index: 1, delta: { type: 'thinking_delta', thinking: 'a' } });
    push({ type: 'content_block_delta', index: 1, delta: { type: 'thinking_delta', thinking: 'b' } });
    push({ type: 'content_block_delta', index: 1, delta: { type: 'signature_delta', signature: 'SIG' } });
    push({ type: 'content_block_stop', index: 1 });
    push({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 8, output_tokens_details: { thinking_tokens: 5 } } });
    push({ type: 'message_stop' });
    const details = out.flatMap((c) => c.choices.flatMap((ch) => ch.delta.reasoning_details ?? []));
    expect(details).toEqual([
      { type: 'reasoning.encrypted', data: 'RED', format: 'anthropic-claude-v1' },
      { type: 'reasoning.text', text: 'ab', signature: 'SIG', format: 'anthropic-claude-v1' },
    ]);
    expect(t.usage()).toEqual({ prompt_tokens: 3, completion_tokens: 8, total_tokens: 11, completion_tokens_details: { reasoning_tokens: 5 } });
  });
});

describe('canonical chunks → Claude SSE: signatures, redacted thinking, parallel calls', () => {
  it('signature_delta closes each thinking block; redacted thinking is its own block; the SDK keeps both', async () => {
    const w = claudeFormat.streamWriter('m');
    let out = '';
    out += w.chunk(chunk({ reasoning_content: 'first ' }));
    out += w.chunk(chunk({ reasoning_content: 'block' }));
    out += w.chunk(chunk({ reasoning_details: [{ type: 'reasoning.text', text: 'first block', signature: 'S1', format: 'anthropic-claude-v1' }] }));
    out += w.chunk(chunk({ reasoning_details: [{ type: 'reasoning.encrypted', data: 'RED', format: 'anthropic-claude-v1' }] }));
    // another family's detail means nothing to Claude
    out += w.chunk(chunk({ reasoning_details: [{ type: 'reasoning.encrypted', data: 'gAAAA', format: 'openai-responses-v1' }] }));
    out += w.chunk(chunk({ reasoning_content: 'second' }));
    out += w.chunk(chunk({ reasoning_details: [{ type: 'reasoning.text', text: 'second', signature: 'S2', format: 'anthropic-claude-v1' }] }));
    // a detail with no streamed text before it writes its text itself
    out += w.chunk(chunk({ content: 'answer' }));
    out += w.chunk(chunk({ reasoning_details: [{ type: 'reasoning.text', text: 'third', signature: 'S3', format: 'anthropic-claude-v1' }] }));
    out += w.chunk(chunk({}, 'stop'));
    out += w.end({ prompt_tokens: 10, completion_tokens: 20, total_tokens: 30, completion_tokens_details: { reasoning_tokens: 12 } });
    expect(out).not.toContain('gAAAA');
    const { final } = await parseWithSdk(out);
    expect(final.content).toEqual([
      { type: 'thinking', thinking: 'first block', signature: 'S1' },
      { type: 'redacted_thinking', data: 'RED' },
      { type: 'thinking', thinking: 'second', signature: 'S2' },
      { type: 'text', text: 'answer' },
      { type: 'thinking', thinking: 'third', signature: 'S3' },
    ]);
    expect(final.usage.output_tokens_details).toEqual({ thinking_tokens: 12 });
  });

  it('interleaved parallel tool calls: the second is held and written whole; finish stop with calls → tool_use', async () => {
    const w = claudeFormat.streamWriter('m');
    let out = '';
    out += w.chunk(chunk({ tool_calls: [{ index: 0, id: 'c0', type: 'function', function: { name: 'a', arguments: '{"x":' } }] }));
    out += w.chunk(chunk({ tool_calls: [{ index: 1, id: 'c1', type: 'function', function: { name: 'b', arguments: '{"y":' } }] }));
    out += w.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }));
    out += w.chunk(chunk({ tool_calls: [{ index: 1, function: { arguments: '2}' } }] }));
    out += w.chunk(chunk({}, 'stop'));
    out += w.end(undefined);
    // one block open at a time, never written to after its stop (clients read the input at the stop)
    const stopped = new Set<number>();
    let open: number | undefined;
    for (const e of events(out)) {
      const data = JSON.parse(e.data) as { index?: number };
      if (e.event === 'content_block_start') {
        expect(open).toBeUndefined();
        open = data.index;
      } else if (e.event === 'content_block_delta') {
        expect(data.index).toBe(open);
        expect(stopped.has(data.index!)).toBe(false);
      } else if (e.event === 'content_block_stop') {
        stopped.add(data.index!);
        open = undefined;
      }
    }
    expect(stopped.size).toBe(2);
    const { final } = await parseWithSdk(out);
    expect(final.content).toEqual([
      { type: 'tool_use', id: 'c0', name: 'a', input: { x: 1 } },
      { type: 'tool_use', id: 'c1', name: 'b', input: { y: 2 } },
    ]);
    expect(final.stop_reason).toBe('tool_use');
  });
});

describe('Claude passthrough: system turns, unsigned thinking, headers', () => {
  it('acceptsSystemTurns: Opus 4.8 and later, Fable; not older models, Sonnet or other names', () => {
    for (const m of [
      'claude-opus-4-8',
      'claude-opus-4-8-20260528',
      'claude-opus-4-10',
      'claude-opus-5',
      'claude-opus-5-5',
      'claude-fable-5',
      'us.anthropic.claude-opus-4-8-v1:0',
    ]) {
      expect([m, acceptsSystemTurns(m)]).toEqual([m, true]);
    }
    for (const m of [
      'claude-opus-4-20250514',
      'claude-opus-4-1-20250805',
      'claude-opus-4-7',
      'claude-sonnet-5',
      'claude-3-5-sonnet-20241022',
      'deepseek-chat',
      'glm-4.6',
    ]) {
      expect([m, acceptsSystemTurns(m)]).toEqual([m, false]);
    }
  });

  it('forwards the body as sent (unknown fields too) when the model takes system turns; hoists them otherwise', () => {
    const body = { ...CLAUDE_CODE_BODY, model: 'alias' };
    const kept = claudeRawBody(body, ctxOf({}, { upstreamModel: 'claude-opus-4-8', stream: true })).body;
    expect(kept).toEqual({ ...body, model: 'claude-opus-4-8' });
    const hoisted = claudeRawBody(body, ctxOf({}, { upstreamModel: 'claude-sonnet-4-5-20250929', stream: true })).body;
    expect((hoisted.messages as Array<{ role: string }>).map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(hoisted.system).toEqual([...CLAUDE_CODE_BODY.system, { type: 'text', text: 'Skills available: commit, review.' }]);
    const { messages: _a, system: _b, model: _c, ...rest } = hoisted;
    const { messages: _d, system: _e, model: _f, ...sent } = body;
    expect(rest).toEqual(sent); // everything else as the client sent it
    // a string system stays first
    const s = adjustClaudeMessages(
      {
        system: 'top',
        messages: [
          { role: 'user', content: 'u' },
          { role: 'system', content: 'mid' },
        ],
      },
      false,
    );
    expect(s).toEqual({
      system: [
        { type: 'text', text: 'top' },
        { type: 'text', text: 'mid' },
      ],
      messages: [{ role: 'user', content: 'u' }],
    });
    const same = { messages: [{ role: 'user', content: 'u' }] };
    expect(adjustClaudeMessages(same, false)).toBe(same);
  });

  it('on a model that takes system turns, only those Claude accepts where they are stay (consecutive ones merged)', () => {
    const sys = (text: string) => ({ role: 'system', content: text });
    const out = adjustClaudeMessages(
      {
        messages: [
          sys('first: nothing before it'),
          { role: 'user', content: 'u1' },
          sys('a'),
          sys('b'),
          { role: 'assistant', content: 'r1' },
          { role: 'user', content: 'u2' },
          sys('before a user turn'),
          { role: 'user', content: 'u3' },
          sys('last'),
        ],
      },
      true,
    );
    expect(out.messages).toEqual([
      { role: 'user', content: 'u1' },
      {
        role: 'system',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
      { role: 'assistant', content: 'r1' },
      { role: 'user', content: 'u2' },
      { role: 'user', content: 'u3' },
      sys('last'),
    ]);
    expect(out.system).toEqual([
      { type: 'text', text: 'first: nothing before it' },
      { type: 'text', text: 'before a user turn' },
    ]);
  });

  it('drops thinking blocks with an empty signature (written by the gateway for another family)', () => {
    const out = adjustClaudeMessages(
      {
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'gpt said', signature: '' },
              { type: 'text', text: 'a' },
            ],
          },
          { role: 'assistant', content: [{ type: 'thinking', thinking: 'only' }] },
          { role: 'user', content: 'next' },
        ],
      },
      true,
    );
    expect(out.messages).toEqual([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'text', text: 'a' }] },
      { role: 'user', content: 'next' },
    ]);
  });

  it('client anthropic-beta (merged with the option) and anthropic-version go upstream; the channel version is the default', () => {
    const opts = { 'claude.model_headers_settings': JSON.stringify({ 'claude-opus-4-8': { 'anthropic-beta': 'context-1m-2025-08-07' } }) };
    const headers: Record<string, string> = { 'anthropic-beta': 'interleaved-thinking-2025-05-14, context-1m-2025-08-07', 'anthropic-version': '2024-01-01' };
    const up = claudeAdaptor.rawRequest!(
      { model: 'x', messages: [] },
      ctxOf(opts, { upstreamModel: 'claude-opus-4-8', clientHeader: (k) => headers[k] ?? '' }),
    );
    expect(up.headers['anthropic-beta']).toBe('context-1m-2025-08-07,interleaved-thinking-2025-05-14');
    expect(up.headers['anthropic-version']).toBe('2024-01-01');
    expect(up.url).toBe('https://claude.example/v1/messages');
    const plain = claudeAdaptor.rawRequest!({ model: 'x', messages: [] }, ctxOf({}, { clientHeader: () => '' }));
    expect(plain.headers['anthropic-version']).toBe('2023-06-01');
    expect(plain.headers['anthropic-beta']).toBeUndefined();
    // a conversion (another client format) never takes the client's Claude headers
    const conv = claudeAdaptor.chatRequest({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }, ctxOf({}, { clientHeader: (k) => headers[k] ?? '' }));
    expect(conv.headers['anthropic-version']).toBe('2023-06-01');
    expect(conv.headers['anthropic-beta']).toBeUndefined();
  });

  it('count_tokens request: same passthrough rules, no message defaults', () => {
    const headers: Record<string, string> = { 'anthropic-beta': 'token-counting-2024-11-01' };
    const up = claudeCountTokensRequest(
      {
        model: 'alias',
        messages: [
          { role: 'user', content: 'u' },
          { role: 'system', content: 'mid' },
        ],
        tools: [],
      },
      ctxOf({}, { upstreamModel: 'claude-sonnet-4-5', stream: true, clientHeader: (k) => headers[k] ?? '' }),
    );
    expect(up.url).toBe('https://claude.example/v1/messages/count_tokens');
    expect(up.headers['anthropic-beta']).toBe('token-counting-2024-11-01');
    expect(up.headers.accept).toBeUndefined();
    expect(JSON.parse(String(up.body))).toEqual({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'u' }],
      tools: [],
      system: [{ type: 'text', text: 'mid' }],
    });
  });

  it('Bedrock passthrough: betas in the body (anthropic_beta), system turns always hoisted', () => {
    const channel = { id: 3, type: 33, name: 'aws', key: 'AK|SK|us-east-1', baseUrl: '', organization: '', other: '', setting: {} };
    const up = awsClaudeAdaptor.rawRequest!(
      {
        model: 'x',
        max_tokens: 10,
        messages: [
          { role: 'user', content: 'u' },
          { role: 'system', content: 'mid' },
        ],
        context_management: { edits: [] },
      },
      ctxOf({}, { channel, upstreamModel: 'claude-opus-4-8', clientHeader: (k) => (k === 'anthropic-beta' ? 'context-management-2025-06-27' : '') }),
    );
    expect(JSON.parse(String(up.body))).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'u' }],
      system: [{ type: 'text', text: 'mid' }],
      context_management: { edits: [] },
      anthropic_beta: ['context-management-2025-06-27'],
    });
  });
});
