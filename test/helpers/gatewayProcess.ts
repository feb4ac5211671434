import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

/**
 * The gateway as a real process (tsx on server/src/index.ts, with npm start's --expose-gc), for what only a process shows: a
 * kill -9, a SIGTERM, two nodes sharing a database. Started with the environment given (PORT is
 * chosen here unless set); resolves once it logs that it listens.
 */
export interface GatewayProcess {
  child: ChildProcess;
  port: number;
  base: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code once it has exited. */
  exited: Promise<number | null>;
  /** SIGKILL (unless it already exited), then waits for the exit. */
  kill(): Promise<void>;
}

const ROOT = path.resolve(__dirname, '../..');

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

export async function startGatewayProcess(env: NodeJS.ProcessEnv, startTimeoutMs = 40_000): Promise<GatewayProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'server/src/index.ts'], {
    cwd: ROOT,
    // `gateway listening` is logged at info: a quieter LOG_LEVEL would hide it.
    env: { ...process.env, ADMIN_DIST: path.join(ROOT, 'no-console'), ...env, LOG_LEVEL: 'info', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const t0 = Date.now();
  while (!out.includes('gateway listening')) {
    if (child.exitCode !== null || Date.now() - t0 > startTimeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`gateway did not start:\n${out.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    port,
    base: `http://127.0.0.1:${port}`,
    output: () => out,
    exited,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
