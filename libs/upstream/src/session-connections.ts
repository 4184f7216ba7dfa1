import type { ServerConfig } from '@switchboard/config';
import { OwnedConnections, type OwnedConnectionsDeps } from './owned-connections.js';

export interface SessionConnectionsDeps extends OwnedConnectionsDeps {
  /**
   * What the session's connection to `server` declares it can answer (sampling,
   * elicitation, roots): only what the gateway can honour for that session's host.
   */
  capabilitiesFor(server: ServerConfig, sessionId: string): Record<string, unknown>;
}

/**
 * The connections of `isolation: per-session` servers: one per (server, downstream session),
 * for servers that keep state per connection, and so that every request such a connection
 * sends the gateway (sampling, elicitation, roots) has exactly one host to go to. The config
 * is the server's own (secrets are per-principal only). The caller closes a session's
 * connections when it ends (closeOwner); at the cap a new session is refused rather than
 * another session's state thrown away.
 */
export class SessionConnections extends OwnedConnections {
  constructor(deps: SessionConnectionsDeps) {
    super(
      {
        isolation: 'per-session',
        configFor: (server) => server,
        capabilitiesFor: (server, sessionId) => deps.capabilitiesFor(server, sessionId),
        evictAtCap: false,
      },
      deps,
    );
  }
}
