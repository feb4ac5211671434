import { loadConfig } from './config';
import { createApp } from './app';
import { createLogger } from './lib/logger';
import { collectNow, startIdleGc } from './lib/idleGc';
import { createGatewayServer, listenGateway } from './lib/httpServer';

async function main() {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  if (config.sessionSecretGenerated) {
    log.warn('SESSION_SECRET is not set: using a random one, sessions end on restart and are not shared between nodes');
  }
  const gateway = await createApp(config, { logger: log });
  const server = createGatewayServer(gateway.callback);
  // Start-up (migrations, loading options and caches) leaves garbage: listen without it.
  await gateway.releaseIdle();
  collectNow();
  startIdleGc(server, { onIdle: () => gateway.releaseIdle() });
  await listenGateway(server, { port: config.port });
  log.info({ port: config.port, db: gateway.ctx.db.kind, cache: gateway.ctx.kv.kind }, 'gateway listening');
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
