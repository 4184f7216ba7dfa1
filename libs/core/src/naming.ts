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
 * - In `auto` and `none`, a name with the separator in it is prefixed all the same: bare,
 *   it would look like another server's prefixed name.
 *
 * A `prefix` server never publishes a bare name, so it contests none: its `add` does not
 * make another server's `add` collide.
 *
 * While the gateway runs, a name already published keeps its meaning (see `held` below): a
 * server that newly offers a name another one holds gets the prefixed form, in `auto` as in
 * `none`, and keeps it even once the bare name is free; the rules above settle only names
 * nobody holds.
 *
 * Names longer than `maxLength` (64: the limit common hosts enforce) are cut and given a
 * short hash of (server, original name), so they stay stable across restarts and distinct.
 * So are names with a character the spec does not allow in a tool name (it allows A-Z a-z
 * 0-9 _ - . /), each such character made '_': a space or a newline that hosts (and the model
 * APIs behind them) refuse, a control or invisible character, a look-alike letter that would
 * pass for another server's tool.
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
/** Characters the spec (2025-11-25, "Tool names") allows in a tool name; others become '_'. */
const UNSAFE_NAME_CHARS = /[^A-Za-z0-9_.\/-]/g;
const UNSAFE_NAME_CHAR = /[^A-Za-z0-9_.\/-]/;
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

/**
 * `candidate`, cut and hashed when too long; hashed too when the original name had unsafe
 * characters (made '_' in it): "a b" and "a_b" must not meet on one name.
 */
function fit(candidate: string, req: NameRequest, opts: NamingOptions): string {
  return candidate.length <= opts.maxLength && !hasUnsafeChars(req.name) ? candidate : withHash(candidate, req, opts);
}

function hasUnsafeChars(name: string): boolean {
  return UNSAFE_NAME_CHAR.test(name);
}

/** The original name as a public name may show it. */
function safeName(name: string): string {
  return name.replace(UNSAFE_NAME_CHARS, '_');
}

/** A public name already published, and the (server, original name) it means. */
export interface HeldName {
  server: string;
  name: string;
  /**
   * The server asked for the bare name while another server had it, and was given the
   * prefixed (or hashed) form. It is never given the bare name afterwards, whatever its mode,
   * even once the bare name is free: hosts may still hold it for the other server's tool.
   */
  displaced?: boolean;
}

/** One assigned name, and what its claim records for the next assignment (see HeldName). */
export interface PublicName {
  name: string;
  displaced: boolean;
}

/**
 * Assigns a unique public name to every request; the result is in the same order.
 *
 * `held` is what the names meant before this assignment: the caller passes the claims of
 * the servers still configured, and every one of them is in force. A held name goes to its
 * holder's request for that original name and to no one else, so it stays reserved while
 * the holder is down, no longer offers the item, or has it under another name (it left
 * `auto` or `none` mode, or its alias changed): a host that remembers the name never reaches
 * another tool through it. A request that would get a name someone else holds gets the
 * prefixed (or hashed) form instead, and one that was kept off its bare name that way stays
 * off it (HeldName.displaced). Config order, the order of `requests`, settles only the names
 * nobody holds (at first start, say). Without this a server added ahead of another, or one
 * coming back up, would take a name hosts use for another server's tool.
 */
export function assignPublicNames(
  requests: readonly NameRequest[],
  opts: NamingOptions = DEFAULT_NAMING,
  held: ReadonlyMap<string, HeldName> = new Map(),
): PublicName[] {
  const pair = (server: string, name: string) => `${server}\u0000${name}`;
  const holds = (publicName: string, r: NameRequest) => {
    const holder = held.get(publicName);
    return holder !== undefined && holder.server === r.server && holder.name === r.name;
  };
  const keptOff = new Set([...held.values()].filter((h) => h.displaced).map((h) => pair(h.server, h.name)));
  // A `prefix` server never takes a bare name, nor does one kept off it: they contest none.
  // Nor does a name with the separator in it: bare, `github__delete_repo` of another server
  // would pass for github's tool, to a person and to a policy rule `tool: "github__*"`.
  const wantsBare = (r: NameRequest) => r.mode !== 'prefix' && !keptOff.has(pair(r.server, r.name)) && !r.name.includes(opts.separator);
  const serversByName = new Map<string, string[]>();
  for (const r of requests) {
    if (!wantsBare(r)) continue;
    const servers = serversByName.get(r.name) ?? [];
    if (!servers.includes(r.server)) servers.push(r.server);
    serversByName.set(r.name, servers);
  }

  const prefixed = (r: NameRequest) => `${sanitizePrefix(r.prefix)}${opts.separator}${safeName(r.name)}`;
  const bareOf = (r: NameRequest) => fit(safeName(r.name), r, opts);
  const candidates = requests.map((r) => {
    if (!wantsBare(r)) return fit(prefixed(r), r, opts);
    const bare = bareOf(r);
    // A bare name someone holds goes to its holder, whatever the mode and config order say.
    if (held.has(bare)) return holds(bare, r) ? bare : fit(prefixed(r), r, opts);
    const holders = serversByName.get(r.name) ?? [];
    const collides = holders.length > 1;
    if (r.mode === 'auto') return collides ? fit(prefixed(r), r, opts) : bare;
    return collides && holders[0] !== r.server ? fit(prefixed(r), r, opts) : bare;
  });

  // Two different (server, name) pairs can still meet on one string (a prefix containing
  // the separator, or a bare name that equals someone's prefixed name). Its holder keeps it,
  // else the first; the others get the hashed form, which differs because the hash covers
  // (server, name), hashed again with a counter while it is taken too (a bare name that
  // equals the hashed form); the result keeps to the characters hosts accept.
  const given = new Set<string>();
  const free = (name: string, r: NameRequest) => !given.has(name) && (!held.has(name) || holds(name, r));
  const names = candidates.map((candidate, i) => {
    const r = requests[i];
    let out = candidate;
    for (let attempt = 0; !free(out, r); attempt++) out = withHash(prefixed(r), r, opts, attempt);
    given.add(out);
    return out;
  });
  return names.map((name, i) => {
    const r = requests[i];
    const bare = bareOf(r);
    const lostBare = r.mode !== 'prefix' && name !== bare && (given.has(bare) || held.has(bare));
    return { name, displaced: keptOff.has(pair(r.server, r.name)) || lostBare };
  });
}
