/**
 * The JSON the relay writes by template instead of JSON.stringify (lib/json.ts) must be the very
 * same text: the converted Responses answer (and its stream snapshots), the converted Claude
 * message (and its stream's message_start), the consume log's `other` tail. Pure, no DB. Also: JSON options parsed once and shared read-only.
 */
import { chatToResponses, chatToResponsesJson } from '../../server/src/protocols/responses/answer';
import { responsesFormat } from '../../server/src/protocols/responses/format';
import { chatToClaude, chatToClaudeJson } from '../../server/src/protocols/claude/answer';
import { ClaudeStreamWriter } from '../../server/src/protocols/claude/streamWriter';
import { openaiFormat } from '../../server/src/protocols/openai/format';
import { logTailJson, type LogOtherTail } from '../../server/src/relay/call/settle';
import { jsonName, jsonNumber, jsonOrNull } from '../../server/src/lib/json';
import { parseJsonOption } from '../../server/src/protocols/shared';
import type { ChatChunk, ChatResponse, Usage } from '../../server/src/relay/types';

const TRICKY = ['plain', 'quote " and \\ backslash', 'line\nbreak\ttab', 'ünïcödé 中文 😀', '\u2028\u2029', '\u0000\u001f', '</script>', ''];

function answer(over: Partial<ChatResponse['choices'][number]['message']> = {}, finish: string | null = 'stop', usage?: Usage): ChatResponse {
  return {
    id: 'chatcmpl-abc',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'up-model',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello!', ...over }, finish_reason: finish as never }],
    ...(usage ? { usage } : {}),
  };
}

