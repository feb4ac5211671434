import crypto from 'node:crypto';
import type { AppContext } from '../context';
import { randomDigits } from '../lib/random';

/**
 * One-time codes kept in the shared KV (global across nodes): email verification codes,
 * password-reset tokens. `purpose` namespaces them ('email', 'reset', …).
 *
 * Guessing is bounded twice, with counters taken atomically before the comparison (so concurrent
 * guesses cannot share one slot): a code dies after CODE_MAX_ATTEMPTS wrong tries (even the right
 * one is refused afterwards; the user asks for a new code), and an address takes at most
 * ADDRESS_MAX_FAILURES wrong tries per window across all its codes (asking for new codes does not
 * buy more guesses).
 */
const key = (purpose: string, subject: string) => `code:${purpose}:${subject.toLowerCase()}`;
const triesKey = (purpose: string, subject: string) => `codetries:${purpose}:${subject.toLowerCase()}`;
const failsKey = (purpose: string, subject: string) => `codefails:${purpose}:${subject.toLowerCase()}`;

export const EMAIL_CODE_TTL_SECONDS = 10 * 60;
export const CODE_MAX_ATTEMPTS = 5;
export const ADDRESS_MAX_FAILURES = 20;
export const ADDRESS_FAILURE_WINDOW_SECONDS = 60 * 60;

export async function issueCode(
  app: AppContext,
  purpose: string,
  subject: string,
  code = randomDigits(6),
  ttlSeconds = EMAIL_CODE_TTL_SECONDS,
): Promise<string> {
  await app.kv.del(triesKey(purpose, subject));
  await app.kv.set(key(purpose, subject), code, ttlSeconds);
  return code;
}

/** True when `code` matches; a matching code is consumed (single use). */
export async function consumeCode(app: AppContext, purpose: string, subject: string, code: string): Promise<boolean> {
  if (!code) return false;
  const k = key(purpose, subject);
  const [tries, fails] = await Promise.all([
    app.kv.incr(triesKey(purpose, subject), ADDRESS_FAILURE_WINDOW_SECONDS),
    app.kv.incr(failsKey(purpose, subject), ADDRESS_FAILURE_WINDOW_SECONDS),
  ]);
  if (tries > CODE_MAX_ATTEMPTS || fails > ADDRESS_MAX_FAILURES) {
    await app.kv.del(k);
    return false;
  }
  const stored = await app.kv.get(k);
  if (!stored || !safeEqual(stored, code)) return false;
  // take() is atomic: of two concurrent matching calls only one gets the value back.
  if ((await app.kv.take(k)) !== code) return false;
  await Promise.all([app.kv.del(triesKey(purpose, subject)), app.kv.decr(failsKey(purpose, subject))]);
  return true;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

/** Checks an email verification code from GET /api/verification (consumes it). */
export const verifyEmailCode = (app: AppContext, email: string, code: string) => consumeCode(app, 'email', email, code);
