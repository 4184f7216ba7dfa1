import { ErrorCode, McpError } from '@switchboard/core';
import type { UpstreamConnection } from '@switchboard/upstream';
import type { AuditFacts } from '../audit/audit-facts.js';
import type { RelayServices } from '../relay.types.js';

/**
 * The connection for a server the catalog named; it may have left since the lookup. Records
 * the route (upstream and its own name for the item) for the audit row.
 */
export function upstreamOf(services: RelayServices, server: string, facts?: AuditFacts, originalName?: string): UpstreamConnection {
  if (facts) {
    facts.upstream = server;
    facts.originalName = originalName ?? null;
  }
  const connection = services.registry.get(server);
  if (!connection) {
    throw new McpError(ErrorCode.UpstreamUnavailable, `Upstream '${server}' is not available`, { server });
  }
  return connection;
}
