/** A list's list_changed sent to hosts in a burst, at once, before they are spaced out. */
export const LIST_CHANGED_BURST = 10;
/** Once a burst is spent, the least time between two list_changed of one list. */
export const LIST_CHANGED_EVERY_MS = 1000;

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date. */
  at: number;
  /** A send planned for when a token is back: it carries every change made until then. */
  timer?: NodeJS.Timeout;
}

/**
 * Spaces out the list_changed notifications of each list, with a token bucket: changes as
 * they come while the burst lasts (a reload, an upstream coming up: a few changes in a row,
 * each announced at once), then one a LIST_CHANGED_EVERY_MS, the changes in between sent as
 * one. Every host that hears one lists again, the whole merged catalog: an upstream whose
 * list changes at every read, sending list_changed every few milliseconds, would otherwise
 * have every host re-list hundreds of times a second. No change goes unannounced: a change
 * held back is followed by a notification once a token is back. A host's
 * roots/list_changed are spaced out the same way on their way upstream (GatewayDispatcher).
 */
export class ListChangeThrottle {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly send: (method: string) => void,
    private readonly everyMs = LIST_CHANGED_EVERY_MS,
    private readonly burst = LIST_CHANGED_BURST,
  ) {}

  changed(method: string): void {
    const now = Date.now();
    let bucket = this.buckets.get(method);
    if (!bucket) this.buckets.set(method, (bucket = { tokens: this.burst, at: now }));
    bucket.tokens = Math.min(this.burst, bucket.tokens + (now - bucket.at) / this.everyMs);
    bucket.at = now;
    if (bucket.timer) return;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      this.send(method);
      return;
    }
    const planned = bucket;
    planned.timer = setTimeout(() => {
      planned.timer = undefined;
      this.changed(method);
    }, Math.ceil((1 - planned.tokens) * this.everyMs));
    // A planned announcement does not keep a stopping daemon alive.
    planned.timer.unref();
  }
}
