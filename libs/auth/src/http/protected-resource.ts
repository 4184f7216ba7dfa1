import type { IncomingMessage } from 'node:http';
import { toldReason, type AuthRefusal } from './http-authenticator.js';

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

/** The WWW-Authenticate value of a 401 or 400 (RFC 6750 and the MCP authorization spec). */
export function bearerChallenge(req: IncomingMessage, error?: 'invalid_token' | 'invalid_request', description = ''): string {
  const metadata = `resource_metadata="${requestOrigin(req)}${PROTECTED_RESOURCE_PATH}"`;
  if (error === undefined) return `Bearer ${metadata}`;
  return `Bearer ${metadata}, error="${error}", error_description="${description.replace(/["\\]/g, '')}"`;
}

/** How a refused request is answered: the status, the words it is known by, and the headers. */
export interface RefusalAnswer {
  status: 400 | 401 | 503;
  statusText: 'Bad Request' | 'Unauthorized' | 'Service Unavailable';
  headers: Record<string, string>;
  /** What the caller is told of why (toldReason), for the body beside the challenge. */
  told: string;
}

/**
 * What a client is told to wait when the credential could not be checked and no better time
 * is known (the key table could not be read). While the issuer's keys cannot be fetched, the
 * refusal says when they are asked for again (AuthRefusal.retryAfterSec), which is used instead.
 */
const UNCHECKED_RETRY_AFTER_SEC = 5;

/**
 * The answer to an authentication refusal, by its rule (RFC 6750 section 3.1): no credential,
 * or one of another scheme ("an unsupported authentication method"), is 401 with the bare
 * challenge; a credential that is wrong (unknown, revoked, expired, forged) is 401
 * `invalid_token`; two at once, or a Bearer header or X-API-Key that holds no readable
 * credential, is 400 `invalid_request` ("more than one method", "otherwise malformed"). A credential that could not be checked (the issuer's keys unavailable, the key
 * table unreadable) is 503 with Retry-After and no challenge: the token may well be good, and
 * an OAuth host that hears `invalid_token` drops it and signs its user in again, against an
 * issuer that is failing already.
 */
export function refusalAnswer(req: IncomingMessage, refusal: Pick<AuthRefusal, 'rule' | 'reason' | 'told' | 'retryAfterSec'>): RefusalAnswer {
  const told = toldReason(refusal);
  switch (refusal.rule) {
    case 'auth:missing':
    case 'auth:unsupported-scheme':
      return { status: 401, statusText: 'Unauthorized', headers: { 'WWW-Authenticate': bearerChallenge(req) }, told };
    case 'auth:two-credentials':
    case 'auth:malformed':
      return { status: 400, statusText: 'Bad Request', headers: { 'WWW-Authenticate': bearerChallenge(req, 'invalid_request', told) }, told };
    case 'auth:error':
      return { status: 503, statusText: 'Service Unavailable', headers: { 'Retry-After': String(refusal.retryAfterSec ?? UNCHECKED_RETRY_AFTER_SEC) }, told };
    default:
      return { status: 401, statusText: 'Unauthorized', headers: { 'WWW-Authenticate': bearerChallenge(req, 'invalid_token', told) }, told };
  }
}
