import { AppError } from '../lib/errors';

/**
 * An error answered to a relay client. `type` and `code` land in the OpenAI error object
 * (`{error:{message,type,code}}`); other formats map them their own way.
 */
export class RelayError extends AppError {
  readonly type: string;
  constructor(status: number, message: string, code: string, type?: string) {
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
  constructor(
    /** Upstream HTTP status; 0 for network failures and timeouts. */
    readonly status: number,
    message: string,
    /** Raw upstream body (for auto-disable keyword matching); never shown verbatim beyond `message`. */
    readonly body = '',
    readonly upstreamCode = '',
  ) {
    super(message);
  }

  /** 5xx, 429, 401–407, network errors and timeouts are retried on another channel; 400 is not. */
  get retryable(): boolean {
    const s = this.status;
    return s === 0 || s === 429 || (s >= 401 && s <= 407) || s >= 500 || s === 408;
  }
}

export const errNoKey = () => new RelayError(401, '未提供令牌', 'invalid_api_key');
export const errBadKey = () => new RelayError(401, '无效的令牌', 'invalid_api_key');
