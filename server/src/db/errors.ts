import { AppError } from '../lib/errors';

/**
 * Database failures that are not the caller's fault and may pass: a connection lost or refused,
 * a statement or lock timeout, the server shutting down or out of connections, a pool that gave
 * no connection in time. The relay answers them 503 in its caller's format and the console API
 * with its envelope, instead of a 500 (docs/security.md, "The database path").
 */
export class DatabaseUnavailableError extends AppError {
  constructor(cause: unknown) {
    super('db.unavailable', 503, 'database_unavailable');
    this.cause = cause;
  }
  /** Seconds a client should wait before trying again. */
  readonly retryAfterSeconds = 2;
}

/** SQLSTATE classes and codes of passing failures (PostgreSQL). */
const PG_PASSING_CLASSES = ['08', '53', '57'];
const PG_PASSING_CODES = new Set(['55P03', '40P01', '40001']);
/** Socket errors of a database connection. */
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** Whether `err` is a passing database failure (see DatabaseUnavailableError). */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  if (err instanceof DatabaseUnavailableError) return true;
  const e = err as { code?: unknown; name?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (code.length === 5 && (PG_PASSING_CLASSES.includes(code.slice(0, 2)) || PG_PASSING_CODES.has(code))) return true;
  if (NET_CODES.has(code) || code === 'SQLITE_BUSY') return true;
  if (e.name === 'KnexTimeoutError') return true;
  return typeof e.message === 'string' && isLostConnectionMessage(e.message);
}

/** node-postgres' own words for a connection that died or was never usable. */
export function isLostConnectionMessage(message: string): boolean {
  return /Connection terminated|not queryable|Connection ended unexpectedly/i.test(message);
}
