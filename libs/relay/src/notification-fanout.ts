import type { CatalogStore } from '@switchboard/catalog';
import { callerName, isLogLevel, passesLevel, withoutRelatedTask, type JsonRpcNotification, type LogLevel } from '@switchboard/core';
import type { UpstreamConnection, UpstreamRegistry } from '@switchboard/upstream';
import { ListChangeThrottle } from './list-change-throttle.js';
import type { DownstreamSession, SessionDirectory } from './session.js';

/** Sessions that never sent logging/setLevel get messages at this level and above. */
export const DEFAULT_SESSION_LOG_LEVEL: LogLevel = 'info';

/**
 * Notifications from the merged world to every host: list_changed when the merged catalog
 * changed (whatever the cause: an upstream's own list_changed, one coming or going, a config
 * reload), and upstream log messages, labelled with their server and filtered per session:
 * a shared server's to the principals the policy lets read them, a principal's or a
 * session's own connection's to that principal or session.
 */
export class NotificationFanout {
  /** list_changed is spaced out per list past a burst (ListChangeThrottle): hosts re-list on each. */
  private readonly listChanges = new ListChangeThrottle((method) => this.broadcast(method));

  constructor(
    private readonly sessions: SessionDirectory,
    registry: UpstreamRegistry,
    store: CatalogStore,
    /**
     * Whether a server is per-principal or per-session: its shared connection only reads the
     * catalog, and its log lines (about a connection no host uses) reach nobody.
     */
    private readonly isolated: (server: string) => boolean = () => false,
    /**
     * Whether a principal may read a shared server's log lines (the policy's `log` action).
     * A shared server's lines are about every principal's calls, so they are not for all.
     */
    private readonly mayReadLogs: (principal: DownstreamSession['principal'], server: string) => boolean = () => true,
  ) {
    store.onChange((diff) => {
      if (diff.tools) this.listChanges.changed('notifications/tools/list_changed');
      if (diff.prompts) this.listChanges.changed('notifications/prompts/list_changed');
      if (diff.resources) this.listChanges.changed('notifications/resources/list_changed');
    });
    registry.addListener({
      notification: (server, n) => {
        if (n.method === 'notifications/message' && !this.isolated(server)) this.log(server, n, (s) => this.mayReadLogs(s.principal, server));
      },
      stateChanged: (server, state) => {
        // A (re)connected upstream starts at its default level; tell it what sessions asked for.
        const connection = registry.get(server);
        if (state === 'ready' && connection) void pushUpstreamLogLevel(connection, sessions);
      },
    });
  }

  /**
   * Lists changed for reasons the catalog does not see (a policy reload, a held-back tool
   * accepted): every host hears list_changed for each list and asks again.
   */
  listsChanged(): void {
    this.listChanges.changed('notifications/tools/list_changed');
    this.listChanges.changed('notifications/prompts/list_changed');
    this.listChanges.changed('notifications/resources/list_changed');
  }

  /**
   * `notifications/<list>/list_changed` to the sessions that were given `<list>` with
   * listChanged at initialize. A session's capabilities are fixed then: one initialized
   * before a reload added the first server with prompts was not told it has prompts, and
   * must not hear of them (the spec has both sides use only what was negotiated).
   */
  private broadcast(method: string): void {
    const list = method.split('/')[1];
    for (const session of this.sessions.initialized()) {
      const given = session.serverCapabilities?.[list] as { listChanged?: boolean } | undefined;
      if (!given?.listChanged) continue;
      void session.send({ jsonrpc: '2.0', method }).catch(() => undefined);
    }
  }

  /** A log line from a principal's own connection goes to that principal's sessions only. */
  principalNotification(server: string, principal: string, n: JsonRpcNotification): void {
    if (n.method === 'notifications/message') this.log(server, n, (s) => callerName(s.principal) === principal);
  }

  /** A log line from a session's own connection goes to that session only. */
  sessionNotification(server: string, sessionId: string, n: JsonRpcNotification): void {
    if (n.method === 'notifications/message') this.log(server, n, (s) => s.id === sessionId);
  }

  private log(server: string, n: JsonRpcNotification, audience: (session: DownstreamSession) => boolean = () => true): void {
    const level = n.params?.level;
    if (!isLogLevel(level)) return;
    const logger = typeof n.params?.logger === 'string' ? `${server}/${n.params.logger}` : server;
    // A line about one of the upstream's tasks goes without its id: a host can do nothing with
    // it, and a shared server's lines reach principals whose task it is not.
    const params = { ...withoutRelatedTask(n.params ?? {}), logger };
    for (const session of this.sessions.initialized()) {
      if (!audience(session)) continue;
      if (!passesLevel(level, session.logLevel ?? DEFAULT_SESSION_LOG_LEVEL)) continue;
      void session.send({ jsonrpc: '2.0', method: 'notifications/message', params }).catch(() => undefined);
    }
  }
}

/**
 * The level to ask of upstreams: the most verbose any session wants (they filter further);
 * of a per-session connection, what its one session wants.
 */
export function upstreamLogLevel(sessions: SessionDirectory, onlySession?: string): LogLevel | undefined {
  let min: LogLevel | undefined;
  let anyAsked = false;
  for (const s of sessions.all()) {
    if (onlySession !== undefined && s.id !== onlySession) continue;
    // A session that set no level still gets the default: the upstream must send that much.
    const wanted = s.logLevel ?? DEFAULT_SESSION_LOG_LEVEL;
    if (s.logLevel) anyAsked = true;
    if (!min || passesLevel(min, wanted)) min = wanted;
  }
  // Nobody asked for a level: the upstream keeps its own default.
  return anyAsked ? min : undefined;
}

const levelPushes = new WeakMap<UpstreamConnection, Promise<void>>();

/**
 * Tells an upstream the level the sessions want (see upstreamLogLevel); settles once it
 * answered. Per upstream one logging/setLevel is in flight at a time and each reads the
 * wanted level only when it is sent: two sent at once may overtake each other on an HTTP
 * upstream (separate POSTs) and leave it at a stale, quieter level, and the last one queued
 * always carries the current wish. Failures are swallowed: the level is advisory.
 */
export function pushUpstreamLogLevel(
  connection: UpstreamConnection,
  sessions: SessionDirectory,
  onlySession?: string,
  /** What to send when no session asks for a level (after those that did have left). */
  fallback?: LogLevel,
): Promise<void> {
  const previous = levelPushes.get(connection) ?? Promise.resolve();
  const next = previous.then(async () => {
    const level = upstreamLogLevel(sessions, onlySession) ?? fallback;
    if (!level || !connection.isAvailable || !connection.capabilities.logging) return;
    await connection
      .request('logging/setLevel', { level }, { timeoutMs: connection.config.timeouts.requestMs })
      .catch(() => undefined);
  });
  levelPushes.set(connection, next);
  return next;
}
