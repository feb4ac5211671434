/**
 * Unit tests of the provider conversions (no DB): Cohere v2 chat/stream/rerank, Vertex AI (region,
 * model names, JWT signing, URLs), Cloudflare / Ollama / Xinference specifics, and the AWS
 * event-stream frame parser against an independent encoder.
 */
import crypto from 'node:crypto';
import {
  CohereStreamTranslator,
  cohereAdaptor,
  cohereFinish,
  fromCohereEmbed,
  fromCohereRerank,
  fromCohereResponse,
  toCohereEmbed,
  toCohereRequest,
  toCohereRerank,
} from '../../server/src/channels/providers/cohere';
import { parseServiceAccount, signServiceAccountJwt, vertexAdaptor, vertexClaudeModel, vertexRegion } from '../../server/src/channels/providers/vertex';
import { cloudflareAdaptor, cloudflareUrl } from '../../server/src/channels/providers/cloudflare';
import { ollamaAdaptor } from '../../server/src/channels/providers/ollama';
import { xinferenceUsage } from '../../server/src/channels/providers/xinference';
import { BedrockStreamDecoder, crc32, EventStreamError, EventStreamParser } from '../../server/src/channels/providers/eventstream';
import { adaptorFor, channelWay } from '../../server/src/channels/providers';
import { CHANNEL_TYPE } from '../../server/src/channels/kinds';
import type { Endpoint, WireFormat } from '../../server/src/relay/types';
import { channelKeys } from '../../server/src/channels/routeTable';
import { parseBlock } from '../../server/src/relay/sse';
import { chunkFrame, encodeFrame, exceptionFrame } from '../mock-upstream/bedrock';
import type { AdaptorContext, ChannelInfo, ChatChunk } from '../../server/src/relay/types';

const channel = (over: Partial<ChannelInfo>): ChannelInfo => ({
  id: 1,
  type: 1,
  name: 'c',
  key: 'k',
  baseUrl: '',
  organization: '',
  other: '',
  setting: {},
  ...over,
});
const actx = (ch: ChannelInfo, model: string, stream = false): AdaptorContext => ({
  channel: ch,
  upstreamModel: model,
  requestedModel: model,
  stream,
  endpoint: 'chat',
  option: () => '',
});

describe('registry', () => {
  test('each new type has its adaptor; unknown types stay OpenAI-compatible', () => {
    expect(adaptorFor(41).name).toBe('vertex');
    expect(adaptorFor(34).name).toBe('cohere');
    expect(adaptorFor(39).name).toBe('cloudflare');
    expect(adaptorFor(4).name).toBe('ollama');
    expect(adaptorFor(47).name).toBe('xinference');
    expect(adaptorFor(38).name).toBe('openai');
    expect(adaptorFor(9999).name).toBe('openai');
  });
  test('channelWay: Cohere rerank by conversion for OpenAI clients only; Cloudflare chat+embeddings; Vertex chat only; Gemini embeddings via OpenAI', () => {
    const ch = (type: number) => ({ type, setting: {} });
    const mode = (type: number, endpoint: Endpoint, format: WireFormat) => channelWay(ch(type), endpoint, format)?.mode;
    expect(mode(CHANNEL_TYPE.Cohere, 'rerank', 'openai')).toBe('endpoint');
    expect(mode(CHANNEL_TYPE.Cohere, 'rerank', 'claude')).toBeUndefined();
    expect(mode(CHANNEL_TYPE.Cohere, 'embeddings', 'openai')).toBe('endpoint');
    expect(mode(CHANNEL_TYPE.Cohere, 'images', 'openai')).toBeUndefined();
    expect(mode(CHANNEL_TYPE.Cloudflare, 'embeddings', 'openai')).toBe('passthrough');
    expect(mode(CHANNEL_TYPE.Cloudflare, 'images', 'openai')).toBeUndefined();
    expect(mode(CHANNEL_TYPE.VertexAI, 'chat', 'claude')).toBe('converted');
    expect(mode(CHANNEL_TYPE.VertexAI, 'embeddings', 'openai')).toBeUndefined();
    expect(mode(38, 'rerank', 'openai')).toBe('passthrough');
    expect(mode(CHANNEL_TYPE.Gemini, 'embeddings', 'gemini')).toBe('passthrough');
    expect(mode(CHANNEL_TYPE.OpenAI, 'embeddings', 'gemini')).toBe('via-openai');
    expect(mode(CHANNEL_TYPE.Cohere, 'embeddings', 'gemini')).toBe('via-openai');
    expect(mode(CHANNEL_TYPE.VertexAI, 'embeddings', 'gemini')).toBeUndefined();
  });
});

