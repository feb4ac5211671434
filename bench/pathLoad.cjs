// Closed-loop load on one relay path of the bench gateway, with that path's client protocol (the
// bodies and headers of bench/run.ts's completions), for the per-call counters (callgrind.sh,
// allocations.sh):
//   node bench/pathLoad.cjs <port> <key> <C|CM|CR> <calls> <connections>
// C: OpenAI Chat client → OpenAI channel (passthrough); CM: Claude Messages client → OpenAI
// channel; CR: OpenAI Responses client → Claude channel. Exits 1 on a non-2xx answer or when more
// than 1 % of the calls hit connection errors (a few happen to a target slowed by valgrind).
const autocannon = require('autocannon');

const [port, key, id, calls, connections] = process.argv.slice(2);
const amount = Number(calls);
const paths = {
  C: {
    path: '/v1/chat/completions',
    headers: { authorization: `Bearer ${key}` },
    body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] },
  },
  CM: {
    path: '/v1/messages',
    headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    body: { model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: 'hello there' }] },
  },
  CR: {
    path: '/v1/responses',
    headers: { authorization: `Bearer ${key}` },
    body: { model: 'claude-mock', input: 'hello there', max_output_tokens: 16 },
  },
};
const p = paths[id];
if (!p) {
  console.error(`unknown path ${id}`);
  process.exit(1);
}
autocannon(
  {
    url: `http://127.0.0.1:${port}${p.path}`,
    method: 'POST',
    connections: Number(connections),
    amount,
    timeout: 120,
    headers: { ...p.headers, 'content-type': 'application/json' },
    body: JSON.stringify(p.body),
  },
  (e, r) => {
    if (e || r.non2xx || r.errors + r.timeouts > amount / 100) {
      console.error('load failed', id, e ?? `${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
      process.exit(1);
    }
    if (r.errors) console.error(`${id}: ${r.errors} connection errors of ${amount} calls`);
  },
);
