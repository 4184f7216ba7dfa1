import { deepEqual, withSecrets, type ServerConfig } from '@switchboard/config';
import { ErrorCode, McpError, type JsonRpcNotification } from '@switchboard/core';
import { UpstreamConnection, type UpstreamDeps } from './upstream-connection.js';

/** Where a principal's secrets come from (the secret store, through a cache). */
export interface SecretValues {
  /** Every secret the principal has, by name; `{}` when none. */
  valuesFor(principal: string): Readonly<Record<string, string>>;
}

/** What a principal's own connection reports, tagged with whose it is. */
export interface PrincipalConnectionListener {
  ready?(server: string, principal: string, connection: UpstreamConnection): void;
  notification?(server: string, principal: string, notification: JsonRpcNotification): void;
}

export interface PrincipalConnectionsDeps extends Omit<UpstreamDeps, 'listener'> {
  secrets: SecretValues;
  listener?: PrincipalConnectionListener;
  /** A connection unused this long (and with nothing in flight) is closed. Default 10 minutes. */
  idleMs?: number;
  /** Connections per server; beyond it the least recently used idle one is closed. Default 64. */
  maxPerServer?: number;
  /** How often idle and replaced connections are looked for. Default 30 s. */
  sweepEveryMs?: number;
}

interface Entry {
  server: string;
  principal: string;
  /** The server's config with this principal's secrets filled in. */
  config: ServerConfig;
  connection: UpstreamConnection;
  /** Settles when the first connect attempt has ended: ready, or the reason it is not. */
  firstAttempt: Promise<void>;
  lastUsed: number;
}

const DEFAULT_IDLE_MS = 10 * 60_000;
const DEFAULT_MAX_PER_SERVER = 64;
const SWEEP_EVERY_MS = 30_000;
/** An upstream's own error text reaches the caller (it is about their credentials), but bounded. */
const MAX_REASON_CHARS = 300;

const keyOf = (server: string, principal: string) => `${server}\u0000${principal}`;

/**
 * The connections of `isolation: per-principal` servers: one per (server, principal), opened
 * on that principal's first request with their own secrets filled into the server's env or
 * headers, so one user's credentials never carry another user's request. A connection is
 * closed when idle, and replaced when the principal's secrets or the server's config change
 * (the old one finishes what it has in flight first).
 */
export class PrincipalConnections {
  private readonly entries = new Map<string, Entry>();
  /** Replaced connections, closed once nothing is in flight on them. */
  private readonly retired = new Set<UpstreamConnection>();
  private readonly sweeper: NodeJS.Timeout;
  private stopping = false;

  constructor(private readonly deps: PrincipalConnectionsDeps) {
    this.sweeper = setInterval(() => void this.sweep(), deps.sweepEveryMs ?? SWEEP_EVERY_MS).unref();
  }

  /**
   * The principal's connection to `server`, opened (and awaited) if need be. Throws
   * MissingSecretsError (from config) when the principal lacks a secret the server needs,
   * and -32010 when the upstream cannot be reached with their credentials.
   */
  async connectionFor(server: ServerConfig, principal: string): Promise<UpstreamConnection> {
    if (this.stopping) throw new McpError(ErrorCode.ShuttingDown, 'Switchboard is shutting down');
    const config = withSecrets(server, this.deps.secrets.valuesFor(principal));
    const key = keyOf(server.name, principal);
    let entry = this.entries.get(key);
    if (entry && !deepEqual(entry.config, config)) {
      this.retire(entry);
      entry = undefined;
    }
    if (!entry) {
      this.makeRoom(server.name);
      entry = this.open(server.name, principal, config);
    }
    entry.lastUsed = Date.now();
    await entry.firstAttempt;
    if (!entry.connection.isAvailable && this.entries.get(key) === entry) {
      // Not reachable (refused these credentials, say, or lost since): forget the attempt, so
      // the next request (perhaps after the secret is fixed) starts afresh rather than
      // waiting out a backoff.
      const reason = entry.connection.status().lastError ?? entry.connection.state;
      this.entries.delete(key);
      void entry.connection.stop();
      throw new McpError(
        ErrorCode.UpstreamUnavailable,
        `Upstream '${server.name}' is not available to you: ${reason.slice(0, MAX_REASON_CHARS)}`,
        { server: server.name },
      );
    }
    return entry.connection;
  }