describe('Cohere', () => {
  test('request: roles, tools, tool results, sampling names', () => {
    const body = toCohereRequest(
      {
        model: 'x',
        messages: [
          { role: 'developer', content: 'dev' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image_url', image_url: { url: 'https://i/a.png' } },
            ],
          },
          { role: 'assistant', content: 'plan', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'result' },
        ],
        top_p: 0.9,
        top_k: 5,
        max_completion_tokens: 30,
        stop: ['x', 'y'],
        tools: [{ type: 'function', function: { name: 'f', description: 'd' } }],
        tool_choice: 'required',
        response_format: { type: 'json_object' },
        seed: 3,
      },
      'command-r',
      true,
    );
    expect(body).toEqual({
      model: 'command-r',
      stream: true,
      messages: [
        { role: 'system', content: 'dev' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'https://i/a.png' } },
          ],
        },
        { role: 'assistant', tool_plan: 'plan', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'result' },
      ],
      max_tokens: 30,
      p: 0.9,
      k: 5,
      stop_sequences: ['x', 'y'],
      seed: 3,
      tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object', properties: {} } } }],
      tool_choice: 'REQUIRED',
      response_format: { type: 'json_object' },
    });
  });

  test('response: text, finish reasons, usage prefers billed_units', () => {
    const r = fromCohereResponse(
      {
        id: 'a',
        finish_reason: 'MAX_TOKENS',
        message: {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Hel' },
            { type: 'text', text: 'lo' },
          ],
        },
        usage: { billed_units: { input_tokens: 3, output_tokens: 4 }, tokens: { input_tokens: 30, output_tokens: 40 } },
      },
      'm',
    );
    expect(r.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'length' });
    expect(r.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    const t = fromCohereResponse(
      {
        finish_reason: 'TOOL_CALL',
        message: { tool_plan: 'p', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        usage: { tokens: { input_tokens: 5, output_tokens: 6 } },
      },
      'm',
    );
    expect(t.choices[0]!.finish_reason).toBe('tool_calls');
    expect(t.choices[0]!.message).toMatchObject({ content: null, reasoning_content: 'p', tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{}' } }] });
    expect(t.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 6 });
    expect([cohereFinish('COMPLETE'), cohereFinish('STOP_SEQUENCE'), cohereFinish('ERROR_TOXIC'), cohereFinish(undefined)]).toEqual([
      'stop',
      'stop',
      'content_filter',
      null,
    ]);
  });

  test('stream: deltas, tool call pieces, usage chunk at message-end, error finish throws at end', () => {
    const t = new CohereStreamTranslator('m');
    const ev = (type: string, d: Record<string, unknown>) => ({ event: type, data: JSON.stringify({ type, ...d }) });
    const out: ChatChunk[] = [];
    out.push(...t.push(ev('message-start', { id: 'msg1', delta: { message: { role: 'assistant' } } })));
    out.push(...t.push(ev('content-delta', { index: 0, delta: { message: { content: { text: 'Hi' } } } })));
    out.push(
      ...t.push(
        ev('tool-call-start', { index: 1, delta: { message: { tool_calls: { id: 'c9', type: 'function', function: { name: 'f', arguments: '' } } } } }),
      ),
    );
    out.push(...t.push(ev('tool-call-delta', { index: 1, delta: { message: { tool_calls: { function: { arguments: '{}' } } } } })));
    out.push(...t.push(ev('message-end', { delta: { finish_reason: 'TOOL_CALL', usage: { billed_units: { input_tokens: 2, output_tokens: 3 } } } })));
    expect(out[0]!.id).toBe('msg1');
    expect(out[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    expect(out[1]!.choices[0]!.delta).toEqual({ content: 'Hi' });
    expect(out[2]!.choices[0]!.delta.tool_calls).toEqual([{ index: 0, id: 'c9', type: 'function', function: { name: 'f', arguments: '' } }]);
    expect(out[3]!.choices[0]!.delta.tool_calls).toEqual([{ index: 0, function: { arguments: '{}' } }]);
    expect(out[4]!.choices[0]!.finish_reason).toBe('tool_calls');
    expect(out[5]).toMatchObject({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } });
    expect(t.usage()).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });

    const bad = new CohereStreamTranslator('m');
    bad.push(ev('message-end', { delta: { finish_reason: 'ERROR', error: 'boom' } }));
    expect(() => bad.end()).toThrow('boom');
  });

  test('rerank: documents flattened to strings; answer in Jina shape with echoed documents and usage', () => {
    expect(toCohereRerank({ model: 'r', query: 'q', documents: ['a', { text: 'b' }, { title: 't' }], top_n: 1, return_documents: true, extra: 1 })).toEqual({
      model: 'r',
      query: 'q',
      documents: ['a', 'b', '{"title":"t"}'],
      top_n: 1,
    });
    const conv = fromCohereRerank(
      { id: 'x', results: [{ index: 1, relevance_score: 0.9 }], meta: { billed_units: { search_units: 1, input_tokens: 12 } } },
      { model: 'r', query: 'q', documents: ['a', { text: 'b' }], return_documents: true },
    );
    expect(conv.body).toEqual({
      id: 'x',
      model: 'r',
      results: [{ index: 1, relevance_score: 0.9, document: { text: 'b' } }],
      usage: { prompt_tokens: 12, total_tokens: 12 },
    });
    expect(conv.usage).toEqual({ prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 });
    const noUsage = fromCohereRerank(
      { results: [{ index: 0, relevance_score: 0.1 }], meta: { billed_units: { search_units: 1 } } },
      { model: 'r', documents: ['a'] },
    );
    expect(noUsage.usage).toBeUndefined();
    expect(noUsage.body.results).toEqual([{ index: 0, relevance_score: 0.1 }]);
  });

  test('embeddings: single input, dimensions, client input_type; answer with and without usage', () => {
    expect(toCohereEmbed({ model: 'e', input: 'hi', dimensions: 256, input_type: 'search_query' })).toEqual({
      model: 'e',
      texts: ['hi'],
      input_type: 'search_query',
      embedding_types: ['float'],
      output_dimension: 256,
    });
    const conv = fromCohereEmbed({ embeddings: { float: [[1, 2]] }, meta: { billed_units: { input_tokens: 4 } } }, 'e');
    expect(conv.body).toEqual({
      object: 'list',
      model: 'e',
      data: [{ object: 'embedding', index: 0, embedding: [1, 2] }],
      usage: { prompt_tokens: 4, total_tokens: 4 },
    });
    expect(conv.usage).toMatchObject({ prompt_tokens: 4 });
    expect(fromCohereEmbed({ embeddings: [[3]] }, 'e').usage).toBeUndefined();
    const b64 = fromCohereEmbed({ embeddings: { float: [[1.5, -2]] } }, 'e', 'base64').body.data as Array<{ embedding: string }>;
    const buf = Buffer.from(b64[0]!.embedding, 'base64');
    expect([buf.readFloatLE(0), buf.readFloatLE(4)]).toEqual([1.5, -2]);
  });

  test('model list: {models:[{name}]} from /v1/models', () => {
    const req = cohereAdaptor.modelsRequest!(channel({ type: 34, key: 'co' }));
    expect(req.url).toBe('https://api.cohere.ai/v1/models?page_size=1000');
    expect(req.headers.authorization).toBe('Bearer co');
    expect(cohereAdaptor.parseModels!({ models: [{ name: 'command-r' }, { name: 'rerank-v3.5' }, {}] })).toEqual(['command-r', 'rerank-v3.5']);
  });
});

