import { createHash, createHmac } from 'node:crypto';
import { canonicalJson } from '@switchboard/core';

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
  if (key) return `hmac-sha256:${createHmac('sha256', key).update(text).digest('hex')}`;
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}
