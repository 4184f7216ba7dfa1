import type { ServerConfig } from './config.types.js';

export interface ServerDiff {
  /** In `next` only, in `next` order. */
  added: ServerConfig[];
  /** In `prev` only, in `prev` order. */
  removed: ServerConfig[];
  /** In both with any field different; the `next` version, in `next` order. */
  changed: ServerConfig[];
}

/** What a reload changes, matched by server name, so the daemon restarts only those upstreams. */
export function diffServers(prev: readonly ServerConfig[], next: readonly ServerConfig[]): ServerDiff {
  const before = new Map(prev.map((s) => [s.name, s]));
  const after = new Set(next.map((s) => s.name));
  const added: ServerConfig[] = [];
  const changed: ServerConfig[] = [];
  for (const server of next) {
    const old = before.get(server.name);
    if (old === undefined) added.push(server);
    else if (!sameConnection(old, server)) changed.push(server);
  }
  const removed = prev.filter((s) => !after.has(s.name));
  return { added, removed, changed };
}

/**
 * Whether two versions of a server run the same connection. The pinned roots' list is left
 * out: the gateway answers roots/list from the current config and tells the connections it
 * changed (notifications/roots/list_changed), so a stateful server keeps running. Whether
 * roots are pinned at all counts, since a per-session connection declares roots by it.
 */
export function sameConnection(a: ServerConfig, b: ServerConfig): boolean {
  return deepEqual(withRootsFlag(a), withRootsFlag(b));
}

const withRootsFlag = (server: ServerConfig) => ({ ...server, roots: server.roots !== undefined });

/**
 * The servers pinned in both configs whose pinned roots differ: their connections keep
 * running and must be told. (Pinning or unpinning restarts them; see sameConnection.)
 */
export function pinnedRootsChanged(prev: readonly ServerConfig[], next: readonly ServerConfig[]): string[] {
  const before = new Map(prev.map((s) => [s.name, s.roots]));
  return next
    .filter((s) => s.roots !== undefined && before.get(s.name) !== undefined && !deepEqual(before.get(s.name), s.roots))
    .map((s) => s.name);
}

/** For JSON-like values. A key set to undefined counts as absent, as it would once serialised. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => deepEqual(item, other[i]));
  }
  const left = definedKeys(a);
  const right = definedKeys(b);
  if (left.length !== right.length) return false;
  const objA = a as Record<string, unknown>;
  const objB = b as Record<string, unknown>;
  return left.every((key) => Object.hasOwn(objB, key) && deepEqual(objA[key], objB[key]));
}

function definedKeys(o: object): string[] {
  return Object.entries(o)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k);
}
