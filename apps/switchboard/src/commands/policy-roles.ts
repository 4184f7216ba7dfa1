import { existsSync } from 'node:fs';
import { ApiKeyStore, type ApiKeyInfo } from '@switchboard/auth';
import type { GatewayConfig } from '@switchboard/config';
import { API_KEY_METHOD, foldCallerName, type CallerIdentity } from '@switchboard/core';
import { databasePath } from '../audit-store.js';
import { commaList } from './command-args.js';
import { readingDatabase, SchemaRefusal } from './command-database.js';
import { keyStatus } from './keys-messages.js';

/** The roles `policy check` decides with, who the caller is once its key is found, and where the roles came from. */
export interface CheckedCaller {
  caller: CallerIdentity;
  roles: string[];
  /** Said beside the roles: an admin must see whether they are the key's, given, or unknown. */
  source?: string;
  /** A line for stderr when --roles are not the roles of the caller's key. */
  note?: string;
}

/**
 * The roles the daemon would see on the caller's credential. `--roles` is taken as given. An
 * API key's are read from the data dir's database, as the daemon reads them per request:
 * without them a key holder's `users:` entry alone was decided on, and a deny from a role
 * the key carries was missed. A token's come from its claims, which only `--roles` can say.
 */
export async function rolesForCheck(caller: CallerIdentity, given: string | undefined, config: GatewayConfig): Promise<CheckedCaller> {
  if (given !== undefined) {
    const roles = commaList(given);
    return { caller, roles, source: `with --roles: ${roles.join(', ') || 'none'}`, note: await otherRolesNote(caller, roles, config) };
  }
  if (caller.authMethod === 'jwt') return { caller, roles: [], source: "no token roles known: a token's roles come from its claims; give them with --roles" };
  // stdio and loopback callers carry no roles of their own, so "none" is the whole answer.
  if (caller.authMethod !== API_KEY_METHOD) return { caller, roles: [] };
  const file = databasePath(config);
  if (!existsSync(file)) return { caller, roles: [], source: `no key roles known: no database at ${file}, so no API keys` };
  const named = keysNamed(caller, await readKeys(config));
  const active = named.find(serves);
  // The daemon's principal is the key's name as stored: `Alice` asked about is `alice`.
  if (active) return { caller: { ...caller, id: active.name }, roles: active.roles, source: `with the roles of key '${active.name}': ${active.roles.join(', ') || 'none'}` };
  // Newest first: the key this name last stood for.
  const lapsed = named[0];
  const why = lapsed
    ? `key '${lapsed.name}' ${keyStatus(lapsed) === 'revoked' ? 'was revoked' : 'expired'}, so the daemon refuses it`
    : `no active API key is named '${caller.id}'; a token's user is jwt:${caller.id}, and needs --roles`;
  return { caller, roles: [], source: `no key roles known: ${why}` };
}

/** The keys of the caller's name, newest first. Names are unique among active keys without regard to case, and policies match them so. */
function keysNamed(caller: CallerIdentity, keys: readonly ApiKeyInfo[]): ApiKeyInfo[] {
  const folded = foldCallerName(caller.id);
  return keys.filter((k) => foldCallerName(k.name) === folded);
}

/**
 * "note: key bob has roles [dev]; checked with --roles [admin] instead", when the caller's
 * active key carries other roles than the ones given: the answer is then about those roles,
 * not the key's own access, which a reader of the verdict alone would take it for. Nothing
 * when no key is known: the roles given were all there was to go on.
 */
async function otherRolesNote(caller: CallerIdentity, given: readonly string[], config: GatewayConfig): Promise<string | undefined> {
  if (caller.authMethod !== API_KEY_METHOD || !existsSync(databasePath(config))) return undefined;
  // A database that cannot be read only costs the note: the check itself needs no key. One
  // of another Switchboard's schema is refused, as every command refuses it.
  const keys = await readKeys(config).catch((err: unknown) => {
    if (err instanceof SchemaRefusal) throw err;
    return [];
  });
  const key = keysNamed(caller, keys).find(serves);
  if (!key) return undefined;
  const same = key.roles.length === new Set(given).size && key.roles.every((r) => given.includes(r));
  const list = (roles: readonly string[]) => `[${roles.join(', ')}]`;
  return same ? undefined : `note: key ${key.name} has roles ${list(key.roles)}; checked with --roles ${list(given)} instead`;
}

/** Every key, read-only: the check must not create or migrate the daemon's database. */
function readKeys(config: GatewayConfig): Promise<ApiKeyInfo[]> {
  return readingDatabase(config, (dataSource) => new ApiKeyStore(dataSource).list(), { advice: "give the caller's roles with --roles" });
}

/** Whether the daemon accepts the key now: a rotated key in its overlap carries the same roles as its replacement. */
const serves = (key: ApiKeyInfo): boolean => keyStatus(key) === 'active' || keyStatus(key) === 'rotated';
