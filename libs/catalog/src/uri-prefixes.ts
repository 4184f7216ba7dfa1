import { sanitizePrefix, shortHash } from '@switchboard/core';
import type { UpstreamSnapshot } from './catalog.types.js';

export interface UriPrefixes {
  /** server -> its prefix in the gateway URIs it publishes now. */
  current: Map<string, string>;
  /**
   * prefix -> the server that published gateway URIs under it before its alias or name
   * changed (oldest first): hosts may still hold those URIs, so the prefix stays that
   * server's while it is configured, and routes to it.
   */
  retired: Map<string, string>;
}

/**
 * The URI prefix of each server in gateway URIs: its sanitized alias or name, made unique
 * so that a gateway URI always parses back to one server. A server keeps the prefix it
 * held while that still derives from its alias or name, and a server that is down keeps
 * its own reserved (it is in the result). A prefix a server had before a change of its
 * alias is retired rather than freed: no other server gets it while the server is
 * configured (it may take it back), so a `switchboard://OLD/...` URI a host holds never
 * moves to another server. At most `retiredPerServer` of a server's are kept, the newest.
 * Config order settles the rest.
 */
export function assignUriPrefixes(
  upstreams: readonly UpstreamSnapshot[],
  held: ReadonlyMap<string, string>,
  heldRetired: ReadonlyMap<string, string>,
  retiredPerServer: number,
): UriPrefixes {
  const current = new Map<string, string>();
  const inUse = new Set<string>();
  const retired = new Map(heldRetired);
  const present = new Set(upstreams.map((u) => u.server));
  const baseOf = (u: UpstreamSnapshot) => sanitizePrefix(u.prefix) || sanitizePrefix(u.server) || shortHash(u.server);
  const free = (prefix: string, server: string) => !inUse.has(prefix) && (retired.get(prefix) ?? server) === server;
  const take = (server: string, prefix: string) => {
    inUse.add(prefix);
    current.set(server, prefix);
    retired.delete(prefix);
  };
  for (const [server, prefix] of held) if (!present.has(server)) take(server, prefix);
  for (const u of upstreams) {
    const mine = held.get(u.server);
    const base = baseOf(u);
    if (mine !== undefined && (mine === base || mine.startsWith(`${base}-`)) && free(mine, u.server)) take(u.server, mine);
  }
  // Retired before anyone is given a new prefix: a server added in the same reload as the
  // alias change must not get the old one.
  for (const u of upstreams) {
    const mine = held.get(u.server);
    if (mine !== undefined && current.get(u.server) !== mine) retired.set(mine, u.server);
  }
  for (const u of upstreams) {
    if (current.has(u.server)) continue;
    const base = baseOf(u);
    let prefix = base;
    for (let attempt = 0; !free(prefix, u.server); attempt++) prefix = `${base}-${shortHash(u.server, String(attempt))}`;
    take(u.server, prefix);
  }
  return { current, retired: newestPerServer(retired, retiredPerServer) };
}

/** The map without each server's oldest entries beyond `limit` (insertion order is age). */
function newestPerServer(retired: ReadonlyMap<string, string>, limit: number): Map<string, string> {
  const counted = new Map<string, number>();
  const kept = [...retired].reverse().filter(([, server]) => {
    const n = (counted.get(server) ?? 0) + 1;
    counted.set(server, n);
    return n <= limit;
  });
  return new Map(kept.reverse());
}
