import { AppError } from '../lib/errors';
import { t, verbatim, type Message, type MessageKey, type MessageParams } from '../i18n';

/**
 * An error answered to a relay client. `type` and `code` land in the OpenAI error object
 * (`{error:{message,type,code}}`); other formats map them their own way.
 */
export class RelayError extends AppError {
  readonly type: string;
  constructor(status: number, message: MessageKey | Message, code: string, type?: string) {
    super(message, status, code);
    this.type = type ?? defaultType(status);
  }
}

export function defaultType(status: number): string {
  if (status === 429) return 'rate_limit_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status >= 500) return 'new_api_error';
  return 'invalid_request_error';
}

/** An upstream answered with an error (or failed to answer). Decides retry and channel health. */
export class UpstreamError extends Error {
  /** Our own wording of the failure (a catalogue message), when it is not the upstream's text. */
  readonly msg?: Message;
  constructor(
    /** Upstream HTTP status; 0 for network failures and timeouts. */
    readonly status: number,
    message: string | Message,
    /** Raw upstream body (for auto-disable keyword matching); never shown verbatim beyond `message`. */
    readonly body = '',
    readonly upstreamCode = '',
  ) {
    super(typeof message === 'string' ? message : t('en', message));
    if (typeof message !== 'string') this.msg = message;
  }

  /** The upstream's `Retry-After` (ms), when it sent one (429/503): the breaker honours it. */
  retryAfterMs = 0;

  /** 5xx, 429, 401–407, network errors and timeouts are retried on another channel; 400 is not. */
  get retryable(): boolean {
    const s = this.status;
    return s === 0 || s === 429 || (s >= 401 && s <= 407) || s >= 500 || s === 408;
  }
}

/**
 * What to tell the client about an upstream failure: our own wording when the error has one
 * (its text params scrubbed), else the upstream's text scrubbed.
 */
export function upstreamMessage(err: UpstreamError, scrub: (text: string) => string): Message {
  if (!err.msg) return verbatim(scrub(err.message));
  const params: MessageParams = {};
  for (const [k, v] of Object.entries(err.msg.params ?? {})) params[k] = typeof v === 'string' ? scrub(v) : v;
  return { key: err.msg.key, params };
}

export const errNoKey = () => new RelayError(401, 'relay.no_token', 'invalid_api_key');
export const errBadKey = () => new RelayError(401, 'relay.bad_token', 'invalid_api_key');

/**
 * Key-like strings in upstream error text. Upstreams quote keys ("Incorrect API key provided:
 * sk-abc…"), and such text reaches end users, consoles and logs: provider key shapes, bearer
 * tokens, JWTs, AWS access key ids, and long hex or base64 runs that look like secrets (a run of
 * 32+ hex digits or 40+ base64 characters with both letters and digits).
 */
const SECRET_PATTERNS: Array<[RegExp, string | ((m: string) => string)]> = [
  [/\bsk-[A-Za-z0-9_-]{3,}[A-Za-z0-9_*.-]*/g, 'sk-***'],
  [/\bAIza[0-9A-Za-z_-]{6,}\**/g, 'AIza***'],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{6,}\**/gi, '$1 ***'],
  [/\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]+\.?[A-Za-z0-9_-]*/g, '***'],
  [/\b(AKIA|ASIA)[0-9A-Z]{12,}/g, '***'],
  [/\b[0-9a-fA-F]{32,}\b/g, '***'],
  [/[A-Za-z0-9+/_-]{40,}={0,2}/g, (m: string) => (/[0-9]/.test(m) && /[A-Za-z]/.test(m) ? '***' : m)],
];

/** Shortest fragment of a channel key that is scrubbed wherever it appears. */
const KEY_FRAGMENT = 6;
const keyGramCache = new Map<string, Set<string>>();

/**
 * Every KEY_FRAGMENT-long piece of `key`, except pieces made of lower-case letters only (they
 * would match ordinary words, e.g. "stream" in a key like sk-upstream-key; a quoted key fragment
 * has digits, capitals or its prefix's dash). Cached: error paths only, one entry per key seen.
 */
function keyGrams(key: string): Set<string> {
  let g = keyGramCache.get(key);
  if (g) return g;
  g = new Set();
  for (let i = 0; i + KEY_FRAGMENT <= key.length; i++) {
    const s = key.slice(i, i + KEY_FRAGMENT);
    if (!/^[a-z]+$/.test(s) && !/\s/.test(s)) g.add(s);
  }
  if (keyGramCache.size > 1000) keyGramCache.clear();
  keyGramCache.set(key, g);
  return g;
}

/**
 * Upstream error text made safe to show: any fragment (6+ characters) of the channel's own keys
 * and anything shaped like a secret become `***`. Runs only when an upstream call failed.
 */
export function scrubSecrets(message: string, keys: readonly string[] = []): string {
  let out = message;
  for (const [re, to] of SECRET_PATTERNS) out = typeof to === 'string' ? out.replace(re, to) : out.replace(re, to);
  for (const key of keys) {
    if (!key || key.length < KEY_FRAGMENT || out.length < KEY_FRAGMENT) continue;
    const grams = keyGrams(key);
    let mark: Uint8Array | undefined;
    for (let i = 0; i + KEY_FRAGMENT <= out.length; i++) {
      if (grams.has(out.slice(i, i + KEY_FRAGMENT))) (mark ??= new Uint8Array(out.length)).fill(1, i, i + KEY_FRAGMENT);
    }
    if (!mark) continue;
    let s = '';
    for (let i = 0; i < out.length; i++) {
      if (!mark[i]) s += out[i];
      else if (i === 0 || !mark[i - 1]) s += '***';
    }
    out = s;
  }
  return out;
}
