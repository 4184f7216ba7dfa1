import { hash, randomBytes } from 'node:crypto';

/** Every key starts so, which lets secret scanners and people recognise one. */
export const KEY_PREFIX = 'sbk_';

/** A new key: the prefix and 32 random bytes, base64url (256 bits: no slow hash needed). */
export function newApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * What is stored: SHA-256 of the key. A key carries 256 random bits, so nobody can test
 * guesses against the hash, and a lookup by hash needs no timing-safe comparison.
 */
export function hashApiKey(key: string): string {
  return hash('sha256', key);
}

/** The part shown by `keys list`, enough to tell keys apart, useless to an attacker. */
export function displayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 6);
}

/** Whether a presented credential has the shape of one of our keys (before any lookup). */
export function looksLikeApiKey(credential: string): boolean {
  return credential.startsWith(KEY_PREFIX) && credential.length === KEY_PREFIX.length + 43;
}
