import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/**
 * Local fakes of the identity providers the gateway talks to (GitHub, LinuxDO, the WeChat
 * server), plain node:http servers that behave like the real ones for the calls we make:
 * one-time codes, client credential checks, bearer-token user endpoints. Plus a launcher for a
 * real OpenID provider (oidc-provider, ESM) in a child process.
 */

export interface FakeServer {
  url: string;
  close(): Promise<void>;
  /** Every request seen, for assertions (method, path, headers, body). */
  calls: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders; body: string }>;
}

async function listen(
  handler: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void | Promise<void>,
  calls: FakeServer['calls'],
): Promise<FakeServer> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      calls.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      Promise.resolve(handler(req, body, res)).catch((err) => {
        res.statusCode = 500;
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: http.ServerResponse, status: number, body: unknown) {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
}

const bearer = (req: http.IncomingMessage) => (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');

export interface GitHubUser {
  id: number;
  login: string;
  name?: string | null;
  email?: string | null;
}

export interface OAuthFake<U> extends FakeServer {
  /** Registers a one-time authorization code that yields `user`. */
  addCode(code: string, user: U): void;
  /** Holds user-endpoint answers until `n` are waiting, then releases them together (race tests). */
  holdUserAnswers(n: number): void;
}

/** Collects callbacks until `n` are pending, then runs them all at once. */
function makeGate() {
  let want = 0;
  let pending: Array<() => void> = [];
  return {
    set(n: number) {
      want = n;
    },
    pass(fn: () => void) {
      if (want <= 1) return fn();
      pending.push(fn);
      if (pending.length >= want) {
        const go = pending;
        pending = [];
        want = 0;
        for (const f of go) f();
      }
    },
  };
}

/** GitHub: POST /login/oauth/access_token (JSON), GET /user (Bearer). Errors like GitHub: HTTP 200 with `error`. */
export async function startGitHubFake(creds: { clientId: string; clientSecret: string }): Promise<OAuthFake<GitHubUser>> {
  const codes = new Map<string, GitHubUser>();
  const tokens = new Map<string, GitHubUser>();
  const gate = makeGate();
  const fake = await listen((req, body, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      let p: Record<string, string>;
      try {
        p = (req.headers['content-type'] ?? '').includes('json') ? JSON.parse(body) : Object.fromEntries(new URLSearchParams(body));
      } catch {
        return send(res, 400, { error: 'bad_request' });
      }
      if (p.client_id !== creds.clientId || p.client_secret !== creds.clientSecret) {
        return send(res, 200, { error: 'incorrect_client_credentials', error_description: 'The client_id and/or client_secret passed are incorrect.' });
      }
      const user = codes.get(p.code ?? '');
      if (!user) return send(res, 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
      codes.delete(p.code);
      const token = `gho_${crypto.randomBytes(12).toString('hex')}`;
      tokens.set(token, user);
      return send(res, 200, { access_token: token, token_type: 'bearer', scope: 'user:email' });
    }
    if (req.method === 'GET' && url.pathname === '/user') {
      const user = tokens.get(bearer(req));
      if (!user) return send(res, 401, { message: 'Bad credentials' });
      return gate.pass(() => send(res, 200, { login: user.login, id: user.id, name: user.name ?? null, email: user.email ?? null, type: 'User' }));
    }
    send(res, 404, { message: 'Not Found' });
  }, []);
  return Object.assign(fake, { addCode: (code: string, user: GitHubUser) => void codes.set(code, user), holdUserAnswers: (n: number) => gate.set(n) });
}

export interface LinuxDOUser {
  id: number;
  username: string;
  name?: string;
  active?: boolean;
  trust_level?: number;
  silenced?: boolean;
}

/** LinuxDO Connect: POST /oauth2/token (form, Basic client auth), GET /api/user (Bearer). */
export async function startLinuxDOFake(creds: { clientId: string; clientSecret: string }): Promise<OAuthFake<LinuxDOUser>> {
  const codes = new Map<string, LinuxDOUser>();
  const tokens = new Map<string, LinuxDOUser>();
  const gate = makeGate();
  const fake = await listen((req, body, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'POST' && url.pathname === '/oauth2/token') {
      const expected = `Basic ${Buffer.from(`${creds.clientId}:${creds.clientSecret}`).toString('base64')}`;
      if (req.headers.authorization !== expected) return send(res, 401, { error: 'invalid_client' });
      const p = Object.fromEntries(new URLSearchParams(body));
      if (p.grant_type !== 'authorization_code') return send(res, 400, { error: 'unsupported_grant_type' });
      const user = codes.get(p.code ?? '');
      if (!user) return send(res, 400, { error: 'invalid_grant', error_description: 'The provided authorization grant is invalid' });
      codes.delete(p.code);
      const token = crypto.randomBytes(16).toString('hex');
      tokens.set(token, user);
      return send(res, 200, { access_token: token, token_type: 'bearer', expires_in: 3600 });
    }
    if (req.method === 'GET' && url.pathname === '/api/user') {
      const user = tokens.get(bearer(req));
      if (!user) return send(res, 401, { error: 'invalid_token' });
      return gate.pass(() => send(res, 200, { active: true, trust_level: 1, silenced: false, name: user.username, ...user }));
    }
    send(res, 404, { error: 'not_found' });
  }, []);
  return Object.assign(fake, { addCode: (code: string, user: LinuxDOUser) => void codes.set(code, user), holdUserAnswers: (n: number) => gate.set(n) });
}

export interface WeChatFake extends FakeServer {
  /** A code the official account showed `ageSeconds` ago for `openId` (valid 3 minutes, once). */
  addCode(code: string, openId: string, ageSeconds?: number): void;
}

/** The WeChat server (new-api's wechat-server): GET /api/wechat/user?code= with `Authorization: <token>`. */
export async function startWeChatFake(token: string): Promise<WeChatFake> {
  const codes = new Map<string, { openId: string; issuedAt: number }>();
  const fake = await listen((req, _body, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'GET' && url.pathname === '/api/wechat/user') {
      if (req.headers.authorization !== token) return send(res, 200, { success: false, message: '无权进行此操作，Token 无效' });
      const code = url.searchParams.get('code') ?? '';
      const entry = codes.get(code);
      codes.delete(code);
      if (!entry || Date.now() - entry.issuedAt > 180_000) return send(res, 200, { success: false, message: '验证码错误或已过期' });
      return send(res, 200, { success: true, message: '', data: entry.openId });
    }
    send(res, 404, { success: false, message: 'not found' });
  }, []);
  return Object.assign(fake, {
    addCode: (code: string, openId: string, ageSeconds = 0) => void codes.set(code, { openId, issuedAt: Date.now() - ageSeconds * 1000 }),
  });
}

