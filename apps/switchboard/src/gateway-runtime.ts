import type { AuditLog } from '@switchboard/audit';
import { CatalogStore } from '@switchboard/catalog';
import { pinnedRootsChanged, type FileWatcher, type GatewayConfig } from '@switchboard/config';
import { callerName, type CallerIdentity } from '@switchboard/core';
import { Inbox } from '@switchboard/inbox';
import type { Logger } from '@switchboard/observability';
import type { SqliteConnection } from '@switchboard/persistence';
import { PinGuard, PinStore, type PolicyDocument, type PolicyEngine } from '@switchboard/policy';
import { SessionDirectory, type CatalogSync, type GatewayDispatcher, type NotificationFanout } from '@switchboard/relay';
import { PrincipalSecretStore } from '@switchboard/secrets';
import type { PrincipalConnections, SessionConnections, UpstreamRegistry } from '@switchboard/upstream';
import { loadSecretsKey } from './digest-key.js';
import { buildGatewayGraph } from './gateway-graph.js';
import { openPolicy } from './policy-setup.js';
import { PrincipalSecrets, reportDiscoveryConnects, type SecretSource } from './principal-secrets.js';
import { changedSettings, LIVE_SETTINGS } from './reload-settings.js';
import { recordPolicyEvent } from './policy-audit.js';
import { reportPinChange, watchToolPins } from './tool-pin-watch.js';
import { upstreamHealth, type UpstreamHealth } from './upstream-health.js';

const NO_SECRETS: SecretSource = { valuesFor: () => ({}), principalsWith: () => [], fingerprint: () => '' };

export interface RuntimeOptions {
  /** Whether this process serves the inbox page (the HTTP daemon does; stdio mode does not). */
  servesInbox?: boolean;
}

/**
 * The gateway in one process: its object graph, built once (gateway-graph.ts), and what it
 * does over the process's life: start, live reload, the database poll, drain and stop.
 * Plain objects rather than Nest providers so that `switchboard stdio` runs the same graph
 * without an HTTP server.
 */
export class GatewayRuntime {
  readonly registry: UpstreamRegistry;
  readonly catalog = new CatalogStore();
  readonly sessions = new SessionDirectory();
  readonly sync: CatalogSync;
  readonly dispatcher: GatewayDispatcher;
  /** Who may do what; its file is watched once started. */
  readonly policy: PolicyEngine;
  private readonly policyWatcher?: FileWatcher<PolicyDocument>;
  /** The policy file's bytes as loaded: what its watch starts from. */
  private readonly policyBytes?: Buffer;
  private readonly fanout: NotificationFanout;
  /** Tool-definition pins; without a database (tests) nothing is pinned. */
  readonly pins?: PinGuard;
  /** One connection per principal for `isolation: per-principal` servers. */
  readonly principalConnections: PrincipalConnections;
  /**
   * Questions for humans that no host can take, answered on /admin/inbox. Undefined where no
   * page serves it (`switchboard stdio`): a question there would only wait out its deadline.
   */
  readonly inbox?: Inbox;
  /** One connection per downstream session for `isolation: per-session` servers. */
  readonly sessionConnections: SessionConnections;
  /** Their secrets; without a database (tests) nobody has any. */
  private readonly secrets: PrincipalSecrets;
  /** Looks for accepted pins and changed secrets that other processes wrote. */
  private poll?: NodeJS.Timeout;
  private current: GatewayConfig;
  private drainStarted = false;

  constructor(
    config: GatewayConfig,
    readonly logger: Logger,
    /** Undefined when `audit.enabled` is false. */
    readonly audit?: AuditLog,
    /** The daemon's database: tool pins live there. */
    database?: SqliteConnection,
    options: RuntimeOptions = {},
  ) {
    this.current = config;
    if (options.servesInbox) this.inbox = new Inbox();
    if (database) {
      this.pins = new PinGuard(
        new PinStore(database),
        (server) => this.current.servers.find((s) => s.name === server)?.pin ?? 'strict',
        (change) => reportPinChange(change, logger, audit),
      );
      watchToolPins(this.pins, this.catalog, logger);
    }
    // Hosts list again after a policy reload: what each may see can have changed. Approvals
    // waiting in the inbox were asked under the old policy, which no longer decides.
    ({ engine: this.policy, watcher: this.policyWatcher, loadedBytes: this.policyBytes } = openPolicy(config, logger, () => {
      this.fanout.listsChanged();
      const withdrawn = this.inbox?.withdrawStale(this.policy.digest) ?? 0;
      if (withdrawn > 0) logger.info({ withdrawn }, 'withdrew the approvals waiting in the inbox: they were asked under the previous policy');
    }, (event) => recordPolicyEvent(event, audit)));
    this.secrets = new PrincipalSecrets(
      database ? new PrincipalSecretStore(database, loadSecretsKey(config.dataDir)) : NO_SECRETS,
      logger,
    );
    const graph = buildGatewayGraph({
      config,
      current: () => this.current,
      logger,
      audit,
      catalog: this.catalog,
      sessions: this.sessions,
      policy: this.policy,
      pins: this.pins,
      secrets: this.secrets,
      inbox: this.inbox,
    });
    ({
      registry: this.registry,
      sync: this.sync,
      fanout: this.fanout,
      principalConnections: this.principalConnections,
      sessionConnections: this.sessionConnections,
      dispatcher: this.dispatcher,
    } = graph);
    // A per-principal server's list-reading connection that fails with one principal's
    // secrets is tried with the next one's.
    reportDiscoveryConnects(this.registry, this.secrets, () => void this.apply(this.current));
  }

