import { diffServers, restartNeeded, type ServerConfig } from '@switchboard/config';
import type { UpstreamConnection, UpstreamDeps } from './upstream-connection.js';
import { UpstreamConnection as Connection } from './upstream-connection.js';
import type { UpstreamListener } from './upstream.types.js';

/**
 * Every configured upstream, by name. Applies config changes live (add, remove, restart
 * those whose connection changed, update the others in place) and fans connection events
 * out to listeners (catalog sync, relay).
 */
export class UpstreamRegistry {
  private readonly connections = new Map<string, UpstreamConnection>();
  private readonly listeners = new Set<UpstreamListener>();
  private order: string[] = [];
  private current: ServerConfig[] = [];
  private stopping = false;

  constructor(private readonly deps: Omit<UpstreamDeps, 'listener'>) {}

  addListener(listener: UpstreamListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Config order of the enabled servers; merged lists are built in this order. */
  get serverOrder(): readonly string[] {
    return this.order;
  }

  get(name: string): UpstreamConnection | undefined {
    return this.connections.get(name);
  }

  all(): UpstreamConnection[] {
    return this.order.map((n) => this.connections.get(n)!).filter(Boolean);
  }

  /** Total requests in flight to all upstreams (used to drain on shutdown). */
  inFlight(): number {
    let n = 0;
    for (const c of this.connections.values()) n += c.inFlight;
    return n;
  }

  /**
   * Starts, stops and restarts connections so that they match `servers`. Only a change of a
   * field the connection is made from restarts it (restartNeeded: command, args, env, url,
   * headers, ...); a change of the fields read at use time (alias, namespace, pin, timeouts,
   * lists, the pinned roots' list) is applied to the running connection, and its calls in flight
   * go on.
   */
  async apply(
    servers: ServerConfig[],
  ): Promise<{ added: string[]; removed: string[]; changed: string[]; updated: string[] }> {
    if (this.stopping) return { added: [], removed: [], changed: [], updated: [] };
    const enabled = servers.filter((s) => s.enabled);
    const { added, removed, changed, updated } = diffServers(this.current.filter((s) => s.enabled), enabled);
    this.current = servers;
    this.order = enabled.map((s) => s.name);
    // Against what each connection runs, not the previous config: one started by an earlier
    // apply (after a slow stop) may run an older version than that.
    for (const server of enabled) {
      const connection = this.connections.get(server.name);
      if (connection && connection.config !== server && !restartNeeded(connection.config, server)) {
        updateInPlace(connection, server);
      }
    }
    await Promise.all([...removed, ...changed].map((s) => this.remove(s.name)));
    // Stopping can take seconds (grace periods), and a later config may have been applied
    // meanwhile: start only what is still configured so and not already running (with the
    // config as it is now), or a server the later config removed (or changed again) would
    // run unseen.
    for (const s of [...changed, ...added]) {
      const now = this.currentVersion(s);
      if (!this.stopping && !this.connections.has(s.name) && now) this.startOne(now);
    }
    return {
      added: added.map((s) => s.name),
      removed: removed.map((s) => s.name),
      changed: changed.map((s) => s.name),
      updated: updated.map((s) => s.name),
    };
  }

  async stopAll(): Promise<void> {
    // An apply still waiting for a slow stop must not start anything after this.
    this.stopping = true;
    const names = [...this.connections.keys()];
    this.order = [];
    await Promise.all(names.map((n) => this.remove(n)));
  }

  /** The current config of `server`, when it is still enabled and runs the same connection. */
  private currentVersion(server: ServerConfig): ServerConfig | undefined {
    const now = this.current.find((s) => s.name === server.name);
    return now !== undefined && now.enabled && !restartNeeded(now, server) ? now : undefined;
  }

  private startOne(config: ServerConfig): void {
    const connection = new Connection(config, {
      ...this.deps,
      listener: {
        stateChanged: (server, state, previous) => {
          for (const l of this.listeners) l.stateChanged?.(server, state, previous);
        },
        notification: (server, n) => {
          for (const l of this.listeners) l.notification?.(server, n);
        },
      },
    });
    this.connections.set(config.name, connection);
    connection.start();
  }

  private async remove(name: string): Promise<void> {
    const connection = this.connections.get(name);
    if (!connection) return;
    this.connections.delete(name);
    await connection.stop();
  }
}

/** Hands a running connection the new version of its server (see UpstreamConnection.updateConfig). */
function updateInPlace(connection: UpstreamConnection, config: ServerConfig): void {
  connection.updateConfig(config);
}
