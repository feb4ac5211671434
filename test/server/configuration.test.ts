/**
 * The configuration: config/environment.ts declares every variable the server reads, the docs
 * table is generated from it, and bad values stop the start with a message naming them.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../server/src/config';
import { ENVIRONMENT } from '../../config/environment';
import { CONFIGURATION_DOC, documentedAsDeclared, documentedTable, environmentTable, tableRows } from '../../config/docs';

const ROOT = path.resolve(__dirname, '../..');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('configuration', () => {
  test('docs/configuration.md has the table generated from config/environment.ts (npm run docs:config)', () => {
    const doc = fs.readFileSync(CONFIGURATION_DOC, 'utf8');
    const rows = tableRows(documentedTable(doc) ?? '');
    expect(rows.map((r) => r[0])).toEqual(Object.keys(ENVIRONMENT).map((name) => `\`${name}\``));
    expect(rows).toEqual(tableRows(environmentTable()));
    expect(documentedAsDeclared(doc)).toBe(true);
  });

  test('every environment variable the server reads is declared in config/environment.ts', () => {
    const read = new Set<string>();
    for (const file of sourceFiles(path.join(ROOT, 'server/src'))) {
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)|process\.env\[['"]([A-Z][A-Z0-9_]*)['"]\]|readVariable\(['"]([A-Z][A-Z0-9_]*)['"]/g)) {
        read.add((m[1] ?? m[2] ?? m[3])!);
      }
    }
    expect(read.size).toBeGreaterThan(0);
    expect([...read].filter((name) => !(name in ENVIRONMENT))).toEqual([]);
  });

  test('unset and empty variables take their defaults', () => {
    for (const env of [
      {},
      Object.fromEntries(
        Object.keys(ENVIRONMENT)
          .filter((k) => k !== 'REDIS_PREFIX')
          .map((k) => [k, '']),
      ),
    ]) {
      const c = loadConfig(env);
      expect(c).toMatchObject({
        port: 3000,
        redisPrefix: 'gw:',
        logLevel: 'info',
        apiBodyLimit: 1024 * 1024,
        relayBodyLimit: 32 * 1024 * 1024,
        upstreamTimeoutMs: 300_000,
        sessionSecretGenerated: true,
        trustProxy: { hops: 0, cidrs: null },
        loginLimit: { perAccount: 5, perIp: 20, windowSeconds: 900 },
        apiRateLimit: { count: 600, windowSeconds: 60 },
      });
      expect(c.databaseUrl).toBe(`sqlite:${path.join(ROOT, 'data', 'gateway.db')}`);
      expect(c.adminDist).toBe(path.join(ROOT, 'admin', 'dist'));
      expect(c.version).toBe((JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version);
      for (const k of ['pgSchema', 'redisUrl', 'upstreamConnectTimeoutMs', 'shutdownTimeoutMs', 'nodeId', 'ledgerStaleMs'] as const)
        expect(c[k]).toBeUndefined();
    }
    expect(loadConfig({ REDIS_PREFIX: '' }).redisPrefix).toBe('');
  });

  test('values are parsed', () => {
    const c = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgres://u@h/db',
      REDIS_URL: 'redis://r:6379',
      SESSION_SECRET: 's',
      LOG_LEVEL: 'WARN',
      TRUST_PROXY: 'true',
      TRUST_PROXY_CIDRS: '10.0.0.0/8',
      LOGIN_FAIL_WINDOW_SECONDS: '0',
      GLOBAL_API_RATE_LIMIT: '0',
      UPSTREAM_IDLE_TIMEOUT_MS: '1500.5',
      SHUTDOWN_TIMEOUT_MS: '2000',
      NODE_ID: 'node-a',
    });
    expect(c).toMatchObject({
      port: 8080,
      databaseUrl: 'postgres://u@h/db',
      redisUrl: 'redis://r:6379',
      sessionSecret: 's',
      sessionSecretGenerated: false,
      logLevel: 'warn',
      trustProxy: { hops: 1 },
      loginLimit: { windowSeconds: 1 },
      apiRateLimit: { count: 0 },
      upstreamIdleTimeoutMs: 1500.5,
      shutdownTimeoutMs: 2000,
      nodeId: 'node-a',
    });
    expect(c.trustProxy.cidrs).not.toBeNull();
  });

  test('invalid values throw one ConfigError naming each of them', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: '80a', LOGIN_FAIL_LIMIT_IP: '-1', SHUTDOWN_TIMEOUT_MS: '0', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x', GATEWAY_NATIVE: 'no' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems.map((p) => p.split('=')[0])).toEqual(['PORT', 'DATABASE_URL', 'LOG_LEVEL', 'LOGIN_FAIL_LIMIT_IP', 'SHUTDOWN_TIMEOUT_MS', 'GATEWAY_NATIVE']);
    expect(problems[0]).toBe('PORT="80a": must be a whole number from 0 to 65535');
    expect(() => loadConfig({ TRUST_PROXY: 'yes' })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUST_PROXY_CIDRS: 'not-an-ip' })).toThrow(/TRUST_PROXY_CIDRS/);
  });

  test('a gateway started with an invalid value exits 1 with that message, no stack', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/index.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: 'eighty', LOGIN_FAIL_LIMIT_ACCOUNT: 'five' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).toBe(1);
    expect(out).toContain(
      'invalid configuration:\n  PORT="eighty": must be a whole number from 0 to 65535\n  LOGIN_FAIL_LIMIT_ACCOUNT="five": must be a whole number ≥ 0',
    );
    expect(out).not.toMatch(/\n\s+at /);
  });
});
