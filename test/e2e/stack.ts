import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createApp, type GatewayApp } from '../../server/src/app';
import { loadConfig } from '../../server/src/config';
import { createLogger } from '../../server/src/lib/logger';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';

export const ROOT = path.resolve(__dirname, '../..');
export const ADMIN_DIST = path.join(ROOT, 'admin', 'dist');

export interface Stack {
  baseUrl: string;
  app: GatewayApp;
  mock: MockUpstream;
  stop(): Promise<void>;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

/** Builds the console when admin/dist is missing or older than admin/src (skip with E2E_NO_BUILD=1). */
export function ensureConsoleBuilt(): void {
  const index = path.join(ADMIN_DIST, 'index.html');
  const built = fs.existsSync(index) ? fs.statSync(index).mtimeMs : 0;
  const sources = Math.max(newestMtime(path.join(ROOT, 'admin', 'src')), fs.statSync(path.join(ROOT, 'admin', 'index.html')).mtimeMs);
  if (built >= sources || process.env.E2E_NO_BUILD === '1') return;
  console.log(built ? 'e2e: admin/src is newer than admin/dist: rebuilding the console' : 'e2e: building the console');
  execFileSync('npm', ['run', 'build', '-w', 'admin'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** The real server in-process (temp SQLite file, the built console) plus the mock upstream. */
export async function startStack(): Promise<Stack> {
  ensureConsoleBuilt();
  if (!fs.existsSync(path.join(ADMIN_DIST, 'index.html'))) throw new Error(`console not built: ${ADMIN_DIST} (run npm run build -w admin)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-e2e-'));
  // Serve a snapshot of the build, so a rebuild during the run cannot pull files away.
  const dist = path.join(dir, 'dist');
  fs.cpSync(ADMIN_DIST, dist, { recursive: true });
  const mock = await startMockUpstream();
  const config = {
    ...loadConfig({}),
    databaseUrl: `sqlite:${path.join(dir, 'e2e.db')}`,
    adminDist: dist,
    sessionSecret: 'e2e-session-secret',
    sessionSecretGenerated: false,
    logLevel: process.env.E2E_LOG_LEVEL ?? 'silent',
    // The tasks flow ticks the task poller itself, step by step.
    taskPollMs: 0,
  };
  const app = await createApp(config, { logger: createLogger(config.logLevel) });
  const server = http.createServer(app.callback);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    app,
    mock,
    async stop() {
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.close();
      await mock.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