  get config(): GatewayConfig {
    return this.current;
  }

  async start(): Promise<void> {
    this.policyWatcher?.start(this.policyBytes);
    // `switchboard tools accept` and `secrets set` land in the database; look every 2 s.
    this.poll = setInterval(() => this.pollDatabase(), 2000).unref();
    await this.apply(this.current);
  }

  private pollDatabase(): void {
    try {
      // A held-back tool accepted (`switchboard tools accept`) is listed again: hosts hear so.
      if (this.pins?.refresh()) this.fanout.listsChanged();
      if (this.secrets.poll()) {
        this.logger.info('upstream secrets changed; per-principal connections follow');
        void this.apply(this.current);
      }
    } catch (err) {
      // A locked or failing database: try again at the next poll.
      this.logger.error({ err }, 'could not read pins or secrets from the database');
    }
  }

  /**
   * A live config change: upstreams added, removed or restarted; hosts hear list_changed. The
   * log names the live settings that changed too (rateLimits, relay, ...): they hold from
   * the next request, and a reload that changed only those otherwise logged nothing but
   * empty lists of servers.
   */
  async reload(next: GatewayConfig): Promise<void> {
    const previous = this.current;
    this.current = next;
    const settings = changedSettings(previous, next, LIVE_SETTINGS);
    this.secrets.forgetDiscoveryFailures();
    const changes = await this.apply(next);
    // Read after the await: a reload that followed this one may have brought a server back.
    this.pins?.forgetServersBut(this.current.servers.filter((s) => s.enabled).map((s) => s.name));
    this.announcePinnedRoots(pinnedRootsChanged(previous.servers, next.servers));
    this.logger.info({ ...changes, settings }, 'config reloaded');
  }

  /** Servers whose pinned roots changed keep running; every connection to them hears so, and asks again. */
  private announcePinnedRoots(servers: readonly string[]): void {
    if (servers.length === 0) return;
    const names = new Set(servers);
    const owned = [...this.principalConnections.all(), ...this.sessionConnections.all()].map((c) => c.connection);
    for (const connection of [...this.registry.all(), ...owned]) {
      if (names.has(connection.name) && connection.isAvailable) void connection.notify('notifications/roots/list_changed');
    }
  }

  /**
   * A session was ended because its caller's credential no longer holds (a key revoked, a
   * rotation's overlap over). Once no session of that name is left, the name's own upstream
   * connections close, so a process holding its secrets does not wait out the idle timeout.
   * A name with a session still open (another key of the name: a rotation's successor)
   * keeps them: it is the same principal, and its connection serves it.
   */
  credentialLapsed(principal: CallerIdentity): void {
    const name = callerName(principal);
    for (const session of this.sessions.all()) if (callerName(session.principal) === name) return;
    const closed = this.principalConnections.release(name);
    if (closed > 0) this.logger.info({ principal: name, connections: closed }, 'closed its own upstream connections: its credential no longer holds and it has no session left');
  }

  /** Reads the policy file now (SIGHUP); whether that found a change. */
  checkPolicyNow(): boolean {
    return this.policyWatcher?.checkNow() ?? false;
  }

  /** Every enabled upstream with its state, for /readyz (upstream-health.ts). */
  upstreamHealth(): UpstreamHealth[] {
    return upstreamHealth(this.current.servers, {
      shared: (name) => this.registry.get(name),
      owned: () => [...this.principalConnections.all(), ...this.sessionConnections.all()],
      waiting: this.secrets.waitingForSecrets(),
      tried: this.secrets.discoveryFailures(),
    });
  }

  /** Requests in flight to upstreams, over the shared, per-principal and per-session connections. */
  inFlight(): number {
    return this.registry.inFlight() + this.principalConnections.inFlight() + this.sessionConnections.inFlight();
  }

  /** Set once the drain has begun: /readyz then says `stopping` (503). */
  get stopping(): boolean {
    return this.drainStarted;
  }

  /** Refuses new requests, waits for in-flight ones (bounded), then stops every upstream. */
  async drainAndStop(maxWaitMs: number): Promise<void> {
    this.drainStarted = true;
    this.policyWatcher?.stop();
    clearInterval(this.poll);
    this.dispatcher.startDraining();
    // A question waiting for a human would hold its call for the whole drain: end them now.
    this.inbox?.withdrawAll();
    const deadline = Date.now() + maxWaitMs;
    while (this.inFlight() > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
    }
    const left = this.inFlight();
    if (left > 0) this.logger.warn({ left }, 'stopping with requests still in flight');
    await Promise.all([this.registry.stopAll(), this.principalConnections.stopAll(), this.sessionConnections.stopAll()]);
    // Nothing of the gateway runs after shutdown: the task book sweeps no more.
    this.dispatcher.services.tasks?.close();
  }

  /**
   * The shared registry runs each per-principal server with one principal's secrets, and
   * each per-session server as configured, to read its lists (principal-secrets.ts); calls
   * go through the caller's (or the session's) own connection.
   */
  private apply(config: GatewayConfig) {
    this.secrets.setServers(config.servers);
    const shared = { ...config, servers: this.secrets.discoveryServers(config.servers) };
    this.principalConnections.refresh(config.servers);
    this.sessionConnections.refresh(config.servers);
    this.sync.configure(shared);
    return this.registry.apply(shared.servers);
  }
}
