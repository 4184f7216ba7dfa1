import type { IncomingMessage } from 'node:http';
import type { GatewayConfig } from '@switchboard/config';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export const isLoopbackHost = (host: string): boolean => LOOPBACK_NAMES.has(host) || host.startsWith('127.');

function hostnameOf(hostHeader: string): string {
  if (hostHeader.startsWith('[')) return hostHeader.slice(0, hostHeader.indexOf(']') + 1);
  const colon = hostHeader.lastIndexOf(':');
  return colon === -1 ? hostHeader : hostHeader.slice(0, colon);
}

/**
 * DNS-rebinding defence (the spec's "validate Origin", plus Host): on a loopback listener
 * only loopback Host names are accepted; browser requests (those with Origin) must come from
 * a loopback origin or one the config lists. Returns the reason to refuse, or undefined.
 */
export function refuseReason(req: IncomingMessage, config: GatewayConfig): string | undefined {
  const { allowedHosts, allowedOrigins } = config.security;
  const host = req.headers.host;
  if (!host) return 'missing Host header';
  const hostname = hostnameOf(host.toLowerCase());
  const hostAllowed =
    allowedHosts.includes(host) ||
    allowedHosts.includes(hostname) ||
    (isLoopbackHost(config.listen.host) ? isLoopbackHost(hostname) : allowedHosts.length === 0);
  if (!hostAllowed) return `Host '${host}' is not allowed`;

  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  if (allowedOrigins.includes(origin)) return undefined;
  try {
    if (isLoopbackHost(new URL(origin).hostname)) return undefined;
  } catch {
    return `Origin '${origin}' is not a valid origin`;
  }
  return `Origin '${origin}' is not allowed`;
}