describe('Vertex AI', () => {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const sa = { type: 'service_account', project_id: 'proj-1', private_key_id: 'kid', private_key: pem, client_email: 'a@proj-1.iam.gserviceaccount.com' };

  test('region: plain, JSON map with default, fallback, invalid', () => {
    expect(vertexRegion('', 'm')).toBe('us-central1');
    expect(vertexRegion('asia-east1', 'm')).toBe('asia-east1');
    expect(vertexRegion('{"m":"us-east5","default":"europe-west1"}', 'm')).toBe('us-east5');
    expect(vertexRegion('{"m":"us-east5","default":"europe-west1"}', 'other')).toBe('europe-west1');
    expect(vertexRegion('{"m":"us-east5"}', 'other')).toBe('us-central1');
    expect(() => vertexRegion('us/../x', 'm')).toThrow('Invalid Vertex AI region');
  });

  test('Claude model names: date suffix → @version, 3.5 Sonnet v2, explicit @ kept', () => {
    expect(vertexClaudeModel('claude-3-7-sonnet-20250219')).toBe('claude-3-7-sonnet@20250219');
    expect(vertexClaudeModel('claude-3-5-sonnet-20241022')).toBe('claude-3-5-sonnet-v2@20241022');
    expect(vertexClaudeModel('claude-opus-4@20250514')).toBe('claude-opus-4@20250514');
    expect(vertexClaudeModel('claude-sonnet-4-5')).toBe('claude-sonnet-4-5');
  });

  test('service account: bad JSON or missing fields → invalid_channel_key (no secret in the message)', () => {
    expect(() => parseServiceAccount('not json')).toThrow('service account JSON');
    expect(() => parseServiceAccount(JSON.stringify({ client_email: 'a', private_key: 'b' }))).toThrow('project_id');
    expect(parseServiceAccount(JSON.stringify({ ...sa, token_uri: 'javascript:x' })).token_uri).toBeUndefined();
  });

  test('JWT: RS256 over header.claims, verifiable with the public key, Google claims', () => {
    const now = 1_700_000_000;
    const jwt = signServiceAccountJwt(parseServiceAccount(JSON.stringify(sa)), now);
    const [h, c, s] = jwt.split('.') as [string, string, string];
    expect(JSON.parse(Buffer.from(h, 'base64url').toString())).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'kid' });
    expect(JSON.parse(Buffer.from(c, 'base64url').toString())).toEqual({
      iss: sa.client_email,
      scope: 'https://www.googleapis.com/auth/cloud-platform',
      aud: 'https://oauth2.googleapis.com/token',
      iat: now,
      exp: now + 3600,
    });
    expect(crypto.verify('RSA-SHA256', Buffer.from(`${h}.${c}`), publicKey, Buffer.from(s, 'base64url'))).toBe(true);
    expect(crypto.verify('RSA-SHA256', Buffer.from(`${h}.${c}x`), publicKey, Buffer.from(s, 'base64url'))).toBe(false);
    expect(() => signServiceAccountJwt({ ...parseServiceAccount(JSON.stringify(sa)), private_key: 'garbage' })).toThrow('private key is invalid');
  });

  test('channel keys: a multi-line service-account JSON is one key, a JSON array several; other types split by line', () => {
    const pretty = JSON.stringify(sa, null, 2);
    expect(pretty.split('\n').length).toBeGreaterThan(3);
    const one = channelKeys(41, pretty);
    expect(one).toHaveLength(1);
    expect(parseServiceAccount(one[0]!).project_id).toBe('proj-1');
    const two = channelKeys(41, JSON.stringify([sa, { ...sa, project_id: 'proj-2' }], null, 2));
    expect(two.map((k) => parseServiceAccount(k).project_id)).toEqual(['proj-1', 'proj-2']);
    expect(channelKeys(41, `${JSON.stringify(sa)}\n${JSON.stringify({ ...sa, project_id: 'p3' })}`)).toHaveLength(2);
    expect(channelKeys(1, 'sk-a\n sk-b \n\n')).toEqual(['sk-a', 'sk-b']);
    expect(channelKeys(1, '{"a":1}')).toEqual(['{"a":1}']);
  });

  test('URLs: Google host per region (global without prefix), Gemini and Claude bodies', () => {
    const ch = channel({ type: 41, key: JSON.stringify(sa), other: 'us-east5' });
    const g = vertexAdaptor.chatRequest({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }, actx(ch, 'gemini-2.5-flash', true));
    expect(g.url).toBe(
      'https://us-east5-aiplatform.googleapis.com/v1/projects/proj-1/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(JSON.parse(String(g.body)).contents).toEqual([{ role: 'user', parts: [{ text: 'hi' }] }]);
    expect(g.headers.authorization).toBeUndefined(); // added by authorize()
    const glob = channel({ type: 41, key: JSON.stringify(sa), other: 'global' });
    const c = vertexAdaptor.chatRequest(
      { model: 'claude-sonnet-4-20250514', messages: [{ role: 'user', content: 'hi' }], max_tokens: 9 },
      actx(glob, 'claude-sonnet-4-20250514'),
    );
    expect(c.url).toBe('https://aiplatform.googleapis.com/v1/projects/proj-1/locations/global/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict');
    const body = JSON.parse(String(c.body));
    expect(body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', max_tokens: 9 });
    expect(body.model).toBeUndefined();
    expect(
      vertexAdaptor.chatResponse(
        { content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 2 } },
        actx(glob, 'claude-x'),
      ).choices[0]!.message.content,
    ).toBe('ok');
    expect(
      vertexAdaptor.chatResponse({ candidates: [{ content: { parts: [{ text: 'g' }] }, finishReason: 'STOP' }] }, actx(glob, 'gemini-x')).choices[0]!.message
        .content,
    ).toBe('g');
  });
});

