import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig } from './config';
import { createApp } from './app';
import { createLogger } from './lib/logger';
import { collectNow, startIdleGc } from './lib/idleGc';
import { createGatewayServer, drainGateway, listenGateway } from './lib/httpServer';
import { nativeLoaded } from './lib/native';
import { readVariable } from '../../config/environment';
import { createDb } from './db/knex';
import { migrate } from './db/migrate';

async function main() {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  if (readVariable('MIGRATE_ONLY') === 'true') {
    // A one-shot run before the nodes of a new version start (docs/deploy.md, "Upgrades").
    const db = createDb(config.databaseUrl, { pgSchema: config.pgSchema });
    try {
      await migrate(db.knex);
    } finally {
      await db.knex.destroy();
    }
    log.info({ db: db.kind }, 'migrations done');
    return;
  }
  if (config.sessionSecretGenerated) {
    log.warn('SESSION_SECRET is not set: using a random one, sessions end on restart and are not shared between nodes');
  }
  const gateway = await createApp(config, { logger: log });
  const server = createGatewayServer(gateway.callback, { headersMs: config.httpHeadersTimeoutMs, requestMs: config.httpRequestTimeoutMs });
  server.on('upgrade', gateway.upgrade);
  // Start-up (migrations, loading options and caches) leaves garbage: listen without it.
  await gateway.releaseIdle();
  collectNow();
  const stopIdleGc = startIdleGc(server, { onIdle: () => gateway.releaseIdle() });
  await listenGateway(server, { port: config.port });
  // The port bound, not the one asked for: PORT=0 lets the system choose one.
  const port = (server.address() as AddressInfo).port;
  log.info({ port, db: gateway.ctx.db.kind, cache: gateway.ctx.kv.kind, native: nativeLoaded() }, 'gateway listening');
  // Graceful shutdown: /readyz answers 503 at once and, for SHUTDOWN_DELAY_MS, the node still
  // serves while load balancers notice (docs/deploy.md); then stop accepting, let calls in flight
  // (streams included) finish until the deadline, cut the rest (they settle or refund as abandoned
  // calls do), wait for that bookkeeping, then flush the batched rows and counters and close the
  // pools. A second signal, or a close that hangs, exits at once.
  const deadline = config.shutdownTimeoutMs ?? 30_000;
  const delay = readVariable('SHUTDOWN_DELAY_MS');
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    stopIdleGc();
    gateway.startDraining();
    log.info({ signal, delayMs: delay, deadlineMs: deadline }, 'shutting down');
    setTimeout(
      () => {
        log.error('shutdown did not finish in time: exiting');
        process.exit(1);
      },
      delay + deadline + 30_000,
    ).unref();
    try {
      if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
      const { cut } = await drainGateway(server, deadline);
      if (cut) log.warn({ connections: cut }, 'shutdown deadline reached: open connections cut');
      if (!(await gateway.drain(10_000))) log.error('relay calls still unsettled after the shutdown grace');
      await gateway.close();
    } catch (err) {
      log.error({ err }, 'error while shutting down');
      process.exit(1);
    }
    log.info('shut down');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err) => {
  // A bad variable is reported as such, without a stack.
  // eslint-disable-next-line no-console -- a start-up failure may come before the logger exists
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
