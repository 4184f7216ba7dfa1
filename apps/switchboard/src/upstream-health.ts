import type { ServerConfig } from '@switchboard/config';
import type { UpstreamConnection, UpstreamState, UpstreamStatus } from '@switchboard/upstream';
import type { WaitingForSecrets } from './principal-secrets.js';

/**
 * An upstream as /readyz shows it. `waiting-for-secrets`: an `isolation: per-principal`
 * server that no principal has the secrets for yet, so nothing of it runs.
 */
export interface UpstreamHealth extends Omit<UpstreamStatus, 'state' | 'since'> {
  state: UpstreamState | 'waiting-for-secrets';
  /** Absent while the server is being (re)started: no connection exists to say since when. */
  since?: string;
  isolation: ServerConfig['isolation'];
  /** Per-principal and per-session servers: how many principals' (sessions') own connections are up. */
  connected?: number;
  /** A server waiting for secrets: the names it waits for. */
  missingSecrets?: readonly string[];
}

/** What upstreamHealth reads of the running gateway. */
export interface UpstreamHealthSources {
  /** The shared registry's connection (for isolated servers, the one that reads their lists). */
  shared(name: string): UpstreamConnection | undefined;
  /** Every principal's and session's own connection. */
  owned(): Iterable<{ server: string; connection: UpstreamConnection }>;
  waiting: ReadonlyMap<string, WaitingForSecrets>;
  /** Per per-principal server, the principals whose secrets its list-reading connection failed to connect with. */
  tried?: ReadonlyMap<string, readonly string[]>;
}

/**
 * Every enabled upstream of the config, in config order, with a true state. A per-principal
 * server nobody has secrets for has no connection at all, so it is reported from the config
 * rather than left out (the registry knows nothing of it).
 */
export function upstreamHealth(servers: readonly ServerConfig[], sources: UpstreamHealthSources): UpstreamHealth[] {
  const connected = new Map<string, number>();
  for (const { server, connection } of sources.owned()) {
    if (connection.isAvailable) connected.set(server, (connected.get(server) ?? 0) + 1);
  }
  return servers
    .filter((s) => s.enabled)
    .map((server): UpstreamHealth => {
      const owned = server.isolation === 'shared' ? {} : { connected: connected.get(server.name) ?? 0 };
      const waiting = sources.waiting.get(server.name);
      if (waiting) {
        return {
          name: server.name,
          transport: server.transport,
          isolation: server.isolation,
          state: 'waiting-for-secrets',
          since: waiting.since,
          reconnectAttempts: 0,
          ...owned,
          missingSecrets: waiting.secrets,
        };
      }
      const connection = sources.shared(server.name);
      // Between the stop and the start of a restart (a reload that changed the server).
      if (!connection) return { name: server.name, transport: server.transport, isolation: server.isolation, state: 'connecting', reconnectAttempts: 0, ...owned };
      const status = connection.status();
      // Down after every principal's secrets failed: whose they were.
      const tried = sources.tried?.get(server.name);
      if (tried && !connection.isAvailable && status.lastError !== undefined) {
        status.lastError = `${status.lastError} (tried the secrets of ${tried.join(', ')})`;
      }
      return { ...status, isolation: server.isolation, ...owned };
    });
}

/**
 * Whether the upstream lets the gateway count as ready. A per-principal server nobody has
 * secrets for is not an outage: no caller can use it yet, and setting a secret starts it.
 */
export function upstreamReady(u: UpstreamHealth): boolean {
  return u.state === 'ready' || u.state === 'degraded' || u.state === 'waiting-for-secrets';
}

/** With `auth.mode: required` /readyz shows states only: no errors, process ids, server details or secret names. */
export function stateOnly(u: UpstreamHealth): UpstreamHealth {
  const { name, transport, isolation, state, since, reconnectAttempts, connected } = u;
  return { name, transport, isolation, state, since, reconnectAttempts, connected };
}