describe('Cloudflare, Ollama, Xinference', () => {
  test('Cloudflare URL from the account id in `other`; missing or odd account → 400', () => {
    expect(cloudflareUrl(channel({ type: 39, other: ' acc1 ' }), 'chat')).toBe('https://api.cloudflare.com/client/v4/accounts/acc1/ai/v1/chat/completions');
    expect(cloudflareUrl(channel({ type: 39, other: 'acc1', baseUrl: 'https://gw.example/' }), 'embeddings')).toBe(
      'https://gw.example/client/v4/accounts/acc1/ai/v1/embeddings',
    );
    expect(() => cloudflareUrl(channel({ type: 39 }), 'chat')).toThrow('Account ID');
    const list = cloudflareAdaptor.modelsRequest!(channel({ type: 39, other: 'acc1', key: 'cf' }));
    expect(list.url).toBe('https://api.cloudflare.com/client/v4/accounts/acc1/ai/models/search?per_page=1000&task=Text%20Generation');
    expect(list.headers.authorization).toBe('Bearer cf');
    expect(cloudflareAdaptor.parseModels!({ success: true, result: [{ name: '@cf/meta/llama-3.1-8b-instruct' }, { id: 'x' }] })).toEqual([
      '@cf/meta/llama-3.1-8b-instruct',
    ]);
    expect(() => cloudflareUrl(channel({ type: 39, other: '../x' }), 'chat')).toThrow('Account ID');
  });

  test('Ollama: /api/tags list parsed; chat stays on the OpenAI-compatible path', () => {
    const ch = channel({ type: 4, baseUrl: 'http://ollama:11434/' });
    expect(ollamaAdaptor.modelsRequest!(ch).url).toBe('http://ollama:11434/api/tags');
    expect(ollamaAdaptor.parseModels!({ models: [{ name: 'llama3:8b', model: 'llama3:8b' }, { model: 'x:1' }] })).toEqual(['llama3:8b', 'x:1']);
    expect(ollamaAdaptor.chatRequest({ model: 'llama3', messages: [{ role: 'user', content: 'hi' }] }, actx(ch, 'llama3')).url).toBe(
      'http://ollama:11434/v1/chat/completions',
    );
  });

  test('Xinference usage: usage, else meta.tokens, else meta.billed_units', () => {
    expect(xinferenceUsage({ usage: { total_tokens: 4 } })).toMatchObject({ prompt_tokens: 4 });
    expect(xinferenceUsage({ meta: { tokens: { input_tokens: 6, output_tokens: 0 } } })).toEqual({ prompt_tokens: 6, completion_tokens: 0, total_tokens: 6 });
    expect(xinferenceUsage({ meta: { tokens: null, billed_units: { input_tokens: 2 } } })).toMatchObject({ prompt_tokens: 2 });
    expect(xinferenceUsage({ meta: { tokens: null } })).toBeUndefined();
  });
});

