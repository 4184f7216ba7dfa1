import type { Logger } from '@switchboard/observability';
import type { UpstreamRegistry } from '@switchboard/upstream';
import type { DownstreamSession, SessionDirectory } from './session.js';

interface Subscription {
  server: string;
  uri: string;
  /** session id -> the URI as that session knows it (the public form). */
  sessions: Map<string, string>;
}

const keyOf = (server: string, uri: string) => `${server}\u0000${uri}`;

/**
 * Resource subscriptions, reference-counted: one upstream subscription per (server, URI)
 * however many hosts subscribed, and `notifications/resources/updated` delivered only to the
 * sessions that subscribed to that URI.
 */
export class SubscriptionManager {
  private readonly subs = new Map<string, Subscription>();

  constructor(
    private readonly registry: UpstreamRegistry,
    private readonly sessions: SessionDirectory,
    private readonly logger: Logger,
  ) {
    sessions.onClose((s) => this.dropSession(s.id));
    registry.addListener({
      stateChanged: (server, state) => {
        if (state === 'ready') this.resubscribe(server);
      },
      notification: (server, n) => {
        if (n.method === 'notifications/resources/updated') this.deliver(server, String(n.params?.uri ?? ''), n.params);
      },
    });
  }

  async subscribe(session: DownstreamSession, server: string, uri: string, publicUri: string): Promise<void> {
    const key = keyOf(server, uri);
    let sub = this.subs.get(key);
    if (!sub) {
      await this.registry.get(server)!.request('resources/subscribe', { uri });
      sub = this.subs.get(key) ?? { server, uri, sessions: new Map() };
      this.subs.set(key, sub);
    }
    sub.sessions.set(session.id, publicUri);
  }

  async unsubscribe(session: DownstreamSession, server: string, uri: string): Promise<void> {
    const key = keyOf(server, uri);
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

  private async release(key: string, sub: Subscription): Promise<void> {
    this.subs.delete(key);
    const connection = this.registry.get(sub.server);
    if (!connection?.isAvailable) return;
    await connection.request('resources/unsubscribe', { uri: sub.uri }).catch((err) => {
      this.logger.debug({ upstream: sub.server, err: String(err) }, 'upstream unsubscribe failed');
    });
  }

  private deliver(server: string, uri: string, params: Record<string, unknown> | undefined): void {
    const sub = this.subs.get(keyOf(server, uri));
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
  private resubscribe(server: string): void {
    const connection = this.registry.get(server);
    for (const sub of this.subs.values()) {
      if (sub.server !== server) continue;
      void connection?.request('resources/subscribe', { uri: sub.uri }).catch((err) => {
        this.logger.warn({ upstream: server, uri: sub.uri, err: String(err) }, 'could not renew a subscription');
      });
    }
  }
}
