import { isIPv4 } from 'node:net';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * A loopback name or address: localhost, ::1, or an IPv4 address in 127.0.0.0/8. Only a
 * literal address counts for 127/8: a DNS name such as `127.evil.example` can be made to
 * resolve to 127.0.0.1, which is what a DNS-rebinding page relies on. Used for listen
 * addresses (what `auth.mode: none` allows) and for Host and Origin headers alike.
 */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || (host.startsWith('127.') && isIPv4(host));
}
