import { pino, type Logger } from 'pino';
import { formatLogLine } from './text-log-format.js';

export type { Logger } from 'pino';

export type LogLevelName = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

/** `text` for a person, `json` for a log shipper; `auto` is text on a terminal, JSON elsewhere. */
export type LogFormat = 'auto' | 'json' | 'text';

/**
 * The daemon's logger. It always writes to stderr: in `switchboard stdio` stdout carries the
 * MCP protocol, and one rule for both modes keeps it simple. Secrets never reach it: header
 * and env values are redacted by path. As text (text-log-format.ts) when the format says so,
 * or with `auto` when stderr is a terminal; JSON lines otherwise (a service's journal, a
 * host's log file, a pipe to a shipper).
 */
export function createLogger(level: LogLevelName = 'info', format: LogFormat = 'json'): Logger {
  const options = {
    level,
    base: undefined,
    redact: {
      paths: ['headers.authorization', 'headers.Authorization', '*.headers.*', 'env.*', '*.env.*'],
      censor: '[redacted]',
    },
  };
  const terminal = process.stderr.isTTY === true;
  if (format === 'text' || (format === 'auto' && terminal)) {
    const color = terminal && !process.env.NO_COLOR;
    // stderr is written synchronously on a terminal, a file and (on Linux) a pipe, so an
    // entry logged just before the process exits is not lost.
    return pino(options, { write: (line: string) => void process.stderr.write(formatLogLine(line, { color })) });
  }
  return pino(options, pino.destination({ dest: 2, sync: false }));
}

/** A logger that discards everything, for unit tests of classes that require one. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
