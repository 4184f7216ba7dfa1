import type { Logger } from '@switchboard/observability';
import { cancelledError, type PeerRequestOptions } from '@switchboard/core';
import { connectionKey, type UpstreamConnection } from '@switchboard/upstream';
import type { ConnectionOwners } from './connection-owners.js';
import type { SessionDirectory } from './session.js';
import { mayHaveSubscribed, type Subscription } from './subscription-state.js';
import type { TimedOutSubscribes } from './timed-out-subscribes.js';

/**
 * Takes each (connection, URI) subscription upstream to what its hosts want, one request at
 * a time (SubscriptionManager says why): the requests, their answers, the hosts waiting on
 * them, and the entry's end once nobody holds or wants it. SubscriptionManager decides who
 * holds what; this only carries it out.
 */
export class SubscriptionSync {
  constructor(
    /** SubscriptionManager's subscriptions by key: an entry idle upstream with no holder leaves it. */
    private readonly subs: Map<string, Subscription>,
    private readonly sessions: Pick<SessionDirectory, 'get'>,
    private readonly logger: Logger,
    private readonly owners: Pick<ConnectionOwners, 'existing'>,
    /** Subscribes whose answer never came: the upstream may hold them (stray-update handling). */
    private readonly timedOut: TimedOutSubscribes,
  ) {}

  /**
   * Brings the upstream to what the hosts want (held when a session holds it or waits for
   * it), one request at a time, deciding each next one only after the previous answer: so
   * however hosts come and go meanwhile, the upstream sees the requests in the order the
   * gateway sent them and ends in the state the gateway last wanted. Resolves once it is
   * there (or gave up: a failure is the waiting hosts' answer, or logged).
   */
  sync(key: string, sub: Subscription): Promise<void> {
    if (sub.syncing) return sub.syncing;
    const done = this.run(key, sub);
    // A run with nothing to do has ended already, and must not be taken for one under way.
    if (sub.busy) sub.syncing = done;
    return done;
  }

  /**
   * Resolves once the upstream has answered the unsubscribe a host's unsubscribe leads to (or
   * none was needed): not after the subscribes other hosts' requests queued behind it.
   */
  release(key: string, sub: Subscription): Promise<void> {
    return new Promise((resolve) => {
      sub.releases.push(resolve);
      void this.sync(key, sub);
    });
  }

  private async run(key: string, sub: Subscription): Promise<void> {
    sub.busy = true;
    try {
      for (let request = this.step(sub); request; request = this.step(sub)) await request;
    } catch (err) {
      this.logger.warn({ upstream: sub.server, uri: sub.uri, err: String(err) }, 'subscription sync failed');
      for (const waiter of sub.waiters.splice(0)) waiter.settle(err);
    }
    // In the same turn as the last look at what is wanted (step): a host that comes after it starts a new run.
    sub.busy = false;
    sub.syncing = undefined;
    for (const released of sub.releases.splice(0)) released();
    const idle = sub.sessions.size === 0 && sub.waiters.length === 0 && sub.upstream === 'none';
    if (idle && this.subs.get(key) === sub) this.subs.delete(key);
  }

  /**
   * Looks at what is wanted now and sends the one request that brings the upstream nearer
   * it, to be awaited before the next look; undefined when there is nothing to send.
   */
  private step(sub: Subscription): Promise<void> | undefined {
    // Once held, a host that joined meanwhile holds it too, whichever request it waited behind.
    if (sub.upstream === 'held' && sub.waiters.length > 0) this.admit(sub);
    const wanted = sub.sessions.size > 0 || sub.waiters.length > 0;
    if (wanted ? sub.upstream === 'held' : sub.upstream === 'none') return undefined;
    // A renewal the upstream refused is tried again by the next host's subscribe or reconnect, not at once.
    if (wanted && sub.stalled && sub.waiters.length === 0) return undefined;
    const connection = this.connectionOf(sub);
    const epoch = sub.epoch;
    if (!wanted) {
      return this.unsubscribeUpstream(connection, sub.uri).then(() => {
        if (epoch === sub.epoch) sub.upstream = 'none';
        for (const released of sub.releases.splice(0)) released();
      });
    }
    return connection.request('resources/subscribe', { uri: sub.uri }, requestOptions(connection)).then(
      () => {
        // Its connection reconnected meanwhile: what it held is gone, and the next step subscribes anew.
        if (epoch !== sub.epoch) return;
        sub.upstream = 'held';
        sub.stalled = false;
      },
      (err: unknown) => {
        if (epoch !== sub.epoch) return;
        const failure = err ?? new Error('subscribe failed');
        sub.upstream = mayHaveSubscribed(failure) ? 'unknown' : 'none';
        if (sub.upstream === 'unknown') this.timedOut.remember(connectionKey(sub.server, sub.owner), sub.uri);
        for (const waiter of sub.waiters.splice(0)) waiter.settle(failure);
        if (sub.sessions.size === 0) return;
        // Held by hosts already (a renewal after a reconnect).
        sub.stalled = true;
        this.logger.warn({ upstream: sub.server, uri: sub.uri, err: String(failure) }, 'could not renew a subscription');
      },
    );
  }

  /** The waiting hosts that still want it now hold it; those that left are told they do not. */
  private admit(sub: Subscription): void {
    for (const waiter of sub.waiters.splice(0)) {
      const { session, signal } = waiter;
      if (signal?.aborted || this.sessions.get(session.id) !== session) {
        waiter.settle(cancelledError());
        continue;
      }
      sub.sessions.set(session.id, waiter.publicUri);
      waiter.settle();
    }
  }

  /**
   * With the request timeouts, so a hung upstream neither keeps a host's unsubscribe (or a
   * session's teardown) waiting nor keeps the request pending for ever. Not with the host's
   * signal: the gateway has let go of the subscription already, and an unsubscribe cancelled
   * upstream would leave the upstream holding it for nobody. A failure is only logged: the
   * host's subscription is ended either way.
   */
  private async unsubscribeUpstream(connection: UpstreamConnection, uri: string): Promise<void> {
    if (!connection.isAvailable) return;
    await connection.request('resources/unsubscribe', { uri }, requestOptions(connection)).catch((err) => {
      this.logger.debug({ upstream: connection.name, uri, err: String(err) }, 'upstream unsubscribe failed');
    });
  }

  /** The connection the subscription is on now: its owner's open one, or the one it was made on. */
  private connectionOf(sub: Subscription): UpstreamConnection {
    return this.owners.existing(sub.server, sub.owner) ?? sub.connection;
  }
}

/** The server's timeouts, as forwarded requests have them (forwarder.ts). */
function requestOptions(connection: UpstreamConnection): PeerRequestOptions {
  const { requestMs, maxRequestMs } = connection.config.timeouts;
  return { timeoutMs: requestMs, maxTotalMs: maxRequestMs };
}