describe('AWS event-stream', () => {
  const claudeEvents = [
    { type: 'message_start', message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 5, output_tokens: 0 } } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hé\nllo' } },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } },
    { type: 'message_stop' },
  ];

  test('crc32 matches the known check value', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
  });

  test('parser: frames split at every byte boundary, typed headers, payload', () => {
    const frames = Buffer.concat([
      encodeFrame({ ':event-type': 'chunk', ':message-type': 'event', n: 42, flag: true }, 'payload-1'),
      encodeFrame({ a: 'b' }, ''),
    ]);
    for (const size of [1, 3, 7, frames.length]) {
      const p = new EventStreamParser();
      const msgs = [];
      for (let i = 0; i < frames.length; i += size) msgs.push(...p.push(frames.subarray(i, i + size)));
      expect(msgs).toHaveLength(2);
      expect(msgs[0]!.headers).toEqual({ ':event-type': 'chunk', ':message-type': 'event', n: 42, flag: true });
      expect(msgs[0]!.payload.toString()).toBe('payload-1');
      expect(msgs[1]!.payload.length).toBe(0);
      expect(p.pending()).toBe(0);
    }
  });

  test('parser: corrupted prelude or message CRC → EventStreamError', () => {
    const f = encodeFrame({ a: 'b' }, 'xyz');
    const badPrelude = Buffer.from(f);
    badPrelude[9] = badPrelude[9]! ^ 0xff;
    expect(() => new EventStreamParser().push(badPrelude)).toThrow(EventStreamError);
    const badBody = Buffer.from(f);
    badBody[f.length - 6] = badBody[f.length - 6]! ^ 0xff;
    expect(() => new EventStreamParser().push(badBody)).toThrow('message CRC');
  });

  test('Bedrock decoder: chunk frames → Claude SSE blocks (one line each); exception → Claude error event; partial tail → error', () => {
    const bytes = Buffer.concat([...claudeEvents.map(chunkFrame), exceptionFrame('throttlingException', 'slow down')]);
    const d = new BedrockStreamDecoder();
    const blocks: string[] = [];
    for (let i = 0; i < bytes.length; i += 5) blocks.push(...d.push(bytes.subarray(i, i + 5)));
    blocks.push(...d.end());
    expect(blocks).toHaveLength(5);
    const evs = blocks.map((b) => parseBlock(b)!);
    expect(evs.slice(0, 4).map((e) => e.event)).toEqual(['message_start', 'content_block_delta', 'message_delta', 'message_stop']);
    expect(evs.slice(0, 4).map((e) => JSON.parse(e.data))).toEqual(claudeEvents);
    expect(blocks[1]!.split('\n').filter(Boolean)).toHaveLength(2);
    expect(evs[4]).toEqual({ event: 'error', data: JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }) });

    const cut = new BedrockStreamDecoder();
    const one = chunkFrame(claudeEvents[0]);
    expect(cut.push(one.subarray(0, one.length - 3))).toEqual([]);
    expect(parseBlock(cut.end()[0]!)!.event).toBe('error');
  });

  test('aws-claude adaptor: event-stream content type gets the decoder, SSE does not', () => {
    const aws = adaptorFor(33);
    expect(aws.streamSplitter!('application/vnd.amazon.eventstream')).toBeInstanceOf(BedrockStreamDecoder);
    expect(aws.streamSplitter!('text/event-stream')).toBeUndefined();
  });
});
