import type { Logger } from '@switchboard/observability';
import type { JsonRpcNotification } from '@switchboard/core';
import type { PrincipalConnections, UpstreamConnection, UpstreamRegistry } from '@switchboard/upstream';
import type { DownstreamSession, SessionDirectory } from './session.js';

interface Subscription {
  server: string;
  /** The principal whose own connection holds it (per-principal servers); '' on a shared one. */
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
 * principal subscribes on their own connection and hears only its updates.
 */
export class SubscriptionManager {
  private readonly subs = new Map<string, Subscription>();

  constructor(
    private readonly registry: UpstreamRegistry,
    private readonly sessions: SessionDirectory,
    private readonly logger: Logger,
    private readonly principalConnections?: PrincipalConnections,
  ) {
    sessions.onClose((s) => this.dropSession(s.id));
    registry.addListener({
      stateChanged: (server, state) => {
        if (state === 'ready') this.resubscribe(server, SHARED);
      },
      notification: (server, n) => this.onNotification(server, SHARED, n),
    });
  }

  /** A principal's own connection (re)connected: renew what they subscribed there. */
  principalConnectionReady(server: string, principal: string): void {
    this.resubscribe(server, principal);
  }

  /** A notification from a principal's own connection. */
  onNotification(server: string, owner: string, n: JsonRpcNotification): void {
    if (n.method === 'notifications/resources/updated') this.deliver(server, owner, String(n.params?.uri ?? ''), n.params);
  }

  /**
   * `connection` is the one the request was routed to: the shared one, or the session's
   * principal's own on a per-principal server.
   */
  async subscribe(session: DownstreamSession, connection: UpstreamConnection, uri: string, publicUri: string): Promise<void> {
    const owner = this.ownerOf(connection, session);
    const key = keyOf(connection.name, owner, uri);
    let sub = this.subs.get(key);
    if (!sub) {
      await connection.request('resources/subscribe', { uri });
      sub = this.subs.get(key) ?? { server: connection.name, owner, uri, sessions: new Map() };
      this.subs.set(key, sub);
    }
    sub.sessions.set(session.id, publicUri);
  }

  async unsubscribe(session: DownstreamSession, server: string, uri: string): Promise<void> {
    const shared = this.subs.get(keyOf(server, SHARED, uri));
    const key = shared?.sessions.has(session.id) ? keyOf(server, SHARED, uri) : keyOf(server, session.principal.id, uri);
    const sub = this.subs.get(key);
    if (!sub) return;
    sub.sessions.delete(session.id);
    if (sub.sessions.size === 0) await this.release(key, sub);
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
    return this.registry.get(connection.name) === connection ? SHARED : session.principal.id;
  }

  private connectionOf(server: string, owner: string): UpstreamConnection | undefined {
    return owner === SHARED ? this.registry.get(server) : this.principalConnections?.existing(server, owner);
  }

  private async release(key: string, sub: Subscription): Promise<void> {
    this.subs.delete(key);
    const connection = this.connectionOf(sub.server, sub.owner);
    if (!connection?.isAvailable) return;
    await connection.request('resources/unsubscribe', { uri: sub.uri }).catch((err) => {
      this.logger.debug({ upstream: sub.server, err: String(err) }, 'upstream unsubscribe failed');
    });
  }

  private deliver(server: string, owner: string, uri: string, params: Record<string, unknown> | undefined): void {
    const sub = this.subs.get(keyOf(server, owner, uri));
    if (!sub) return;
    for (const [sessionId, publicUri] of sub.sessions) {
      const session = this.sessions.get(sessionId);
      if (!session) continue;
      void session
        .send({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { ...params, uri: publicUri } })
        .catch(() => undefined);
    }
  }

  /** A reconnected upstream has forgotten our subscriptions; renew them. */
  private resubscribe(server: string, owner: string): void {
    const connection = this.connectionOf(server, owner);
    for (const sub of this.subs.values()) {
      if (sub.server !== server || sub.owner !== owner) continue;
      void connection?.request('resources/subscribe', { uri: sub.uri }).catch((err) => {
        this.logger.warn({ upstream: server, uri: sub.uri, err: String(err) }, 'could not renew a subscription');
      });
    }
  }
}
