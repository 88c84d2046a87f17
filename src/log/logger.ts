import { type Logger, pino } from 'pino';
import type { LogLevel } from '../config/config.ts';

export type { Logger };

/** Structured JSON logs on stdout. Secrets are redacted wherever they appear in a logged object. */
export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
    base: { service: 'tributary' },
    redact: {
      paths: [
        'password',
        '*.password',
        'headers.authorization',
        '*.headers.authorization',
        'secret_access_key',
        '*.secret_access_key',
      ],
      censor: '[redacted]',
    },
  });
}

/** A logger that writes nothing, for tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
