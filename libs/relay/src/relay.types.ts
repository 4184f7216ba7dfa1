import type { ApprovalBook, PinGuard, PolicyEngine } from '@switchboard/policy';
import type { RequestLimiter } from '@switchboard/rate-limit';
import type { CatalogStore } from '@switchboard/catalog';
import type { GatewayConfig } from '@switchboard/config';
import type { InboundContext, JsonRpcRequest } from '@switchboard/core';
import type { Logger } from '@switchboard/observability';
import type { PrincipalConnections, SessionConnections, UpstreamRegistry } from '@switchboard/upstream';
import type { AuditLog } from '@switchboard/audit';
import type { Inbox } from '@switchboard/inbox';
import type { AuditFacts } from './audit/audit-facts.js';
import type { CatalogSync } from './catalog-sync.js';
import type { Forwarder } from './forwarder.js';
import type { DownstreamSession, SessionDirectory } from './session.js';
import type { SubscriptionManager } from './subscriptions.js';
import type { UrlElicitations } from './server-requests/url-elicitations.js';
import type { OutputSchemas } from './results/output-schemas.js';
import type { TaskRelay } from './tasks/task-relay.js';

export type Item = Record<string, unknown>;

/** The collaborators a method handler may use; injected, so handlers stay small and testable. */
export interface RelayServices {
  config(): GatewayConfig;
  catalog: CatalogStore;
  sync: CatalogSync;
  registry: UpstreamRegistry;
  sessions: SessionDirectory;
  forwarder: Forwarder;
  subscriptions: SubscriptionManager;
  logger: Logger;
  serverInfo: { name: string; version: string; title?: string };
  /** Undefined when the audit log is turned off. */
  audit?: AuditLog;
  /** The rate-limit gate; undefined in tests that do not need one. */
  limiter?: RequestLimiter;
  /** Who may do what; undefined in tests that do not need one (everything is allowed). */
  policy?: PolicyEngine;
  /** Tool-definition pins; undefined where nothing is pinned (no database). */
  pins?: PinGuard;
  /** Connections of `isolation: per-principal` servers, one per principal; undefined in tests without any. */
  principalConnections?: PrincipalConnections;
  /** Approvals a human chose to remember; undefined: every confirm asks. */
  approvals?: ApprovalBook;
  /** Questions for humans no host can take (the web inbox); undefined in tests without one. */
  inbox?: Inbox;
  /** Where upstreams' URL-elicitation completions go; undefined in tests without them. */
  urlElicitations?: UrlElicitations;
  /**
   * The tools' outputSchemas, compiled, that a tools/call's structuredContent must match;
   * undefined in tests without them (results are still checked for their shape).
   */
  outputSchemas?: OutputSchemas;
  /** Tasks relayed to the hosts that speak them (ADR 012); undefined: none are. */
  tasks?: TaskRelay;
  /** Connections of `isolation: per-session` servers, one per downstream session; undefined in tests without any. */
  sessionConnections?: SessionConnections;
  /**
   * The per-principal servers a principal cannot use, lacking a secret they need; their
   * items are left out of that principal's lists. Sorted, so it can key a cache.
   */
  unusableServers?(principal: string): readonly string[];
}

export interface RequestContext extends InboundContext {
  session: DownstreamSession;
  request: JsonRpcRequest;
  params: Item;
  audit: AuditFacts;
}

export type MethodHandler = (ctx: RequestContext, services: RelayServices) => Promise<Item>;
