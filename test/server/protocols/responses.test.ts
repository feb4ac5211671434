/**
 * OpenAI Responses conversions, pure (no DB): Responses request → canonical, canonical answer and
 * chunks → Responses object and events (checked with the official `openai` SDK's stream
 * accumulator), the Responses adaptor both ways (request, answer, event stream), and which
 * channels speak which protocols.
 */
import OpenAI from 'openai';
import { chatToResponses } from '../../../server/src/protocols/responses/answer';
import { packReasoning, unpackReasoning } from '../../../server/src/protocols/responses/shared';
import { responsesFormat } from '../../../server/src/protocols/responses/format';
import { responsesNativeOnly, responsesToChat } from '../../../server/src/protocols/responses/request';
import { fromResponsesBody, responsesAdaptor, ResponsesStreamTranslator, toResponsesRequest } from '../../../server/src/protocols/responses/adaptor';
import { azureResponsesAdaptor } from '../../../server/src/channels/providers/azure';
import { channelSpeaks, channelWay, chatAdaptorOf } from '../../../server/src/channels/providers';
import { openaiAdaptor } from '../../../server/src/protocols/openai/adaptor';
import { azureAdaptor } from '../../../server/src/channels/providers/azure';
import { claudeAdaptor } from '../../../server/src/protocols/claude/adaptor';
import { openaiFormat } from '../../../server/src/protocols/openai/format';
import { RelayError, UpstreamError } from '../../../server/src/relay/errors';
import { CHANNEL_TYPE } from '../../../server/src/channels/kinds';
import type { AdaptorContext, ChatChunk, ChatRequest, ChatResponse, SSEEvent } from '../../../server/src/relay/types';

const PNG = 'data:image/png;base64,iVBORw0KGgo=';

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

