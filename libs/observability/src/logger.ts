import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

export type LogLevelName = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

/**
 * The daemon's logger. It always writes to stderr: in `switchboard stdio` stdout carries the
 * MCP protocol, and one rule for both modes keeps it simple. Secrets never reach it: header
 * and env values are redacted by path.
 */
export function createLogger(level: LogLevelName = 'info'): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: ['headers.authorization', 'headers.Authorization', '*.headers.*', 'env.*', '*.env.*'],
        censor: '[redacted]',
      },
    },
    pino.destination({ dest: 2, sync: false }),
  );
}

/** A logger that discards everything, for unit tests of classes that require one. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
