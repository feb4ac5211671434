/**
 * Rerank upstreams on the mock, under path prefixes so each channel kind gets its own answer shape
 * (a channel's base_url is `${mock.url}/jina` or `${mock.url}/xinf`):
 * - `POST /jina/v1/rerank`: Jina's answer `{model, usage:{total_tokens}, results:[{index,
 *   relevance_score, document?:{text}}]}` (documents echoed when `return_documents` is true);
 * - `POST /xinf/v1/rerank`: Xinference's `{id, results:[{index, relevance_score, document}],
 *   meta:{tokens:{input_tokens, output_tokens}}}` (no `usage`).
 * Both: Bearer key required, `query` string + `documents` array required (400 otherwise); scores
 * 1/(i+1), `top_n` honoured; token figures = options.promptTokens.
 */
import type http from 'node:http';
import type { MockRequest, MockUpstream } from './index';

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const textOf = (d: unknown) => (typeof d === 'string' ? d : String((d as { text?: unknown })?.text ?? ''));

export function installRerankMocks(mock: MockUpstream): void {
  const check = (req: MockRequest, res: http.ServerResponse): unknown[] | undefined => {
    if (!String(req.headers.authorization ?? '').startsWith('Bearer ')) return void send(res, 401, { detail: 'Unauthorized' });
    const b = req.json ?? {};
    if (typeof b.query !== 'string' || !Array.isArray(b.documents)) return void send(res, 400, { detail: 'query and documents are required' });
    return b.documents as unknown[];
  };
  const ranked = (docs: unknown[], topN: unknown) =>
    docs.map((d, index) => ({ index, relevance_score: 1 / (index + 1), d })).slice(0, typeof topN === 'number' ? topN : docs.length);
  mock.route('POST', /^\/jina\/v1\/rerank$/, (req, res) => {
    const docs = check(req, res);
    if (!docs) return;
    const b = req.json;
    const results = ranked(docs, b.top_n).map(({ index, relevance_score, d }) => ({
      index,
      relevance_score,
      ...(b.return_documents ? { document: { text: textOf(d) } } : {}),
    }));
    send(res, 200, { model: b.model, usage: { total_tokens: mock.options.promptTokens }, results });
  });
  mock.route('POST', /^\/xinf\/v1\/rerank$/, (req, res) => {
    const docs = check(req, res);
    if (!docs) return;
    const b = req.json;
    const results = ranked(docs, b.top_n).map(({ index, relevance_score, d }) => ({
      index,
      relevance_score,
      document: b.return_documents ? { text: textOf(d) } : null,
    }));
    send(res, 200, {
      id: 'xinf-rerank-1',
      results,
      meta: { api_version: null, billed_units: null, tokens: { input_tokens: mock.options.promptTokens, output_tokens: 0 }, warnings: null },
    });
  });
}
