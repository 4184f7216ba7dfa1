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
 * How many URIs of each connection may be in their interval whatever the others do: its own
 * share, which MAX_STRAY_URIS does not count. Without it, 32 connections (per-session or
 * per-principal ones, of one server or several) flooding the gateway at their own limit took
 * the whole of MAX_STRAY_URIS, and a quiet upstream's one real stray got no unsubscribe for
 * as long as they kept it up. A connection's own share costs little next to the connection.
 */
export const STRAY_URIS_OWN_SHARE = 32;
/**
 * How many URIs may be in their interval at once over every connection, past each one's own
 * share: a ceiling on memory (with STRAY_URIS_OWN_SHARE a connection), since per-principal
 * and per-session servers have a connection per principal or session.
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
 * more than MAX_STRAY_URIS in all past each connection's STRAY_URIS_OWN_SHARE. `connection`
 * names the upstream connection the update came on; a URI is tracked by its hash, so the
 * memory kept does not grow with the URIs' length.
 */
export class StrayUpdates {
  /** connection + URI hash -> its interval; in insertion order, which is the order they end in. */
  private readonly intervals = new Map<string, Interval>();
  /** connection -> how many of its URIs are in their interval. */
  private readonly perConnection = new Map<string, number>();
  /** How many URIs are in their interval past their connection's own share (what MAX_STRAY_URIS bounds). */
  private pooled = 0;
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
    const ownShare = count < STRAY_URIS_OWN_SHARE;
    if (!ownShare && this.pooled >= MAX_STRAY_URIS) return this.refuse(undefined, MAX_STRAY_URIS);
    if (!ownShare) this.pooled += 1;
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
      // Which of a connection's URIs count as past its share does not matter, only how many.
      if (left >= STRAY_URIS_OWN_SHARE) this.pooled -= 1;
      if (left > 0) this.perConnection.set(connection, left);
      else this.perConnection.delete(connection);
      // Below its limit again: the next time it reaches it is worth a warning of its own.
      this.warned.delete(connection);
    }
    if (this.pooled < MAX_STRAY_URIS) this.warned.delete(undefined);
  }
}
