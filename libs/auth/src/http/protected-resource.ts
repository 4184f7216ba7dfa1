import type { IncomingMessage } from 'node:http';

/** RFC 9728: where an OAuth client learns how this resource wants to be called. */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/**
 * The origin the caller used, from its Host header (already checked by the Host guard). The
 * docs have TLS terminated by a reverse proxy in front of the daemon, so `X-Forwarded-Proto:
 * https` is believed, as the inbox's cookie does: an OAuth client compares the `resource` it
 * is given with the URL it called. A caller that forges the header only misleads itself.
 */
export function requestOrigin(req: IncomingMessage): string {
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true || forwardedProto(req) === 'https';
  return `${encrypted ? 'https' : 'http'}://${req.headers.host ?? 'localhost'}`;
}

/** The first hop's protocol when proxies chained theirs (`https, http`). */
function forwardedProto(req: IncomingMessage): string | undefined {
  const header = req.headers['x-forwarded-proto'];
  const value = Array.isArray(header) ? header[0] : header;
  return value?.split(',')[0].trim().toLowerCase();
}

/** The authorization servers to name: those configured, and the JWT issuer if it is not among them. */
export function authorizationServersOf(auth: { authorizationServers: readonly string[]; jwt?: { issuer: string } }): string[] {
  const servers = [...auth.authorizationServers];
  if (auth.jwt && !servers.includes(auth.jwt.issuer)) servers.push(auth.jwt.issuer);
  return servers;
}

/** The metadata document, naming the MCP endpoint and the authorization servers configured. */
export function protectedResourceMetadata(req: IncomingMessage, authorizationServers: readonly string[]): Record<string, unknown> {
  return {
    resource: `${requestOrigin(req)}/mcp`,
    authorization_servers: [...authorizationServers],
    bearer_methods_supported: ['header'],
    resource_name: 'Switchboard MCP gateway',
  };
}

/** The WWW-Authenticate value of a 401 (RFC 6750 and the MCP authorization spec). */
export function bearerChallenge(req: IncomingMessage, invalidToken: boolean, description: string): string {
  const metadata = `resource_metadata="${requestOrigin(req)}${PROTECTED_RESOURCE_PATH}"`;
  if (!invalidToken) return `Bearer ${metadata}`;
  return `Bearer ${metadata}, error="invalid_token", error_description="${description.replace(/["\\]/g, '')}"`;
}
