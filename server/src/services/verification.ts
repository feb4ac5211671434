import type { AppContext } from '../context';
import { randomDigits } from '../lib/random';

/**
 * One-time codes kept in the shared KV (global across nodes): email verification codes,
 * password-reset tokens. `purpose` namespaces them ('email', 'reset', …).
 */
const key = (purpose: string, subject: string) => `code:${purpose}:${subject.toLowerCase()}`;

export const EMAIL_CODE_TTL_SECONDS = 10 * 60;

export async function issueCode(app: AppContext, purpose: string, subject: string, code = randomDigits(6), ttlSeconds = EMAIL_CODE_TTL_SECONDS): Promise<string> {
  await app.kv.set(key(purpose, subject), code, ttlSeconds);
  return code;
}

/** True when `code` matches; a matching code is consumed (single use). */
export async function consumeCode(app: AppContext, purpose: string, subject: string, code: string): Promise<boolean> {
  if (!code) return false;
  const stored = await app.kv.get(key(purpose, subject));
  if (!stored || stored !== code) return false;
  // take() is atomic: of two concurrent matching calls only one gets the value back.
  return (await app.kv.take(key(purpose, subject))) === code;
}

/** Checks an email verification code from GET /api/verification (consumes it). */
export const verifyEmailCode = (app: AppContext, email: string, code: string) => consumeCode(app, 'email', email, code);
