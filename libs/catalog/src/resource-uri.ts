/**
 * The reversible URI form the gateway owns (architecture "Naming"): when two upstreams list
 * the same resource URI, later ones are shown as `switchboard://<prefix>/<original>`.
 *
 * The original is appended verbatim, not percent-encoded: the prefix never contains '/', so
 * everything after the first '/' following the prefix is the original, byte for byte. That
 * keeps the rewrite reversible and also works for URI templates, whose expressions must stay
 * intact for hosts to expand them.
 */
export const GATEWAY_URI_SCHEME = 'switchboard:';

const GATEWAY_URI_START = `${GATEWAY_URI_SCHEME}//`;

export interface GatewayUri {
  /** The server's URI prefix (a sanitized alias or server name). */
  prefix: string;
  /** The upstream's own URI (or URI template), exactly as it was. */
  original: string;
}

/** True for any URI in the gateway's scheme, whether or not its prefix is known. */
export function isGatewayUri(uri: string): boolean {
  return uri.startsWith(GATEWAY_URI_START);
}

export function toGatewayUri(prefix: string, original: string): string {
  if (prefix === '' || prefix.includes('/')) {
    // A prefix with '/' would make the split point ambiguous, so the rewrite would not be
    // reversible; callers pass sanitized prefixes, which never contain one.
    throw new RangeError(`Invalid gateway URI prefix: ${JSON.stringify(prefix)}`);
  }
  return `${GATEWAY_URI_START}${prefix}/${original}`;
}

export function parseGatewayUri(uri: string): GatewayUri | undefined {
  if (!isGatewayUri(uri)) return undefined;
  const slash = uri.indexOf('/', GATEWAY_URI_START.length);
  if (slash <= GATEWAY_URI_START.length) return undefined;
  return { prefix: uri.slice(GATEWAY_URI_START.length, slash), original: uri.slice(slash + 1) };
}
