import { createRedactor, type AuditLog } from '@switchboard/audit';
import type { CatalogStore } from '@switchboard/catalog';
import { servingChainFor, type GatewayConfig } from '@switchboard/config';
import type { Inbox } from '@switchboard/inbox';
import type { Logger } from '@switchboard/observability';
import { ApprovalBook, type PinGuard, type PolicyEngine } from '@switchboard/policy';
import { MemoryBucketStore, RequestLimiter } from '@switchboard/rate-limit';
import {
  answeringPinnedRoots,
  CatalogSync,
  ConnectionOwners,
  Forwarder,
  GatewayDispatcher,
  NotificationFanout,
  OutputSchemas,
  pushUpstreamLogLevel,
  ServerRequestRelay,
  SubscriptionManager,
  TaskRelay,
  UrlElicitations,
  type Principal,
  type SessionDirectory,
} from '@switchboard/relay';
import {
  DefaultTransportFactory,
  PrincipalConnections,
  SessionConnections,
  UpstreamRegistry,
  type OwnedConnectionListener,
  type ServerRequest,
  type ServerRequestHandler,
} from '@switchboard/upstream';
import type { PrincipalSecrets } from './principal-secrets.js';
import { RELAYED_CAPABILITIES, sessionCapabilitiesFor } from './upstream-capabilities.js';
import { SWITCHBOARD_VERSION } from './version.js';

/** What the graph is built around: the parts the runtime itself owns and keeps using. */
export interface GatewayGraphParts {
  /** The config at start: the redaction rules and the config file's serving chain are fixed for the process. */
  config: GatewayConfig;
  /** The config in force, which a reload replaces. */
  current: () => GatewayConfig;
  logger: Logger;
  audit?: AuditLog;
  catalog: CatalogStore;
  sessions: SessionDirectory;
  policy: PolicyEngine;
  pins?: PinGuard;
  secrets: PrincipalSecrets;
  inbox?: Inbox;
}

/** The upstream connections and the request pipeline over them, as the runtime drives them. */
export interface GatewayGraph {
  registry: UpstreamRegistry;
  sync: CatalogSync;
  fanout: NotificationFanout;
  principalConnections: PrincipalConnections;
  sessionConnections: SessionConnections;
  dispatcher: GatewayDispatcher;
}

/**
 * Builds the gateway's object graph: the upstream connections (shared, per principal, per
 * session), the fan-out of their notifications, and the dispatcher with every gate. Several
 * parts need each other (an upstream's question goes to the relay, which needs the
 * dispatcher, which needs the upstreams), so some are bound late, before any can be used.
 */
export function buildGatewayGraph(parts: GatewayGraphParts): GatewayGraph {
  const { config, current, logger, audit, catalog, sessions, policy, pins, secrets, inbox } = parts;
  let relay!: ServerRequestRelay;
  let urlElicitations!: UrlElicitations;
  let serverRequests!: ServerRequestHandler;
  // What upstreams say (what stdio ones print: their arguments, tokens, headers; the errors
  // of any) is redacted by the audit log's rules before it reaches the daemon's log or a
  // host, even with the audit log off.
  const redactor = createRedactor(config.audit.redact);
  const upstreamDeps = {
    logger,
    redactor,
    factory: new DefaultTransportFactory(servingChainFor(config.source), redactor.redactText),
    client: { name: 'switchboard', version: SWITCHBOARD_VERSION },
    clientCapabilities: RELAYED_CAPABILITIES,
    serverRequests: (request: ServerRequest) => serverRequests(request),
  };
  const registry = new UpstreamRegistry(upstreamDeps);
  const sync = new CatalogSync(registry, catalog, logger);
  const isolated = (server: string) => current().servers.some((s) => s.name === server && s.isolation !== 'shared');
  const mayReadLogs = (principal: Principal, server: string) => policy.decide(principal, 'log', 'Server', { server }).allowed;
  const fanout = new NotificationFanout(sessions, registry, catalog, isolated, mayReadLogs);
  let subscriptions!: SubscriptionManager;
  /** What an owned connection reports goes to its owner: a principal's sessions, or the one session. */
  const toOwner = (perSession: boolean): OwnedConnectionListener => ({
    ready: (server, owner, connection) => {
      subscriptions.ownedConnectionReady(server, owner);
      void pushUpstreamLogLevel(connection, sessions, perSession ? owner : undefined);
    },
    notification: (server, owner, n) => {
      if (perSession) fanout.sessionNotification(server, owner, n);
      else fanout.principalNotification(server, owner, n);
      subscriptions.onNotification(server, owner, n);
      urlElicitations.notification(server, n, owner);
    },
  });
  const principalConnections = new PrincipalConnections({ ...upstreamDeps, secrets, listener: toOwner(false) });
  const sessionConnections = new SessionConnections({
    ...upstreamDeps,
    capabilitiesFor: sessionCapabilitiesFor(sessions, () => inbox !== undefined && current().relay.inbox),
    listener: toOwner(true),
  });
  const owners = new ConnectionOwners(registry, [principalConnections, sessionConnections]);
  // A host has as long to finish a URL elicitation's flow as to answer any question.
  urlElicitations = new UrlElicitations(() => current().relay.timeoutMs, sessions, owners, logger);
  // A session's own connections end with it (and after the idle timeout, like any owned one).
  sessions.onClose((session) => void sessionConnections.closeOwner(session.id));
  const mayHearOfUpdate = (principal: Principal, server: string, uri: string) => policy.decide(principal, 'subscribe', 'Resource', { server, uri }).allowed;
  subscriptions = new SubscriptionManager(registry, sessions, logger, owners, mayHearOfUpdate);
  const dispatcher = new GatewayDispatcher({
    config: current,
    catalog,
    sync,
    registry,
    sessions,
    forwarder: new Forwarder(urlElicitations),
    subscriptions,
    logger,
    serverInfo: { name: 'switchboard', title: 'Switchboard MCP gateway', version: SWITCHBOARD_VERSION },
    audit,
    limiter: new RequestLimiter(() => current().rateLimits, new MemoryBucketStore()),
    policy,
    pins,
    principalConnections,
    sessionConnections,
    unusableServers: (principal) => secrets.unusableServers(principal),
    inbox,
    approvals: new ApprovalBook(),
    urlElicitations,
    outputSchemas: new OutputSchemas(catalog, logger),
    tasks: new TaskRelay(sessions),
  });
  relay = new ServerRequestRelay(dispatcher.services, () => current().relay);
  serverRequests = answeringPinnedRoots(dispatcher.services, relay.handle);
  registry.addListener({ notification: (server, n) => urlElicitations.notification(server, n) });
  return { registry, sync, fanout, principalConnections, sessionConnections, dispatcher };
}
