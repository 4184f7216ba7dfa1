import { MAX_URI_CHARS, invalidParams } from '@switchboard/core';
import type { Refusal } from './audit/audited-request.js';
import type { Item } from './relay.types.js';

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