/** Usages of every kind an answer carries, and odd types an upstream may send (written as JSON.stringify writes them). */
const USAGES: Array<Usage | undefined> = [
  undefined,
  { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
  {
    prompt_tokens: 120,
    completion_tokens: 70,
    total_tokens: 190,
    prompt_tokens_details: { cached_tokens: 80, cache_creation_tokens: 20 },
    completion_tokens_details: { reasoning_tokens: 30 },
  },
  { prompt_tokens: '12' as unknown as number, completion_tokens: Number.NaN, total_tokens: 19 },
];

/** Answers of every kind both formats write: text, refusals, reasoning (signed or not), tool calls, every finish, odd ids. */
const SIGNED = [{ type: 'reasoning.text', text: 'thought', signature: 'sig==', format: 'anthropic-claude-v1' }];
const ANSWERS: ChatResponse[] = [
  ...TRICKY.map((t) => answer({ content: t })),
  answer({ content: null, refusal: 'I cannot "do" that' }),
  answer({ content: 'both', refusal: 'and a refusal' }),
  answer({ content: 'thinking first', reasoning_content: 'from another family' }),
  answer({ content: 'x', reasoning_content: 'thought', reasoning_details: SIGNED as never }),
  answer({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":"\\u00e9"}' } }] }),
  answer({ content: null, tool_calls: [{ id: '', type: 'function', function: { name: 'g', arguments: 'not json' } }] }),
  answer({ content: 'x' }, 'length'),
  answer({ content: 'x' }, 'content_filter'),
  answer({ content: 'x' }, null),
  { ...answer(), id: 'weird id/with:chars' },
  { ...answer(), id: 'resp_kept' },
  { ...answer(), id: 'msg_kept' },
  { ...answer(), id: '' },
];

describe('Responses answer by template', () => {
  const bodies: Array<Record<string, unknown> | undefined> = [
    undefined,
    { model: 'm', input: 'hi' },
    {
      model: 'm',
      input: 'hi',
      instructions: TRICKY[1],
      max_output_tokens: 256,
      parallel_tool_calls: false,
      reasoning: { effort: 'high', summary: 'auto' },
      temperature: 0.2,
      text: { format: { type: 'json_schema', name: 'x', schema: { type: 'object' } }, verbosity: 'low' },
      tool_choice: { type: 'function', name: 'f' },
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }],
      top_p: 0.9,
      truncation: 'auto',
      user: 'u "1"',
      metadata: { k: 'v' },
    },
    // Wrong types fall back to the defaults, as in the object.
    {
      model: 'm',
      instructions: 5,
      max_output_tokens: '9',
      reasoning: 'high',
      text: 'plain',
      tools: {},
      top_p: null,
      truncation: 1,
      user: 2,
      metadata: [],
      tool_choice: null,
    },
    { model: 'm', tool_choice: 'required', reasoning: { effort: 7 }, temperature: 1e21 },
    // The strings and empty objects the echo writes from constants, given explicitly, and a name
    // every object inherits.
    { model: 'm', tool_choice: 'none', truncation: 'disabled', metadata: {}, text: {} },
    { model: 'm', tool_choice: 'constructor', truncation: 'toString' },
  ];

  it('writes exactly what JSON.stringify writes for every answer, usage and request echo', () => {
    let n = 0;
    for (const a of ANSWERS)
      for (const u of USAGES)
        for (const b of bodies) {
          const res = u ? { ...a, usage: u } : a;
          // Ids drawn per call (items, a missing response id) are made equal by a fixed seed: compare with them replaced.
          const strip = (s: string) => s.replace(/"(msg|rs|fc|ctc|call|resp)_[0-9a-f]{24}"/g, '"$1_X"');
          expect(strip(chatToResponsesJson(res, 'client-model', b))).toBe(strip(JSON.stringify(chatToResponses(res, 'client-model', b))));
          n++;
        }
    expect(n).toBe(ANSWERS.length * USAGES.length * bodies.length);
  });

  it('is what the format answers with', () => {
    const res = answer({ content: 'Hi' }, 'stop', { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
    const json = responsesFormat.answerJson!(res, 'm', { model: 'm', input: 'x' });
    expect(JSON.parse(json)).toMatchObject({
      object: 'response',
      status: 'completed',
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hi' }] }],
    });
  });

  it('writes stream snapshots the object would give', () => {
    const w = responsesFormat.streamWriter('m', { clientBody: { model: 'm', input: 'x', instructions: 'be brief', metadata: { a: '1' } } });
    let out = w.chunk({
      id: 'chatcmpl-s',
      object: 'chat.completion.chunk',
      created: 1_700_000_001,
      model: 'u',
      choices: [{ index: 0, delta: { role: 'assistant', content: 'He' }, finish_reason: null }],
    });
    out += w.chunk({
      id: 'chatcmpl-s',
      object: 'chat.completion.chunk',
      created: 1_700_000_001,
      model: 'u',
      choices: [{ index: 0, delta: { content: 'llo' }, finish_reason: 'stop' }],
    });
    out += w.end({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    const frames = out
      .split('\n\n')
      .filter(Boolean)
      .map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)) as { type: string; response?: Record<string, unknown>; sequence_number: number });
    expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
    const done = frames.find((f) => f.type === 'response.completed')!.response!;
    const expected = chatToResponses(
      { ...answer({ content: 'Hello' }), id: 'chatcmpl-s', created: 1_700_000_001, usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
      'm',
      { model: 'm', input: 'x', instructions: 'be brief', metadata: { a: '1' } },
    );
    const itemId = (r: Record<string, unknown>) => (r.output as Array<{ id: string }>)[0]!.id;
    expect(done).toEqual({ ...expected, output: [{ ...(expected.output as object[])[0], id: itemId(done) }] });
    expect(frames[0]).toMatchObject({ type: 'response.created', response: { status: 'in_progress', output: [], instructions: 'be brief' } });
  });
});

describe('Claude message by template', () => {
  it('writes exactly what JSON.stringify writes', () => {
    const strip = (s: string) => s.replace(/"(msg|toolu)_[0-9a-f]{24}"/g, '"$1_X"');
    for (const a of ANSWERS)
      for (const u of USAGES) {
        const res = u ? { ...a, usage: u } : a;
        expect(strip(chatToClaudeJson(res, 'client-"model"'))).toBe(strip(JSON.stringify(chatToClaude(res, 'client-"model"'))));
      }
  });

  it('starts a stream with the message_start the object would give', () => {
    const w = new ClaudeStreamWriter('m "1"');
    const out = w.chunk({
      id: 'chatcmpl-q',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'u',
      choices: [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }],
    });
    const first = out.slice(0, out.indexOf('\n\n') + 2);
    const message = {
      id: 'msg_q',
      type: 'message',
      role: 'assistant',
      model: 'm "1"',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    };
    expect(first).toBe(`event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message })}\n\n`);
  });
});

/** A stream's frames: each data's text, parsed, and the event name. */
function frames(out: string): Array<{ event: string; text: string; data: Record<string, unknown> }> {
  return out
    .split('\n\n')
    .filter(Boolean)
    .map((f) => {
      const event = f.slice('event: '.length, f.indexOf('\n'));
      const text = f.slice(f.indexOf('data: ') + 6);
      return { event, text, data: JSON.parse(text) as Record<string, unknown> };
    });
}

const chunkOf = (delta: ChatChunk['choices'][number]['delta'], finish: string | null = null): ChatChunk => ({
  id: 'chatcmpl-d',
  object: 'chat.completion.chunk',
  created: 1_700_000_002,
  model: 'u',
  choices: [{ index: 0, delta, finish_reason: finish as never }],
});

/** Every kind of token a converted stream carries, each over the tricky strings: reasoning, text, refusal, tool arguments (two calls). */
const DELTAS: ChatChunk[] = [
  ...TRICKY.filter(Boolean).map((t) => chunkOf({ reasoning_content: t })),
  ...TRICKY.filter(Boolean).map((t) => chunkOf({ content: t })),
  ...TRICKY.filter(Boolean).map((t) => chunkOf({ refusal: t })),
  chunkOf({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }),
  ...TRICKY.filter(Boolean).map((t) => chunkOf({ tool_calls: [{ index: 0, function: { arguments: t } }] })),
  chunkOf({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{"q":' } }] }),
  chunkOf({ tool_calls: [{ index: 1, function: { arguments: '"\u2028"}' } }] }, 'tool_calls'),
];

// The events of every streamed token are written by template: the same text JSON.stringify gives
// (a parse and stringify again is the identity), keys in the order the object had.
describe('stream delta events by template', () => {
  it('Responses: text, refusal, reasoning summary and argument deltas', () => {
    const w = responsesFormat.streamWriter('m', { clientBody: { model: 'm', input: 'x' } });
    const out = DELTAS.map((c) => w.chunk(c)).join('') + w.end({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
    const all = frames(out);
    expect(all.map((f) => f.data.sequence_number)).toEqual(all.map((_, i) => i));
    const KEYS: Record<string, string[]> = {
      'response.output_text.delta': ['type', 'item_id', 'output_index', 'content_index', 'delta', 'logprobs', 'sequence_number'],
      'response.refusal.delta': ['type', 'item_id', 'output_index', 'content_index', 'delta', 'sequence_number'],
      'response.reasoning_summary_text.delta': ['type', 'item_id', 'output_index', 'summary_index', 'delta', 'sequence_number'],
      'response.function_call_arguments.delta': ['type', 'item_id', 'output_index', 'delta', 'sequence_number'],
    };
    const deltas = all.filter((f) => KEYS[f.event]);
    for (const f of deltas) {
      expect(f.text).toBe(JSON.stringify(f.data));
      expect(Object.keys(f.data)).toEqual(KEYS[f.event]);
      expect(f.data.type).toBe(f.event);
    }
    const joined = (type: string) =>
      deltas
        .filter((f) => f.event === type)
        .map((f) => f.data.delta)
        .join('');
    const tricky = TRICKY.join('');
    expect(joined('response.reasoning_summary_text.delta')).toBe(tricky);
    expect(joined('response.output_text.delta')).toBe(tricky);
    expect(joined('response.refusal.delta')).toBe(tricky);
    expect(joined('response.function_call_arguments.delta')).toBe(`${tricky}{"q":"\u2028"}`);
    // each delta names its item (id and output index) as that item's done event does
    const doneId = new Map(
      all.filter((f) => f.event === 'response.output_item.done').map((f) => [f.data.output_index as number, (f.data.item as { id: string }).id] as const),
    );
    const itemsOf = (type: string) =>
      new Set(deltas.filter((f) => f.event === type).map((f) => `${f.data.output_index as number} ${f.data.item_id as string}`));
    const itemOfDone = (key: string) => `${key.split(' ')[0]} ${doneId.get(Number(key.split(' ')[0]))}`;
    for (const type of Object.keys(KEYS)) for (const key of itemsOf(type)) expect(itemOfDone(key)).toBe(key);
    // one item per kind of text, one per tool call
    expect(Object.keys(KEYS).map((type) => itemsOf(type).size)).toEqual([1, 1, 1, 2]);
  });

  it('OpenAI Chat: the chunk of a text token is what JSON.stringify writes, whatever its shape', () => {
    const w = openaiFormat.streamWriter('m');
    const odd: ChatChunk[] = [
      { ...chunkOf({ content: 'x' }), id: 'id "q"', model: 'm\u2028' },
      { ...chunkOf({ content: 'x' }), created: Number.NaN },
      { ...chunkOf({ content: 'x' }), system_fingerprint: 'fp' } as ChatChunk,
      {
        id: 'chatcmpl-d',
        created: 1,
        object: 'chat.completion.chunk',
        model: 'u',
        choices: [{ index: 0, delta: { content: 'reordered' }, finish_reason: null }],
      },
      chunkOf({ content: 'x', role: 'assistant' }),
      chunkOf({ role: 'assistant', content: 'x' }),
      chunkOf({ content: 'x' }, 'stop'),
      chunkOf({ content: 42 as unknown as string }),
      chunkOf({ content: null as unknown as string }),
      { ...chunkOf({ content: 'x' }), choices: [{ index: 1, delta: { content: 'x' }, finish_reason: null }] },
      { ...chunkOf({ content: 'x' }), choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null, logprobs: null } as never] },
      { ...chunkOf({ content: 'x' }), usage: undefined },
    ];
    for (const c of [...TRICKY.map((t) => chunkOf({ content: t })), ...odd]) expect(w.chunk(c)).toBe(`data: ${JSON.stringify(c)}\n\n`);
  });

  it('Claude: text, thinking and tool input deltas', () => {
    const w = new ClaudeStreamWriter('m');
    const out = DELTAS.map((c) => w.chunk(c)).join('') + w.end({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
    const deltas = frames(out).filter((f) => f.event === 'content_block_delta');
    const FIELD: Record<string, string> = { text_delta: 'text', thinking_delta: 'thinking', input_json_delta: 'partial_json' };
    for (const f of deltas) {
      expect(f.text).toBe(JSON.stringify(f.data));
      expect(Object.keys(f.data)).toEqual(['type', 'index', 'delta']);
      const d = f.data.delta as Record<string, unknown>;
      expect(Object.keys(d)).toEqual(['type', FIELD[d.type as string]]);
    }
    const joined = (type: string) =>
      deltas
        .map((f) => f.data.delta as Record<string, string>)
        .filter((d) => d.type === type)
        .map((d) => d[FIELD[type]!])
        .join('');
    const tricky = TRICKY.join('');
    expect(joined('thinking_delta')).toBe(tricky);
    expect(joined('text_delta')).toBe(tricky + tricky); // a refusal streams as text
    expect(joined('input_json_delta')).toBe(`${tricky}{"q":"\u2028"}`);
  });
});

describe('the log tail by template', () => {
  const base: LogOtherTail = {
    frt: 12,
    is_model_mapped: false,
    cache_tokens: 0,
    group: 'default',
    admin_info: { use_channel: [3] },
    request_format: 'openai',
    upstream_format: 'openai',
    passthrough: true,
  };
  const tails: LogOtherTail[] = [
    base,
    { ...base, frt: Number.NaN, cache_tokens: 1e21, is_model_mapped: true, upstream_model_name: 'gpt-"4o"' },
    { ...base, admin_info: { use_channel: [3, 4, 5], is_multi_key: true, multi_key_index: 2 } },
    { ...base, admin_info: { use_channel: [] }, request_format: 'responses', upstream_format: 'claude', passthrough: false, unconverted: 'web_search "x"' },
    ...TRICKY.map((g) => ({ ...base, group: g, unconverted: g, upstream_model_name: g })),
  ];
  it.each(tails.map((t, i) => [i, t] as const))('tail %i', (_i, tail) => {
    expect(logTailJson(tail)).toBe(JSON.stringify(tail).slice(1));
  });
});

describe('JSON helpers', () => {
  it('write values as JSON.stringify does', () => {
    for (const s of TRICKY) expect(jsonName(s)).toBe(JSON.stringify(s));
    for (const n of [0, -0, 1.5, -7, 1e21, 1e-7, Number.NaN, Infinity]) expect(jsonNumber(n)).toBe(JSON.stringify(n));
    for (const v of [null, undefined, 'x"', 3, { a: [1, null] }, true]) expect(jsonOrNull(v)).toBe(JSON.stringify(v ?? null));
  });

  it('parse a JSON option once and share it read-only', () => {
    const raw = '{"default":{"x":[1,2]}}';
    const a = parseJsonOption(raw) as { default: { x: number[] } };
    expect(parseJsonOption(raw)).toBe(a);
    expect(Object.isFrozen(a.default.x)).toBe(true);
    expect(() => a.default.x.push(3)).toThrow(TypeError);
    expect(parseJsonOption('not json')).toBeUndefined();
    expect(parseJsonOption('')).toBeUndefined();
    expect(parseJsonOption(undefined)).toBeUndefined();
  });
});
