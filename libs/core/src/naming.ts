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

/** Assigns a unique public name to every request; the result is in the same order. */
export function assignPublicNames(requests: readonly NameRequest[], opts: NamingOptions = DEFAULT_NAMING): string[] {
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
    const holders = serversByName.get(r.name) ?? [];
    const collides = holders.length > 1;
    switch (r.mode) {
      case 'prefix':
        return fit(prefixed(r), r, opts);
      case 'auto':
        return fit(collides ? prefixed(r) : r.name, r, opts);
      case 'none':
        return fit(collides && holders[0] !== r.server ? prefixed(r) : r.name, r, opts);
    }
  });

  // Two different (server, name) pairs can still meet on one string (a prefix containing
  // the separator, or a bare name that equals someone's prefixed name). The first keeps it;
  // the others get the hashed form, which differs because the hash covers (server, name).
  const taken = new Set<string>();
  return candidates.map((candidate, i) => {
    let out = candidate;
    if (taken.has(out)) out = withHash(prefixed(requests[i]), requests[i], opts);
    // Still taken (a bare name that equals the hashed form): hash again, with a counter;
    // the result keeps to the characters hosts accept.
    for (let attempt = 1; taken.has(out); attempt++) out = withHash(prefixed(requests[i]), requests[i], opts, attempt);
    taken.add(out);
    return out;
  });
}
