import { createHash } from 'node:crypto';

/** How long after a stray update's unsubscribe another update of that URI is let pass without one. */
export const STRAY_UNSUBSCRIBE_INTERVAL_MS = 60_000;
/**
 * How many URIs of one connection may be in their interval at once: so at most this many
 * stray unsubscribes a minute to a connection, however many URIs its upstream sends updates
 * of. Per connection, so that one upstream flooding the gateway with updates of random URIs
 * does not use up what another's real strays need.
 */
export const MAX_STRAY_URIS_PER_CONNECTION = 256;
/**
 * How many URIs may be in their interval at once over every connection: a ceiling on memory,
 * since per-principal and per-session servers have a connection per principal or session.
 * Room for 32 connections at their own limit at once.
 */
export const MAX_STRAY_URIS = 8192;
/**
 * Longer URIs are not tracked (nor unsubscribed from): no host may send one (MAX_URI_CHARS of
 * @switchboard/core), so none can have been subscribed to, and each would be hashed whole.
 */
export const MAX_STRAY_URI_CHARS = 16 * 1024;

interface Interval {
  connection: string;
  end: number;
}

/**
 * Decides which `notifications/resources/updated` for a URI no host holds (a stray update)
 * get an unsubscribe sent upstream. Such an update means the upstream holds a subscription
 * the gateway does not: a subscribe it timed out on, cancelled and unsubscribed from that the
 * upstream carried out after all, after the unsubscribe. Bounded, since any upstream can send
 * updates of whatever URIs it likes: one unsubscribe per URI per interval, no more than
 * MAX_STRAY_URIS_PER_CONNECTION URIs of a connection in their interval at a time, and no
 * more than MAX_STRAY_URIS in all. `connection` names the upstream connection the update came
 * on; a URI is tracked by its hash, so the memory kept does not grow with the URIs' length.
 */
export class StrayUpdates {
  /** connection + URI hash -> its interval; in insertion order, which is the order they end in. */
  private readonly intervals = new Map<string, Interval>();
  /** connection -> how many of its URIs are in their interval. */
  private readonly perConnection = new Map<string, number>();
  /** The connections (undefined: all) refused at their limit since they reached it, for one warning each. */
  private readonly warned = new Set<string | undefined>();

  /** `onRefused` is told once of each limit reached: a connection's, or (connection undefined) the one over all. */
  constructor(private readonly onRefused: (connection: string | undefined, limit: number) => void = () => undefined) {}

  /** True when an unsubscribe for `uri` on `connection` should be sent now. */
  admit(connection: string, uri: string, now = Date.now()): boolean {
    this.expire(now);
    if (uri.length > MAX_STRAY_URI_CHARS) return false;
    const key = `${connection}\u0000${createHash('sha256').update(uri).digest('base64')}`;
    if (this.intervals.has(key)) return false;
    const count = this.perConnection.get(connection) ?? 0;
    if (count >= MAX_STRAY_URIS_PER_CONNECTION) return this.refuse(connection, MAX_STRAY_URIS_PER_CONNECTION);
    if (this.intervals.size >= MAX_STRAY_URIS) return this.refuse(undefined, MAX_STRAY_URIS);
    this.intervals.set(key, { connection, end: now + STRAY_UNSUBSCRIBE_INTERVAL_MS });
    this.perConnection.set(connection, count + 1);
    return true;
  }

  private refuse(connection: string | undefined, limit: number): false {
    if (!this.warned.has(connection)) {
      this.warned.add(connection);
      this.onRefused(connection, limit);
    }
    return false;
  }

  private expire(now: number): void {
    for (const [key, { connection, end }] of this.intervals) {
      if (end > now) break;
      this.intervals.delete(key);
      const left = this.perConnection.get(connection)! - 1;
      if (left > 0) this.perConnection.set(connection, left);
      else this.perConnection.delete(connection);
      // Below its limit again: the next time it reaches it is worth a warning of its own.
      this.warned.delete(connection);
    }
    if (this.intervals.size < MAX_STRAY_URIS) this.warned.delete(undefined);
  }
}
