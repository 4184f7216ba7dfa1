import type { Logger } from '@switchboard/observability';
import {
  callerName,
  cancelledError,
  ErrorCode,
  McpError,
  type CancelSignal,
  type JsonRpcNotification,
} from '@switchboard/core';
import { connectionKey, serverOfConnectionKey, type UpstreamConnection, type UpstreamRegistry } from '@switchboard/upstream';
import type { DownstreamSession, SessionDirectory } from './session.js';
import { ancestorsOf, keyOf, newSubscription, type Subscription, type Waiter } from './subscription-state.js';
import { SubscriptionSync } from './subscription-sync.js';
import { holds, SessionSubscriptions } from './session-subscriptions.js';
import { STRAY_UNSUBSCRIBE_INTERVAL_MS, StrayUpdates } from './stray-updates.js';
import { TimedOutSubscribes } from './timed-out-subscribes.js';
import { SHARED, type ConnectionOwners } from './connection-owners.js';

/**
 * Subscriptions one session may hold (or be getting) at once. The URIs are the host's to
 * choose (any under a resource template), each one an entry here and a subscription upstream,
 * and a session lasts as long as its host keeps it up (a stdio host, for weeks): without a
 * bound one session's 3,000 subscribes to item URIs were 3,000 of each, kept until it left.
 */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 1024;

/**
 * Resource subscriptions, reference-counted: one upstream subscription per (connection, URI)
 * however many hosts subscribed, and `notifications/resources/updated` delivered only to the
 * sessions that subscribed to that URI on that connection. On a per-principal server each
 * principal subscribes on their own connection and hears only its updates; on a per-session
 * server each session on its own.
 *
 * Per (connection, URI) one request at a time goes upstream, the next only after the
 * previous one's answer, and each brings the upstream to what the hosts want then
 * (SubscriptionSync): an upstream may handle two requests in flight in any order (two
 * POSTs over HTTP, a server that works on them concurrently), so an unsubscribe sent while
 * a subscribe is still out could take effect first and leave a subscription nobody holds,
 * or a subscribe be undone by an unsubscribe sent before it.
 */
export class SubscriptionManager {
  private readonly subs = new Map<string, Subscription>();
  /** The keys of `subs` each session holds or is getting. */
  private readonly bySession = new SessionSubscriptions((key) => this.subs.get(key));
  private readonly strays: StrayUpdates;
  private readonly timedOut = new TimedOutSubscribes();
  private readonly upstream: SubscriptionSync;

  constructor(
    registry: UpstreamRegistry,
    private readonly sessions: SessionDirectory,
    private readonly logger: Logger,
    /** Whose each connection is, the registry's and the isolated servers' pools' (the runtime's one). */
    private readonly owners: ConnectionOwners,
    /**
     * Whether a principal may hear of an update of `uri` (the upstream's own) on `server`:
     * the policy's `subscribe`. Asked per update, not only at subscribe: an update may be of
     * a sub-resource the policy denies, and a reload may have revoked the subscription.
     */
    private readonly mayHear: (principal: DownstreamSession['principal'], server: string, uri: string) => boolean = () => true,
  ) {
    this.upstream = new SubscriptionSync(this.subs, sessions, logger, this.owners, this.timedOut);
    this.strays = new StrayUpdates((connection, limit) =>
      logger.warn(
        { upstream: connection && serverOfConnectionKey(connection), limit, intervalMs: STRAY_UNSUBSCRIBE_INTERVAL_MS },
        connection === undefined
          ? 'resource updates of URIs no host holds: past the limit over all upstreams, no unsubscribe sent for more of them'
          : "resource updates of URIs no host holds: past the upstream connection's limit, no unsubscribe sent for more of them",
      ),
    );
    sessions.onClose((s) => this.dropSession(s.id));
    registry.addListener({
      stateChanged: (server, state) => {
        if (state === 'ready') this.resubscribe(server, SHARED);
      },
      notification: (server, n) => this.onNotification(server, SHARED, n),
    });
  }

