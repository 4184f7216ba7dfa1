import { createHash } from 'node:crypto';

/**
 * The naming rule for tools and prompts (ADR 001). One pure function so that the catalog,
 * the policy and the docs agree on what a public name is.
 *
 * - `prefix`: always `<prefix><sep><name>`, where prefix is the server's alias or its name.
 * - `auto`: the bare name unless another `auto` or `none` server offers the same one; then
 *   all of them are prefixed.
 * - `none`: the bare name; on a collision with another `auto` or `none` server the first
 *   (config order) keeps it and the others are prefixed, so nothing is silently hidden.
 *
 * A `prefix` server never publishes a bare name, so it contests none: its `add` does not
 * make another server's `add` collide.
 *
 * While the gateway runs, a name already published keeps its meaning (see `held` below): a
 * server that newly offers a name another one holds gets the prefixed form, in `auto` as in
 * `none`, and the rules above settle only names nobody holds.
 *
 * Names longer than `maxLength` (64: the limit common hosts enforce) are cut and given a
 * short hash of (server, original name), so they stay stable across restarts and distinct.
 */
export type NamespaceMode = 'prefix' | 'auto' | 'none';

export interface NamingOptions {
  separator: string;
  maxLength: number;
}

export interface NameRequest {
  server: string;
  /** The server's alias or its name; used as the visible prefix. */
  prefix: string;
  mode: NamespaceMode;
  name: string;
}

export const DEFAULT_NAMING: NamingOptions = { separator: '__', maxLength: 64 };

/** Characters hosts accept in a tool name; anything else in a prefix becomes '_'. */
const UNSAFE_PREFIX_CHARS = /[^A-Za-z0-9_-]/g;
const HASH_LENGTH = 8;
const MAX_PREFIX_LENGTH = 24;

export function sanitizePrefix(prefix: string): string {
  const clean = prefix.replace(UNSAFE_PREFIX_CHARS, '_');
  if (clean.length <= MAX_PREFIX_LENGTH) return clean;
  return `${clean.slice(0, MAX_PREFIX_LENGTH - HASH_LENGTH - 1)}_${shortHash(clean)}`;
}

export function shortHash(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, HASH_LENGTH);
}

/** `attempt` > 0 gives another hash for a name whose first hashed form is taken too. */
function withHash(candidate: string, req: NameRequest, opts: NamingOptions, attempt = 0): string {
  const suffix = `_${attempt === 0 ? shortHash(req.server, req.name) : shortHash(req.server, req.name, String(attempt))}`;
  return candidate.slice(0, opts.maxLength - suffix.length) + suffix;
}

function fit(candidate: string, req: NameRequest, opts: NamingOptions): string {
  return candidate.length <= opts.maxLength ? candidate : withHash(candidate, req, opts);
}

/** A public name already published, and the (server, original name) it means. */
export interface HeldName {
  server: string;
  name: string;
}

/**
 * Assigns a unique public name to every request; the result is in the same order.
 *
 * `held` is what the names meant before this assignment (the catalog being replaced, and the
 * names of servers that are down but still configured). A held name keeps its meaning: its
 * holder keeps it as long as it still asks for that original name (for a bare name, in
 * `auto` or `none` mode), and a held name whose server is not among `requests` stays
 * reserved, so callers pass only the names of servers still configured, and of a server
 * that is up only those it still offers. Anyone else who would get a held
 * name gets the prefixed (or hashed) form instead. Config order, the order of `requests`,
 * settles only the names nobody holds (at first start, say). Without this a server added
 * ahead of another, or one coming back up, would take a name hosts use for another server's
 * tool.
 */
export function assignPublicNames(
  requests: readonly NameRequest[],
  opts: NamingOptions = DEFAULT_NAMING,
  held: ReadonlyMap<string, HeldName> = new Map(),
): string[] {
  const pair = (server: string, name: string) => `${server}\u0000${name}`;
  const present = new Set(requests.map((r) => r.server));
  const requested = new Map(requests.map((r) => [pair(r.server, r.name), r]));
  const holds = (publicName: string, r: NameRequest) => {
    const holder = held.get(publicName);
    return holder !== undefined && holder.server === r.server && holder.name === r.name;
  };
  // Still in force: the holder is down (reserved) or still asks for the same original; a
  // bare name is given up by a holder that is now in prefix mode.
  const inForce = (publicName: string) => {
    const holder = held.get(publicName);
    if (!holder) return false;
    if (!present.has(holder.server)) return true;
    const r = requested.get(pair(holder.server, holder.name));
    return r !== undefined && !(r.mode === 'prefix' && publicName === fit(r.name, r, opts));
  };

  // Who wants each bare name: a `prefix` server never takes one, so it contests none.
  const serversByName = new Map<string, string[]>();
  for (const r of requests) {
    if (r.mode === 'prefix') continue;
    const servers = serversByName.get(r.name) ?? [];
    if (!servers.includes(r.server)) servers.push(r.server);
    serversByName.set(r.name, servers);
  }

  const prefixed = (r: NameRequest) => `${sanitizePrefix(r.prefix)}${opts.separator}${r.name}`;
  const candidates = requests.map((r) => {
    if (r.mode === 'prefix') return fit(prefixed(r), r, opts);
    const bare = fit(r.name, r, opts);
    // A bare name someone holds goes to its holder, whatever the mode and config order say.
    if (inForce(bare)) return holds(bare, r) ? bare : fit(prefixed(r), r, opts);
    const holders = serversByName.get(r.name) ?? [];
    const collides = holders.length > 1;
    if (r.mode === 'auto') return collides ? fit(prefixed(r), r, opts) : bare;
    return collides && holders[0] !== r.server ? fit(prefixed(r), r, opts) : bare;
  });

  // Two different (server, name) pairs can still meet on one string (a prefix containing
  // the separator, or a bare name that equals someone's prefixed name). Its holder keeps it,
  // else the first; the others get the hashed form, which differs because the hash covers
  // (server, name). Held names in force are never handed to anyone but their holder.
  const taken = new Set([...held.keys()].filter(inForce));
  const given = new Set<string>();
  return candidates.map((candidate, i) => {
    const r = requests[i];
    if (holds(candidate, r) && taken.has(candidate) && !given.has(candidate)) {
      given.add(candidate);
      return candidate;
    }
    let out = candidate;
    if (taken.has(out)) out = withHash(prefixed(r), r, opts);
    // Still taken (a bare name that equals the hashed form): hash again, with a counter;
    // the result keeps to the characters hosts accept.
    for (let attempt = 1; taken.has(out); attempt++) out = withHash(prefixed(r), r, opts, attempt);
    taken.add(out);
    given.add(out);
    return out;
  });
}
