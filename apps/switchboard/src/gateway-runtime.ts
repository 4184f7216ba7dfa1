import { systemEntry, type AuditLog } from '@switchboard/audit';
import type { FileWatcher } from '@switchboard/config';
import { PinGuard, PinStore, type PinChange, type PolicyDocument, type PolicyEngine } from '@switchboard/policy';
import type { SqliteConnection } from '@switchboard/persistence';
import { MemoryBucketStore, RequestLimiter } from '@switchboard/rate-limit';
import { CatalogStore } from '@switchboard/catalog';
import type { GatewayConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/observability';
import {
  CatalogSync,
  Forwarder,
  GatewayDispatcher,
  NotificationFanout,
  SessionDirectory,
  SubscriptionManager,
} from '@switchboard/relay';
import { DefaultTransportFactory, UpstreamRegistry } from '@switchboard/upstream';
import { openPolicy } from './policy-setup.js';
import { SWITCHBOARD_VERSION } from './version.js';

/**
 * The gateway's object graph, built once per process. Plain objects rather than Nest
 * providers so that `switchboard stdio` runs the same graph without an HTTP server.
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
  /** Tool-definition pins; without a database (tests) nothing is pinned. */
  readonly pins?: PinGuard;
  private pinPoll?: NodeJS.Timeout;
  private current: GatewayConfig;

  constructor(
    config: GatewayConfig,
    readonly logger: Logger,
    /** Undefined when `audit.enabled` is false. */
    readonly audit?: AuditLog,
    /** The daemon's database: tool pins live there. */
    database?: SqliteConnection,
  ) {
    this.current = config;
    if (database) {
      this.pins = new PinGuard(
        new PinStore(database),
        (server) => this.current.servers.find((s) => s.name === server)?.pin ?? 'strict',
        (change) => this.reportPinChange(change),
      );
      this.watchPins();
    }
    ({ engine: this.policy, watcher: this.policyWatcher } = openPolicy(config, logger));
    this.registry = new UpstreamRegistry({
      logger,
      factory: new DefaultTransportFactory(),
      client: { name: 'switchboard', version: SWITCHBOARD_VERSION },
    });
    this.sync = new CatalogSync(this.registry, this.catalog, logger);
    const subscriptions = new SubscriptionManager(this.registry, this.sessions, logger);
    new NotificationFanout(this.sessions, this.registry, this.catalog);
    this.dispatcher = new GatewayDispatcher({
      config: () => this.current,
      catalog: this.catalog,
      sync: this.sync,
      registry: this.registry,
      sessions: this.sessions,
      forwarder: new Forwarder(),
      subscriptions,
      logger,
      serverInfo: { name: 'switchboard', title: 'Switchboard MCP gateway', version: SWITCHBOARD_VERSION },
      audit,
      limiter: new RequestLimiter(() => this.current.rateLimits, new MemoryBucketStore()),
      policy: this.policy,
      pins: this.pins,
    });
  }

  get config(): GatewayConfig {
    return this.current;
  }

  /** Each upstream's tools are checked against their pins whenever its list is new. */
  private watchPins(): void {
    const seen = new Map<string, readonly unknown[]>();
    this.catalog.onChange(() => {
      for (const server of this.catalog.servers()) {
        const tools = this.catalog.snapshot(server)!.tools;
        if (seen.get(server) === tools) continue;
        seen.set(server, tools);
        try {
          this.pins!.observe(server, tools);
        } catch (err) {
          // The database is locked or failing: the tools stay as they are until the next change.
          seen.delete(server);
          this.logger.error({ err, server }, 'tool pins could not be checked');
        }
      }
    });
  }

  private reportPinChange(change: PinChange): void {
    const held = change.outcome === 'quarantined';
    this.logger.warn(
      { server: change.server, tool: change.tool, previousHash: change.previousHash, hash: change.hash },
      held
        ? 'a tool definition changed since it was pinned: the tool is held back until `switchboard tools accept`'
        : 'a tool definition changed since it was pinned (pin: warn): the new definition is pinned',
    );
    this.audit?.note(
      systemEntry(
        {
          method: 'tools/definition-changed',
          decision: held ? 'denied' : 'allowed',
          rule: held ? 'pin:quarantined' : 'pin:warn',
          outcome: null,
          errorMessage: `tool '${change.tool}' of '${change.server}' changed its definition`,
        },
        { server: change.server, tool: change.tool, previousHash: change.previousHash, hash: change.hash },
      ),
    );
  }

  async start(): Promise<void> {
    this.policyWatcher?.start();
    // An admin's `switchboard tools accept` lands in the database; look for it every 2 s.
    if (this.pins) this.pinPoll = setInterval(() => this.pins!.refresh(), 2000).unref();
    await this.apply(this.current);
  }

  /** A live config change: upstreams added, removed or restarted; hosts hear list_changed. */
  async reload(next: GatewayConfig): Promise<void> {
    this.current = next;
    const changes = await this.apply(next);
    this.logger.info(changes, 'config reloaded');
  }

  /** Refuses new requests, waits for in-flight ones (bounded), then stops every upstream. */
  async drainAndStop(maxWaitMs: number): Promise<void> {
    this.policyWatcher?.stop();
    clearInterval(this.pinPoll);
    this.dispatcher.startDraining();
    const deadline = Date.now() + maxWaitMs;
    while (this.registry.inFlight() > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
    }
    const left = this.registry.inFlight();
    if (left > 0) this.logger.warn({ left }, 'stopping with requests still in flight');
    await this.registry.stopAll();
  }

  private apply(config: GatewayConfig) {
    this.sync.configure(config);
    return this.registry.apply(config.servers);
  }
}
