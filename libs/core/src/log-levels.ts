/** MCP logging levels (RFC 5424 order), least to most severe. */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const isLogLevel = (v: unknown): v is LogLevel =>
  typeof v === 'string' && (LOG_LEVELS as readonly string[]).includes(v);

/** True when a message at `level` passes a threshold of `min`. */
export const passesLevel = (level: LogLevel, min: LogLevel): boolean =>
  LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(min);
