import type { ListFilter, ListKind } from '@switchboard/catalog';
import { callerName } from '@switchboard/core';
import type { RelayServices } from '../relay.types.js';
import type { DownstreamSession } from '../session.js';

/**
 * What of one kind of list a principal may see: nothing of a per-principal server it has no
 * credentials for, and of the rest what the policy lets it list. The lists page by it, and
 * initialize gives an upstream's instructions only to a principal who may list something of
 * that upstream by it, so the two cannot disagree. Pinning is no part of it: it holds a tool
 * back from everyone, not from whoever asks (docs/policy.md).
 */
export interface PrincipalListView {
  /** Undefined when it hides nothing, so an unfiltered list stays on the fast path. */
  filter: ListFilter | undefined;
  /** Names what it hides, for page caches: principals with the same roles and credentials share pages. */
  key: string;
  /**
   * Whether the principal may list something of `server`. Without a policy that is every
   * server it has credentials for, whether or not it serves items of this kind now.
   */
  listsSomethingOf(server: string): boolean;
}

export function principalListView(principal: DownstreamSession['principal'], kind: ListKind, services: RelayServices): PrincipalListView {
  const unusable = services.unusableServers?.(callerName(principal)) ?? NONE;
  const policy = services.policy?.listView(principal, kind);
  const filter = combine(unusable.length > 0 ? (_item, origin) => !unusable.includes(origin.server) : undefined, policy?.filter);
  return {
    filter,
    key: `${policy?.view ?? ''}\n${unusable.join(',')}`,
    listsSomethingOf(server) {
      if (unusable.includes(server)) return false;
      if (!policy) return true;
      const ofServer: ListFilter = (item, origin) => origin.server === server && filter!(item, origin);
      return services.catalog.current.page(kind, undefined, 1, ofServer).items.length > 0;
    },
  };
}

const NONE: readonly string[] = [];

/** All of the filters given; undefined when none is. */
export function combine(...filters: (ListFilter | undefined)[]): ListFilter | undefined {
  const present = filters.filter((f): f is ListFilter => f !== undefined);
  if (present.length <= 1) return present[0];
  return (item, origin) => present.every((f) => f(item, origin));
}