/** Telegram login widget data signed with `botToken`, as the widget hands it to the page. */
export function telegramAuthData(
  botToken: string,
  fields: { id: number | string; first_name?: string; last_name?: string; username?: string; photo_url?: string; auth_date?: number },
): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries({ auth_date: Math.floor(Date.now() / 1000), ...fields })) {
    if (v !== undefined && v !== '') data[k] = String(v);
  }
  const checkString = Object.keys(data)
    .sort()
    .map((k) => `${k}=${data[k]}`)
    .join('\n');
  const secret = crypto.createHash('sha256').update(botToken).digest();
  data.hash = crypto.createHmac('sha256', secret).update(checkString).digest('hex');
  return data;
}

export interface OidcProviderProcess {
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

/**
 * Starts a real OpenID provider (the `oidc-provider` package, ESM) in a child Node process —
 * jest's CommonJS runtime cannot load it in-process. Development interactions are on: the login
 * form accepts any login name, which becomes the account's `sub`. PKCE is required.
 */
export async function startOidcProvider(redirectUri: string): Promise<OidcProviderProcess> {
  const clientId = 'gateway-client';
  const clientSecret = crypto.randomBytes(16).toString('hex');
  const child: ChildProcess = spawn(process.execPath, [path.join(__dirname, 'oidcProvider.mjs')], {
    env: { ...process.env, OIDC_REDIRECT_URI: redirectUri, OIDC_CLIENT_ID: clientId, OIDC_CLIENT_SECRET: clientSecret },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const issuer = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`oidc provider did not start: ${stderr}`)), 20_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /ISSUER (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`oidc provider exited (${code}): ${stderr}`));
    });
  });
  return {
    issuer,
    clientId,
    clientSecret,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
