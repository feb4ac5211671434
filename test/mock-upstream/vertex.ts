/**
 * Vertex AI on the mock upstream (needs installClaudeMock and installGeminiMock on the same mock):
 * - `POST /vertex/token`: Google's OAuth2 token endpoint. Checks the JWT-bearer grant: RS256
 *   signature against `state.publicKey`, `iss`, `aud` (= the token URL), `scope`, `exp`; answers
 *   `{access_token, expires_in, token_type}` (counted in `state.minted`), or 400 `invalid_grant`.
 * - `POST /v1/projects/{p}/locations/{r}/publishers/google/models/{m}:generateContent|streamGenerateContent|countTokens`
 *   → forwarded to the Gemini mock (`/v1beta/models/{m}:…`) after checking the Bearer token.
 * - `POST …/publishers/anthropic/models/{m}:rawPredict|streamRawPredict` → checks
 *   `anthropic_version: "vertex-2023-10-16"` and no `model` in the body, then forwarded to the Claude
 *   mock (`/v1/messages`) with the model from the path.
 * Every accepted call is recorded in `state.calls` (project, region, publisher, model, action).
 */
import crypto, { type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { MockRequest, MockUpstream } from './index';

export interface VertexMockState {
  publicKey: KeyObject;
  clientEmail: string;
  tokenUrl: string;
  tokenTtl: number;
  minted: number;
  issued: Set<string>;
  calls: Array<{ project: string; region: string; publisher: string; model: string; action: string }>;
}

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Re-sends a request to another route of the same mock and pipes the answer back. */
export function forward(mock: MockUpstream, path: string, headers: Record<string, string>, body: string, res: http.ServerResponse): Promise<void> {
  return new Promise((resolve, reject) => {
    const r = http.request(`${mock.url}${path}`, { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (up) => {
      res.writeHead(up.statusCode ?? 500, up.headers);
      up.pipe(res);
      up.on('end', resolve);
      up.on('error', reject);
    });
    r.on('error', reject);
    r.end(body);
  });
}

export function installVertexMock(mock: MockUpstream, publicKey: KeyObject, clientEmail: string): VertexMockState {
  const state: VertexMockState = { publicKey, clientEmail, tokenUrl: `${mock.url}/vertex/token`, tokenTtl: 3600, minted: 0, issued: new Set(), calls: [] };
  mock.route('POST', /^\/vertex\/token$/, (req: MockRequest, res) => {
    const form = new URLSearchParams(req.body.toString('utf8'));
    const bad = (why: string) => send(res, 400, { error: 'invalid_grant', error_description: why });
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return bad('grant_type');
    const parts = (form.get('assertion') ?? '').split('.');
    if (parts.length !== 3) return bad('malformed assertion');
    const [h, c, s] = parts as [string, string, string];
    const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    const claims = JSON.parse(Buffer.from(c, 'base64url').toString('utf8'));
    if (header.alg !== 'RS256') return bad('alg');
    if (!crypto.verify('RSA-SHA256', Buffer.from(`${h}.${c}`), state.publicKey, Buffer.from(s, 'base64url'))) return bad('Invalid JWT Signature.');
    const now = Math.floor(Date.now() / 1000);
    if (claims.iss !== state.clientEmail || claims.aud !== state.tokenUrl || claims.scope !== 'https://www.googleapis.com/auth/cloud-platform')
      return bad('claims');
    if (!(claims.exp > now && claims.iat <= now + 60)) return bad('Invalid JWT: Token must be a short-lived token');
    state.minted++;
    const token = `ya29.mock-${state.minted}-${crypto.randomBytes(4).toString('hex')}`;
    state.issued.add(token);
    send(res, 200, { access_token: token, expires_in: state.tokenTtl, token_type: 'Bearer' });
  });
  mock.route('POST', /^\/v1\/projects\/[^/]+\/locations\/[^/]+\/publishers\/(google|anthropic)\/models\/[^/:]+:[A-Za-z]+$/, async (req, res) => {
    const m = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):([A-Za-z]+)$/.exec(req.path)!;
    const [, project, region, publisher, model, action] = m as unknown as [string, string, string, string, string, string];
    const auth = String(req.headers.authorization ?? '');
    if (!auth.startsWith('Bearer ') || !state.issued.has(auth.slice(7))) {
      return send(res, 401, { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } });
    }
    const decoded = decodeURIComponent(model);
    if (publisher === 'google') {
      if (action !== 'generateContent' && action !== 'streamGenerateContent' && action !== 'countTokens')
        return send(res, 404, { error: { code: 404, message: 'bad action' } });
      state.calls.push({ project, region, publisher, model: decoded, action });
      const qs = req.url.includes('alt=sse') ? '?alt=sse' : '';
      return forward(
        mock,
        `/v1beta/models/${model}:${action}${qs}`,
        { 'content-type': 'application/json', 'x-goog-api-key': 'vertex-forward' },
        req.body.toString('utf8'),
        res,
      );
    }
    if (action !== 'rawPredict' && action !== 'streamRawPredict') return send(res, 404, { error: { code: 404, message: 'bad action' } });
    const body = req.json ?? {};
    if (body.anthropic_version !== 'vertex-2023-10-16' || 'model' in body)
      return send(res, 400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'anthropic_version must be vertex-2023-10-16, model not allowed' },
      });
    if ((action === 'streamRawPredict') !== (body.stream === true))
      return send(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'stream flag does not match the action' } });
    state.calls.push({ project, region, publisher, model: decoded, action });
    const { anthropic_version: _v, ...rest } = body;
    return forward(
      mock,
      '/v1/messages',
      { 'content-type': 'application/json', 'x-api-key': 'vertex-forward', 'anthropic-version': '2023-06-01' },
      JSON.stringify({ model: decoded, ...rest }),
      res,
    );
  });
  return state;
}
