import type { ApiKeyInfo, ApiKeyNameTakenError } from '@switchboard/auth';
import { foldCallerName } from '@switchboard/core';

/*
 * What the keys commands tell an administrator about the keys they found or changed: the
 * status the daemon gives a key, and the reasons a command did less than it was asked.
 */

/** As the daemon judges a key now: an active one is accepted, and a rotated one until its overlap ends (its expiry). */
export function keyStatus(key: ApiKeyInfo): 'active' | 'rotated' | 'revoked' | 'expired' {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && key.expiresAt <= Date.now()) return 'expired';
  return key.rotatedAt === null ? 'active' : 'rotated';
}

/**
 * What `keys revoke` did to the keys it revoked (newest first): a key still accepted stops
 * working now, but one that had expired, or been rotated out (its overlap over), was refused
 * already, and saying it "stops working" would send the administrator looking for the hosts
 * that were still using it.
 */
export function revokedText(revoked: readonly ApiKeyInfo[]): string {
  // Expired when it was revoked, as keyStatus judges: the daemon refused it already.
  const lapsed = (k: ApiKeyInfo) => k.expiresAt !== null && k.expiresAt <= k.revokedAt!;
  const stopped = revoked.filter((k) => !lapsed(k));
  const one = revoked.length === 1;
  const head = one ? `revoked key '${revoked[0].name}' (id ${revoked[0].id})` : `revoked ${revoked.length} keys named '${revoked[0].name}' (ids ${idList(revoked)})`;
  const stop = (subject: string, several: boolean) =>
    `${subject} ${several ? 'stop' : 'stops'} working on the next request, and sessions and switchboard stdio processes using ${several ? 'them' : 'it'} end within 2 s`;
  // A name rotated and still in its overlap: both keys are the principal's.
  if (stopped.length === revoked.length) return `${head}; ${stop(one ? 'it' : 'they', !one)}`;
  const parts: string[] = [];
  if (stopped.length > 0) parts.push(stop(`${stopped.length === 1 ? 'id' : 'ids'} ${idList(stopped)}`, stopped.length > 1));
  for (const k of revoked.filter(lapsed)) {
    const rotatedOut = k.rotatedAt === null ? '' : ` (rotated out by id ${k.replacedBy})`;
    parts.push(`${one ? 'it' : `id ${k.id}`} had already expired at ${time(k.expiresAt)}${rotatedOut}`);
  }
  return `${head}; ${parts.join('; ')}`;
}

const idList = (keys: readonly ApiKeyInfo[]): string => keys.map((k) => k.id).join(', ');

/**
 * Why `keys revoke WORD` (or `keys rotate WORD`) found no key to act on. Digits alone are
 * an id (no name is), any other word a name, matched exactly: a key of that name revoked before, or an active one
 * spelt in another case, is named, so that the administrator knows where they stand.
 */
export function nothingToRevoke(word: string, byId: boolean, keys: readonly ApiKeyInfo[]): string {
  if (byId) return `no key with id ${word}`;
  const revoked = keys.filter((k) => k.name === word && k.revokedAt !== null);
  if (revoked.length === 1) return `no active key named '${word}': key id ${revoked[0].id} of that name was revoked at ${time(revoked[0].revokedAt)}`;
  if (revoked.length > 1) {
    return `no active key named '${word}': the keys of that name were revoked (${revoked.map((k) => `id ${k.id} at ${time(k.revokedAt)}`).join(', ')})`;
  }
  const folded = foldCallerName(word);
  const meant = keys.find((k) => k.revokedAt === null && foldCallerName(k.name) === folded);
  return meant ? `no active key named '${word}' (did you mean '${meant.name}'?)` : `no active key named '${word}'`;
}

/**
 * Why `keys create --name` was refused. A name stays taken by its keys until they are revoked,
 * expired ones too (the unique index counts them), so an administrator whose key expired
 * sees the name as free: they are told when it expired and the two ways out, a new key of the
 * same roles (keys rotate, when there is a key to rotate) or revoking the old.
 */
export function nameTakenReason(err: ApiKeyNameTakenError): string {
  const keys = err.keys;
  if (keys.some((k) => keyStatus(k) !== 'expired')) return err.message;
  const name = keys[0].name;
  const expired = keys.length === 1 ? `it expired at ${time(keys[0].expiresAt)} (id ${keys[0].id})` : `its keys expired (${keys.map((k) => `id ${k.id} at ${time(k.expiresAt)}`).join(', ')})`;
  // Rotated keys only (their replacement revoked by id): keys rotate NAME refuses, see nothingToRotate.
  const standing = keys.find((k) => k.rotatedAt === null);
  const rotate = standing ? `keys rotate ${name} issues a new key of the same name and roles (${standing.roles.join(', ') || 'none'}), or ` : '';
  return `a key named '${name}' already exists, but ${expired}: ${rotate}keys revoke ${name} frees the name for keys create`;
}

/**
 * Why `keys rotate NAME` found no key to replace. A rotated key whose replacement was revoked
 * by id still serves through its overlap: "no active key" would be wrong, and rotating it
 * again would give the name a third key, so the way out is said instead.
 */
export function nothingToRotate(name: string, keys: readonly ApiKeyInfo[]): string {
  const serving = keys.find((k) => k.name === name && keyStatus(k) === 'rotated');
  if (!serving) return nothingToRevoke(name, false, keys);
  return `key '${name}' (id ${serving.id}) was rotated and serves until ${time(serving.expiresAt)}, but its replacement (id ${serving.replacedBy}) was revoked; revoke it, then keys create a new one`;
}

export const time = (ms: number | null, none = '-'): string => (ms === null ? none : new Date(ms).toISOString().slice(0, 19) + 'Z');