  /** An owned connection (a principal's, a session's) (re)connected: renew what was subscribed there. */
  ownedConnectionReady(server: string, owner: string): void {
    this.resubscribe(server, owner);
  }

  /** A notification from an owned connection. */
  onNotification(server: string, owner: string, n: JsonRpcNotification): void {
    if (n.method !== 'notifications/resources/updated') return;
    const uri = String(n.params?.uri ?? '');
    if (!this.deliver(server, owner, uri, n.params)) this.unsubscribeStray(server, owner, uri);
  }

  /**
   * `connection` is the one the request was routed to: the shared one, the session's
   * principal's own on a per-principal server, or the session's own on a per-session one.
   * `signal` is the host's: its cancellation (or its session's end) answers the host at once
   * and leaves it holding nothing. The upstream's subscribe is not cancelled with it: it may
   * be another host's too, and only its answer tells when the upstream has done it, so that
   * an unsubscribe can follow it (SubscriptionSync).
   */
  subscribe(
    session: DownstreamSession,
    connection: UpstreamConnection,
    uri: string,
    publicUri: string,
    signal?: CancelSignal,
  ): Promise<void> {
    if (signal?.aborted) return Promise.reject(cancelledError());
    // Its session ended while the subscribe was on its way here: dropSession has run, and a
    // subscription held for it now would be kept (and held upstream) for nobody, for good.
    if (this.sessions.get(session.id) !== session) return Promise.reject(cancelledError());
    const owner = this.owners.ownerFor(connection);
    const key = keyOf(connection.name, owner, uri);
    let sub = this.subs.get(key);
    if (!(sub && holds(sub, session.id)) && this.bySession.reaches(session.id, MAX_SUBSCRIPTIONS_PER_SESSION)) {
      return Promise.reject(
        new McpError(ErrorCode.RateLimited, `Too many subscriptions: this session holds ${MAX_SUBSCRIPTIONS_PER_SESSION}; unsubscribe from some first`),
      );
    }
    this.bySession.add(session.id, key);
    if (!sub) {
      sub = newSubscription(connection, owner, uri);
      this.subs.set(key, sub);
    }
    sub.connection = connection;
    if (sub.upstream === 'held' && !sub.busy) {
      sub.sessions.set(session.id, publicUri);
      return Promise.resolve();
    }
    const held = sub;
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = held.waiters.indexOf(waiter);
        if (at >= 0) held.waiters.splice(at, 1);
        waiter.settle(cancelledError());
      };
      const waiter: Waiter = {
        session,
        publicUri,
        signal,
        settle: (err) => {
          signal?.removeEventListener('abort', onAbort);
          if (err === undefined) resolve();
          else reject(err);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      held.waiters.push(waiter);
      void this.upstream.sync(key, held);
    });
  }

  async unsubscribe(session: DownstreamSession, server: string, uri: string): Promise<void> {
    const key = [SHARED, callerName(session.principal), session.id]
      .map((owner) => keyOf(server, owner, uri))
      .find((k) => this.subs.get(k)?.sessions.has(session.id));
    if (key === undefined) return;
    const sub = this.subs.get(key)!;
    sub.sessions.delete(session.id);
    await this.upstream.release(key, sub);
  }

  /**
   * Ends the session's subscriptions made under `publicUri`, the URI it subscribed with,
   * without asking the catalog: its upstream may be down and its URIs gone from the lists.
   * True when there was one.
   */
  async unsubscribeByPublicUri(session: DownstreamSession, publicUri: string): Promise<boolean> {
    const released: Promise<void>[] = [];
    for (const key of this.bySession.keysOf(session.id)) {
      const sub = this.subs.get(key);
      if (sub?.sessions.get(session.id) !== publicUri) continue;
      sub.sessions.delete(session.id);
      released.push(this.upstream.release(key, sub));
    }
    await Promise.all(released);
    return released.length > 0;
  }

  /** How many subscriptions the session holds or is getting. */
  heldBy(sessionId: string): number {
    return this.bySession.count(sessionId);
  }

  /** For tests: how many sessions the per-session index keeps keys for. */
  get indexedSessions(): number {
    return this.bySession.sessionCount;
  }

  /** For status pages and tests: how many upstream subscriptions hosts hold. */
  get upstreamCount(): number {
    let held = 0;
    for (const sub of this.subs.values()) if (sub.sessions.size > 0) held++;
    return held;
  }

  private dropSession(sessionId: string): void {
    for (const key of this.bySession.drop(sessionId)) {
      const sub = this.subs.get(key);
      if (!sub) continue;
      const leaving = sub.waiters.filter((w) => w.session.id === sessionId);
      if (leaving.length > 0) sub.waiters = sub.waiters.filter((w) => w.session.id !== sessionId);
      for (const waiter of leaving) waiter.settle(cancelledError());
      if (sub.sessions.delete(sessionId) || leaving.length > 0) void this.upstream.sync(key, sub);
    }
  }

  /**
   * To the sessions subscribed to `uri`, and to those subscribed to a resource it is a
   * sub-resource of: the spec lets a server report an update of a sub-resource of the URI
   * that was subscribed to. Each session hears it once, by its most specific subscription,
   * under the URI it would know it by: its subscribed URI with the rest appended (a gateway
   * URI carries the upstream's one verbatim, so the same suffix fits it too). Only to a
   * session whose principal may subscribe to the URI updated (mayHear), as the policy is now.
   * False when the gateway has no subscription it could be of, held or in the making.
   */
  private deliver(server: string, owner: string, uri: string, params: Record<string, unknown> | undefined): boolean {
    const told = new Set<string>();
    let known = false;
    for (const subscribed of [uri, ...ancestorsOf(uri)]) {
      const sub = this.subs.get(keyOf(server, owner, subscribed));
      if (!sub) continue;
      known = true;
      const rest = uri.slice(subscribed.length);
      for (const [sessionId, publicUri] of sub.sessions) {
        const session = this.sessions.get(sessionId);
        if (!session || told.has(sessionId)) continue;
        told.add(sessionId);
        // Judged by the URI updated, not the one subscribed: a URI the principal may not
        // subscribe to must not reach it by way of a parent's subscription.
        if (!this.mayHear(session.principal, server, uri)) continue;
        void session
          .send({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { ...params, uri: publicUri + rest } })
          .catch(() => undefined);
      }
    }
    return known;
  }

  /**
   * An update of a URI the gateway holds no subscription for, and has no subscribe or
   * unsubscribe in flight for: the upstream holds one nobody does (a subscribe that timed out
   * and took effect after the unsubscribe that followed it), and, told nothing, would keep it
   * and its updates for as long as the connection lasts. It is unsubscribed from, within the
   * bounds of StrayUpdates, as a subscription of unknown state with no holder: through sync,
   * so that a host's subscribe meanwhile is sent only after the unsubscribe's answer. An
   * update of a URI under one whose subscribe timed out is that subscription's: the URI
   * subscribed to is unsubscribed from, not the one updated (which would end nothing).
   */
  private unsubscribeStray(server: string, owner: string, updated: string): void {
    const from = connectionKey(server, owner);
    // Under no subscription the gateway has (deliver): neither is the one it covers.
    const uri = this.timedOut.covering(from, updated) ?? updated;
    const key = keyOf(server, owner, uri);
    const connection = this.owners.existing(server, owner);
    if (!connection?.isAvailable || !this.strays.admit(from, uri)) return;
    this.logger.debug({ upstream: server, uri, updated }, 'resource update of a URI no host holds: unsubscribing upstream');
    const sub = newSubscription(connection, owner, uri);
    sub.upstream = 'unknown';
    this.subs.set(key, sub);
    void this.upstream.sync(key, sub);
  }

  /** A reconnected upstream has forgotten our subscriptions; renew them. */
  private resubscribe(server: string, owner: string): void {
    this.timedOut.forgetConnection(connectionKey(server, owner));
    for (const [key, sub] of this.subs) {
      if (sub.server !== server || sub.owner !== owner) continue;
      sub.epoch++;
      sub.upstream = 'none';
      sub.stalled = false;
      void this.upstream.sync(key, sub);
    }
  }
}
