import http from 'node:http';
import { loadConfig } from './config';
import { createApp } from './app';
import { createLogger } from './lib/logger';
import { collectNow, startIdleGc } from './lib/idleGc';

async function main() {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  if (config.sessionSecretGenerated) {
    log.warn('SESSION_SECRET is not set: using a random one, sessions end on restart and are not shared between nodes');
  }
  const gateway = await createApp(config, { logger: log });
  const server = http.createServer(gateway.callback);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 0; // streams may run long; upstream timeouts guard them
  // Start-up (migrations, loading options and caches) leaves garbage: listen without it.
  await gateway.releaseIdle();
  collectNow();
  startIdleGc(server, { onIdle: () => gateway.releaseIdle() });
  // A deep accept queue: bursts of thousands of new streams must queue, not be reset.
  server.listen({ port: config.port, backlog: 4096 }, () => {
    log.info({ port: config.port, db: gateway.ctx.db.kind, cache: gateway.ctx.kv.kind }, 'gateway listening');
  });
  const stop = async (signal: string) => {
    log.info({ signal }, 'shutting down');
    server.close();
    await gateway.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err) => {
  // eslint-disable-next-line no-console
  console.error(err);
  process.exit(1);
});
