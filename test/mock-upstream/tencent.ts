/**
 * Tencent Hunyuan (Tencent Cloud API 3.0) on the mock upstream: `POST /` with `X-TC-Action:
 * ChatCompletions`, `X-TC-Version: 2023-09-01`, `X-TC-Timestamp` and a TC3-HMAC-SHA256
 * `Authorization`, which the mock recomputes from the received host, content type and body bytes
 * as Tencent documents it (a mismatch answers `AuthFailure.SignatureFailure`, like the real API,
 * with HTTP 200). Answers `{Response:{Id, Created, Choices, Usage, RequestId}}`, or SSE `data:`
 * objects when `Stream` is true.
 */
import crypto from 'node:crypto';
import type { MockUpstream } from './index';

export const TENCENT_SECRET_ID = 'AKIDmockSecretId';
export const TENCENT_SECRET_KEY = 'mockSecretKey';

export interface TencentMockState {
  /** Signature checks, in order. */
  checks: Array<{ ok: boolean; region?: string }>;
}

const sha256 = (s: string | Buffer) => crypto.createHash('sha256').update(s).digest('hex');
const hmac = (k: Buffer | string, s: string) => crypto.createHmac('sha256', k).update(s).digest();

export function installTencentMock(mock: MockUpstream): TencentMockState {
  const state: TencentMockState = { checks: [] };
  mock.route('POST', /^\/$/, (req, res) => {
    const json = (b: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(b));
    };
    const fail = (Code: string, Message: string) => json({ Response: { Error: { Code, Message }, RequestId: 'req-err' } });
    const h = req.headers;
    if (h['x-tc-action'] !== 'ChatCompletions' || h['x-tc-version'] !== '2023-09-01') return fail('InvalidAction', 'unknown action');
    const ts = Number(h['x-tc-timestamp']);
    const m = /^TC3-HMAC-SHA256 Credential=([^/]+)\/(\d{4}-\d{2}-\d{2})\/hunyuan\/tc3_request, SignedHeaders=content-type;host, Signature=([0-9a-f]{64})$/.exec(
      String(h.authorization ?? ''),
    );
    let ok = false;
    if (m && m[1] === TENCENT_SECRET_ID && Math.abs(ts - Date.now() / 1000) < 300) {
      const date = m[2]!;
      const canonical = `POST\n/\n\ncontent-type:${h['content-type']}\nhost:${h.host}\n\ncontent-type;host\n${sha256(req.body)}`;
      const toSign = `TC3-HMAC-SHA256\n${ts}\n${date}/hunyuan/tc3_request\n${sha256(canonical)}`;
      const key = hmac(hmac(hmac(`TC3${TENCENT_SECRET_KEY}`, date), 'hunyuan'), 'tc3_request');
      ok = crypto.createHmac('sha256', key).update(toSign).digest('hex') === m[3] && date === new Date(ts * 1000).toISOString().slice(0, 10);
    }
    state.checks.push({ ok, region: typeof h['x-tc-region'] === 'string' ? h['x-tc-region'] : undefined });
    if (!ok) return fail('AuthFailure.SignatureFailure', 'The provided credentials could not be validated.');
    const b = req.json ?? {};
    if (!Array.isArray(b.Messages) || !b.Model) return fail('InvalidParameter', 'Messages and Model are required');
    const o = mock.options;
    const Usage = { PromptTokens: o.promptTokens, CompletionTokens: o.completionTokens, TotalTokens: o.promptTokens + o.completionTokens };
    if (!b.Stream) {
      return json({
        Response: {
          Id: 'hy-1',
          Created: 1700000000,
          Note: 'AI generated',
          Choices: [{ FinishReason: 'stop', Message: { Role: 'assistant', Content: o.chunks.join('') } }],
          Usage,
          RequestId: 'req-1',
        },
      });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    o.chunks.forEach((c, i) => {
      const last = i === o.chunks.length - 1;
      const d = {
        Note: 'AI generated',
        Choices: [{ Delta: { Role: 'assistant', Content: c }, FinishReason: last ? 'stop' : '' }],
        Created: 1700000000,
        Id: 'hy-2',
        Usage,
      };
      res.write(`data: ${JSON.stringify(d)}\n\n`);
    });
    res.end();
  });
  return state;
}
