import { t, toMessage, type Message, type MessageKey } from '../i18n';

/**
 * Typed errors. The console API's error middleware turns them into the `{success, message, data}`
 * envelope (HTTP 200 for handled outcomes; 401/403/429 keep their codes, which clients act on).
 * The relay turns the same errors into the caller's wire format (OpenAI/Claude/Gemini).
 *
 * An error carries a catalogue message (`msg`: key + params), rendered in the caller's language
 * where the answer is shaped (`localize` in i18n). `message` is its English text, for logs.
 */
export class AppError extends Error {
  /** HTTP status the relay uses; the console API uses it only for 401/403/429. */
  readonly status: number;
  /** Machine-readable code (OpenAI `error.code` / `error.type` in relay answers). */
  readonly code: string;
  /** What to say, in any language. */
  readonly msg: Message;
  /** Extra facts for the console (the envelope's `data`), e.g. which re-verification methods apply. */
  data?: unknown;
  constructor(message: MessageKey | Message, status = 400, code = 'bad_request') {
    const m = toMessage(message);
    super(t('en', m));
    this.msg = m;
    this.status = status;
    this.code = code;
  }
}

/** Bad input or a rule that says no. Console: 200 success:false. Relay: 400. */
export class BadRequestError extends AppError {
  constructor(message: MessageKey | Message, code = 'invalid_request') {
    super(message, 400, code);
  }
}
export class UnauthorizedError extends AppError {
  constructor(message: MessageKey | Message = 'auth.not_logged_in', code = 'unauthorized') {
    super(message, 401, code);
  }
}
export class ForbiddenError extends AppError {
  constructor(message: MessageKey | Message = 'auth.forbidden', code = 'forbidden') {
    super(message, 403, code);
  }
}
export class NotFoundError extends AppError {
  constructor(message: MessageKey | Message = 'common.not_found', code = 'not_found') {
    super(message, 404, code);
  }
}
export class RateLimitError extends AppError {
  readonly retryAfterSeconds: number;
  constructor(message: MessageKey | Message = 'common.rate_limited', retryAfterSeconds = 60) {
    super(message, 429, 'rate_limit_exceeded');
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
