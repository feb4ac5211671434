/**
 * AI Proxy's knowledge-library Q&A (`POST /api/library/ask`, Bearer key) and account overview
 * (`GET /api/report/getUserOverview`, `Api-Key` header) on the mock upstream, in AI Proxy's shapes:
 * `{success:true, answer, documents:[{title, url}]}`, streamed as SSE `data:` objects `{content,
 * finish, model, documents}`; an unknown library id → `{success:false, errCode:404, message}`.
 */
import type { MockUpstream } from './index';

export const LIBRARY_ID = 'lib-42';

export function installAiproxyLibraryMock(mock: MockUpstream): void {
  mock.route('POST', /^\/api\/library\/ask$/, (req, res) => {
    const json = (status: number, b: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(b));
    };
    if (!/^Bearer \S+/.test(String(req.headers.authorization ?? ''))) return json(401, { success: false, errCode: 401, message: 'invalid api key' });
    const b = req.json ?? {};
    if (b.libraryId !== LIBRARY_ID) return json(200, { success: false, errCode: 404, message: 'library not found' });
    const documents = [{ title: 'Guide', url: 'https://docs.example.com/guide' }];
    const chunks = mock.options.chunks;
    if (!b.stream) return json(200, { success: true, answer: chunks.join(''), documents });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const c of chunks) res.write(`data: ${JSON.stringify({ content: c, finish: false, model: b.model, documents: [] })}\n\n`);
    res.write(`data: ${JSON.stringify({ content: '', finish: true, model: b.model, documents })}\n\n`);
    res.end();
  });
  mock.route('GET', /^\/api\/report\/getUserOverview$/, (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (!req.headers['api-key']) return void res.end(JSON.stringify({ errorCode: 401, message: 'no api key', success: false, data: null }));
    res.end(JSON.stringify({ errorCode: 0, message: '', success: true, data: { totalPoints: 12.5 } }));
  });
}
