/**
 * Baidu Qianfan (ERNIE) on the mock upstream, as Baidu documents it:
 * - `POST /oauth/2.0/token?grant_type=client_credentials&client_id=…&client_secret=…` →
 *   `{access_token, expires_in, …}`, or `{error:'invalid_client', error_description}` (401).
 * - `POST /rpc/2.0/ai_custom/v1/wenxinworkshop/chat/{endpoint}?access_token=…` → `{id, object,
 *   created, result, is_truncated, need_clear_history, usage}`; errors with HTTP 200 as
 *   `{error_code, error_msg}` (110 invalid token, 336003 bad parameter); streamed as SSE `data:`
 *   objects with `sentence_id`, `is_end` and `usage` on the last.
 * - `POST /rpc/2.0/ai_custom/v1/wenxinworkshop/embeddings/{endpoint}?access_token=…` with
 *   `{input:[texts], user_id?}` (1–16 texts) → `{id, object:'embedding_list', created, data:[{object:
 *   'embedding', embedding, index}], usage:{prompt_tokens, total_tokens}}`; errors as for chat
 *   (336003 for a bad input).
 * Minted tokens and revoked ones are in the returned state.
 */
import type { MockUpstream } from './index';

export interface BaiduMockState {
  minted: number;
  /** Tokens the chat endpoint refuses with error_code 110. */
  revoked: Set<string>;
  endpoints: string[];
  /** Embedding bodies received, with their endpoint. */
  embeddings: Array<{ endpoint: string; body: Record<string, unknown> }>;
}

export const BAIDU_AK = 'baidu-ak';
export const BAIDU_SK = 'baidu-sk';

export function installBaiduMock(mock: MockUpstream): BaiduMockState {
  const state: BaiduMockState = { minted: 0, revoked: new Set(), endpoints: [], embeddings: [] };
  const valid = new Set<string>();
  mock.route('POST', /^\/oauth\/2\.0\/token$/, (req, res) => {
    const q = new URL(req.url, 'http://x').searchParams;
    if (q.get('grant_type') !== 'client_credentials' || q.get('client_id') !== BAIDU_AK || q.get('client_secret') !== BAIDU_SK) {
      res.writeHead(401, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: 'invalid_client', error_description: 'unknown client id' }));
    }
    const token = `24.tok${++state.minted}.2592000.1234567890.282335-1234567`;
    valid.add(token);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ refresh_token: 'r', expires_in: 2592000, session_key: 's', access_token: token, scope: 'public', session_secret: 'x' }));
  });
  mock.route('POST', /^\/rpc\/2\.0\/ai_custom\/v1\/wenxinworkshop\/chat\/[^/]+$/, (req, res) => {
    const endpoint = req.path.split('/').pop()!;
    state.endpoints.push(endpoint);
    const token = new URL(req.url, 'http://x').searchParams.get('access_token') ?? '';
    const json = (b: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(b));
    };
    if (!valid.has(token) || state.revoked.has(token)) return json({ error_code: 110, error_msg: 'Access token invalid or no longer valid' });
    const b = req.json ?? {};
    const msgs = Array.isArray(b.messages) ? b.messages : [];
    // Baidu's rule: an odd number of messages, user first, alternating.
    const alternating = msgs.length % 2 === 1 && msgs.every((m: { role: string }, i: number) => m.role === (i % 2 === 0 ? 'user' : 'assistant'));
    if (!alternating) return json({ error_code: 336006, error_msg: 'the length of messages must be an odd number' });
    const o = mock.options;
    const usage = { prompt_tokens: o.promptTokens, completion_tokens: o.completionTokens, total_tokens: o.promptTokens + o.completionTokens };
    if (!b.stream) {
      return json({
        id: 'as-abc',
        object: 'chat.completion',
        created: 1700000000,
        result: o.chunks.join(''),
        is_truncated: false,
        need_clear_history: false,
        usage,
      });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    o.chunks.forEach((c, i) => {
      const last = i === o.chunks.length - 1;
      const d = {
        id: 'as-abc',
        object: 'chat.completion',
        created: 1700000000,
        sentence_id: i,
        is_end: last,
        is_truncated: false,
        result: c,
        need_clear_history: false,
        usage: last ? usage : { prompt_tokens: o.promptTokens, completion_tokens: 0, total_tokens: o.promptTokens },
      };
      res.write(`data: ${JSON.stringify(d)}\n\n`);
    });
    res.end();
  });
  mock.route('POST', /^\/rpc\/2\.0\/ai_custom\/v1\/wenxinworkshop\/embeddings\/[^/]+$/, (req, res) => {
    const endpoint = req.path.split('/').pop()!;
    const token = new URL(req.url, 'http://x').searchParams.get('access_token') ?? '';
    const json = (b: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(b));
    };
    if (!valid.has(token) || state.revoked.has(token)) return json({ error_code: 110, error_msg: 'Access token invalid or no longer valid' });
    const b = (req.json ?? {}) as Record<string, unknown>;
    state.embeddings.push({ endpoint, body: b });
    const input = b.input;
    if (!Array.isArray(input) || input.length < 1 || input.length > 16 || !input.every((t) => typeof t === 'string' && t)) {
      return json({ error_code: 336003, error_msg: 'the input parameter is invalid' });
    }
    const tokens = input.reduce((n: number, t: string) => n + t.length, 0);
    json({
      id: 'as-emb',
      object: 'embedding_list',
      created: 1700000000,
      data: input.map((t: string, index: number) => ({ object: 'embedding', embedding: [t.length / 10, 0.5, -0.25], index })),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  });
  return state;
}
