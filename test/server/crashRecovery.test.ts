import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { buildApp, makeUser, type Target, type TestApp } from '../helpers/app';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gatewayProcess';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { seedChannel, seedToken, setOptions } from '../mock-upstream/seed';
import { LOG_TYPE } from '../../server/src/repositories/logs';

/**
 * The real thing: the gateway as a child process (tsx on server/src/index.ts), 20 streams in
 * flight, `kill -9`, restart; the balances must be exact to the unit and the log must explain
 * every unit taken (docs/billing.md, "Quota on a crash").
 */

const TARGETS: Target[] = [
  { name: 'sqlite', db: 'sqlite', redis: false },
  ...(process.env.TEST_DATABASE_URL ? [{ name: 'postgres+redis', db: 'postgres' as const, redis: !!process.env.TEST_REDIS_URL }] : []),
];
const STREAMS = 20;
const FAST_CALLS = 5;
const USER_QUOTA = 1_000_000;
const TOKEN_QUOTA = 500_000;

/** POSTs a chat call; resolves once the first response bytes arrived (streams) or the whole body (others). */
function call(port: number, key: string, body: unknown, firstBytesOnly: boolean): Promise<{ status: number; req: http.ClientRequest }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
      },
      (res) => {
        if (firstBytesOnly) {
          res.once('data', () => resolve({ status: res.statusCode ?? 0, req }));
          res.on('error', () => undefined);
        } else {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, req }));
        }
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

describe.each(TARGETS.map((t) => [t.name, t] as const))('kill -9 during streams, then restart [%s]', (_n, target) => {
  let seedApp: TestApp;
  let mock: MockUpstream;
  let file: string | undefined;
  const children: GatewayProcess[] = [];

  beforeAll(async () => {
    mock = await startMockUpstream();
    file = target.db === 'sqlite' ? path.join(os.tmpdir(), `crash-${crypto.randomBytes(4).toString('hex')}.db`) : undefined;
    // The test's own app seeds and reads the same database (another node id; it never takes over).
    seedApp = await buildApp(target, { config: { ...(file ? { databaseUrl: `sqlite:${file}` } : {}), ledgerHeartbeatMs: 600_000, ledgerStaleMs: 600_000 } });
  });
  afterAll(async () => {
    for (const c of children) await c.kill();
    await seedApp?.close();
    await mock?.close();
    if (file) for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
  });

  test('every reserved unit comes back or is explained by a log row; balances exact to the unit', async () => {
    await setOptions(seedApp, { ModelRatio: JSON.stringify({ 'drip-model': 1, 'test-model': 2 }), PreConsumedQuota: '0' });
    await seedChannel(seedApp, { base_url: mock.url, models: 'test-model' });
    await seedChannel(seedApp, { base_url: mock.url, models: 'drip-model', key: 'sk-fault-drip' });
    const user = await makeUser(seedApp, { quota: USER_QUOTA });
    const token = await seedToken(seedApp, user.id, { unlimited_quota: false, remain_quota: TOKEN_QUOTA });

    const env: NodeJS.ProcessEnv = {
      NODE_ID: `crash-${crypto.randomBytes(3).toString('hex')}`,
      SESSION_SECRET: 'crash-test-secret',
      DATABASE_URL: file ? `sqlite:${file}` : process.env.TEST_DATABASE_URL,
      DATABASE_SCHEMA: seedApp.schema ?? '',
      REDIS_URL: target.redis ? process.env.TEST_REDIS_URL : '',
      REDIS_PREFIX: seedApp.ctx.config.redisPrefix,
    };
    const first = await startGatewayProcess(env);
    children.push(first);
    const port = first.port;

    // Calls that finish before the crash: settled; their log rows wait for the next batch (≤ 1 s).
    for (let i = 0; i < FAST_CALLS; i++) {
      const r = await call(port, token.key, { model: 'test-model', messages: [{ role: 'user', content: 'hi' }] }, false);
      expect(r.status).toBe(200);
    }
    // 20 streams (4 s each), every one past its first frame: its reservation is committed.
    const streams = await Promise.all(
      Array.from({ length: STREAMS }, () =>
        call(port, token.key, { model: 'drip-model', stream: true, max_tokens: 2800, messages: [{ role: 'user', content: 'tell me' }] }, true),
      ),
    );
    expect(streams.every((s) => s.status === 200)).toBe(true);
    await first.kill();
    for (const s of streams) s.req.destroy();

    const left = await seedApp.knex('reservations').where({ user_id: user.id });
    expect(left.filter((r) => Number(r.state) === 0)).toHaveLength(STREAMS);
    const reservedEach = Number(left.find((r) => Number(r.state) === 0)!.reserved);
    expect(reservedEach).toBeGreaterThanOrEqual(2800);
    // Taken and not yet explained: the balances are short by the reservations.
    const quotaAtCrash = Number((await seedApp.knex('users').where({ id: user.id }).first()).quota);
    expect(quotaAtCrash).toBeLessThanOrEqual(USER_QUOTA - STREAMS * reservedEach);

    const second = await startGatewayProcess(env);
    children.push(second);
    second.child.kill('SIGTERM');
    await second.exited;

    expect(await seedApp.knex('reservations').where({ user_id: user.id })).toHaveLength(0);
    const u = await seedApp.knex('users').where({ id: user.id }).first();
    const t = await seedApp.knex('tokens').where({ id: token.id }).first();
    const logs = await seedApp.knex('logs').where({ user_id: user.id, type: LOG_TYPE.consume });
    const logged = logs.reduce((a, l) => a + Number(l.quota), 0);
    // 2 × (11 + 7) per fast call; the streams were refunded in full.
    expect(logged).toBe(FAST_CALLS * 36);
    expect(Number(u.quota)).toBe(USER_QUOTA - logged);
    expect(Number(u.used_quota)).toBe(logged);
    expect(Number(u.quota) + Number(u.used_quota)).toBe(USER_QUOTA);
    expect(Number(t.remain_quota)).toBe(TOKEN_QUOTA - logged);
    expect(Number(t.remain_quota) + Number(t.used_quota)).toBe(TOKEN_QUOTA);
    expect(Number(u.request_count)).toBe(FAST_CALLS);
    const refunds = logs.filter((l) => /^reservation refunded after a restart \(request \d+\)/.test(l.content));
    expect(refunds).toHaveLength(STREAMS);
    expect(refunds.every((l) => Number(l.quota) === 0 && l.model_name === 'drip-model' && l.token_id === token.id)).toBe(true);
    expect(logs).toHaveLength(STREAMS + FAST_CALLS);
  });
});
