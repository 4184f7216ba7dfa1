import type { IncomingMessage, ServerResponse } from 'node:http';
import { LOOPBACK_PRINCIPAL, refusalAnswer, type AuthPrincipal, type AuthRefusal, type HttpAuthResult } from '@switchboard/auth';
import { ErrorCode, isLoopbackHost } from '@switchboard/core';
import type { GatewayConfig } from '@switchboard/config';
import { replyError } from './http-replies.js';

// RFC 9110's Host: a name or IPv4 address, or an IPv6 literal in brackets, then an optional port.
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::\d{1,5})?$/;

/** The name in a (lower-cased) Host header, or undefined when the header is not one: `127.0.0.1:80@evil.example`. */
function hostnameOf(hostHeader: string): string | undefined {
  return HOST_HEADER.exec(hostHeader)?.[1];
}

/** Why a request is refused, and, when listing it would admit it, the Host or Origin and where to list it. */
interface ForeignVerdict {
  reason: string;
  unlisted?: UnlistedValue;
}

/**
 * DNS-rebinding defence (the spec's "validate Origin", plus Host): on a loopback listener
 * only loopback Host names are accepted; browser requests (those with Origin) must come from
 * a loopback origin, one the config lists, or the listed Host itself (same origin). Returns
 * the reason to refuse, or undefined.
 */
export function refuseReason(req: IncomingMessage, config: GatewayConfig): string | undefined {
  return foreignVerdict(req, config)?.reason;
}

function foreignVerdict(req: IncomingMessage, config: GatewayConfig): ForeignVerdict | undefined {
  const { allowedHosts, allowedOrigins } = config.security;
  const host = req.headers.host;
  if (!host) return { reason: 'missing Host header' };
  const hostname = hostnameOf(host.toLowerCase());
  // No setting admits a header that is no Host: only a broken or hostile client sends one.
  if (hostname === undefined) return { reason: `Host '${host}' is not a host name and port` };
  const hostListed = allowedHosts.includes(host) || allowedHosts.includes(hostname);
  const hostAllowed = hostListed || (isLoopbackHost(config.listen.host) ? isLoopbackHost(hostname) : allowedHosts.length === 0);
  if (!hostAllowed) return { reason: `Host '${host}' is not allowed`, unlisted: { setting: 'security.allowedHosts', value: host } };

  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  if (allowedOrigins.includes(origin)) return undefined;
  try {
    const from = new URL(origin);
    if (isLoopbackHost(from.hostname)) return undefined;
    // The daemon's own pages (the inbox) post to it from the Host the browser used. Only a
    // Host the config lists counts: with no list every Host passes, and a rebound name
    // would then vouch for itself.
    if (hostListed && from.host === host.toLowerCase()) return undefined;
  } catch {
    // Not pointed at a setting either: `null` (a sandboxed page, a file) is no origin to trust.
    return { reason: `Origin '${origin}' is not a valid origin` };
  }
  return { reason: `Origin '${origin}' is not allowed`, unlisted: { setting: 'security.allowedOrigins', value: origin } };
}

/** A well-formed Host or Origin refused only because the config does not list it, and the setting that would. */
export interface UnlistedValue {
  setting: 'security.allowedHosts' | 'security.allowedOrigins';
  /** As the client sent it: untrusted, of any length. */
  value: string;
}

/** A request turned away before it became an MCP request, as the audit log records it. */
export interface HttpRefusal {
  httpMethod: string;
  /** Without the query string, which may carry a session id. */
  path: string;
  /**
   * `refused`: the Host/Origin check; `unauthenticated`: no valid credential; `denied`: a
   * role is missing, or an inbox answer to someone else's question; `limited`: the caller
   * holds as many sessions as it may.
   */
  decision: 'refused' | 'unauthenticated' | 'denied' | 'limited';
  rule: 'security:host' | 'security:origin' | 'auth:admin-role' | 'inbox:not-yours' | 'inbox:own-approval' | 'limit:sessions' | AuthRefusal['rule'];
  reason: string;
  /**
   * Who it was, when that is known (a valid key without the role needed), or whose key or
   * token it carried (a key revoked or expired, a token the issuer signed refused for its
   * time: AuthRefusal.attributedTo); else anonymous.
   */
  principal?: { id: string; authMethod: string };
  /** The client's address (the audit log bounds the rows each address can make). */
  address?: string;
  /** Its User-Agent header, cut to 200 characters: with the address, what tells refused clients apart. */
  userAgent?: string;
  /** On a `refused` request that listing its Host or Origin would admit: what to list where (UnlistedWarnings tells the operator). */
  unlisted?: UnlistedValue;
}

