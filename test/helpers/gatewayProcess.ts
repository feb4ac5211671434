import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/**
 * The gateway as a real process (tsx on server/src/index.ts, with npm start's --expose-gc), for what only a process shows: a
 * kill -9, a SIGTERM, two nodes sharing a database. Started with the environment given; resolves
 * once it logs that it listens. Without PORT it listens on PORT=0 and the port is read from that
 * line: a port picked here and bound later by the child could be taken in between by another
 * suite's socket (a CI run failed with EADDRINUSE that way).
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

export async function startGatewayProcess(env: NodeJS.ProcessEnv, startTimeoutMs = 40_000): Promise<GatewayProcess> {
  const asked = env.PORT ?? '0';
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'server/src/index.ts'], {
    cwd: ROOT,
    // `gateway listening` is logged at info: a quieter LOG_LEVEL would hide it.
    env: { ...process.env, ADMIN_DIST: path.join(ROOT, 'no-console'), ...env, LOG_LEVEL: 'info', PORT: asked },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const t0 = Date.now();
  let port = 0;
  while (!port) {
    if (child.exitCode !== null || Date.now() - t0 > startTimeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`gateway did not start:\n${out.slice(-3000)}`);
    }
    port = listeningPort(out);
    if (!port) await new Promise((r) => setTimeout(r, 50));
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

/** The port of the `gateway listening` line (pino JSON), or 0 before that line. */
function listeningPort(out: string): number {
  // Whole lines only: the last piece may still be arriving.
  for (const line of out.split('\n').slice(0, -1)) {
    if (!line.includes('"gateway listening"')) continue;
    const port = (JSON.parse(line) as { port?: unknown }).port;
    if (typeof port === 'number' && port > 0) return port;
  }
  return 0;
}
