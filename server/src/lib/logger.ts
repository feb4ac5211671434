import pino from 'pino';

export type Logger = pino.Logger;

/** Never log these, whatever a caller passes in. */
const REDACT = [
  'password',
  '*.password',
  'key',
  '*.key',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  '*.access_token',
  '*.secret',
  '*.webhook_secret',
];

export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' } });
}