export type RefusalListener = (refusal: HttpRefusal) => void;

export function httpRefusal(req: IncomingMessage, reason: string): HttpRefusal {
  return {
    ...requestLine(req),
    decision: 'refused',
    rule: reason.startsWith('Origin') ? 'security:origin' : 'security:host',
    reason,
  };
}

export function requestLine(req: IncomingMessage): { httpMethod: string; path: string; address?: string; userAgent?: string } {
  // Express (the admin routes) rewrites url under a mount path; originalUrl is what was sent.
  const url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? '/';
  const query = url.indexOf('?');
  const agent = req.headers['user-agent'];
  return {
    httpMethod: req.method ?? 'GET',
    path: query === -1 ? url : url.slice(0, query),
    address: req.socket?.remoteAddress,
    ...(typeof agent === 'string' && agent !== '' && { userAgent: agent.slice(0, MAX_USER_AGENT_CHARS) }),
  };
}

const MAX_USER_AGENT_CHARS = 200;

/** How the HTTP fronts learn who a request is from (libs/auth's HttpAuthenticator). */
export type RequestAuthenticator = (req: IncomingMessage) => Promise<HttpAuthResult>;

/**
 * Who sent the request: its principal, or undefined after answering the refusal (mostly a
 * 401 with a Bearer challenge that points at the protected-resource metadata, the MCP
 * authorization spec; refusalAnswer says which status and headers).
 * Without an authenticator (tests, tools) every caller is the anonymous loopback principal.
 */
export async function authenticated(
  req: IncomingMessage,
  res: ServerResponse,
  authenticate: RequestAuthenticator | undefined,
  onRefused: RefusalListener | undefined,
): Promise<AuthPrincipal | undefined> {
  if (!authenticate) return LOOPBACK_PRINCIPAL;
  const result = await authenticate(req);
  if (result.principal) return result.principal;
  const { rule, reason, attributedTo } = result.refusal;
  onRefused?.({ ...requestLine(req), decision: 'unauthenticated', rule, reason, ...(attributedTo && { principal: attributedTo }) });
  const answer = refusalAnswer(req, result.refusal);
  replyError(res, answer.status, ErrorCode.InvalidRequest, `${answer.statusText}: ${answer.told}`, null, answer.headers);
  return undefined;
}

/** How an endpoint writes the answer to a request the Host/Origin check refused, in its own format. */
export type ForeignAnswer = (res: ServerResponse, status: number, reason: string) => void;

/**
 * The Host/Origin check (refuseReason) every endpoint of the listener but /healthz runs
 * first: the MCP endpoints, the admin API and inbox, the root page and /readyz. A refused
 * request is reported to `onRefused` (the audit log's row, one `refused` row with rule
 * `security:host` or `security:origin`; the operator's warning, UnlistedWarnings), answered
 * 403 by `answer`, and goes no further.
 * True when it was refused.
 */
export function refusedForeign(
  req: IncomingMessage,
  res: ServerResponse,
  config: GatewayConfig,
  onRefused: RefusalListener | undefined,
  answer: ForeignAnswer,
): boolean {
  const verdict = foreignVerdict(req, config);
  if (verdict === undefined) return false;
  const { reason, unlisted } = verdict;
  onRefused?.(unlisted ? { ...httpRefusal(req, reason), unlisted } : httpRefusal(req, reason));
  // The answer goes to whoever asked, so it names no setting; the operator learns it from the log.
  answer(res, 403, reason);
  return true;
}

/** The MCP endpoints' answer to a foreign request: a JSON-RPC error. */
const forbiddenJsonRpc: ForeignAnswer = (res, status, reason) => replyError(res, status, ErrorCode.InvalidRequest, `Forbidden: ${reason}`);

/** The check every MCP endpoint runs first (refusedForeign, answered as JSON-RPC). True when the request may proceed. */
export function admitted(
  req: IncomingMessage,
  res: ServerResponse,
  config: GatewayConfig,
  onRefused: RefusalListener | undefined,
): boolean {
  return !refusedForeign(req, res, config, onRefused, forbiddenJsonRpc);
}
