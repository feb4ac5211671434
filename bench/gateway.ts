/**
 * Targets C / C2 (and the conversion rows CM / CR, served by C's process): the full gateway
 * (createApp from server/src/app.ts) in its own process, seeded with one user, one unlimited API
 * key and three channels pointing at the mock: two OpenAI ones (type 1) serving MOCK_MODEL and a
 * Claude one (type 14) serving MOCK_CLAUDE_MODEL, priced alike. Every relay request therefore goes
 * through key auth, routing (for MOCK_MODEL a health-aware draw between two channels, as an
 * operator with a spare channel runs it), pre-consume + settle and a consume-log row.
 *
 * Run as a child by the harness:
 *   node --import tsx --import ./bench/probe.mjs bench/gateway.ts --port N --upstream URL --key K \
 *        --db sqlite:<file> | postgres://… [--schema S] [--redis URL --redis-prefix P]
 * The schema / Redis prefix are fresh per run; `--cleanup` on exit drops them (SIGTERM).
 */
import crypto from 'node:crypto';
import { loadConfig, type AppConfig } from '../server/src/config';
import { createApp } from '../server/src/app';
import { createLogger } from '../server/src/lib/logger';
import { collectNow, startIdleGc } from '../server/src/lib/idleGc';
import { createGatewayServer, listenGateway } from '../server/src/lib/httpServer';
import { createAccount } from '../server/src/services/accounts';
import { ROLE } from '../server/src/repositories/users';
import { syncAbilities } from '../server/src/repositories/channels';
import { CHANNEL_STATUS } from '../server/src/repositories/channelStatus';
import { invalidateChannels } from '../server/src/services/invalidate';
import { MOCK_CLAUDE_MODEL, MOCK_MODEL } from './mock';

export const BENCH_CHANNEL_TYPE_OPENAI = 1;
export const BENCH_CHANNEL_TYPE_CLAUDE = 14;

/** Option maps that price a model; the Claude mock model gets the OpenAI mock model's entries. */
const PRICE_OPTIONS = ['ModelRatio', 'CompletionRatio', 'CacheRatio', 'ModelPrice'] as const;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

async function main() {
  const port = Number(arg('--port') ?? 0);
  const upstream = arg('--upstream') ?? 'http://127.0.0.1:9000';
  const key = arg('--key') ?? crypto.randomBytes(24).toString('hex');
  const databaseUrl = arg('--db') ?? 'sqlite::memory:';
  const schema = arg('--schema');
  const redisUrl = arg('--redis');
  const base = loadConfig({});
  const config: AppConfig = {
    ...base,
    port,
    databaseUrl,
    pgSchema: schema,
    redisUrl,
    redisPrefix: arg('--redis-prefix') ?? `bench:${crypto.randomBytes(4).toString('hex')}:`,
    sessionSecret: 'bench-session-secret',
    sessionSecretGenerated: false,
    logLevel: process.env.BENCH_LOG_LEVEL ?? 'warn',
    adminDist: undefined,
  };
  const log = createLogger(config.logLevel);
  const gw = await createApp(config, { logger: log, serveConsole: false });
  const knex = gw.ctx.knex;
  const now = Math.floor(Date.now() / 1000);

  // Seed (idempotent enough for a fresh database): user, key, channel + abilities.
  const user = await createAccount(gw.ctx, { username: 'bench', password: 'bench-password-1', role: ROLE.user });
  await knex('users').where({ id: user.id }).update({ quota: 1e15 });
  await knex('tokens').insert({
    user_id: user.id,
    key,
    status: 1,
    name: 'bench',
    created_time: now,
    accessed_time: now,
    expired_time: -1,
    remain_quota: 0,
    unlimited_quota: true,
    model_limits_enabled: false,
    model_limits: '',
    allow_ips: '',
    group: '',
  });
  const addChannel = async (type: number, name: string, model: string) => {
    const channel = {
      type,
      key: 'sk-mock-upstream',
      status: CHANNEL_STATUS.enabled,
      name,
      weight: 0,
      priority: 0,
      created_time: now,
      base_url: upstream,
      models: model,
      group: 'default',
      tag: null,
    };
    const [inserted] = await knex('channels').insert(channel).returning('id');
    const id = Number(typeof inserted === 'object' ? (inserted as { id: number }).id : inserted);
    await syncAbilities(knex, { id, ...channel });
  };
  await addChannel(BENCH_CHANNEL_TYPE_OPENAI, 'mock', MOCK_MODEL);
  // A second channel for the same model: every call then draws between two by weight × health score.
  await addChannel(BENCH_CHANNEL_TYPE_OPENAI, 'mock-2', MOCK_MODEL);
  await addChannel(BENCH_CHANNEL_TYPE_CLAUDE, 'mock-claude', MOCK_CLAUDE_MODEL);
  // The conversion rows must bill as C does: same ratios, so the same pre-consume and settle.
  for (const key of PRICE_OPTIONS) {
    const map = gw.ctx.options.json<Record<string, number>>(key, {});
    if (map[MOCK_MODEL] === undefined) continue;
    await gw.ctx.options.set(key, JSON.stringify({ ...map, [MOCK_CLAUDE_MODEL]: map[MOCK_MODEL] }));
  }
  await invalidateChannels(gw.ctx);

  const server = createGatewayServer(gw.callback); // as server/src/index.ts does
  // Start-up (migrations, loading options and caches) leaves garbage: listen without it.
  await gw.releaseIdle();
  collectNow();
  startIdleGc(server, { onIdle: () => gw.releaseIdle() }); // as server/src/index.ts does
  await listenGateway(server, { port, host: '127.0.0.1' }); // as server/src/index.ts does
  log.info({ port, db: gw.ctx.db.kind, kv: gw.ctx.kv.kind }, 'bench gateway listening');

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    server.close();
    server.closeAllConnections();
    await gw.close().catch(() => undefined);
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  process.on('disconnect', () => void stop());
}

main().catch((err) => {
  // eslint-disable-next-line no-console -- a command-line tool's output
  console.error('bench gateway failed to start:', err);
  process.exit(1);
});
