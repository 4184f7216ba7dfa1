import type { Logger } from '@switchboard/observability';

/** Log messages (notifications/message) of one upstream connection relayed a second, at most. */
export const MAX_LOG_MESSAGES_PER_SECOND = 100;
/**
 * Stray stdout lines of one stdio upstream logged a second, at most (as its stderr lines), and
 * events or bodies of one Streamable HTTP upstream that are no messages.
 */
export const MAX_STRAY_LINES_PER_SECOND = 100;
const WINDOW_MS = 1000;

/**
 * Bounds how many of something an upstream sends are passed on a second: its log messages
 * relayed to hosts (each goes to every session that wants its level: thousands a second
 * would flood every host), the lines it writes to stdout that are no messages (each a line
 * of the daemon's log, redacted first: 100,000 a second kept the daemon too busy to answer
 * other upstreams' hosts). What passes the bound in a second is counted, and the count
 * logged once the second is over, as stderr lines are (stdio-transport.ts).
 */
export class LogBudget {
  private windowStart = 0;
  private passed = 0;
  private skipped = 0;
  private report?: NodeJS.Timeout;

  /** @param skippedText what the warning says of `count` left out. */
  constructor(
    private readonly log: Logger,
    private readonly perSecond: number,
    private readonly skippedText: (count: number) => string,
  ) {}

  /** True when one more may be passed on now. */
  take(): boolean {
    const now = Date.now();
    if (now - this.windowStart >= WINDOW_MS) {
      this.windowStart = now;
      this.passed = 0;
    }
    if (this.passed < this.perSecond) {
      this.passed++;
      return true;
    }
    if (this.skipped++ === 0) {
      this.report = setTimeout(() => this.reportSkipped(), WINDOW_MS);
      this.report.unref();
    }
    return false;
  }

  /** An upstream that goes away still has what it left out said. */
  stop(): void {
    clearTimeout(this.report);
    this.reportSkipped();
  }

  private reportSkipped(): void {
    this.report = undefined;
    if (this.skipped === 0) return;
    this.log.warn({ skipped: this.skipped }, this.skippedText(this.skipped));
    this.skipped = 0;
  }
}

/** The budget of one upstream connection's log messages relayed to hosts. */
export function logMessageBudget(log: Logger): LogBudget {
  return new LogBudget(
    log,
    MAX_LOG_MESSAGES_PER_SECOND,
    (count) => `upstream log messages: ${count} not relayed to hosts (over ${MAX_LOG_MESSAGES_PER_SECOND} a second)`,
  );
}
