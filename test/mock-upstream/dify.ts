/**
 * Dify's Service API on the mock upstream: `POST /v1/chat-messages` (Bearer app key), as Dify
 * documents it. `response_mode: blocking` → `{event:'message', message_id, conversation_id, mode,
 * answer, metadata:{usage}, created_at}`; `streaming` → SSE `data:` lines: `workflow_started`,
 * `message` pieces, `agent_thought` (when the query contains "think"), `message_end` with usage,
 * and `ping`. A query containing "fail" gets Dify's error body (400 `{code, message, status}`);
 * "streamfail" an in-stream `error` event. Requests are recorded by the mock.
 */
import type { MockUpstream } from './index';

export function installDifyMock(mock: MockUpstream): void {
  mock.route('POST', /^\/v1\/chat-messages$/, (req, res) => {
    if (!/^Bearer app-/.test(String(req.headers.authorization ?? ''))) {
      res.writeHead(401, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ code: 'unauthorized', message: 'Access token is invalid', status: 401 }));
    }
    const b = req.json ?? {};
    const query = String(b.query ?? '');
    if (typeof b.user !== 'string' || !b.user || typeof b.inputs !== 'object') {
      res.writeHead(400, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ code: 'invalid_param', message: 'user and inputs are required', status: 400 }));
    }
    if (query.includes('fail') && !query.includes('streamfail')) {
      res.writeHead(400, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ code: 'completion_request_error', message: 'Model is overloaded', status: 400 }));
    }
    const o = mock.options;
    const usage = { prompt_tokens: o.promptTokens, completion_tokens: o.completionTokens, total_tokens: o.promptTokens + o.completionTokens, currency: 'USD' };
    const ids = { message_id: 'msg-123', conversation_id: 'conv-1', task_id: 'task-1', id: 'msg-123' };
    if (b.response_mode === 'blocking') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(
        JSON.stringify({
          event: 'message',
          ...ids,
          mode: 'chat',
          answer: o.chunks.join(''),
          metadata: { usage, retriever_resources: [] },
          created_at: 1705395332,
        }),
      );
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (d: unknown) => res.write(`data: ${JSON.stringify(d)}\n\n`);
    send({ event: 'workflow_started', task_id: 'task-1', workflow_run_id: 'run-1', data: {} });
    if (query.includes('think')) send({ event: 'agent_thought', ...ids, thought: 'Thinking it over', position: 1 });
    for (const c of o.chunks) send({ event: 'message', ...ids, answer: c, created_at: 1705395332 });
    res.write('event: ping\n\n');
    if (query.includes('streamfail')) {
      send({ event: 'error', task_id: 'task-1', message_id: 'msg-123', status: 500, code: 'internal_error', message: 'Workflow node failed' });
      return void res.end();
    }
    send({ event: 'message_end', ...ids, metadata: { usage, retriever_resources: [] } });
    res.end();
  });
}