function chunk(delta: ChatChunk['choices'][number]['delta'], finish: ChatChunk['choices'][number]['finish_reason'] = null): ChatChunk {
  return { id: 'chatcmpl-xyz', object: 'chat.completion.chunk', created: 1700000000, model: 'claude-x', choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** An SDK client whose every request is answered with `body` (SSE when `sse`). */
function sdkAnswering(body: string, sse: boolean): OpenAI {
  return new OpenAI({
    apiKey: 'sk-test',
    baseURL: 'http://sdk.invalid/v1',
    maxRetries: 0,
    fetch: async () => new Response(body, { status: 200, headers: { 'content-type': sse ? 'text/event-stream' : 'application/json' } }),
  });
}

/** Runs SSE text through the SDK's Responses stream (its accumulator rejects malformed sequences). */
async function parseWithSdk(sse: string) {
  const stream = sdkAnswering(sse, true).responses.stream({ model: 'm', input: 'hi' });
  const types: string[] = [];
  const seqs: number[] = [];
  let text = '';
  stream.on('event', (e) => {
    types.push(e.type);
    seqs.push(e.sequence_number);
  });
  stream.on('response.output_text.delta', (e) => (text += e.delta));
  const final = await stream.finalResponse();
  return { final, types, seqs, text };
}

function ctxOf(over: Partial<AdaptorContext> = {}, type = 1, baseUrl = 'https://api.example.com', setting: Record<string, unknown> = {}): AdaptorContext {
  return {
    channel: { id: 1, type, name: 'ch', key: 'sk-up', baseUrl, organization: '', other: '', setting },
    upstreamModel: 'gpt-5.1-codex',
    requestedModel: 'gpt-5.1-codex',
    stream: false,
    endpoint: 'chat',
    option: () => '',
    ...over,
  };
}

// ---------------------------------------------------------------------------------------------

describe('Responses request → canonical', () => {
  it('instructions and a string input', () => {
    const c = responsesToChat({ model: 'm', instructions: 'Be brief.', input: 'Hello' });
    expect(c).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello' },
      ],
    });
  });

  it('items: roles, parts, one assistant turn merged, tool outputs, media after the tool run', () => {
    const c = responsesToChat({
      model: 'm',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Use tools.' }] },
        { role: 'system', content: 'Sys.' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Look: ' },
            { type: 'input_image', image_url: PNG, detail: 'high' },
            { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
            { type: 'input_file', file_url: 'https://example.com/b.pdf' },
          ],
        },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Thinking.' }], encrypted_content: 'opaque' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_2', name: 'get_time', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
        {
          type: 'function_call_output',
          call_id: 'call_2',
          output: [
            { type: 'input_text', text: 'noon' },
            { type: 'input_image', image_url: PNG },
          ],
        },
        { type: 'web_search_call', id: 'ws_1', status: 'completed' },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(c.messages).toEqual([
      { role: 'system', content: 'Use tools.' },
      { role: 'system', content: 'Sys.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look: ' },
          { type: 'image_url', image_url: { url: PNG, detail: 'high' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
          { type: 'text', text: '[file: https://example.com/b.pdf]' },
        ],
      },
      {
        role: 'assistant',
        content: 'Checking.',
        reasoning_content: 'Thinking.',
        reasoning_details: [
          { type: 'reasoning.summary', summary: 'Thinking.', id: 'rs_1', format: 'openai-responses-v1' },
          { type: 'reasoning.encrypted', data: 'opaque', id: 'rs_1', format: 'openai-responses-v1' },
        ],
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      { role: 'tool', tool_call_id: 'call_2', content: 'noon' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: PNG } }] },
      { role: 'user', content: 'Thanks' },
    ]);
  });

  it('parameters, tools (function, custom, built-in dropped) and tool choice', () => {
    const c = responsesToChat({
      model: 'm',
      input: 'x',
      stream: true,
      max_output_tokens: 500,
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      reasoning: { effort: 'high', summary: 'auto' },
      text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true }, verbosity: 'low' },
      safety_identifier: 'user-1',
      prompt_cache_key: 'thread-1',
      store: true,
      metadata: { a: '1' },
      include: ['reasoning.encrypted_content'],
      truncation: 'auto',
      tools: [
        { type: 'function', name: 'shell', description: 'Run', parameters: { type: 'object', properties: { cmd: { type: 'string' } } }, strict: false },
        { type: 'function', name: 'strict_fn', parameters: null, strict: true },
        { type: 'custom', name: 'apply_patch', description: 'Patch files', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } },
        { type: 'web_search' },
        { type: 'local_shell' },
      ],
      tool_choice: { type: 'custom', name: 'apply_patch' },
    });
    expect(c).toMatchObject({
      model: 'm',
      stream: true,
      max_tokens: 500,
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      reasoning_effort: 'high',
      reasoning_summary: 'auto',
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } },
      verbosity: 'low',
      user: 'user-1',
      prompt_cache_key: 'thread-1',
      tool_choice: { type: 'function', function: { name: 'apply_patch' } },
    });
    for (const k of ['store', 'metadata', 'include', 'truncation', 'instructions', 'input', 'text', 'reasoning']) expect(c).not.toHaveProperty(k);
    expect(c.tools).toHaveLength(3);
    expect(c.tools![0]).toEqual({
      type: 'function',
      function: { name: 'shell', description: 'Run', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
    });
    expect(c.tools![1]!.function).toEqual({ name: 'strict_fn', parameters: { type: 'object', properties: {} }, strict: true });
    const custom = c.tools![2]!.function;
    expect(custom.name).toBe('apply_patch');
    expect(custom.parameters).toEqual({ type: 'object', properties: { input: { type: 'string', description: expect.any(String) } }, required: ['input'] });
    expect(custom.description).toContain('Patch files');
    expect(custom.description).toContain('lark grammar:\nstart: "x"');
  });

  it('allowed_tools narrows the tools; tool choice and parallelism go when nothing is left to call', () => {
    const tools = [
      { type: 'function', name: 'a', parameters: {} },
      { type: 'function', name: 'b', parameters: {} },
    ];
    const c = responsesToChat({
      model: 'm',
      input: 'x',
      tools,
      tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'b' }] },
    });
    expect(c.tools!.map((t) => t.function.name)).toEqual(['b']);
    expect(c.tool_choice).toBe('required');
    const only = responsesToChat({ model: 'm', input: 'x', tools: [{ type: 'web_search' }], tool_choice: 'auto', parallel_tool_calls: true });
    expect(only.tools).toBeUndefined();
    expect(only.tool_choice).toBeUndefined();
    expect(only.parallel_tool_calls).toBeUndefined();
  });

  it('tools in additional_tools items and namespace groups (Codex) are offered flat, by their own names', () => {
    const c = responsesToChat({
      model: 'm',
      input: [
        {
          type: 'additional_tools',
          role: 'developer',
          tools: [
            {
              type: 'namespace',
              name: 'functions',
              tools: [
                { type: 'custom', name: 'exec', description: 'Run JS' },
                { type: 'function', name: 'wait', parameters: { type: 'object' } },
              ],
            },
            {
              type: 'namespace',
              name: 'clock',
              tools: [
                { type: 'function', name: 'sleep', parameters: {} },
                { type: 'function', name: 'wait', parameters: {} },
              ],
            },
          ],
        },
        { role: 'user', content: 'go' },
      ],
      tools: [{ type: 'function', name: 'top', parameters: {} }, { type: 'web_search' }],
    });
    expect(c.tools!.map((t) => t.function.name)).toEqual(['top', 'exec', 'wait', 'sleep']);
    expect(c.tools![1]!.function.parameters).toMatchObject({ properties: { input: { type: 'string' } } });
    expect(c.messages).toEqual([{ role: 'user', content: 'go' }]);
    // a call of the custom tool goes back to the client as a custom_tool_call
    const res = chatToResponses(
      {
        id: 'x',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'exec', arguments: '{"input":"1+1"}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
      'm',
      { model: 'm', input: [{ type: 'additional_tools', tools: [{ type: 'namespace', name: 'functions', tools: [{ type: 'custom', name: 'exec' }] }] }] },
    ) as { output: Array<Record<string, unknown>> };
    expect(res.output.find((o) => o.type === 'custom_tool_call')).toMatchObject({ name: 'exec', input: '1+1', call_id: 'call_1' });
  });

  it('custom tool calls and outputs become function calls and tool messages', () => {
    const c = responsesToChat({
      model: 'm',
      input: [
        { type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'custom_tool_call_output', call_id: 'call_p', output: 'Done' },
      ],
    });
    expect(c.messages).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_p', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_p', content: 'Done' },
    ]);
  });

  it('reasoning the gateway packed comes back as details and thought signatures on the calls', () => {
    const enc = packReasoning({
      d: [{ type: 'reasoning.text', text: 'Let me think', signature: 'sig-claude', format: 'anthropic-claude-v1' }],
      s: { call_g: 'sig-gemini' },
    });
    expect(enc.startsWith('gwr1.')).toBe(true);
    expect(unpackReasoning(enc)).toEqual({
      d: [{ type: 'reasoning.text', text: 'Let me think', signature: 'sig-claude', format: 'anthropic-claude-v1' }],
      s: { call_g: 'sig-gemini' },
    });
    expect(unpackReasoning('gwr1.@@@')).toBeUndefined();
    expect(unpackReasoning('opaque-openai-data')).toBeUndefined();
    const c = responsesToChat({
      model: 'm',
      input: [
        { role: 'user', content: 'weather?' },
        { type: 'reasoning', id: 'rs_a', summary: [{ type: 'summary_text', text: 'Let me think' }], encrypted_content: enc },
        { type: 'function_call', call_id: 'call_g', name: 'get_weather', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_g', output: 'ok' },
      ],
    });
    expect(c.messages[1]).toEqual({
      role: 'assistant',
      content: null,
      reasoning_content: 'Let me think',
      reasoning_details: [{ type: 'reasoning.text', text: 'Let me think', signature: 'sig-claude', format: 'anthropic-claude-v1' }],
      tool_calls: [
        { id: 'call_g', type: 'function', function: { name: 'get_weather', arguments: '{}' }, extra_content: { google: { thought_signature: 'sig-gemini' } } },
      ],
    });
  });

  it('malformed input → 400 RelayError', () => {
    const bad = (body: unknown, msg: RegExp) => {
      let err: unknown;
      try {
        responsesToChat(body);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(RelayError);
      expect((err as RelayError).status).toBe(400);
      expect((err as RelayError).message).toMatch(msg);
    };
    bad('x', /JSON object/);
    bad({ input: 'x' }, /model/);
    bad({ model: 'm', input: 5 }, /input/);
    bad({ model: 'm', input: ['x'] }, /input\[0\]: must be an object/);
    bad({ model: 'm', input: [{ role: 'robot', content: 'x' }] }, /input\[0\]\.role/);
    bad({ model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, /input\[0\]\.call_id/);
    bad({ model: 'm', input: [{ type: 'function_call_output', output: 'x' }] }, /input\[0\]\.call_id/);
    bad({ model: 'm', input: [{ role: 'user', content: 7 }] }, /input\[0\]\.content/);
    bad({ model: 'm', input: 'x', tools: {} }, /tools/);
    bad({ model: 'm', input: 'x', tools: [{ type: 'function' }] }, /tools\[0\]\.name/);
  });

  it('an OpenAI Chat file part with file_id reaches a Responses upstream as input_file.file_id, and reads back', () => {
    const req: ChatRequest = {
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'read it' },
            { type: 'file', file: { file_id: 'file-abc' } },
          ] as never,
        },
      ],
    };
    const body = JSON.parse(String(responsesAdaptor.chatRequest(req, ctxOf()).body));
    expect(body.input[0].content).toEqual([
      { type: 'input_text', text: 'read it' },
      { type: 'input_file', file_id: 'file-abc' },
    ]);
    const back = responsesToChat(body);
    expect(back.messages[0]!.content).toEqual([
      { type: 'text', text: 'read it' },
      { type: 'file', file: { file_id: 'file-abc' } },
    ]);
  });

  it('nativeOnly names what only a Responses upstream can honour', () => {
    expect(responsesNativeOnly({ model: 'm', input: 'x', tools: [{ type: 'web_search' }] })).toBeUndefined();
    expect(responsesNativeOnly({ model: 'm', input: 'x', previous_response_id: 'resp_1' })).toBe('previous_response_id');
    expect(responsesNativeOnly({ model: 'm', input: 'x', conversation: 'conv_1' })).toBe('conversation');
    expect(responsesNativeOnly({ model: 'm', input: 'x', background: true })).toBe('background');
    expect(responsesNativeOnly({ model: 'm', prompt: { id: 'pmpt_1' } })).toBe('prompt');
    expect(responsesNativeOnly({ model: 'm', input: [{ type: 'item_reference', id: 'msg_1' }] })).toMatch(/item_reference/);
    // A file stored at OpenAI: Chat Completions reads it too, so it is no longer Responses-only…
    const withFile = { model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }] };
    expect(responsesNativeOnly(withFile)).toBeUndefined();
    // …but only upstreams speaking one of OpenAI's protocols (call/plan.ts) take it.
    expect(responsesFormat.openaiFiles!(withFile)).toBe('input[0].content (file_id)');
    expect(responsesFormat.openaiFiles!({ model: 'm', input: 'x' })).toBeUndefined();
    // An image by id: Chat Completions takes images by URL only, so only a Responses upstream can
    const withImage = { model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-2' }] }] };
    expect(responsesNativeOnly(withImage)).toBe('input[0].content (input_image file_id)');
    expect(responsesNativeOnly({ model: 'm', input: 'x', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } })).toMatch(/tool_choice/);
    expect(responsesNativeOnly({ model: 'm', input: 'x', tools: [{ type: 'file_search' }], tool_choice: 'required' })).toMatch(/required/);
    expect(responsesNativeOnly({ model: 'm', input: 'x', tools: [{ type: 'function', name: 'f' }], tool_choice: 'required' })).toBeUndefined();
    expect(responsesFormat.nativeOnly!({ model: 'm', input: 'x', previous_response_id: 'r' })).toBe('previous_response_id');
  });
});

