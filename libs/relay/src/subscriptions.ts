import type { Logger } from '@switchboard/observability';
import {
  ErrorCode,
  McpError,
  callerName,
  cancelledError,
  type CancelSignal,
  type JsonRpcNotification,
  type PeerRequestOptions,
} from '@switchboard/core';
import type { OwnedConnections, UpstreamConnection, UpstreamRegistry } from '@switchboard/upstream';
import type { DownstreamSession, SessionDirectory } from './session.js';

interface Subscription {
  server: string;
  /**
   * Whose connection holds it: the principal (per-principal servers), the session id
   * (per-session servers), or '' on a shared one. A server has one isolation, so the two
   * kinds of owner never meet under one server.
   */
  owner: string;
  uri: string;
  /** session id -> the URI as that session knows it (the public form). */
  sessions: Map<string, string>;
}

const SHARED = '';
const keyOf = (server: string, owner: string, uri: string) => `${server}\u0000${owner}\u0000${uri}`;

/**
 * Resource subscriptions, reference-counted: one upstream subscription per (connection, URI)
 * however many hosts subscribed, and `notifications/resources/updated` delivered only to the
 * sessions that subscribed to that URI on that connection. On a per-principal server each
 * principal subscribes on their own connection and hears only its updates; on a per-session
 * server each session on its own.
 */
export class SubscriptionManager {
  private readonly subs = new Map<string, Subscription>();
  /** key -> how many upstream subscribes for it are in flight (not yet held by anyone). */
  private readonly inflight = new Map<string, number>();

  constructor(
    private readonly registry: UpstreamRegistry,
    private readonly sessions: SessionDirectory,
    private readonly logger: Logger,
    /** The pools of isolated servers' connections (per-principal, per-session). */
    private readonly owned: readonly OwnedConnections[] = [],
  ) {
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
    if (n.method === 'notifications/resources/updated') this.deliver(server, owner, String(n.params?.uri ?? ''), n.params);
  }

  /**
   * `connection` is the one the request was routed to: the shared one, the session's
   * principal's own on a per-principal server, or the session's own on a per-session one.
   * `signal` is the host's: its cancellation (or its session's end) cancels the upstream
   * subscribe, which has the server's request timeouts as any forwarded request has.
   */
  async subscribe(
    session: DownstreamSession,
    connection: UpstreamConnection,
    uri: string,
    publicUri: string,
    signal?: CancelSignal,
  ): Promise<void> {
    const owner = this.ownerOf(connection, session);
    const key = keyOf(connection.name, owner, uri);
    if (!this.subs.has(key)) {
      this.inflight.set(key, (this.inflight.get(key) ?? 0) + 1);
      let failure: unknown;
      try {
        await connection.request('resources/subscribe', { uri }, { ...requestOptions(connection), ...(signal ? { signal } : {}) });
      } catch (err) {
        failure = err;
      }
      const left = this.inflight.get(key)! - 1;
      if (left > 0) this.inflight.set(key, left);
      else this.inflight.delete(key);
      const wanted = failure === undefined && !signal?.aborted && this.sessions.get(session.id) === session;
      // A cancel crosses the upstream's answer, and a timed-out subscribe may still be done:
      // the upstream may hold a subscription nobody asked for any longer (or one that
      // succeeded after its host cancelled or its session ended). Unless another host holds
      // it or is getting it, it is ended upstream; the host is not made to hold it.
      if (!wanted && mayHaveSubscribed(failure, signal) && !this.subs.has(key) && !this.inflight.has(key)) {
        void this.unsubscribeUpstream(connection, uri);
      }
      if (failure !== undefined) throw failure;
      if (!wanted) throw cancelledError();
    }
    let sub = this.subs.get(key);
    if (!sub) {
      sub = { server: connection.name, owner, uri, sessions: new Map() };
      this.subs.set(key, sub);
    }
    sub.sessions.set(session.id, publicUri);
  }

  async unsubscribe(session: DownstreamSession, server: string, uri: string): Promise<void> {
    const key = [SHARED, callerName(session.principal), session.id]
      .map((owner) => keyOf(server, owner, uri))
      .find((k) => this.subs.get(k)?.sessions.has(session.id));
    if (key === undefined) return;
    const sub = this.subs.get(key)!;
    sub.sessions.delete(session.id);
    if (sub.sessions.size === 0) await this.release(key, sub);
  }

  /**
   * Ends the session's subscriptions made under `publicUri`, the URI it subscribed with,
   * without asking the catalog: its upstream may be down and its URIs gone from the lists.
   * True when there was one.
   */
  async unsubscribeByPublicUri(session: DownstreamSession, publicUri: string): Promise<boolean> {
    let found = false;
    for (const [key, sub] of [...this.subs]) {
      if (sub.sessions.get(session.id) !== publicUri) continue;
      found = true;
      sub.sessions.delete(session.id);
      if (sub.sessions.size === 0) await this.release(key, sub);
    }
    return found;
  }

