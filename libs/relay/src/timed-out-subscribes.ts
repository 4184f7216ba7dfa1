import { ancestorsOf } from './subscription-state.js';

/** How long a subscribe that timed out is remembered: past it, an upstream that still carries it out is not expected. */
export const TIMED_OUT_SUBSCRIBE_MEMORY_MS = 15 * 60_000;
/** How many such URIs are remembered per connection, and over all: the oldest are forgotten first. */
export const MAX_TIMED_OUT_SUBSCRIBES_PER_CONNECTION = 32;
export const MAX_TIMED_OUT_SUBSCRIBES = 256;

/**
 * The URIs whose resources/subscribe timed out on each connection, for a while: the upstream
 * may carry such a subscribe out after the unsubscribe sent behind it, and the updates it then
 * sends may be of sub-resources of that URI (a subscription to `a://x/` brings `a://x/y`).
 * Unsubscribing from the URI updated would end nothing upstream; the URI subscribed to is
 * the one to unsubscribe from, and only this memory can tell which it is.
 */
interface Remembered {
  connection: string;
  uri: string;
  /** When it is forgotten. */
  end: number;
}

export class TimedOutSubscribes {
  /** connection -> URI -> its entry. */
  private readonly byConnection = new Map<string, Map<string, Remembered>>();
  /** Every entry, in the order remembered: the order they end in, and the oldest first to go. */
  private readonly order = new Set<Remembered>();

  remember(connection: string, uri: string, now = Date.now()): void {
    this.expire(now);
    const uris = this.byConnection.get(connection);
    const again = uris?.get(uri);
    if (again) this.forget(again);
    else if (uris && uris.size >= MAX_TIMED_OUT_SUBSCRIBES_PER_CONNECTION) this.forget(uris.values().next().value!);
    if (this.order.size >= MAX_TIMED_OUT_SUBSCRIBES) this.forget(this.order.values().next().value!);
    const entry: Remembered = { connection, uri, end: now + TIMED_OUT_SUBSCRIBE_MEMORY_MS };
    let own = this.byConnection.get(connection);
    if (!own) this.byConnection.set(connection, (own = new Map()));
    own.set(uri, entry);
    this.order.add(entry);
  }

  /** The remembered URI that `uri` is, or is nearest under; undefined when none. */
  covering(connection: string, uri: string, now = Date.now()): string | undefined {
    this.expire(now);
    const uris = this.byConnection.get(connection);
    if (!uris) return undefined;
    return [uri, ...ancestorsOf(uri)].find((candidate) => uris.has(candidate));
  }

  /** The connection reconnected: its upstream holds none of them any more. */
  forgetConnection(connection: string): void {
    for (const entry of [...(this.byConnection.get(connection)?.values() ?? [])]) this.forget(entry);
  }

  private forget(entry: Remembered): void {
    this.order.delete(entry);
    const uris = this.byConnection.get(entry.connection)!;
    uris.delete(entry.uri);
    if (uris.size === 0) this.byConnection.delete(entry.connection);
  }

  private expire(now: number): void {
    for (const entry of this.order) {
      if (entry.end > now) break;
      this.forget(entry);
    }
  }
}
