/**
 * Typed errors. The console API's error middleware turns them into the `{success, message, data}`
 * envelope (HTTP 200 for handled outcomes; 401/403/429 keep their codes as the contract says).
 * The relay turns the same errors into the caller's wire format (OpenAI/Claude/Gemini).
 */
export class AppError extends Error {
  /** HTTP status the relay uses; the console API uses it only for 401/403/429. */
  readonly status: number;
  /** Machine-readable code (OpenAI `error.code` / `error.type` in relay answers). */
  readonly code: string;
  /** Extra facts for the console (the envelope's `data`), e.g. which re-verification methods apply. */
  data?: unknown;
  constructor(message: string, status = 400, code = 'bad_request') {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Bad input or a rule that says no. Console: 200 success:false. Relay: 400. */
export class BadRequestError extends AppError {
  constructor(message: string, code = 'invalid_request') {
    super(message, 400, code);
  }
}
export class UnauthorizedError extends AppError {
  constructor(message = '未登录或登录已过期，请重新登录', code = 'unauthorized') {
    super(message, 401, code);
  }
}
export class ForbiddenError extends AppError {
  constructor(message = '权限不足', code = 'forbidden') {
    super(message, 403, code);
  }
}
export class NotFoundError extends AppError {
  constructor(message = '记录不存在', code = 'not_found') {
    super(message, 404, code);
  }
}
export class RateLimitError extends AppError {
  readonly retryAfterSeconds: number;
  constructor(message = '请求次数过多，请稍后再试', retryAfterSeconds = 60) {
    super(message, 429, 'rate_limit_exceeded');
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
