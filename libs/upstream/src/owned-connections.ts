import { restartNeeded, type ServerConfig } from '@switchboard/config';
import { ErrorCode, McpError, type JsonRpcNotification } from '@switchboard/core';
import { UpstreamConnection, type UpstreamDeps } from './upstream-connection.js';

type Item = Record<string, unknown>;

/** What an owned connection reports, tagged with whose it is. */
export interface OwnedConnectionListener {
  ready?(server: string, owner: string, connection: UpstreamConnection): void;
  notification?(server: string, owner: string, notification: JsonRpcNotification): void;
}

export interface OwnedConnectionsDeps extends Omit<UpstreamDeps, 'listener'> {
  listener?: OwnedConnectionListener;
  /** A connection unused this long (and with nothing in flight) is closed. Default 10 minutes. */
  idleMs?: number;
  /** Connections per server. Default 64. */
  maxPerServer?: number;
  /** How often idle and replaced connections are looked for. Default 30 s. */
  sweepEveryMs?: number;
}

/** What differs between the kinds of isolation: who owns a connection, and how it is opened. */
export interface Ownership {
  /** The `isolation` of the servers whose connections these are. */
  readonly isolation: 'per-principal' | 'per-session';
  /** The server's config as the owner's connection runs it; throws when the owner cannot have one. */
  configFor(server: ServerConfig, owner: string): ServerConfig;
  /** What the owner's connection declares in initialize; absent, the deps' clientCapabilities. */
  capabilitiesFor?(server: ServerConfig, owner: string): Item;
  /**
   * At the cap: close the least recently used idle connection (true), or refuse the new one
   * (false) where closing would lose its owner's upstream state.
   */
  readonly evictAtCap: boolean;
}

interface Entry {
  server: string;
  owner: string;
  /** The server's config as this owner's connection runs it. */
  config: ServerConfig;
  connection: UpstreamConnection;
  /** Settles when the first connect attempt has ended: ready, or the reason it is not. */
  firstAttempt: Promise<void>;
  lastUsed: number;
}

const DEFAULT_IDLE_MS = 10 * 60_000;
const DEFAULT_MAX_PER_SERVER = 64;
const SWEEP_EVERY_MS = 30_000;
/** An upstream's own error text reaches the caller (it is about their connection), but bounded. */
const MAX_REASON_CHARS = 300;

/**
 * The key of one owner's connection to a server, as each keeper of what a connection holds
 * under ids its upstream chose spells it (this pool, the relay's subscriptions and URL
 * elicitations): the registry's connection is the one of the owner '' (the relay's SHARED).
 */
export const connectionKey = (server: string, owner: string) => `${server}\u0000${owner}`;

/** The server a connectionKey is of. */
export const serverOfConnectionKey = (key: string) => key.slice(0, key.indexOf('\u0000'));

/**
 * Upstream connections that each belong to one owner (a principal, a session): one per
 * (server, owner), opened on the owner's first request, closed when idle, replaced when the
 * config it runs changes (the old one finishes what it has in flight first). The kinds of
 * isolation differ only in their Ownership.
 */
export class OwnedConnections {
  private readonly entries = new Map<string, Entry>();
  /** Replaced connections, closed once nothing is in flight on them. */
  private readonly retired = new Set<UpstreamConnection>();
  /**
   * The owner of every connection this pool opened, the retired ones still finishing their
   * calls included: they go on asking and telling things for that owner (a URL elicitation,
   * its completion) after the pool has let go of them.
   */
  private readonly owners = new WeakMap<UpstreamConnection, string>();
  private readonly sweeper: NodeJS.Timeout;
  private stopping = false;

  constructor(
    private readonly ownership: Ownership,
    private readonly deps: OwnedConnectionsDeps,
  ) {
    this.sweeper = setInterval(() => void this.sweep(), deps.sweepEveryMs ?? SWEEP_EVERY_MS).unref();
  }

