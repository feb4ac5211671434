import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message as received by the test SMTP server. */
export interface ReceivedMail {
  from: string;
  to: string[];
  /** The user the client authenticated as (undefined without AUTH). */
  authUser?: string;
  raw: string;
  subject: string;
  /** Decoded body (transfer encoding undone; the first text/html or text part of a multipart). */
  body: string;
}

export interface TestSmtp {
  port: number;
  mails: ReceivedMail[];
  /** Resolves with the next mail to `to` (already received ones count). */
  waitFor(to: string, after?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/**
 * A real SMTP server in the test process (the `smtp-server` package), without TLS. Accepts any
 * login whose password equals `password` (when given), stores every message.
 */
export async function startSmtp(opts: { user?: string; password?: string } = {}): Promise<TestSmtp> {
  const mails: ReceivedMail[] = [];
  const waiters: Array<() => void> = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      if (opts.user !== undefined && (auth.username !== opts.user || auth.password !== opts.password)) {
        cb(new Error('Invalid username or password'));
        return;
      }
      cb(null, { user: auth.username });
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const parsed = parseMessage(raw);
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          authUser: typeof session.user === 'string' ? session.user : undefined,
          raw,
          ...parsed,
        });
        for (const w of waiters.splice(0)) w();
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    mails,
    async waitFor(to, after = 0) {
      for (let i = 0; i < 200; i++) {
        const m = mails.slice(after).find((x) => x.to.includes(to));
        if (m) return m;
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50).unref();
        });
      }
      throw new Error(`no mail to ${to} arrived`);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/* ---------------------------------------------------------------- a tiny MIME reader */

function splitHead(raw: string): { headers: Record<string, string>; body: string } {
  const idx = raw.search(/\r?\n\r?\n/);
  const head = idx < 0 ? raw : raw.slice(0, idx);
  const body = idx < 0 ? '' : raw.slice(idx).replace(/^\r?\n\r?\n/, '');
  const headers: Record<string, string> = {};
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
  for (const line of unfolded.split(/\r?\n/)) {
    const c = line.indexOf(':');
    if (c > 0) headers[line.slice(0, c).trim().toLowerCase()] = line.slice(c + 1).trim();
  }
  return { headers, body };
}

function decodeQP(s: string): string {
  const soft = s.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    const ch = soft[i]!;
    if (ch === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      for (const b of Buffer.from(ch, 'utf8')) bytes.push(b);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodeBody(body: string, encoding: string | undefined): string {
  const enc = (encoding ?? '').toLowerCase();
  if (enc === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (enc === 'quoted-printable') return decodeQP(body);
  return body;
}

/** RFC 2047 encoded words (=?UTF-8?Q?...?= / =?UTF-8?B?...?=). */
export function decodeWords(s: string): string {
  return s
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_m, _cs: string, kind: string, text: string) =>
      kind.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : decodeQP(text.replace(/_/g, ' ')),
    );
}

function parseMessage(raw: string): { subject: string; body: string } {
  const { headers, body } = splitHead(raw);
  const subject = decodeWords(headers['subject'] ?? '');
  const ctype = headers['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(ctype)?.[1];
  if (/^multipart\//i.test(ctype) && boundary) {
    const parts = body
      .split(`--${boundary}`)
      .slice(1)
      .filter((p) => !p.startsWith('--'));
    const decoded = parts.map((p) => {
      const part = splitHead(p.replace(/^\r?\n/, ''));
      return { type: part.headers['content-type'] ?? '', text: decodeBody(part.body, part.headers['content-transfer-encoding']) };
    });
    const html = decoded.find((d) => /text\/html/i.test(d.type)) ?? decoded[0];
    return { subject, body: html?.text ?? '' };
  }
  return { subject, body: decodeBody(body, headers['content-transfer-encoding']) };
}

/** Helpers to pull what the gateway mails out of a received message. */
export const mailCode = (m: ReceivedMail) => /<strong>(\d{6})<\/strong>/.exec(m.body)?.[1];
export const mailLink = (m: ReceivedMail) => /href="([^"]+)"/.exec(m.body)?.[1]?.replace(/&#38;/g, '&');
