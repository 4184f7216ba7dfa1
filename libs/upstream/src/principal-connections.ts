import { withSecrets } from '@switchboard/config';
import { OwnedConnections, type OwnedConnectionsDeps } from './owned-connections.js';

/** Where a principal's secrets come from (the secret store, through a cache). */
export interface SecretValues {
  /** Every secret the principal has, by name; `{}` when none. */
  valuesFor(principal: string): Readonly<Record<string, string>>;
}

export interface PrincipalConnectionsDeps extends OwnedConnectionsDeps {
  secrets: SecretValues;
}

/**
 * The connections of `isolation: per-principal` servers: one per (server, principal), opened
 * with that principal's own secrets filled into the server's env or headers, so one user's
 * credentials never carry another user's request. `connectionFor` throws MissingSecretsError
 * (from config) when the principal lacks a secret the server needs. A rotated secret
 * replaces the connection; at the cap the least recently used idle one is closed (it holds
 * nothing a new connection with the same credentials would not).
 */
export class PrincipalConnections extends OwnedConnections {
  constructor(deps: PrincipalConnectionsDeps) {
    super(
      {
        isolation: 'per-principal',
        configFor: (server, principal) => withSecrets(server, deps.secrets.valuesFor(principal)),
        evictAtCap: true,
      },
      deps,
    );
  }
}
