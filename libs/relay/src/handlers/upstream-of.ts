import { ErrorCode, McpError } from '@switchboard/core';
import type { UpstreamConnection } from '@switchboard/upstream';
import type { RelayServices } from '../relay.types.js';

/** The connection for a server the catalog named; it may have left since the lookup. */
export function upstreamOf(services: RelayServices, server: string): UpstreamConnection {
  const connection = services.registry.get(server);
  if (!connection) {
    throw new McpError(ErrorCode.UpstreamUnavailable, `Upstream '${server}' is not available`, { server });
  }
  return connection;
}
