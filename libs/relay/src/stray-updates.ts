/** How long after a stray update's unsubscribe another update of that URI is let pass without one. */
export const STRAY_UNSUBSCRIBE_INTERVAL_MS = 60_000;
/**
 * How many URIs may be in their interval at once, over every upstream: so at most this many
 * stray unsubscribes a minute, however many URIs an upstream sends updates of.
 */
export const MAX_STRAY_URIS = 256;
/**
 * Longer URIs are not tracked (nor unsubscribed from): what is tracked stays within
 * MAX_STRAY_URIS times this, where a message may be 64 Mi characters.
 */
export const MAX_STRAY_URI_CHARS = 16 * 1024;

/**
 * Decides which `notifications/resources/updated` for a URI no host holds (a stray update)
 * get an unsubscribe sent upstream. Such an update means the upstream holds a subscription
 * the gateway does not: a subscribe it timed out on, cancelled and unsubscribed from that the
 * upstream carried out after all, after the unsubscribe. Bounded, since any upstream can send
 * updates of whatever URIs it likes: one unsubscribe per URI per interval, and no more than
 * MAX_STRAY_URIS URIs in their interval at a time. `key` names the URI on its connection.
 */
export class StrayUpdates {
  /** key -> when its interval ends; in insertion order, which is the order they end in. */
  private readonly until = new Map<string, number>();
  /** Stray URIs refused at the cap this interval, for the one warning about them. */
  private refused = 0;

  constructor(private readonly onRefused: (count: number) => void = () => undefined) {}

  /** True when an unsubscribe for `key` should be sent now. */
  admit(key: string, uri: string, now = Date.now()): boolean {
    this.expire(now);
    if (uri.length > MAX_STRAY_URI_CHARS || this.until.has(key)) return false;
    if (this.until.size >= MAX_STRAY_URIS) {
      if (this.refused++ === 0) this.onRefused(MAX_STRAY_URIS);
      return false;
    }
    this.until.set(key, now + STRAY_UNSUBSCRIBE_INTERVAL_MS);
    return true;
  }

  private expire(now: number): void {
    for (const [key, end] of this.until) {
      if (end > now) break;
      this.until.delete(key);
    }
    if (this.until.size < MAX_STRAY_URIS) this.refused = 0;
  }
}
