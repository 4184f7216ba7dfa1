import type { RemoteServerConfig, ServerConfig, StdioServerConfig } from './config.types.js';

export interface ServerDiff {
  /** In `next` only, in `next` order. */
  added: ServerConfig[];
  /** In `prev` only, in `prev` order. */
  removed: ServerConfig[];
  /** In both, with a field that defines the connection different (restartNeeded); the `next` version, in `next` order. */
  changed: ServerConfig[];
  /**
   * In both, running the same connection, with only fields read at use time different
   * (alias, namespace, pin, timeouts, lists, the pinned roots' list): applied to the running
   * connection in place. The `next` version, in `next` order.
   */
  updated: ServerConfig[];
}

/** What a reload changes, matched by server name, so the daemon restarts only the upstreams that need it. */
export function diffServers(prev: readonly ServerConfig[], next: readonly ServerConfig[]): ServerDiff {
  const before = new Map(prev.map((s) => [s.name, s]));
  const after = new Set(next.map((s) => s.name));
  const added: ServerConfig[] = [];
  const changed: ServerConfig[] = [];
  const updated: ServerConfig[] = [];
  for (const server of next) {
    const old = before.get(server.name);
    if (old === undefined) added.push(server);
    else if (restartNeeded(old, server)) changed.push(server);
    else if (!deepEqual(old, server)) updated.push(server);
  }
  const removed = prev.filter((s) => !after.has(s.name));
  return { added, removed, changed, updated };
}

type ServerField = keyof StdioServerConfig | keyof RemoteServerConfig;

/**
 * Every server field, by what a change of it takes. `connection`: the process or session
 * is made from it (spawned, connected, initialized), so it restarts. `use`: read from the
 * config each time it is needed, so the running connection takes the new value:
 * - alias, namespace: public names, which the catalog recomputes (hosts hear list_changed);
 * - pin: read by the pin check from the current config;
 * - timeouts: read per request (requestMs, maxRequestMs) and per connect attempt (connectMs);
 * - lists: the catalog reads the server's lists again with the new limits;
 * - roots: the pinned list is answered from the current config, and the connections are
 *   told it changed; whether roots are pinned at all is a connection field (see below).
 * Typed over every field, so a new one does not compile until it is put in one group.
 */
const FIELDS: Record<ServerField, 'connection' | 'use'> = {
  name: 'connection',
  transport: 'connection',
  command: 'connection',
  args: 'connection',
  env: 'connection',
  cwd: 'connection',
  url: 'connection',
  headers: 'connection',
  isolation: 'connection',
  enabled: 'connection',
  alias: 'use',
  namespace: 'use',
  pin: 'use',
  timeouts: 'use',
  lists: 'use',
  roots: 'use',
};

const CONNECTION_FIELDS = (Object.keys(FIELDS) as ServerField[]).filter((field) => FIELDS[field] === 'connection');

/** The fields a connection is made from: equal for two versions of a server that run the same connection. */
function connectionOf(server: ServerConfig): Record<string, unknown> {
  const fields = server as unknown as Record<string, unknown>;
  // Whether roots are pinned counts: a per-session connection declares roots by it.
  return Object.fromEntries([...CONNECTION_FIELDS.map((f) => [f, fields[f]]), ['rootsPinned', server.roots !== undefined]]);
}

/**
 * Whether going from `prev` to `next` needs a new connection (a restart): true when a field
 * the connection is made from differs (command, args, env, cwd, url, headers, transport,
 * isolation, whether roots are pinned; secret references are part of env and headers).
 * Changes of the other fields (alias, namespace, pin, timeouts, lists, the pinned roots' list) are
 * read at use time: the running connection keeps running, with the new config in place.
 */
export function restartNeeded(prev: ServerConfig, next: ServerConfig): boolean {
  return !deepEqual(connectionOf(prev), connectionOf(next));
}

/**
 * Whether a connection opened with `a` runs exactly `b`: every field equal, the pinned roots'
 * list aside (connections answer roots/list from the current config and are told it
 * changed). The per-principal and per-session pools replace a connection when this is
 * false, once it has nothing in flight; the shared registry restarts only on restartNeeded.
 */
export function sameConnection(a: ServerConfig, b: ServerConfig): boolean {
  return deepEqual(withRootsFlag(a), withRootsFlag(b));
}

const withRootsFlag = (server: ServerConfig) => ({ ...server, roots: server.roots !== undefined });

/**
 * The servers pinned in both configs whose pinned roots differ: their connections keep
 * running and must be told. (Pinning or unpinning restarts them; see restartNeeded.)
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
