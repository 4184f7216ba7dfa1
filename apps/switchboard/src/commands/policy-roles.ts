import { existsSync } from 'node:fs';
import { ApiKeyStore, type ApiKeyInfo } from '@switchboard/auth';
import type { GatewayConfig } from '@switchboard/config';
import { API_KEY_METHOD, foldCallerName, type CallerIdentity } from '@switchboard/core';
import { databasePath, openReadOnly } from '../audit-store.js';
import { commaList } from './command-args.js';
import { CommandError } from './command-error.js';
import { keyStatus } from './keys.js';

/** The roles `policy check` decides with, who the caller is once its key is found, and where the roles came from. */
export interface CheckedCaller {
  caller: CallerIdentity;
  roles: string[];
  /** Said beside the roles: an admin must see whether they are the key's, given, or unknown. */
  source?: string;
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
    return { caller, roles, source: `with --roles: ${roles.join(', ') || 'none'}` };
  }
  if (caller.authMethod === 'jwt') return { caller, roles: [], source: "no token roles known: a token's roles come from its claims; give them with --roles" };
  // stdio and loopback callers carry no roles of their own, so "none" is the whole answer.
  if (caller.authMethod !== API_KEY_METHOD) return { caller, roles: [] };
  const file = databasePath(config);
  if (!existsSync(file)) return { caller, roles: [], source: `no key roles known: no database at ${file}, so no API keys` };
  // Names are unique among active keys without regard to case, and policies match them so.
  const folded = foldCallerName(caller.id);
  const named = (await readKeys(config)).filter((k) => foldCallerName(k.name) === folded);
  const active = named.find((k) => keyStatus(k) === 'active');
  // The daemon's principal is the key's name as stored: `Alice` asked about is `alice`.
  if (active) return { caller: { ...caller, id: active.name }, roles: active.roles, source: `with the roles of key '${active.name}': ${active.roles.join(', ') || 'none'}` };
  // Newest first: the key this name last stood for.
  const lapsed = named[0];
  const why = lapsed
    ? `key '${lapsed.name}' ${keyStatus(lapsed) === 'revoked' ? 'was revoked' : 'expired'}, so the daemon refuses it`
    : `no active API key is named '${caller.id}'; a token's user is jwt:${caller.id}, and needs --roles`;
  return { caller, roles: [], source: `no key roles known: ${why}` };
}

/** Every key, read-only: the check must not create or migrate the daemon's database. */
async function readKeys(config: GatewayConfig): Promise<ApiKeyInfo[]> {
  const file = databasePath(config);
  try {
    const dataSource = await openReadOnly(config);
    try {
      return await new ApiKeyStore(dataSource).list();
    } finally {
      await dataSource.destroy();
    }
  } catch (err) {
    throw new CommandError(`cannot read the API keys in ${file}: ${(err as Error).message}; give the caller's roles with --roles`);
  }
}