  /** For status pages and tests: how many upstream subscriptions are held. */
  get upstreamCount(): number {
    return this.subs.size;
  }

  private dropSession(sessionId: string): void {
    for (const [key, sub] of this.subs) {
      if (sub.sessions.delete(sessionId) && sub.sessions.size === 0) void this.release(key, sub);
    }
  }

  private ownerOf(connection: UpstreamConnection, session: DownstreamSession): string {
    if (this.registry.get(connection.name) === connection) return SHARED;
    for (const pool of this.owned) {
      const owner = pool.ownerOf(connection);
      if (owner !== undefined) return owner;
    }
    return callerName(session.principal);
  }

  private connectionOf(server: string, owner: string): UpstreamConnection | undefined {
    if (owner === SHARED) return this.registry.get(server);
    for (const pool of this.owned) {
      const found = pool.existing(server, owner);
      if (found) return found;
    }
    return undefined;
  }

  private async release(key: string, sub: Subscription): Promise<void> {
    this.subs.delete(key);
    // Another host's subscribe for it is in flight: its answer makes the subscription held again.
    if (this.inflight.has(key)) return;
    const connection = this.connectionOf(sub.server, sub.owner);
    if (connection) await this.unsubscribeUpstream(connection, sub.uri);
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

  /**
   * To the sessions subscribed to `uri`, and to those subscribed to a resource it is a
   * sub-resource of: the spec lets a server report an update of a sub-resource of the URI
   * that was subscribed to. Each session hears it once, by its most specific subscription,
   * under the URI it would know it by: its subscribed URI with the rest appended (a gateway
   * URI carries the upstream's one verbatim, so the same suffix fits it too).
   */
  private deliver(server: string, owner: string, uri: string, params: Record<string, unknown> | undefined): void {
    const told = new Set<string>();
    for (const subscribed of [uri, ...ancestorsOf(uri)]) {
      const sub = this.subs.get(keyOf(server, owner, subscribed));
      if (!sub) continue;
      const rest = uri.slice(subscribed.length);
      for (const [sessionId, publicUri] of sub.sessions) {
        const session = this.sessions.get(sessionId);
        if (!session || told.has(sessionId)) continue;
        told.add(sessionId);
        void session
          .send({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { ...params, uri: publicUri + rest } })
          .catch(() => undefined);
      }
    }
  }

  /** A reconnected upstream has forgotten our subscriptions; renew them. */
  private resubscribe(server: string, owner: string): void {
    const connection = this.connectionOf(server, owner);
    for (const sub of this.subs.values()) {
      if (sub.server !== server || sub.owner !== owner) continue;
      void connection?.request('resources/subscribe', { uri: sub.uri }, requestOptions(connection)).catch((err) => {
        this.logger.warn({ upstream: server, uri: sub.uri, err: String(err) }, 'could not renew a subscription');
      });
    }
  }
}

/** The server's timeouts, as forwarded requests have them (forwarder.ts). */
function requestOptions(connection: UpstreamConnection): PeerRequestOptions {
  const { requestMs, maxRequestMs } = connection.config.timeouts;
  return { timeoutMs: requestMs, maxTotalMs: maxRequestMs };
}

/**
 * Whether a subscribe that did not end with the host holding it may have subscribed
 * upstream all the same: it succeeded (for a host that cancelled or left meanwhile), or was
 * cancelled or timed out, which the upstream may not have seen before it subscribed. Not
 * when the upstream refused it or its connection failed (the subscription went with it).
 */
function mayHaveSubscribed(failure: unknown, signal: CancelSignal | undefined): boolean {
  if (failure === undefined || signal?.aborted) return true;
  return failure instanceof McpError && failure.code === ErrorCode.RequestTimeout;
}

/**
 * The URIs `uri` is a sub-resource of, nearest first: each prefix that ends at a `/`
 * boundary, with and without that `/` (`a://x/y/z` is under `a://x/y/` and `a://x/y`).
 * A prefix ending inside a path segment is no ancestor: `a://x/yz` is not under `a://x/y`.
 */
function ancestorsOf(uri: string): string[] {
  const out: string[] = [];
  for (let i = uri.lastIndexOf('/', uri.length - 2); i >= 0; i = i === 0 ? -1 : uri.lastIndexOf('/', i - 1)) {
    out.push(uri.slice(0, i + 1));
    if (i > 0) out.push(uri.slice(0, i));
  }
  return out;
}
