import type { Subscription } from './subscription-state.js';

/** Whether the session holds the subscription, or waits to. */
export function holds(sub: Subscription, sessionId: string): boolean {
  return sub.sessions.has(sessionId) || sub.waiters.some((w) => w.session.id === sessionId);
}

/**
 * The keys of the subscriptions each live session holds or is getting, so that what is done
 * for one session (its count against the bound, an unsubscribe by its URI, its end) looks at
 * its own keys, not at every subscription of every session: a scan of all made each of these
 * cost all sessions' subscriptions, and filling or closing many sessions quadratic.
 *
 * A key is added before the session joins the subscription (as holder or waiter), so every
 * key a session holds is here; keys it no longer holds (unsubscribed, cancelled, failed) stay
 * until counted, which happens when the set reaches the bound (reaches), so it stays about
 * that size. The manager adds keys only for a session still open, and drops the
 * session's set when it ends.
 */
export class SessionSubscriptions {
  private readonly bySession = new Map<string, Set<string>>();

  constructor(private readonly subscriptionAt: (key: string) => Subscription | undefined) {}

  add(sessionId: string, key: string): void {
    let keys = this.bySession.get(sessionId);
    if (!keys) this.bySession.set(sessionId, (keys = new Set()));
    keys.add(key);
  }

  /** The session's keys, some perhaps no longer held: a copy, safe to walk while releasing. */
  keysOf(sessionId: string): string[] {
    return [...(this.bySession.get(sessionId) ?? [])];
  }

  /**
   * Whether the session holds or is getting `bound` subscriptions. Its keys are counted only
   * when there are that many: fewer keys than the bound are fewer subscriptions, as every one
   * held has its key, so a subscribe costs a walk of them only near the bound.
   */
  reaches(sessionId: string, bound: number): boolean {
    return (this.bySession.get(sessionId)?.size ?? 0) >= bound && this.count(sessionId) >= bound;
  }

  /** How many subscriptions the session holds or is getting; lets go of the keys it does not. */
  count(sessionId: string): number {
    const keys = this.bySession.get(sessionId);
    if (!keys) return 0;
    for (const key of keys) {
      const sub = this.subscriptionAt(key);
      if (!sub || !holds(sub, sessionId)) keys.delete(key);
    }
    if (keys.size === 0) this.bySession.delete(sessionId);
    return keys.size;
  }

  /** Forgets the session, returning the keys it had. */
  drop(sessionId: string): string[] {
    const keys = this.keysOf(sessionId);
    this.bySession.delete(sessionId);
    return keys;
  }

  /** For tests: how many sessions have keys here. */
  get sessionCount(): number {
    return this.bySession.size;
  }
}