// ---------------------------------------------------------------------------------------------

const ANSWER: ChatResponse = {
  id: 'chatcmpl-abc',
  object: 'chat.completion',
  created: 1700000000,
  model: 'claude-x',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Let me check.',
        reasoning_content: 'Thinking hard.',
        reasoning_details: [{ type: 'reasoning.text', text: 'Thinking hard.', signature: 'sig-1', format: 'anthropic-claude-v1' }],
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' } },
        ],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage: {
    prompt_tokens: 100,
    completion_tokens: 20,
    total_tokens: 120,
    prompt_tokens_details: { cached_tokens: 40 },
    completion_tokens_details: { reasoning_tokens: 5 },
  },
};

describe('canonical → Responses object', () => {
  it('reasoning, message and calls as output items; usage with cached and reasoning tokens; request echoed', async () => {
    const body = { model: 'alias', input: 'x', tools: [{ type: 'custom', name: 'apply_patch' }], instructions: 'Be brief.', metadata: { a: '1' } };
    const r = chatToResponses(ANSWER, 'alias', body) as Record<string, any>;
    expect(r).toMatchObject({
      id: 'resp_abc',
      object: 'response',
      created_at: 1700000000,
      status: 'completed',
      model: 'alias',
      incomplete_details: null,
      instructions: 'Be brief.',
      metadata: { a: '1' },
      store: false,
      usage: {
        input_tokens: 100,
        input_tokens_details: { cached_tokens: 40 },
        output_tokens: 20,
        output_tokens_details: { reasoning_tokens: 5 },
        total_tokens: 120,
      },
    });
    expect(r.output.map((o: { type: string }) => o.type)).toEqual(['reasoning', 'message', 'function_call', 'custom_tool_call']);
    expect(r.output[0].summary).toEqual([{ type: 'summary_text', text: 'Thinking hard.' }]);
    expect(unpackReasoning(r.output[0].encrypted_content)).toEqual({ d: ANSWER.choices[0]!.message.reasoning_details });
    expect(r.output[1]).toMatchObject({
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Let me check.', annotations: [] }],
    });
    expect(r.output[2]).toMatchObject({ type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' });
    expect(r.output[3]).toMatchObject({ type: 'custom_tool_call', call_id: 'call_2', name: 'apply_patch', input: '*** Begin Patch' });
    // the SDK reads it as a Response
    const parsed = await sdkAnswering(JSON.stringify(r), false).responses.create({ model: 'm', input: 'hi' });
    expect(parsed.output_text).toBe('Let me check.');
    expect(JSON.parse(responsesFormat.answerJson(ANSWER, 'alias', body))).toMatchObject({ id: 'resp_abc' });
  });

  it('length → incomplete (max_output_tokens); content_filter → incomplete (content_filter); thought signatures packed', () => {
    const cut = chatToResponses(
      { ...ANSWER, choices: [{ index: 0, message: { role: 'assistant', content: 'Partial' }, finish_reason: 'length' }] },
      'm',
    ) as Record<string, any>;
    expect(cut.status).toBe('incomplete');
    expect(cut.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(cut.output).toEqual([expect.objectContaining({ type: 'message', status: 'incomplete' })]);
    const filtered = chatToResponses(
      { ...ANSWER, choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' }] },
      'm',
    ) as Record<string, any>;
    expect(filtered.incomplete_details).toEqual({ reason: 'content_filter' });
    expect(filtered.output).toEqual([]);
    const gem = chatToResponses(
      {
        ...ANSWER,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'call_g', type: 'function', function: { name: 'f', arguments: '{}' }, extra_content: { google: { thought_signature: 'sig-g' } } },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
      'm',
    ) as Record<string, any>;
    expect(gem.output.map((o: { type: string }) => o.type)).toEqual(['reasoning', 'function_call']);
    expect(gem.output[0].summary).toEqual([]);
    expect(unpackReasoning(gem.output[0].encrypted_content)).toEqual({ s: { call_g: 'sig-g' } });
  });
});

// ---------------------------------------------------------------------------------------------

describe('canonical chunks → Responses events', () => {
  it('the event sequence the SDK accumulates: reasoning, text, two interleaved calls, usage', async () => {
    const w = responsesFormat.streamWriter('alias', { clientBody: { model: 'alias', input: 'x', tools: [{ type: 'custom', name: 'apply_patch' }] } });
    let out = '';
    out += w.chunk(chunk({ role: 'assistant', content: '' }));
    out += w.chunk(chunk({ reasoning_content: 'Think ' }));
    out += w.chunk(chunk({ reasoning_content: 'hard.' }));
    out += w.chunk(chunk({ reasoning_details: [{ type: 'reasoning.text', text: '', signature: 'sig-1', format: 'anthropic-claude-v1' }] }));
    out += w.chunk(chunk({ content: 'Hello' }));
    out += w.chunk(chunk({ content: ', world' }));
    out += w.chunk(chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }));
    out += w.chunk(chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'apply_patch', arguments: '{"input":' } }] }));
    out += w.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] }));
    out += w.chunk(chunk({ tool_calls: [{ index: 1, function: { arguments: '"x"}' } }] }));
    out += w.chunk(chunk({}, 'tool_calls'));
    out += w.chunk({
      ...chunk({}),
      choices: [],
      usage: { prompt_tokens: 50, completion_tokens: 7, total_tokens: 57, prompt_tokens_details: { cached_tokens: 20 } },
    });
    out += w.end({ prompt_tokens: 50, completion_tokens: 7, total_tokens: 57, prompt_tokens_details: { cached_tokens: 20 } });
    expect(w.end(undefined)).toBe('');

    const evs = events(out);
    for (const e of evs) expect(JSON.parse(e.data).type).toBe(e.event);
    const { final, types, seqs, text } = await parseWithSdk(out);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(seqs).toEqual(seqs.map((_, i) => i));
    expect(text).toBe('Hello, world');
    expect(final.id).toBe('resp_xyz');
    expect(final.model).toBe('alias');
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe('Hello, world');
    expect(final.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call', 'custom_tool_call']);
    const [rs, , fa, fb] = final.output as any[];
    expect(rs.summary).toEqual([{ type: 'summary_text', text: 'Think hard.' }]);
    expect(unpackReasoning(rs.encrypted_content)).toEqual({ d: [{ type: 'reasoning.text', text: '', signature: 'sig-1', format: 'anthropic-claude-v1' }] });
    expect(fa).toMatchObject({ type: 'function_call', call_id: 'call_a', name: 'f', arguments: '{"a":1}', status: 'completed' });
    expect(fb).toMatchObject({ type: 'custom_tool_call', call_id: 'call_b', name: 'apply_patch', input: 'x' });
    expect(final.usage).toEqual({
      input_tokens: 50,
      input_tokens_details: { cached_tokens: 20 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 57,
    });
  });

  it('length ends with response.incomplete; thought signatures close the stream in a reasoning item', async () => {
    const w = responsesFormat.streamWriter('m');
    let out = w.chunk(chunk({ content: 'Partial' }));
    out += w.chunk(
      chunk({
        tool_calls: [
          { index: 0, id: 'call_g', type: 'function', function: { name: 'f', arguments: '{}' }, extra_content: { google: { thought_signature: 'sig-g' } } },
        ],
      }),
    );
    out += w.chunk(chunk({}, 'length'));
    out += w.end(undefined);
    const { final, types } = await parseWithSdk(out);
    expect(types.at(-1)).toBe('response.incomplete');
    expect(final.status).toBe('incomplete');
    expect(final.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(final.output.map((o) => o.type)).toEqual(['message', 'function_call', 'reasoning']);
    expect(unpackReasoning((final.output[2] as any).encrypted_content)).toEqual({ s: { call_g: 'sig-g' } });
  });

  it('an empty stream is still a whole response; streamError is a response.failed event', async () => {
    const empty = await parseWithSdk(responsesFormat.streamWriter('m').end(undefined));
    expect(empty.types).toEqual(['response.created', 'response.in_progress', 'response.completed']);
    expect(empty.final.output).toEqual([]);
    const passthroughTail = events(responsesFormat.streamError!(502, '上游连接中断', 'upstream_stream_interrupted'))[0]!;
    expect(passthroughTail.event).toBe('response.failed');
    expect(JSON.parse(passthroughTail.data).response).toMatchObject({
      status: 'failed',
      error: { code: 'upstream_stream_interrupted', message: '上游连接中断' },
    });
    // a converted stream fails as the response it started, and the SDK still accumulates it
    const w = responsesFormat.streamWriter('m');
    const out = w.chunk(chunk({ content: 'partial' })) + w.fail!(502, '上游连接中断', 'upstream_stream_interrupted');
    expect(w.end(undefined)).toBe('');
    const { final, types, seqs } = await parseWithSdk(out);
    expect(types.at(-1)).toBe('response.failed');
    expect(seqs).toEqual(seqs.map((_, i) => i));
    expect(final.id).toBe('resp_xyz');
    expect(final.status).toBe('failed');
    expect(final.error).toEqual({ code: 'upstream_stream_interrupted', message: '上游连接中断' });
    expect(final.output_text).toBe('partial');
    expect(responsesFormat.error(400, 'bad', 'invalid_request')).toEqual({
      error: { message: 'bad', type: 'invalid_request_error', param: null, code: 'invalid_request' },
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('canonical → Responses upstream request', () => {
  const req: ChatRequest = {
    model: 'alias',
    messages: [
      { role: 'system', content: 'Sys.' },
      { role: 'developer', content: [{ type: 'text', text: 'Dev.' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image_url', image_url: { url: PNG } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
          { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Checking.',
        reasoning_details: [
          { type: 'reasoning.summary', summary: 'Sum.', id: 'rs_1', format: 'openai-responses-v1' },
          { type: 'reasoning.encrypted', data: 'enc-1', id: 'rs_1', format: 'openai-responses-v1' },
          { type: 'reasoning.text', text: 'x', signature: 's', format: 'anthropic-claude-v1' },
          { type: 'reasoning.summary', summary: 'Stored only.', id: 'rs_2', format: 'openai-responses-v1' },
        ],
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
    ],
    max_tokens: 1,
    temperature: 0.5,
    top_p: 0.8,
    stop: ['END'],
    n: 2,
    seed: 7,
    top_k: 40,
    presence_penalty: 1,
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    parallel_tool_calls: false,
    reasoning_effort: 'low',
    response_format: { type: 'json_schema', json_schema: { name: 'o', schema: { type: 'object' }, strict: true } },
    user: 'u1',
    stream_options: { include_usage: true },
  };

  it('messages become input items; fields without a Responses counterpart are left out', () => {
    const b = toResponsesRequest(req, 'gpt-5.1-codex', true);
    expect(b).toEqual({
      model: 'gpt-5.1-codex',
      store: false,
      stream: true,
      input: [
        { role: 'system', content: 'Sys.' },
        { role: 'developer', content: 'Dev.' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Look' },
            { type: 'input_image', image_url: PNG, detail: 'auto' },
            { type: 'input_file', file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' },
          ],
        },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Sum.' }], encrypted_content: 'enc-1' },
        { role: 'assistant', content: 'Checking.' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
      ],
      max_output_tokens: 16,
      temperature: 0.5,
      top_p: 0.8,
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false }],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: false,
      reasoning: { effort: 'low' },
      include: ['reasoning.encrypted_content'],
      text: { format: { type: 'json_schema', name: 'o', schema: { type: 'object' }, strict: true } },
      user: 'u1',
    });
  });

  it('no reasoning asked or carried: no include (non-reasoning models refuse it); a budget maps to an effort', () => {
    const plain = toResponsesRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, 'gpt-4o', false);
    expect(plain).toEqual({ model: 'gpt-4o', store: false, input: [{ role: 'user', content: 'hi' }] });
    const budget = toResponsesRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], thinking_budget: 10000 }, 'o3', false);
    expect(budget.reasoning).toEqual({ effort: 'medium' });
  });

  it('URL and headers: OpenAI-compatible prefix, Azure v1 surface with the deployment as model', () => {
    const up = responsesAdaptor.chatRequest(req, ctxOf({ stream: true }));
    expect(up.url).toBe('https://api.example.com/v1/responses');
    expect(up.headers.authorization).toBe('Bearer sk-up');
    expect(JSON.parse(String(up.body)).model).toBe('gpt-5.1-codex');
    const az = azureResponsesAdaptor.chatRequest(req, ctxOf({}, CHANNEL_TYPE.Azure, 'https://res.openai.azure.com/'));
    expect(az.url).toBe('https://res.openai.azure.com/openai/v1/responses');
    expect(az.headers['api-key']).toBe('sk-up');
    expect(az.headers.authorization).toBeUndefined();
    expect(JSON.parse(String(az.body)).model).toBe('gpt-51-codex');
  });

  it('passthrough: bytes as sent unless the model changes or gateway-packed reasoning must go', () => {
    const body = { model: 'gpt-5.1-codex', input: 'hi' };
    const raw = { body: Buffer.from(JSON.stringify(body)), contentType: 'application/json' };
    expect(responsesAdaptor.rawRequest!(body, ctxOf({ endpoint: 'responses' }), raw).body).toBe(raw.body);
    const packed = packReasoning({ s: { c: 'sig' } });
    const withPacked = {
      model: 'gpt-5.1-codex',
      input: [
        { role: 'user', content: 'hi' },
        { type: 'reasoning', id: 'rs_x', summary: [], encrypted_content: packed },
        { type: 'reasoning', id: 'rs_y', summary: [], encrypted_content: 'real-openai' },
      ],
    };
    const rawPacked = { body: Buffer.from(JSON.stringify(withPacked)), contentType: 'application/json' };
    const sent = JSON.parse(String(responsesAdaptor.rawRequest!(withPacked, ctxOf({ endpoint: 'responses' }), rawPacked).body));
    expect(sent.input.map((i: { id?: string }) => i.id ?? 'user')).toEqual(['user', 'rs_y']);
    const az = azureResponsesAdaptor.rawRequest!(body, ctxOf({ endpoint: 'responses' }, CHANNEL_TYPE.Azure, 'https://res.openai.azure.com'), raw);
    expect(JSON.parse(String(az.body))).toEqual({ model: 'gpt-51-codex', input: 'hi' });
  });
});

// ---------------------------------------------------------------------------------------------

const RESPONSE_BODY = {
  id: 'resp_1',
  object: 'response',
  created_at: 1700000001,
  status: 'completed',
  model: 'gpt-5.1-codex',
  output: [
    {
      id: 'rs_1',
      type: 'reasoning',
      summary: [
        { type: 'summary_text', text: 'A.' },
        { type: 'summary_text', text: 'B.' },
      ],
      encrypted_content: 'enc-1',
    },
    { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hi there', annotations: [] }] },
    { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"x":1}', status: 'completed' },
    { id: 'ws_1', type: 'web_search_call', status: 'completed' },
  ],
  usage: { input_tokens: 30, input_tokens_details: { cached_tokens: 10 }, output_tokens: 12, output_tokens_details: { reasoning_tokens: 4 }, total_tokens: 42 },
};

describe('Responses upstream answer → canonical', () => {
  it('text, reasoning with its details, function calls, usage', () => {
    const r = fromResponsesBody(RESPONSE_BODY, 'x');
    expect(r).toEqual({
      id: 'resp_1',
      object: 'chat.completion',
      created: 1700000001,
      model: 'gpt-5.1-codex',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Hi there',
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
            reasoning_content: 'A.\n\nB.',
            reasoning_details: [
              { type: 'reasoning.summary', summary: 'A.', id: 'rs_1', format: 'openai-responses-v1' },
              { type: 'reasoning.summary', summary: 'B.', id: 'rs_1', format: 'openai-responses-v1' },
              { type: 'reasoning.encrypted', data: 'enc-1', id: 'rs_1', format: 'openai-responses-v1' },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: {
        prompt_tokens: 30,
        completion_tokens: 12,
        total_tokens: 42,
        prompt_tokens_details: { cached_tokens: 10 },
        completion_tokens_details: { reasoning_tokens: 4 },
      },
    });
    expect(responsesAdaptor.chatResponse(RESPONSE_BODY, ctxOf())).toEqual(r);
    expect(responsesAdaptor.usageFromBody!(RESPONSE_BODY, ctxOf())).toEqual(r.usage);
  });

  it('incomplete → length / content_filter; failed → UpstreamError', () => {
    const inc = fromResponsesBody({ ...RESPONSE_BODY, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [] }, 'x');
    expect(inc.choices[0]!.finish_reason).toBe('length');
    expect(inc.choices[0]!.message.content).toBe('');
    const cf = fromResponsesBody({ ...RESPONSE_BODY, status: 'incomplete', incomplete_details: { reason: 'content_filter' } }, 'x');
    expect(cf.choices[0]!.finish_reason).toBe('content_filter');
    expect(() => fromResponsesBody({ status: 'failed', error: { code: 'server_error', message: 'boom' } }, 'x')).toThrow(UpstreamError);
  });
});

/** A Responses stream as OpenAI sends it: reasoning, text, two parallel calls, usage. */
function responsesStream(): SSEEvent[] {
  const e = (type: string, data: Record<string, unknown>): SSEEvent => ({ event: type, data: JSON.stringify({ type, ...data }) });
  const resp = (status: string, extra: Record<string, unknown> = {}) => ({
    id: 'resp_s',
    created_at: 1700000002,
    model: 'gpt-5.1-codex',
    status,
    output: [],
    ...extra,
  });
  return [
    e('response.created', { response: resp('in_progress') }),
    e('response.in_progress', { response: resp('in_progress') }),
    e('response.output_item.added', { output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } }),
    e('response.reasoning_summary_text.delta', { item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'First.' }),
    e('response.reasoning_summary_text.delta', { item_id: 'rs_1', output_index: 0, summary_index: 1, delta: 'Second.' }),
    e('response.output_item.done', {
      output_index: 0,
      item: {
        id: 'rs_1',
        type: 'reasoning',
        summary: [
          { type: 'summary_text', text: 'First.' },
          { type: 'summary_text', text: 'Second.' },
        ],
        encrypted_content: 'enc-s',
      },
    }),
    e('response.output_item.added', { output_index: 1, item: { id: 'msg_1', type: 'message', role: 'assistant', content: [] } }),
    e('response.output_text.delta', { item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'Hel' }),
    e('response.output_text.delta', { item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'lo' }),
    e('response.output_item.added', { output_index: 2, item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '' } }),
    e('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 2, delta: '{"a":' }),
    e('response.output_item.added', { output_index: 3, item: { id: 'fc_2', type: 'function_call', call_id: 'call_2', name: 'g', arguments: '' } }),
    e('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 2, delta: '1}' }),
    e('response.output_item.done', { output_index: 2, item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"a":1}' } }),
    // no deltas for this one: its arguments come whole with the item
    e('response.output_item.done', { output_index: 3, item: { id: 'fc_2', type: 'function_call', call_id: 'call_2', name: 'g', arguments: '{"b":2}' } }),
    e('response.completed', {
      response: resp('completed', {
        usage: {
          input_tokens: 20,
          input_tokens_details: { cached_tokens: 5 },
          output_tokens: 9,
          output_tokens_details: { reasoning_tokens: 3 },
          total_tokens: 29,
        },
      }),
    }),
  ];
}

describe('Responses upstream stream → canonical chunks', () => {
  it('text, reasoning (parts separated), details at the item end, parallel calls, finish and usage', () => {
    const t = responsesAdaptor.chatStream(ctxOf({ stream: true }));
    const chunks = responsesStream().flatMap((ev) => t.push(ev));
    const deltas = chunks.filter((c) => c.choices.length).map((c) => c.choices[0]!.delta);
    expect(deltas[0]).toEqual({ role: 'assistant', content: '' });
    expect(deltas.map((d) => d.reasoning_content ?? '').join('')).toBe('First.\n\nSecond.');
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('Hello');
    expect(deltas.find((d) => d.reasoning_details)!.reasoning_details).toEqual([
      { type: 'reasoning.summary', summary: 'First.', id: 'rs_1', format: 'openai-responses-v1' },
      { type: 'reasoning.summary', summary: 'Second.', id: 'rs_1', format: 'openai-responses-v1' },
      { type: 'reasoning.encrypted', data: 'enc-s', id: 'rs_1', format: 'openai-responses-v1' },
    ]);
    const calls = new Map<number, { id?: string; name?: string; args: string }>();
    for (const d of deltas) {
      for (const tc of d.tool_calls ?? []) {
        const c = calls.get(tc.index) ?? { args: '' };
        if (tc.id) c.id = tc.id;
        if (tc.function?.name) c.name = tc.function.name;
        c.args += tc.function?.arguments ?? '';
        calls.set(tc.index, c);
      }
    }
    expect([...calls.values()]).toEqual([
      { id: 'call_1', name: 'f', args: '{"a":1}' },
      { id: 'call_2', name: 'g', args: '{"b":2}' },
    ]);
    expect(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason).toBe('tool_calls');
    const usage = {
      prompt_tokens: 20,
      completion_tokens: 9,
      total_tokens: 29,
      prompt_tokens_details: { cached_tokens: 5 },
      completion_tokens_details: { reasoning_tokens: 3 },
    };
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage });
    expect(t.usage()).toEqual(usage);
    expect(chunks[0]!.id).toBe('resp_s');
  });

  it('an OpenAI Chat client reads it as a Chat stream (through the openai writer)', () => {
    const t = new ResponsesStreamTranslator('m');
    const w = openaiFormat.streamWriter('alias', { includeUsage: true });
    let out = '';
    for (const ev of responsesStream()) for (const c of t.push(ev)) out += w.chunk(c);
    out += w.end(t.usage());
    const datas = events(out).map((e) => e.data);
    expect(datas.at(-1)).toBe('[DONE]');
    const usageChunk = JSON.parse(datas.at(-2)!);
    expect(usageChunk.usage.prompt_tokens).toBe(20);
  });

  it('incomplete → length; failed and error events → UpstreamError', () => {
    const t = new ResponsesStreamTranslator('m');
    const out = t.push({
      data: JSON.stringify({ type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } }),
    });
    expect(out.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason).toBe('length');
    expect(() =>
      new ResponsesStreamTranslator('m').push({
        data: JSON.stringify({ type: 'response.failed', response: { status: 'failed', error: { code: 'rate_limit_exceeded', message: 'slow down' } } }),
      }),
    ).toThrow(expect.objectContaining({ status: 429, message: 'slow down' }));
    expect(() =>
      new ResponsesStreamTranslator('m').push({ event: 'error', data: JSON.stringify({ type: 'error', code: 'server_error', message: 'boom' }) }),
    ).toThrow(UpstreamError);
    expect(new ResponsesStreamTranslator('m').push({ data: '{garbage}' })).toEqual([]);
  });

  it('Responses client ← canonical ← Responses upstream keeps the answer (round trip through both halves)', async () => {
    const t = new ResponsesStreamTranslator('m');
    const w = responsesFormat.streamWriter('alias');
    let out = '';
    for (const ev of responsesStream()) for (const c of t.push(ev)) out += w.chunk(c);
    out += w.end(t.usage());
    const { final } = await parseWithSdk(out);
    expect(final.output_text).toBe('Hello');
    expect(final.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    expect((final.output[0] as any).encrypted_content).toBe('enc-s');
    expect(final.usage).toMatchObject({ input_tokens: 20, output_tokens: 9, output_tokens_details: { reasoning_tokens: 3 } });
  });
});

// ---------------------------------------------------------------------------------------------

describe('which protocols a channel speaks', () => {
  const ch = (type: number, setting: Record<string, unknown> = {}) => ({ type, setting });
  it('the catalogue fact and the upstream_protocol setting', () => {
    expect([...channelSpeaks(ch(CHANNEL_TYPE.OpenAI))]).toEqual(['openai', 'responses']);
    expect([...channelSpeaks(ch(CHANNEL_TYPE.Azure))]).toEqual(['openai', 'responses']);
    expect([...channelSpeaks(ch(CHANNEL_TYPE.xAI))]).toEqual(['openai', 'responses']);
    expect([...channelSpeaks(ch(CHANNEL_TYPE.DeepSeek))]).toEqual(['openai']);
    expect([...channelSpeaks(ch(CHANNEL_TYPE.DeepSeek, { upstream_protocol: 'both' }))]).toEqual(['openai', 'responses']);
    expect([...channelSpeaks(ch(CHANNEL_TYPE.OpenAI, { upstream_protocol: 'chat' }))]).toEqual(['openai']);
    expect([...channelSpeaks(ch(CHANNEL_TYPE.OpenAI, { upstream_protocol: 'responses' }))]).toEqual(['responses']);
    expect([...channelSpeaks(ch(CHANNEL_TYPE.Ollama, { upstream_protocol: 'responses' }))]).toEqual(['responses']);
    expect([...channelSpeaks(ch(CHANNEL_TYPE.Anthropic, { upstream_protocol: 'responses' }))]).toEqual(['claude']);
    expect([...channelSpeaks(ch(CHANNEL_TYPE.Gemini))]).toEqual(['gemini']);
    expect([...channelSpeaks(ch(CHANNEL_TYPE.Cloudflare, { upstream_protocol: 'both' }))]).toEqual(['openai']);
    expect([...channelSpeaks(ch(CHANNEL_TYPE.VertexAI))]).toEqual([]);
  });

  it('how each channel takes a call', () => {
    expect(channelWay(ch(CHANNEL_TYPE.OpenAI), 'responses', 'responses')).toEqual({ adaptor: responsesAdaptor, mode: 'passthrough' });
    expect(channelWay(ch(CHANNEL_TYPE.Azure), 'responses', 'responses')).toEqual({ adaptor: azureResponsesAdaptor, mode: 'passthrough' });
    expect(channelWay(ch(CHANNEL_TYPE.DeepSeek), 'responses', 'responses')).toEqual({ adaptor: openaiAdaptor, mode: 'converted' });
    expect(channelWay(ch(CHANNEL_TYPE.Anthropic), 'responses', 'responses')).toEqual({ adaptor: claudeAdaptor, mode: 'converted' });
    expect(channelWay(ch(CHANNEL_TYPE.OpenAI), 'chat', 'openai')).toEqual({ adaptor: openaiAdaptor, mode: 'passthrough' });
    const respOnly = ch(CHANNEL_TYPE.Azure, { upstream_protocol: 'responses' });
    expect(channelWay(respOnly, 'chat', 'openai')).toEqual({ adaptor: azureResponsesAdaptor, mode: 'converted' });
    expect(channelWay(respOnly, 'chat', 'claude')).toEqual({ adaptor: azureResponsesAdaptor, mode: 'converted' });
    expect(channelWay(respOnly, 'responses', 'responses')).toEqual({ adaptor: azureResponsesAdaptor, mode: 'passthrough' });
    // other OpenAI endpoints keep the kind's own adaptor
    expect(channelWay(respOnly, 'embeddings', 'openai')).toEqual({ adaptor: azureAdaptor, mode: 'passthrough' });
    expect(chatAdaptorOf(respOnly)).toBe(azureResponsesAdaptor);
    expect(chatAdaptorOf(ch(CHANNEL_TYPE.OpenAI))).toBe(openaiAdaptor);
    expect(channelWay(ch(CHANNEL_TYPE.Anthropic), 'embeddings', 'openai')).toBeUndefined();
    expect(channelWay(ch(CHANNEL_TYPE.Cohere), 'rerank', 'openai')!.mode).toBe('endpoint');
    expect(channelWay(ch(CHANNEL_TYPE.Cohere), 'responses', 'responses')!.mode).toBe('converted');
  });
});