  /**
   * The owner's connection to `server`, opened (and awaited) if need be. Throws what
   * Ownership.configFor throws, and -32010 when the upstream cannot be reached or the
   * server has all the connections it may have.
   */
  async connectionFor(server: ServerConfig, owner: string): Promise<UpstreamConnection> {
    if (this.stopping) throw new McpError(ErrorCode.ShuttingDown, 'Switchboard is shutting down');
    const config = this.ownership.configFor(server, owner);
    const key = connectionKey(server.name, owner);
    let entry = this.entries.get(key);
    if (entry && restartNeeded(entry.config, config)) {
      this.retire(entry);
      entry = undefined;
    } else if (entry && entry.config !== config) {
      // An alias, pin or timeouts change: the running connection takes it, its calls go on.
      entry.config = config;
      entry.connection.updateConfig(config);
    }
    if (!entry) {
      this.makeRoom(server.name);
      entry = this.open(server, owner, config);
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
  *all(): IterableIterator<{ server: string; owner: string; connection: UpstreamConnection }> {
    for (const { server, owner, connection } of this.entries.values()) yield { server, owner, connection };
  }

  /**
   * Whose connection this is, for any this pool opened: one retired by a config change or
   * closed stays its owner's. Undefined for one this pool did not open.
   */
  ownerOf(connection: UpstreamConnection): string | undefined {
    return this.owners.get(connection);
  }

  /** The owner's open connection to `server`, without opening one. */
  existing(server: string, owner: string): UpstreamConnection | undefined {
    return this.entries.get(connectionKey(server, owner))?.connection;
  }

  /** Requests in flight on every connection, replaced ones included (drained at shutdown). */
  inFlight(): number {
    let n = 0;
    for (const entry of this.entries.values()) n += entry.connection.inFlight;
    for (const connection of this.retired) n += connection.inFlight;
    return n;
  }

  /**
   * The config (or what configFor reads, such as secrets) changed: connections of servers
   * that are gone or of another isolation now are closed, and those whose config differs
   * are replaced on their next use (so a rotated token takes effect at once).
   */
  refresh(servers: readonly ServerConfig[]): void {
    const mine = servers.filter((s) => s.enabled && s.isolation === this.ownership.isolation);
    const byName = new Map(mine.map((s) => [s.name, s]));
    for (const [key, entry] of this.entries) {
      const server = byName.get(entry.server);
      let current: ServerConfig | undefined;
      try {
        current = server && this.ownership.configFor(server, entry.owner);
      } catch {
        current = undefined; // the owner cannot have one any more (a secret was deleted)
      }
      if (current && !restartNeeded(entry.config, current)) {
        entry.config = current;
        entry.connection.updateConfig(current);
        continue;
      }
      this.entries.delete(key);
      this.retire(entry);
    }
  }

  /** The owner is gone (a session ended): their connections close now, whatever is in flight. */
  async closeOwner(owner: string): Promise<void> {
    const theirs = [...this.entries.entries()].filter(([, entry]) => entry.owner === owner);
    for (const [key] of theirs) this.entries.delete(key);
    await Promise.all(theirs.map(([, entry]) => entry.connection.stop()));
  }

  /**
   * The owner will make no more requests (its credential no longer holds): its connections
   * close now, or once what is in flight on them has ended. Returns how many there were.
   */
  release(owner: string): number {
    const theirs = [...this.entries.values()].filter((entry) => entry.owner === owner);
    for (const entry of theirs) this.retire(entry);
    return theirs.length;
  }

  async stopAll(): Promise<void> {
    this.stopping = true;
    clearInterval(this.sweeper);
    const all = [...[...this.entries.values()].map((e) => e.connection), ...this.retired];
    this.entries.clear();
    this.retired.clear();
    await Promise.all(all.map((c) => c.stop()));
  }

  private open(server: ServerConfig, owner: string, config: ServerConfig): Entry {
    let settle!: () => void;
    const firstAttempt = new Promise<void>((resolve) => (settle = resolve));
    const listener = this.deps.listener;
    const name = server.name;
    const ownerField = this.ownership.isolation === 'per-session' ? 'session' : 'principal';
    const connection = new UpstreamConnection(config, {
      ...this.deps,
      clientCapabilities: this.ownership.capabilitiesFor?.(server, owner) ?? this.deps.clientCapabilities,
      logger: this.deps.logger.child({ [ownerField]: owner }),
      listener: {
        stateChanged: (_name, state) => {
          if (state === 'ready') {
            settle();
            listener?.ready?.(name, owner, connection);
          } else if (state === 'down' || state === 'stopped') settle();
        },
        notification: (_name, n) => listener?.notification?.(name, owner, n),
      },
    });
    const entry: Entry = { server: name, owner, config, connection, firstAttempt, lastUsed: Date.now() };
    this.owners.set(connection, owner);
    this.entries.set(connectionKey(name, owner), entry);
    connection.start();
    return entry;
  }

  private retire(entry: Entry): void {
    if (this.entries.get(connectionKey(entry.server, entry.owner)) === entry) this.entries.delete(connectionKey(entry.server, entry.owner));
    if (entry.connection.inFlight === 0) void entry.connection.stop();
    else this.retired.add(entry.connection);
  }

  /** At the cap, the least recently used idle connection of the server is closed first, if the ownership allows. */
  private makeRoom(server: string): void {
    const max = this.deps.maxPerServer ?? DEFAULT_MAX_PER_SERVER;
    const mine = [...this.entries.values()].filter((e) => e.server === server);
    if (mine.length < max) return;
    const { isolation, evictAtCap } = this.ownership;
    const idle = mine.filter((e) => e.connection.inFlight === 0).sort((a, b) => a.lastUsed - b.lastUsed)[0];
    if (!evictAtCap || !idle) {
      const why = evictAtCap
        ? `has ${max} ${isolation} connections busy; try again shortly`
        : `already has ${max} ${isolation} connections, the most it may have; try again when another session has ended`;
      throw new McpError(ErrorCode.UpstreamUnavailable, `Upstream '${server}' ${why}`, { server });
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
