import type { Logger } from '@switchboard/observability';

/** Log messages (notifications/message) of one upstream connection relayed a second, at most. */
export const MAX_LOG_MESSAGES_PER_SECOND = 100;
const WINDOW_MS = 1000;

/**
 * Bounds the log messages one upstream connection has relayed to hosts. Each one goes to
 * every session that wants its level: an upstream sending thousands a second would flood
 * every host (and spend the gateway's CPU on it), where hosts show a person a few lines at
 * most. What passes the bound in a second is counted, and the count logged once the second
 * is over, as stderr lines are (stdio-transport.ts).
 */
export class LogMessageBudget {
  private windowStart = 0;
  private relayed = 0;
  private skipped = 0;
  private report?: NodeJS.Timeout;

  constructor(private readonly log: Logger) {}

  /** True when one more message may be relayed now. */
  take(): boolean {
    const now = Date.now();
    if (now - this.windowStart >= WINDOW_MS) {
      this.windowStart = now;
      this.relayed = 0;
    }
    if (this.relayed < MAX_LOG_MESSAGES_PER_SECOND) {
      this.relayed++;
      return true;
    }
    if (this.skipped++ === 0) {
      this.report = setTimeout(() => this.reportSkipped(), WINDOW_MS);
      this.report.unref();
    }
    return false;
  }

  /** A connection that ends still says what it left out. */
  stop(): void {
    clearTimeout(this.report);
    this.reportSkipped();
  }

  private reportSkipped(): void {
    this.report = undefined;
    if (this.skipped === 0) return;
    this.log.warn(
      { skipped: this.skipped },
      `upstream log messages: ${this.skipped} not relayed to hosts (over ${MAX_LOG_MESSAGES_PER_SECOND} a second)`,
    );
    this.skipped = 0;
  }
}