  /** Every open connection, with its owner; for log levels and status. */
  *all(): IterableIterator<{ server: string; principal: string; connection: UpstreamConnection }> {
    for (const { server, principal, connection } of this.entries.values()) yield { server, principal, connection };
  }

  /** Whose connection this is; undefined for one this pool does not hold. */
  ownerOf(connection: UpstreamConnection): string | undefined {
    for (const entry of this.entries.values()) if (entry.connection === connection) return entry.principal;
    return undefined;
  }

  /** The principal's open connection to `server`, without opening one. */
  existing(server: string, principal: string): UpstreamConnection | undefined {
    return this.entries.get(keyOf(server, principal))?.connection;
  }

  /** Requests in flight on every connection, replaced ones included (drained at shutdown). */
  inFlight(): number {
    let n = 0;
    for (const entry of this.entries.values()) n += entry.connection.inFlight;
    for (const connection of this.retired) n += connection.inFlight;
    return n;
  }

  /**
   * The config or the secrets changed: connections of servers that are gone or no longer
   * per-principal are closed, and those whose filled-in config differs are replaced on
   * their next use (so a rotated token takes effect at once, without a restart).
   */
  refresh(servers: readonly ServerConfig[]): void {
    const byName = new Map(servers.filter((s) => s.enabled && s.isolation === 'per-principal').map((s) => [s.name, s]));
    for (const [key, entry] of this.entries) {
      const server = byName.get(entry.server);
      let current: ServerConfig | undefined;
      try {
        current = server && withSecrets(server, this.deps.secrets.valuesFor(entry.principal));
      } catch {
        current = undefined; // a secret was deleted
      }
      if (current && deepEqual(current, entry.config)) continue;
      this.entries.delete(key);
      this.retire(entry);
    }
  }

  async stopAll(): Promise<void> {
    this.stopping = true;
    clearInterval(this.sweeper);
    const all = [...[...this.entries.values()].map((e) => e.connection), ...this.retired];
    this.entries.clear();
    this.retired.clear();
    await Promise.all(all.map((c) => c.stop()));
  }

  private open(server: string, principal: string, config: ServerConfig): Entry {
    let settle!: () => void;
    const firstAttempt = new Promise<void>((resolve) => (settle = resolve));
    const listener = this.deps.listener;
    const connection = new UpstreamConnection(config, {
      ...this.deps,
      logger: this.deps.logger.child({ principal }),
      listener: {
        stateChanged: (_name, state) => {
          if (state === 'ready') {
            settle();
            listener?.ready?.(server, principal, connection);
          } else if (state === 'down' || state === 'stopped') settle();
        },
        notification: (_name, n) => listener?.notification?.(server, principal, n),
      },
    });
    const entry: Entry = { server, principal, config, connection, firstAttempt, lastUsed: Date.now() };
    this.entries.set(keyOf(server, principal), entry);
    connection.start();
    return entry;
  }

  private retire(entry: Entry): void {
    if (this.entries.get(keyOf(entry.server, entry.principal)) === entry) this.entries.delete(keyOf(entry.server, entry.principal));
    if (entry.connection.inFlight === 0) void entry.connection.stop();
    else this.retired.add(entry.connection);
  }

  /** At the cap, the least recently used idle connection of the server is closed first. */
  private makeRoom(server: string): void {
    const max = this.deps.maxPerServer ?? DEFAULT_MAX_PER_SERVER;
    const mine = [...this.entries.values()].filter((e) => e.server === server);
    if (mine.length < max) return;
    const idle = mine.filter((e) => e.connection.inFlight === 0).sort((a, b) => a.lastUsed - b.lastUsed)[0];
    if (!idle) {
      throw new McpError(
        ErrorCode.UpstreamUnavailable,
        `Upstream '${server}' has ${max} per-principal connections busy; try again shortly`,
        { server },
      );
    }
    this.retire(idle);
  }

  private async sweep(): Promise<void> {
    const idleMs = this.deps.idleMs ?? DEFAULT_IDLE_MS;
    const now = Date.now();
    for (const entry of [...this.entries.values()]) {
      if (now - entry.lastUsed >= idleMs && entry.connection.inFlight === 0) this.retire(entry);
    }
    for (const connection of [...this.retired]) {
      if (connection.inFlight > 0) continue;
      this.retired.delete(connection);
      await connection.stop();
    }
  }
}
