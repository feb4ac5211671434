/**
 * The native addon is optional: with GATEWAY_NATIVE=off (as where it did not build) none of its
 * helpers is offered, and a real gateway process starts, relays a call and serves the console API.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp, DB_TARGETS, makeUser } from '../helpers/app';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gatewayProcess';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';
import { seedChannel, seedToken, setOptions } from '../mock-upstream/seed';

describe('without the native addon (GATEWAY_NATIVE=off)', () => {
  test('lib/native offers none of its helpers', () => {
    const saved = process.env.GATEWAY_NATIVE;
    process.env.GATEWAY_NATIVE = 'off';
    try {
      jest.isolateModules(() => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- a fresh module instance that reads the switch
        const native = require('../../server/src/lib/native') as typeof import('../../server/src/lib/native');
        expect(native.nativeLoaded()).toBe(false);
        expect(native.nativeAcceptPending()).toBeUndefined();
        expect(native.nativeMemory()).toBeUndefined();
      });
    } finally {
      if (saved === undefined) delete process.env.GATEWAY_NATIVE;
      else process.env.GATEWAY_NATIVE = saved;
    }
  });

  describe('a gateway process', () => {
    let dir: string;
    let mock: MockUpstream;
    let gw: GatewayProcess | undefined;
    afterAll(async () => {
      await gw?.kill();
      await mock?.close();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    test('starts, relays a call and serves the console API, then stops on SIGTERM', async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-native-off-'));
      const dbFile = path.join(dir, 'gw.db');
      mock = await startMockUpstream();
      const seedApp = await buildApp(DB_TARGETS[0]!, { config: { databaseUrl: `sqlite:${dbFile}` } });
      await setOptions(seedApp, { ModelRatio: JSON.stringify({ 'test-model': 1 }), GroupRatio: JSON.stringify({ default: 1 }) });
      await seedChannel(seedApp, { base_url: mock.url, models: 'test-model' });
      const userId = (await makeUser(seedApp, { quota: 1_000_000 })).id;
      const key = (await seedToken(seedApp, userId)).key;
      await seedApp.close();

      gw = await startGatewayProcess({ DATABASE_URL: `sqlite:${dbFile}`, REDIS_URL: '', SESSION_SECRET: 'x', GATEWAY_NATIVE: 'off' });
      expect(gw.output()).toMatch(/"native":false[^\n]*gateway listening/);

      const relayed = await fetch(`${gw.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'test-model', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(relayed.status).toBe(200);
      const body = (await relayed.json()) as { choices: Array<{ message: { content: string } }> };
      expect(body.choices[0]!.message.content).toBe('Hello from the mock');
      expect(mock.received('/v1/chat/completions')).toHaveLength(1);

      const status = await fetch(`${gw.base}/api/status`);
      expect(status.status).toBe(200);
      expect(((await status.json()) as { success: boolean }).success).toBe(true);

      gw.child.kill('SIGTERM');
      expect(await gw.exited).toBe(0);
    }, 60_000);
  });
});
