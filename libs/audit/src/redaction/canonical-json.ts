import { hash } from 'node:crypto';
import { canonicalJson } from '@switchboard/core';
import { HmacSha256 } from './hmac-sha256.js';

export { canonicalJson };

/**
 * 'sha256:' + hex of SHA-256 over canonicalJson(value), UTF-8 encoded; with a key,
 * 'hmac-sha256:' + HMAC-SHA-256 under that key. The daemon uses a key: the digest covers
 * unredacted arguments, and without one anybody holding an export could test guesses of a
 * short secret against it offline.
 */
export function argumentsDigest(value: unknown, key?: Buffer): string {
  return canonicalTextDigest(canonicalJson(value), key);
}

/** argumentsDigest of a value whose canonical text is already at hand. */
export function canonicalTextDigest(text: string, key?: Buffer): string {
  if (key) return `hmac-sha256:${hmacFor(key).hex(text)}`;
  return `sha256:${hash('sha256', text)}`;
}

/** One per key Buffer: the daemon has one key for its life, and its padded copies are computed once. */
const hmacs = new WeakMap<Buffer, HmacSha256>();

function hmacFor(key: Buffer): HmacSha256 {
  let hmac = hmacs.get(key);
  if (!hmac) {
    hmac = new HmacSha256(key);
    hmacs.set(key, hmac);
  }
  return hmac;
}
