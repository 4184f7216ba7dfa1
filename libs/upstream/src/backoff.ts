/** Exponential backoff with ±20% jitter, so many upstreams that failed together spread out. */
export function backoffDelay(attempt: number, baseMs = 250, maxMs = 30_000, random = Math.random): number {
  const raw = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 20));
  return Math.round(raw * (0.8 + 0.4 * random()));
}

/**
 * How long a connection must stay up before its earlier failures are forgotten: as long as
 * the longest backoff delay. A handshake alone proves little: an upstream that crashes
 * 300 ms after it (or on its first tools/list) must keep backing off, or it is restarted
 * every few hundred milliseconds, and every host hears each flap as list_changed.
 */
export const STAYED_UP_MS = 30_000;

/**
 * The reconnect timing of one connection: how many attempts in a row have failed (a
 * connection that is lost before it stayed up STAYED_UP_MS counts as one), and the timer
 * of the next.
 */
export class RetrySchedule {
  private failed = 0;
  private retryTimer?: NodeJS.Timeout;
  private stayedUpTimer?: NodeJS.Timeout;

  constructor(private readonly stayedUpMs = STAYED_UP_MS) {}

  /** Failed attempts (and short-lived connections) since the connection last stayed up. */
  get attempts(): number {
    return this.failed;
  }

  /** Runs `retry` after the next delay, which grows with every failure in a row. */
  schedule(retry: () => void): void {
    this.cancel();
    this.retryTimer = setTimeout(retry, backoffDelay(this.failed++));
    this.retryTimer.unref();
  }

  /** Connected: the failures are forgotten once the connection has stayed up long enough. */
  connected(): void {
    this.cancel();
    this.stayedUpTimer = setTimeout(() => (this.failed = 0), this.stayedUpMs);
    this.stayedUpTimer.unref();
  }

  /** No retry pending, and a connection that ends now has not stayed up. */
  cancel(): void {
    clearTimeout(this.retryTimer);
    clearTimeout(this.stayedUpTimer);
  }
}

export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
