/**
 * Target B: the smallest useful pass-through proxy (node:http in, `undici.request` out over a
 * keep-alive Agent), no auth, no parsing, no accounting. It is the practical ceiling for any Node
 * gateway on this machine: the gateway's throughput is judged as a fraction of it.
 * Run as a child: `node --import tsx bench/proxy.ts --port N --upstream http://127.0.0.1:M`.
 */
import http from 'node:http';
import { Agent, request } from 'undici';
import { createGatewayServer, LISTEN_BACKLOG } from '../server/src/lib/httpServer';

export function startProxy(port: number, upstream: string): Promise<http.Server> {
  const dispatcher = new Agent({ connections: 4096, pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 600_000 });
  const origin = upstream.replace(/\/+$/, '');
  const server = createGatewayServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = parts.length === 1 ? parts[0] : Buffer.concat(parts);
      request(origin + (req.url ?? '/'), {
        method: (req.method ?? 'GET') as 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json', authorization: req.headers.authorization ?? '' },
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
        dispatcher,
      })
        .then(async (up) => {
          const headers: Record<string, string> = { 'content-type': String(up.headers['content-type'] ?? 'application/json') };
          const sse = headers['content-type'].startsWith('text/event-stream');
          if (sse) headers['cache-control'] = 'no-cache';
          res.writeHead(up.statusCode, headers);
          // Every upstream chunk is written as it arrives (res.write flushes on its own).
          for await (const chunk of up.body) res.write(chunk);
          res.end();
        })
        .catch((err: Error) => {
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: err.message } }));
        });
    });
  });
  // The same accept-queue depth as the gateway (any proxy would set it), with Node's single accepting handle.
  return new Promise((resolve) => server.listen({ port, host: '127.0.0.1', backlog: LISTEN_BACKLOG }, () => resolve(server)));
}

if (require.main === module) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  void startProxy(Number(arg('--port') ?? 0), arg('--upstream') ?? 'http://127.0.0.1:9000');
}
