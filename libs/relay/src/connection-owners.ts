import { callerName } from '@switchboard/core';
import type { OwnedConnections, UpstreamConnection, UpstreamRegistry } from '@switchboard/upstream';
import type { DownstreamSession } from './session.js';

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
   * The owner of `connection`, which a request of `session` went to. A connection no pool
   * holds any more (replaced by a config change, finishing what it has in flight) is taken
   * for the session's principal's, as routing gave it to them.
   */
  ownerFor(connection: UpstreamConnection, session: DownstreamSession): string {
    if (this.registry.get(connection.name) === connection) return SHARED;
    for (const pool of this.owned) {
      const owner = pool.ownerOf(connection);
      if (owner !== undefined) return owner;
    }
    return callerName(session.principal);
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
