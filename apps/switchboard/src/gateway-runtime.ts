import type { AuditLog } from '@switchboard/audit';
import type { FileWatcher } from '@switchboard/config';
import type { PolicyDocument, PolicyEngine } from '@switchboard/policy';
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
  private current: GatewayConfig;

  constructor(
    config: GatewayConfig,
    readonly logger: Logger,
    /** Undefined when `audit.enabled` is false. */
    readonly audit?: AuditLog,
  ) {
    this.current = config;
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
    });
  }

  get config(): GatewayConfig {
    return this.current;
  }

  async start(): Promise<void> {
    this.policyWatcher?.start();
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
