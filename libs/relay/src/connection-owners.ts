import type { OwnedConnections, UpstreamConnection, UpstreamRegistry } from '@switchboard/upstream';

/** The owner of the registry's connections, which every host shares. */
export const SHARED = '';

/**
 * Whose an upstream connection is: nobody's (SHARED) for the registry's, else its owner in
 * the pools of isolated servers (a principal's name, a session's id). What a connection
 * keeps for the gateway under ids its upstream chose (subscribed URIs, URL elicitations) is
 * keyed by server and owner, as each owner's connection is an upstream of its own, whose
 * ids may be another's too; and what the connection later says comes tagged with the same
 * owner (OwnedConnectionListener).
 */
export class ConnectionOwners {
  constructor(
    private readonly registry: Pick<UpstreamRegistry, 'get'>,
    private readonly owned: readonly Pick<OwnedConnections, 'ownerOf' | 'existing'>[],
  ) {}

  /**
   * The owner of `connection`: the owner a pool opened it for, though a config change has
   * retired it and it is only finishing its calls, as it still tags what it says with that
   * owner (a per-session one with the session's id). A connection no pool opened is the
   * registry's, the current one or one a config change replaced, whose notifications still
   * come as the registry's (SHARED). (Both were taken for the session's principal's, so a
   * URL elicitation asked on a retired connection was kept under an owner its completion
   * never came from.)
   */
  ownerFor(connection: UpstreamConnection): string {
    for (const pool of this.owned) {
      const owner = pool.ownerOf(connection);
      if (owner !== undefined) return owner;
    }
    return SHARED;
  }

  /** The connection of `owner` (SHARED: the registry's) to `server`, if one is open. */
  existing(server: string, owner: string): UpstreamConnection | undefined {
    if (owner === SHARED) return this.registry.get(server);
    for (const pool of this.owned) {
      const found = pool.existing(server, owner);
      if (found) return found;
    }
    return undefined;
  }
}
