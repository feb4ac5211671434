/**
 * Cloudflare Workers AI on the mock upstream: `POST /client/v4/accounts/{account}/ai/v1/chat/completions`
 * and `/embeddings` (Bearer token required, 401 in Cloudflare's `{success:false, errors}` shape),
 * forwarded to the builtin OpenAI routes. Accounts seen are recorded in `state.accounts`.
 */
import type { MockUpstream } from './index';
import { forward } from './vertex';

export interface CloudflareMockState {
  accounts: string[];
}

export function installCloudflareMock(mock: MockUpstream): CloudflareMockState {
  const state: CloudflareMockState = { accounts: [] };
  mock.route('POST', /^\/client\/v4\/accounts\/[^/]+\/ai\/v1\/(chat\/completions|embeddings)$/, async (req, res) => {
    const m = /^\/client\/v4\/accounts\/([^/]+)\/ai\/v1\/(chat\/completions|embeddings)$/.exec(req.path)!;
    if (!String(req.headers.authorization ?? '').startsWith('Bearer ')) {
      const text = JSON.stringify({ success: false, errors: [{ code: 10000, message: 'Authentication error' }] });
      res.writeHead(401, { 'content-type': 'application/json' });
      return void res.end(text);
    }
    state.accounts.push(m[1]!);
    await forward(
      mock,
      `/v1/${m[2]}`,
      { 'content-type': 'application/json', authorization: String(req.headers.authorization) },
      req.body.toString('utf8'),
      res,
    );
  });
  return state;
}
