import { invalidParams } from '@switchboard/core';
import type { Refusal } from './audit/audited-request.js';
import type { Item } from './relay.types.js';

/**
 * The longest resource URI a host may send (resources/read, subscribe, unsubscribe, and a
 * completion/complete ref.uri), in characters. Every step a URI goes through costs time in
 * proportion to its length, once per policy rule and once per upstream template: a 4 MiB
 * URI held the event loop (every other host) for 5 s against 50 resource rules, 16 MiB for
 * 18 s and had the upstream's process exit. RFC 9110 §4.1 asks for URIs of at least 8,000
 * octets to be supported; 16 Ki characters is twice that, and holds the longest Linux path
 * (PATH_MAX, 4,096 bytes) in a file: URI with every byte percent-encoded. A resource URI
 * names a resource; it does not carry one (as a data: URI would).
 */
export const MAX_URI_CHARS = 16 * 1024;

/** Where each method carries a URI of a resource: a path of property names into its params. */
const URI_FIELDS: Record<string, readonly string[]> = {
  'resources/read': ['uri'],
  'resources/subscribe': ['uri'],
  'resources/unsubscribe': ['uri'],
  'completion/complete': ['ref', 'uri'],
};

/** A refusal of a request whose resource URI is longer than MAX_URI_CHARS, or undefined. */
export function overlongUri(method: string, params: Item): Refusal | undefined {
  const path = Object.hasOwn(URI_FIELDS, method) ? URI_FIELDS[method] : undefined;
  if (!path) return undefined;
  let value: unknown = params;
  for (const key of path) value = typeof value === 'object' && value !== null ? (value as Item)[key] : undefined;
  if (typeof value !== 'string' || value.length <= MAX_URI_CHARS) return undefined;
  const field = path.join('.');
  return {
    rule: 'request:uri-too-long',
    error: invalidParams(`Invalid params: '${field}' is ${value.length} characters; the limit is ${MAX_URI_CHARS}`),
  };
}
